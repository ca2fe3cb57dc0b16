#!/usr/bin/env python3
"""Point the ROS 2 wheels' exported CMake targets at this interpreter's headers.

The PyPI ROS 2 wheels were built in a manylinux container, and their exported
``*_rosidl_generator_pyExport.cmake`` files hard-code that container's Python include
directory and NumPy include directory. Building any custom interface package against them
then fails with missing-header errors. This rewrites those two paths to the running
interpreter's (which must be the venv's). It is idempotent: rewritten files no longer contain
the builder's paths, so a second run changes nothing. Re-run after reinstalling a message wheel.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
from pathlib import Path

BUILDER_PYTHON_INCLUDE = "/opt/python/cp311-cp311/include/python3.11"
BUILDER_NUMPY_INCLUDE = "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"


def replacement_paths() -> dict[str, str]:
    """Map each hard-coded builder path to the equivalent path of this interpreter."""
    import numpy

    # Longest first so the NumPy path is not half-rewritten by the shorter include prefix.
    return {
        BUILDER_NUMPY_INCLUDE: numpy.get_include(),
        BUILDER_PYTHON_INCLUDE: sysconfig.get_paths()["include"],
    }


def fix_tree(prefix: Path) -> list[Path]:
    """Rewrite every exported CMake file under ``prefix/share``; return the files changed."""
    mapping = replacement_paths()
    changed: list[Path] = []
    for path in sorted((prefix / "share").glob("*/cmake/*Export*.cmake")):
        text = path.read_text(encoding="utf-8")
        new_text = text
        for old, new in mapping.items():
            new_text = new_text.replace(old, new)
        if new_text != text:
            path.write_text(new_text, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--prefix", type=Path, default=Path(sys.prefix), help="venv prefix (default: this one)"
    )
    args = parser.parse_args(argv)
    if not (args.prefix / "share").is_dir():
        print(f"error: {args.prefix}/share does not exist; is this the ROS venv?", file=sys.stderr)
        return 2
    changed = fix_tree(args.prefix)
    print(f"rosidl CMake path fix: {len(changed)} file(s) rewritten under {args.prefix / 'share'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
