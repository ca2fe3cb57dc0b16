"""Nested configuration dataclasses ⇄ flat, dotted ROS parameter names.

Backends describe their knobs as frozen dataclasses (possibly nested: ``classical.region.border_px``). The
node declares one ROS parameter per scalar field, with the dataclass default, so ``ros2 param list`` shows every
knob and a params YAML can set any of them; the factory rebuilds the dataclasses from the nested mapping and
refuses unknown keys, so a typo in a YAML is an error instead of a silently ignored setting.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from enum import Enum
from typing import Any, TypeVar

T = TypeVar("T")
SCALARS = (bool, int, float, str)


def flatten_defaults(instance: Any, prefix: str) -> dict[str, Any]:
    """``{"prefix.field": default}`` for every scalar field, recursing into nested dataclasses.

    Sequence-valued fields are skipped: ROS cannot declare an empty array parameter without a type, and none
    of them is something a deployment tunes per robot.
    """
    flat: dict[str, Any] = {}
    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        name = f"{prefix}.{field.name}"
        if dataclasses.is_dataclass(value):
            flat.update(flatten_defaults(value, name))
        elif isinstance(value, Enum):
            flat[name] = value.value
        elif isinstance(value, SCALARS):
            flat[name] = value
    return flat


def dataclass_from_mapping(cls: type[T], values: Mapping[str, Any], where: str) -> T:
    """Build ``cls`` from a nested mapping; unknown keys raise ValueError naming ``where.key``."""
    if not isinstance(values, Mapping):
        raise ValueError(f"{where} must be a mapping, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    known = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {[f'{where}.{key}' for key in unknown]}; known: {sorted(known)}"
        )
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        hint = hints.get(name)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            kwargs[name] = dataclass_from_mapping(hint, value, f"{where}.{name}")
        elif hint is float and isinstance(value, int) and not isinstance(value, bool):
            kwargs[name] = float(value)  # YAML "1" for a float knob
        else:
            kwargs[name] = value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from error


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


def config_parameter_defaults() -> dict[str, Any]:
    """Every agent/backend knob as a dotted parameter name with its default; they nest into the factory config."""
    return dict(_parameter_defaults())


@functools.cache
def _parameter_defaults() -> dict[str, Any]:
    # Built once: an evaluation spec consults it for every parameter it sets.
    from .agent.settings import AgentSettings
    from .query.config import QueryConfig
    from .verification.classical.backend import ClassicalParams
    from .verification.oracle import NoiseModel

    defaults: dict[str, Any] = {}
    defaults.update(flatten_defaults(AgentSettings(), "agent"))
    defaults["verifier.backend"] = "classical"
    defaults["verifier.dataset_root"] = ""
    defaults.update(flatten_defaults(NoiseModel(), "verifier.noise"))
    defaults.update(flatten_defaults(ClassicalParams(), "verifier.classical"))
    defaults.update(flatten_defaults(QueryConfig(), "query"))
    return defaults
