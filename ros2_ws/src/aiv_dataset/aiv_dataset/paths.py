"""Confinement of every dataset path to the dataset root.

Index files and meta.json files name other files by relative path (``episode_path``, ``rgb``,
``mask_raw_path``). Those strings come from outside the program, so a crafted or corrupted record
could point at ``../../etc/passwd``, at an absolute path, or at a symbolic link that leads out of the
dataset. The sim node serves images over ROS, so such a path would be a file-disclosure hole.
:class:`DatasetRoot` is the only way the data layer turns a dataset-relative string into a filesystem
path, and it refuses all three escapes.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from .errors import DatasetError
from .fields import Where

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


def check_relative(text: str, where: Where) -> PurePosixPath:
    """Syntactic check of a dataset-relative path; no filesystem access.

    Backslashes are read as separators (the reference pipeline ran partly on Windows). Rejected: empty
    strings, NUL bytes, absolute paths (POSIX, UNC or drive-letter) and any ``..`` component — even one
    that would stay inside the root, because no legitimate PInVerify file needs it.
    """
    if not isinstance(text, str):
        raise where.expected("a relative path string", text)
    normalised = text.replace("\\", "/")
    if not normalised.strip():
        raise where.error("expected a relative path, got an empty string")
    if "\x00" in normalised:
        raise where.error("path contains a NUL byte")
    if normalised.startswith("/") or _WINDOWS_DRIVE.match(normalised):
        raise where.error(f"path {text!r} is absolute; expected a path relative to the dataset root")
    pure = PurePosixPath(normalised)
    if ".." in pure.parts:
        raise where.error(f"path {text!r} contains '..'; paths must stay inside the dataset root")
    return pure


class DatasetRoot:
    """The dataset root directory and the safe resolution of paths below it."""

    def __init__(self, root: str | Path) -> None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise DatasetError("dataset root does not exist or is not a directory", path=path)
        self.path = path.absolute()
        self.real = path.resolve()

    def __repr__(self) -> str:
        return f"DatasetRoot({str(self.path)!r})"

    def resolve(self, *parts: str, where: Where, must_exist: bool = False) -> Path:
        """Join dataset-relative ``parts`` under the root, refusing anything that leaves it.

        The joined path is fully resolved (following symbolic links, including dangling ones) and must
        stay inside the resolved root. The returned path is the un-resolved one below :attr:`path`, which
        keeps observation paths readable (``<root>/pin_capture/val/<scene>/<ep>/rgb/rgb_s0_far.png``).
        """
        joined = PurePosixPath()
        for part in parts:
            joined = joined / check_relative(part, where)
        candidate = self.path.joinpath(*joined.parts)
        real = candidate.resolve()
        if not real.is_relative_to(self.real):
            raise where.error(
                f"path {joined.as_posix()!r} leads outside the dataset root (via a symbolic link to {real})"
            )
        if must_exist and not candidate.exists():
            raise where.error(f"path {joined.as_posix()!r} does not exist under the dataset root")
        return candidate

    def relative(self, path: Path) -> str:
        """Dataset-relative POSIX form of a path below the root (as written into index files)."""
        return path.absolute().relative_to(self.path).as_posix()
