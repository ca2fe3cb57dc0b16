"""What a node parameter is and which values it accepts, without ROS.

Each node keeps one table of :class:`ParameterSpec` values. The node declares its ROS parameters from the
table (``aiv_common.parameters``) and ``aiv-eval`` builds its defaults and checks a params file against the
same table, so the two cannot disagree about a name, a type or a range. Every refusal is a
:class:`ParameterError` whose message is one line naming the parameter, the value and what is accepted:
a typo or a wrong type must stop a run at once, never fall back to a default unnoticed.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: Python types a parameter may have (ROS bool, integer, double and string).
Scalar = bool | int | float | str
#: An unknown-name message lists every known name only for tables this short (one readable line).
MAX_LISTED_NAMES = 24


class ParameterError(ValueError):
    """A parameter value, type or name is not accepted; the message is one line that names it."""


@dataclass(frozen=True)
class ParameterSpec:
    """One node parameter: its name, default, meaning and accepted values.

    ``minimum`` / ``maximum`` bound numbers (inclusive; ``exclusive_minimum`` makes the lower bound strict,
    e.g. a timeout that must be > 0). ``choices`` lists the accepted strings. ``read_only`` parameters are
    read once at start-up, so changing them while the node runs would be ignored; ROS refuses such a change.
    """

    name: str
    default: Scalar
    description: str
    choices: tuple[str, ...] = ()
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: bool = False
    read_only: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.default, (bool, int, float, str)):
            raise TypeError(f"parameter {self.name!r}: default {self.default!r} is not a bool/int/float/str")
        self.check(self.default)  # a table whose default it would itself refuse is a programming error

    @property
    def type_name(self) -> str:
        """``bool``, ``integer``, ``double`` or ``string``: the ROS parameter type."""
        return _type_name(self.default)

    def accepted(self) -> str:
        """What this parameter accepts, in words (for error messages and descriptions)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        noun = {"bool": "true or false", "integer": "an integer", "double": "a number", "string": "a string"}[
            self.type_name
        ]
        bounds = []
        if self.minimum is not None:
            bounds.append(f"{'>' if self.exclusive_minimum else '>='} {_number(self.minimum)}")
        if self.maximum is not None:
            bounds.append(f"<= {_number(self.maximum)}")
        return f"{noun} {' and '.join(bounds)}".strip()

    def check(self, value: Any) -> Scalar:
        """``value`` as this parameter's type, or ParameterError naming the parameter and what it accepts.

        An integer is accepted for a double (YAML writes ``10`` for ten seconds) and a number for a string (a
        run called ``2024``); nothing else is converted: ``"abc"`` is no integer and ``1`` is no boolean.
        """
        kind = self.type_name
        if kind == "double" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        elif kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if value is None or _type_name(value) != kind:
            raise ParameterError(f"parameter {self.name!r} = {_shown(value)}; expected {self.accepted()}")
        if self.choices and value not in self.choices:
            raise ParameterError(f"parameter {self.name!r} = {value!r}; expected {self.accepted()}")
        if kind in ("integer", "double") and not self._in_range(value):
            raise ParameterError(f"parameter {self.name!r} = {value!r}; expected {self.accepted()}")
        return value

    def _in_range(self, value: int | float) -> bool:
        if isinstance(value, float) and math.isnan(value):
            return False
        if self.minimum is not None and (
            value <= self.minimum if self.exclusive_minimum else value < self.minimum
        ):
            return False
        return self.maximum is None or value <= self.maximum


def parameter_defaults(table: Iterable[ParameterSpec]) -> dict[str, Scalar]:
    """``{name: default}`` of a table, in declaration order."""
    return {spec.name: spec.default for spec in table}


def table_by_name(table: Iterable[ParameterSpec]) -> dict[str, ParameterSpec]:
    """The table indexed by name; a name declared twice is a programming error."""
    indexed: dict[str, ParameterSpec] = {}
    for spec in table:
        if spec.name in indexed:
            raise ValueError(f"parameter {spec.name!r} is declared twice")
        indexed[spec.name] = spec
    return indexed


def unknown_parameter_message(name: str, known: Iterable[str], shown_as: str | None = None) -> str:
    """One line refusing ``name``, with the nearest known names (or all of them for a short table)."""
    names = sorted(known)
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
    if near:
        hint = f"did you mean {', '.join(near)}?"
    elif len(names) <= MAX_LISTED_NAMES:
        hint = f"known: {', '.join(names)}"
    else:
        hint = f"none of the {len(names)} declared names is close (the node's config YAML lists them all)"
    return f"unknown parameter {shown_as or repr(name)}; {hint}"


def check_values(table: Iterable[ParameterSpec], values: Mapping[str, Any]) -> dict[str, Scalar]:
    """Every value checked against its spec; a name the table does not declare is refused."""
    indexed = table_by_name(table)
    checked: dict[str, Scalar] = {}
    for name, value in values.items():
        if name not in indexed:
            raise ParameterError(unknown_parameter_message(name, indexed))
        checked[name] = indexed[name].check(value)
    return checked


def flatten_parameters(values: Mapping[Any, Any], prefix: str = "") -> dict[str, Any]:
    """Nested params-file mappings as dotted names: ``{agent: {nbv: x}}`` → ``{"agent.nbv": x}``.

    This is what ROS does with a nested ``ros__parameters`` section, so reading a file through this gives the
    names a node started with that file sees.
    """
    flat: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise ParameterError(
                f"parameter name {key!r} under {prefix or 'ros__parameters'!r} is not a name"
            )
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            if not value:
                raise ParameterError(f"parameter {name!r} is an empty mapping; give values under it")
            flat.update(flatten_parameters(value, name))
        else:
            flat[name] = value
    return flat


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "nothing"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def _shown(value: Any) -> str:
    kind = _type_name(value)
    if kind == "nothing":
        return "nothing (no value)"
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{value!r} ({article} {kind})"


def _number(value: int | float) -> str:
    return repr(value) if isinstance(value, int) or not float(value).is_integer() else repr(float(value))
