#!/usr/bin/env python3
"""Regenerate requirements/constraints.txt: exact versions of everything base.txt pulls in.

Walks the installed dependency closure of requirements/base.txt (rather than `pip freeze`, which
also lists the helper distributions the ROS wheels register for their inner Python packages and
which do not exist on PyPI) and pins each distribution to the version installed in this venv.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
BASE = REPO / "requirements" / "base.txt"
CONSTRAINTS = REPO / "requirements" / "constraints.txt"
UNPINNED = {"pip", "setuptools"}  # pinned in base.txt or by the venv itself


def direct_requirements() -> list[str]:
    names = []
    for line in BASE.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(re.split(r"[<>=!~\[ ]", line, maxsplit=1)[0])
    return names


def closure(roots: list[str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        key = canonicalize_name(name)
        if key in pins or key in UNPINNED:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            sys.exit(f"error: {name} is required but not installed; run `make setup` first")
        pins[key] = f"{dist.metadata['Name']}=={dist.version}"
        for spec in dist.requires or []:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return pins


def main() -> int:
    pins = closure(direct_requirements())
    lines = ["# Exact versions of everything requirements/base.txt pulls in; regenerate with `make lock`."]
    lines += sorted(pins.values(), key=str.lower)
    CONSTRAINTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(pins)} pins to {CONSTRAINTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
