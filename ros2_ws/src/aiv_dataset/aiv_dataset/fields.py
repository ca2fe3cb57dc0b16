"""Field-level validation helpers shared by every PInVerify loader.

JSON gives us ``Any``; the rest of the system wants typed, finite, present values. These helpers do the
conversion one field at a time and, on failure, raise a :class:`DatasetError` that names the file, the JSONL
line, the dotted field path and what was expected — so a NaN hidden in ``viewpoints[7].camera_position[2]``
is reported as exactly that.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, overload

from .constants import FLOAT32_MAX
from .errors import DatasetError

T = TypeVar("T")
D = TypeVar("D")

_MISSING: Any = object()


def describe(value: Any) -> str:
    """Short human description of a JSON value for 'expected X, got Y' messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "infinity" if value > 0 else "-infinity"
        return f"the number {value!r}"
    if isinstance(value, int):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, Mapping):
        return f"an object with {len(value)} key(s)"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item(s)"
    return f"a {type(value).__name__}"


@dataclass(frozen=True)
class Where:
    """Location of a value being validated: file, optional JSONL line and dotted field path."""

    path: str
    line: int | None = None
    field: str = ""

    @classmethod
    def of(cls, path: str | Path, line: int | None = None) -> Where:
        return cls(str(path), line, "")

    def at(self, key: str | int) -> Where:
        """Location of a child: ``a`` -> ``a.b`` for keys, ``a`` -> ``a[3]`` for list positions."""
        if isinstance(key, int):
            return Where(self.path, self.line, f"{self.field}[{key}]")
        return Where(self.path, self.line, f"{self.field}.{key}" if self.field else key)

    def error(self, reason: str) -> DatasetError:
        return DatasetError(reason, path=self.path, line=self.line, field=self.field or None)

    def expected(self, what: str, value: Any) -> DatasetError:
        return self.error(f"expected {what}, got {describe(value)}")


def as_mapping(value: Any, where: Where) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise where.expected("a JSON object", value)
    return value


def as_list(value: Any, where: Where) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise where.expected("a JSON list", value)
    return list(value)


def as_str(value: Any, where: Where, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise where.expected("a string", value)
    if not allow_empty and not value.strip():
        raise where.error("expected a non-empty string, got an empty one")
    return value


def as_id(value: Any, where: Where) -> str:
    """Identifiers (episode ids, object ids) are strings; integer ids are accepted and stringified."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return as_str(value, where)


def as_bool(value: Any, where: Where) -> bool:
    if not isinstance(value, bool):
        raise where.expected("true or false", value)
    return value


def as_number(value: Any, where: Where) -> float:
    """A finite JSON number within the float32 range (bools are rejected even though Python treats them as
    ints).

    The float32 bound holds for every number of every dataset file: some of them travel in float32 message
    fields, where a larger value turns into infinity, and none of them has a legitimate reason to be larger.
    Huge integers are refused by the same bound (before anything converts them to a float and overflows).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.expected("a finite number", value)
    if isinstance(value, float) and not math.isfinite(value):
        raise where.expected("a finite number", value)
    if abs(value) > FLOAT32_MAX:
        raise where.error(
            f"expected a number of magnitude at most {FLOAT32_MAX:.7g} (the float32 range), got {_short(value)}"
        )
    return value


def _short(value: int | float) -> str:
    """A number for a message: huge integers in scientific notation instead of hundreds of digits."""
    if isinstance(value, int) and abs(value) >= 10**16:
        digits = str(abs(value))
        sign = "-" if value < 0 else ""
        return f"{sign}{digits[0]}.{digits[1:7]}e+{len(digits) - 1}"
    return repr(value)


def as_bounded(
    value: Any, where: Where, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    """A finite number (see :func:`as_number`) inside ``[minimum, maximum]`` (either end optional)."""
    number = as_number(value, where)
    if minimum is not None and number < minimum:
        raise where.error(f"expected a number >= {minimum:g}, got {_short(number)}")
    if maximum is not None and number > maximum:
        raise where.error(f"expected a number <= {maximum:g}, got {_short(number)}")
    return number


def as_int(value: Any, where: Where, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer; integral floats such as ``5111.0`` are accepted because numeric writers produce them."""
    number = as_number(value, where)
    if isinstance(number, float):
        if not number.is_integer():
            raise where.expected("an integer", value)
        number = int(number)
    if minimum is not None and number < minimum:
        raise where.error(f"expected an integer >= {minimum}, got {_short(number)}")
    if maximum is not None and number > maximum:
        raise where.error(f"expected an integer <= {maximum}, got {_short(number)}")
    return int(number)


def as_vector(value: Any, where: Where, length: int) -> tuple[float, ...]:
    """A list of exactly ``length`` finite numbers (e.g. a 3-D position)."""
    items = as_list(value, where)
    if len(items) != length:
        raise where.error(f"expected a list of {length} numbers, got {len(items)} item(s)")
    return tuple(as_number(item, where.at(i)) for i, item in enumerate(items))


def required(obj: Mapping[str, Any], key: str, where: Where, convert: Callable[[Any, Where], T]) -> T:
    """Fetch and convert a field that must be present and non-null."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise where.at(key).error("missing required field")
    if value is None:
        raise where.at(key).error("required field is null")
    return convert(value, where.at(key))


@overload
def optional(
    obj: Mapping[str, Any], key: str, where: Where, convert: Callable[[Any, Where], T], default: None = None
) -> T | None: ...


@overload
def optional(
    obj: Mapping[str, Any], key: str, where: Where, convert: Callable[[Any, Where], T], default: D
) -> T | D: ...


def optional(
    obj: Mapping[str, Any],
    key: str,
    where: Where,
    convert: Callable[[Any, Where], T],
    default: T | None = None,
) -> T | None:
    """Fetch and convert a field that may be absent or null (both mean 'use the default')."""
    value = obj.get(key)
    if value is None:
        return default
    return convert(value, where.at(key))
