"""Configuration dataclass fields that document themselves: one declaration gives the default, the meaning and
the accepted values.

A knob is written once, as a dataclass field::

    @dataclass(frozen=True)
    class DetectorSettings:
        box_threshold: float = setting(0.35, "smallest box score kept", minimum=0.0, maximum=1.0)

and everything else is read from that field: the node declares a ROS parameter with that description and range,
``aiv-eval`` checks a params file against it, and ``docs/parameters.md`` is generated from it. No description is
scraped from source text, so what a user reads cannot drift from what the code accepts.

``choices`` may be a tuple or a zero-argument callable returning one: a registry of strategies (fusion rules,
next-best-view strategies) lives beside its code, and a callable lets the field name it without importing that
code when the dataclass is defined.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .parameter_spec import ParameterSpec, Scalar

#: Key of a field's :class:`SettingDoc` in ``dataclasses.Field.metadata``.
METADATA_KEY = "aiv_setting"

Choices = tuple[str, ...] | Callable[[], tuple[str, ...]]


@dataclass(frozen=True)
class SettingDoc:
    """What a field says about itself: meaning, accepted values."""

    description: str
    choices: Choices = ()
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: bool = False

    def resolved_choices(self) -> tuple[str, ...]:
        """The accepted strings, calling the registry if the field named one."""
        choices = self.choices() if callable(self.choices) else self.choices
        return tuple(choices)


def setting(
    default: Any,
    description: str,
    *,
    choices: Choices = (),
    minimum: int | float | None = None,
    maximum: int | float | None = None,
    exclusive_minimum: bool = False,
) -> Any:
    """A dataclass field with its default and its documentation (see the module docstring).

    Tuples and other immutable defaults are stored as they are; a mutable default would be shared by every
    instance, so it is refused here rather than by ``dataclasses`` with a less helpful message.
    """
    if isinstance(default, (list, dict, set)):
        raise TypeError(f"setting {description!r}: use a tuple or a frozen value as default, not {default!r}")
    doc = SettingDoc(description, choices, minimum, maximum, exclusive_minimum)
    return dataclasses.field(default=default, metadata={METADATA_KEY: doc})


def section(factory: Callable[[], Any], description: str) -> Any:
    """A nested dataclass field (a group of settings such as ``classical.pattern``), built by ``factory``."""
    return dataclasses.field(default_factory=factory, metadata={METADATA_KEY: SettingDoc(description)})


def setting_doc(field: dataclasses.Field[Any]) -> SettingDoc | None:
    """The documentation a field was declared with, or None for a plain field."""
    doc = field.metadata.get(METADATA_KEY)
    return doc if isinstance(doc, SettingDoc) else None


def parameter_spec(name: str, field: dataclasses.Field[Any], value: Scalar) -> ParameterSpec:
    """The :class:`ParameterSpec` of one documented scalar field, under the dotted parameter ``name``.

    ``value`` is the field's default as a ROS scalar (an enum already turned into its value). A field without
    documentation is a programming error: every knob a user can set must say what it does.
    """
    doc = setting_doc(field)
    if doc is None:
        raise TypeError(f"parameter {name!r}: field {field.name!r} was not declared with setting(...)")
    return ParameterSpec(
        name,
        value,
        doc.description,
        choices=doc.resolved_choices(),
        minimum=doc.minimum,
        maximum=doc.maximum,
        exclusive_minimum=doc.exclusive_minimum,
    )


__all__ = ["METADATA_KEY", "SettingDoc", "parameter_spec", "section", "setting", "setting_doc"]
