"""The robot stand-in (``aiv_robot_sim``'s ``robot_sim`` node) under a Python audit hook, for closed-loop tests.

Usage: ``python audited_robot_sim.py <forbidden-root> --ros-args ...``. The hook sees every file the process
opens (``open`` audit events: builtins.open, io.open, os.open, np.load, cv2 via Python paths) and, for each path
that is an image (``.png``, ``.jpg``) or lies in an ``rgb/`` folder or under ``<forbidden-root>`` (the dataset
the verifier's oracle reads), writes ``AUDIT forbidden open: <path>`` to stderr at once (os.write: no further
audit event). At exit it writes ``AUDIT opened <n> files, <m> forbidden`` so the test can tell that the hook
ran at all.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

FORBIDDEN_ROOT = os.path.realpath(sys.argv.pop(1))
_counts = {"opened": 0, "forbidden": 0}
_local = threading.local()  # the hook's own path checks must not re-enter it (per thread)


def _forbidden(path: str) -> bool:
    lowered = path.lower()
    if lowered.endswith((".png", ".jpg", ".jpeg")) or "/rgb/" in lowered:
        return True
    full = (
        os.path.realpath(path) if os.path.isabs(path) else os.path.realpath(os.path.join(os.getcwd(), path))
    )
    return full == FORBIDDEN_ROOT or full.startswith(FORBIDDEN_ROOT + os.sep)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    if getattr(_local, "inside", False):
        return
    _local.inside = True
    try:
        path = os.fsdecode(args[0])
        _counts["opened"] += 1
        if _forbidden(path):
            _counts["forbidden"] += 1
            os.write(2, f"AUDIT forbidden open: {path}\n".encode())
    finally:
        _local.inside = False


sys.addaudithook(_audit)

if __name__ == "__main__":
    from aiv_robot_sim.node import main

    try:
        code = main()  # rclpy reads the --ros-args left in sys.argv
    finally:
        os.write(2, f"AUDIT opened {_counts['opened']} files, {_counts['forbidden']} forbidden\n".encode())
    sys.exit(code)
