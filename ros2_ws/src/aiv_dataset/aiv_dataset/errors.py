"""Errors and problem reports of the PInVerify data layer.

A benchmark run touches thousands of files written by a capture pipeline we do not control. When one of them
is wrong, the person fixing it needs to know *which file, which line, which field and what was expected* —
not a ``KeyError`` from deep inside a loader. Every validation failure is therefore a :class:`DatasetError`
carrying those four parts separately, and bulk operations collect them into a :class:`ProblemReport` instead
of stopping at the first bad episode.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


def _location(path: str | None, line: int | None, field: str | None, message: str) -> str:
    """Render a location like a compiler diagnostic: ``file:line: field 'x': message``."""
    where = path if path is not None else "<unknown file>"
    if line is not None:
        where = f"{where}:{line}"
    if field:
        return f"{where}: field '{field}': {message}"
    return f"{where}: {message}"


class DatasetError(ValueError):
    """A dataset file (or a path inside one) violates the PInVerify format.

    Attributes:
        reason: what is wrong / what was expected, without the location.
        path: the offending file, as given to the loader (kept as text so reports stay readable).
        line: 1-based line number for JSONL files, else ``None``.
        field: dotted path of the offending field (``viewpoints[2].camera_position[1]``), else ``None``.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.reason = reason
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(_location(self.path, line, field, reason))

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructors do not survive pickling by default; worker pools need them to.
        return (_rebuild_error, (self.reason, self.path, self.line, self.field))

    def to_problem(self) -> Problem:
        """Turn the error into a report entry."""
        return Problem(path=self.path, line=self.line, field=self.field, message=self.reason)


def _rebuild_error(reason: str, path: str | None, line: int | None, field: str | None) -> DatasetError:
    return DatasetError(reason, path=path, line=line, field=field)


@dataclass(frozen=True)
class Problem:
    """One entry of a :class:`ProblemReport` (the data of a :class:`DatasetError`, without the exception)."""

    path: str | None
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        return _location(self.path, self.line, self.field, self.message)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ProblemReport:
    """Ordered collection of problems found while loading or validating many files.

    Loaders that must not let one bad episode take the rest down accept a report, add the error to it and
    skip the item. ``ok`` tells whether anything was found; ``str(report)`` lists every problem.
    """

    def __init__(self, problems: Iterable[Problem] = ()) -> None:
        self._problems: list[Problem] = list(problems)

    def add(self, error: DatasetError | Problem) -> None:
        """Record a problem (an exception is converted to its report entry)."""
        self._problems.append(error.to_problem() if isinstance(error, DatasetError) else error)

    def extend(self, other: Iterable[Problem]) -> None:
        for problem in other:
            self.add(problem)

    @contextmanager
    def collect(self) -> Iterator[None]:
        """Run a block, recording (instead of raising) any :class:`DatasetError` it raises."""
        try:
            yield
        except DatasetError as error:
            self.add(error)

    @property
    def ok(self) -> bool:
        return not self._problems

    @property
    def problems(self) -> tuple[Problem, ...]:
        return tuple(self._problems)

    def __iter__(self) -> Iterator[Problem]:
        return iter(tuple(self._problems))

    def __len__(self) -> int:
        return len(self._problems)

    def format(self, limit: int | None = None) -> str:
        """One problem per line; with ``limit`` the tail is summarised as a count."""
        shown = self._problems if limit is None else self._problems[:limit]
        lines = [str(problem) for problem in shown]
        hidden = len(self._problems) - len(shown)
        if hidden > 0:
            lines.append(f"... and {hidden} more problem(s)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def to_json(self) -> str:
        return json.dumps([problem.to_dict() for problem in self._problems], indent=2)
