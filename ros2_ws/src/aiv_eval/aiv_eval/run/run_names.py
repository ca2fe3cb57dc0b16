"""Run directory names made from command-line values (sweep and A/B arms), confined to their parent directory.

Apart from :mod:`aiv_eval.cli` because the heights / A-B comparison (:mod:`aiv_eval.heights`) names its arms
the same way and :mod:`aiv_eval.cli` imports that module to add its subcommand: both import this one instead
of each other.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._+=@-]+")


def safe_run_name(name: str) -> str:
    """``name`` as one file-name component that cannot leave its parent directory.

    Sweep values come from the command line and become sub-directory names, so a value like ``../../x`` or
    ``a/b`` must not turn into a path. Names already made of safe characters are returned unchanged (existing
    run directories keep their names); anything else has each run of unsafe characters replaced by ``_``,
    and a short hash of the original is appended so two different values can never share a directory.
    """
    cleaned = _UNSAFE_NAME_CHARS.sub("_", name)
    if cleaned == name and name.strip(".") and name not in (".", ".."):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    cleaned = cleaned.strip(".")[:80] or "run"
    return f"{cleaned}-{digest}"


__all__ = ["safe_run_name"]
