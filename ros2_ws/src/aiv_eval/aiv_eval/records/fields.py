"""Checks of the fields of a results record: one line per problem, naming the record part and the field.

Every record part (:mod:`.episode`) validates its fields on construction with these, so a malformed or
hand-edited ``results.jsonl`` line is refused with a message that says where, never half read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

FLOAT_DECIMALS = 4
"""Decimals kept for every float in a record (confidences, vote sums)."""


class RecordError(ValueError):
    """A record (or one of its parts) is malformed or inconsistent."""


# ------------------------------------------------------------------------------------------------ helpers


def round_float(value: float, decimals: int = FLOAT_DECIMALS) -> float:
    """Round ``value`` the way records do (Python's correctly rounded ``round``), with ``-0.0`` → ``0.0``."""
    out = round(float(value), decimals)
    return 0.0 if out == 0 else out


def _check_str(owner: str, name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise RecordError(f"{owner}.{name} must be a string, got {type(value).__name__}")


def _check_int(owner: str, name: str, value: Any, minimum: int | None = 0) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{owner}.{name} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise RecordError(f"{owner}.{name} must be >= {minimum}, got {value}")


def _check_bool(owner: str, name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise RecordError(f"{owner}.{name} must be a bool, got {type(value).__name__}")


def _check_choice(owner: str, name: str, value: Any, choices: Sequence[Any]) -> None:
    if value not in choices or isinstance(value, bool) != any(isinstance(c, bool) for c in choices):
        raise RecordError(f"{owner}.{name} must be one of {list(choices)}, got {value!r}")


def _float_field(
    owner: str, name: str, value: Any, lo: float | None = None, hi: float | None = None
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(f"{owner}.{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise RecordError(f"{owner}.{name} must be finite, got {value!r}")
    out = round_float(value)
    if (lo is not None and out < lo) or (hi is not None and out > hi):
        raise RecordError(f"{owner}.{name} must lie in [{lo}, {hi}], got {value!r}")
    return out


def _str_tuple(owner: str, name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise RecordError(f"{owner}.{name} must be a list of strings")
    out = tuple(value)
    for item in out:
        if not isinstance(item, str):
            raise RecordError(f"{owner}.{name} must contain only strings, got {type(item).__name__}")
    return out


def _check_keys(owner: str, data: Mapping[str, Any], expected: Sequence[str]) -> None:
    if not isinstance(data, Mapping):
        raise RecordError(f"{owner} must be a JSON object, got {type(data).__name__}")
    missing = [k for k in expected if k not in data]
    unknown = sorted(k for k in data if k not in expected)
    if missing or unknown:
        raise RecordError(f"{owner}: missing keys {missing}, unknown keys {unknown}")


def _check_relative_path(owner: str, name: str, value: str) -> None:
    parts = value.split("/")
    if (
        not value
        or value.startswith("/")
        or "\\" in value
        or any(p in ("", ".", "..") for p in parts)
        or (len(parts[0]) >= 2 and parts[0][1] == ":")
    ):
        raise RecordError(f"{owner}.{name} must be a relative POSIX path inside the run dir, got {value!r}")
