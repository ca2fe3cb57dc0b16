"""Nested settings dataclasses ⇄ flat, dotted parameter names, ⇄ nested mappings.

A node's configuration is a tree of frozen dataclasses whose fields are declared with
:func:`~aiv_common.setting_fields.setting` (a scalar knob) or :func:`~aiv_common.setting_fields.section` (a
group). ROS parameters are flat and dotted (``agent.evidence.accept``), a params YAML nests them, and the code
that builds backends wants one dataclass per section. This module converts between the three, generically, so
that every node and tool derives its names, defaults and parameter specs from the same dataclasses:

- :func:`flatten_defaults` and :func:`setting_specs` walk a dataclass instance and give one dotted name per
  scalar field (with its default, or its :class:`~aiv_common.parameter_spec.ParameterSpec`);
- :func:`nested_config` turns dotted names back into nested mappings;
- :func:`dataclass_from_mapping` builds a dataclass from a nested mapping and refuses unknown keys, so a typo
  in a params file is an error instead of a silently ignored setting.

Sequence-valued fields are skipped: ROS cannot declare an empty array parameter without a type, and none of
them is something a deployment tunes per robot.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

from .parameter_spec import ParameterSpec
from .setting_fields import parameter_spec

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")
#: Field values that become one ROS parameter each.
SCALARS = (bool, int, float, str)
_Found = tuple[str, "dataclasses.Field[Any]", Any]


def _dotted(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _scalar_fields(instance: Any, prefix: str) -> list[_Found]:
    """``(dotted name, field, ROS value)`` of every scalar field, depth first in declaration order."""
    found: list[_Found] = []
    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        name = _dotted(prefix, field.name)
        if dataclasses.is_dataclass(value):
            found += _scalar_fields(value, name)
        elif isinstance(value, Enum):
            found.append((name, field, value.value))
        elif isinstance(value, SCALARS):
            found.append((name, field, value))
    return found


def flatten_defaults(instance: Any, prefix: str = "") -> dict[str, Any]:
    """``{"prefix.field": value}`` for every scalar field of ``instance``, recursing into nested dataclasses."""
    return {name: value for name, _field, value in _scalar_fields(instance, prefix)}


def setting_specs(instance: Any, prefix: str = "") -> tuple[ParameterSpec, ...]:
    """One :class:`ParameterSpec` per scalar field (same names and order as :func:`flatten_defaults`).

    Every field must say what it means and accepts (``setting(...)``); one that does not is a TypeError, so a
    knob cannot reach users undocumented.
    """
    return tuple(
        parameter_spec(name, field, value) for name, field, value in _scalar_fields(instance, prefix)
    )


def nested_config(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"agent.nbv": "random"}`` → ``{"agent": {"nbv": "random"}}``."""
    config: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = config
        *parents, leaf = dotted.split(".")
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return config


def dataclass_from_mapping(cls: type[T], values: Mapping[str, Any], where: str) -> T:
    """Build ``cls`` from a nested mapping; an unknown key or a refused value raises ValueError naming it.

    A nested section is recognised by its type hint or, for a field typed loosely, by the dataclass its
    ``section(...)`` builds. An integer is accepted for a float field (YAML writes ``1`` for one).
    """
    if not isinstance(values, Mapping):
        raise ValueError(f"{where} must be a mapping, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    known = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {[_dotted(where, key) for key in unknown]}; known: {sorted(known)}"
        )
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        nested = _section_type(known[name], hints.get(name))
        if nested is not None:
            kwargs[name] = dataclass_from_mapping(nested, value, _dotted(where, name))
        elif hints.get(name) is float and isinstance(value, int) and not isinstance(value, bool):
            kwargs[name] = float(value)
        else:
            kwargs[name] = value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from error


def _section_type(field: dataclasses.Field[Any], hint: Any) -> type[Any] | None:
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    factory = field.default_factory
    if isinstance(factory, type) and dataclasses.is_dataclass(factory):
        return factory
    return None


__all__ = [
    "SCALARS",
    "dataclass_from_mapping",
    "flatten_defaults",
    "nested_config",
    "setting_specs",
]
