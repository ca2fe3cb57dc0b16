"""Reading messages recorded with an older layout of their type: bags outlive message versions.

A session bag stores, per connection, the full text of the message definition it was written with (nested
types included). When the project's messages gain fields (Verdict's ``probability``, say), the bags recorded
before still hold the old layout, and rclpy's ``deserialize_message`` with the current class fails on them or,
worse, reads the bytes as other fields. So each connection's stored definition is compared with the installed
one, field by field (comments and formatting do not count):

- equal (every bag written since): rclpy decodes the bytes directly, as before (the fast path);
- different: rosbags decodes the bytes with a typestore built from the bag's own definition, and the result is
  copied into the current rclpy class field by field, by name, nested messages and sequences included.
  Fields the old layout lacks keep the class's defaults, except the ones :data:`NAN_WHEN_ABSENT` names: the
  project writes NaN there for "not computed", which is what an older recording means. Fields the current
  layout no longer has are dropped.

Any problem (a stored definition that does not parse, bytes that do not decode with it, a field whose type
changed into something it cannot be copied to) is a :class:`MessageUpgradeError` saying what.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from rclpy.serialization import deserialize_message
from rosbags.interfaces import MessageDefinition, MessageDefinitionFormat, Nodetype
from rosbags.typesys import Stores, get_types_from_idl, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore
from rosidl_parser.definition import (
    AbstractGenericString,
    AbstractNestedType,
    AbstractType,
    BasicType,
    NamespacedType,
)

__all__ = [
    "NAN_WHEN_ABSENT",
    "ConnectionDecoder",
    "MessageUpgradeError",
    "same_layout",
    "stored_types",
    "upgrade_message",
]

#: Float fields that read as NaN ("not computed") when a recording's layout predates them.
NAN_WHEN_ABSENT: Mapping[str, frozenset[str]] = {
    "aiv_interfaces/msg/Verdict": frozenset({"probability"}),
    "aiv_interfaces/msg/StepReport": frozenset({"probability"}),
    "aiv_interfaces/msg/AttributeState": frozenset({"belief", "disbelief"}),
}

#: rosbags' parsed definitions: type name -> (constants, fields).
Typesdict = dict[str, Any]

_IDL_SEPARATOR = "=" * 80 + "\n"
_FLOAT_TYPES = frozenset({"float", "double", "long double"})
_INTEGER_TYPES = frozenset(
    {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "short", "long", "long long"}
    | {"unsigned short", "unsigned long", "unsigned long long"}
)


class MessageUpgradeError(ValueError):
    """A recorded message cannot be read with its stored definition or copied into the current class."""


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


# -- definitions ------------------------------------------------------------------------------------------


def stored_types(msgtype: str, msgdef: MessageDefinition) -> Typesdict | None:
    """The types a connection's stored definition declares (None when the bag stores none)."""
    try:
        if msgdef.format == MessageDefinitionFormat.MSG:
            return dict(get_types_from_msg(msgdef.data, msgtype))
        if msgdef.format == MessageDefinitionFormat.IDL:
            types: Typesdict = {}
            if msgdef.data.startswith(f"{_IDL_SEPARATOR}IDL: "):
                for section in msgdef.data.split(_IDL_SEPARATOR)[1:]:
                    types.update(get_types_from_idl(section.split("\n", 1)[1]))
            else:
                types.update(get_types_from_idl(msgdef.data))
            return types
    except Exception as error:  # rosbags' parser raises its own errors and IndexError on odd text
        raise MessageUpgradeError(
            f"its stored definition of {msgtype} does not parse: {_one_line(error)}"
        ) from error
    return None


def _referenced(fields: Any) -> list[str]:
    """Names of the message types a field list refers to (directly or as array/sequence items)."""
    names = []
    for _name, (kind, detail) in fields:
        if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            kind, detail = detail[0]
        if kind == Nodetype.NAME:
            names.append(str(detail))
    return names


def _closure(msgtype: str, stored: Typesdict, installed: Mapping[str, Any]) -> Typesdict:
    """``msgtype`` and every type it uses, each from the stored definitions, else from the installed ones
    (a stored definition may leave out a standard type)."""
    found: Typesdict = {}
    pending = [msgtype]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        definition = stored.get(name, installed.get(name))
        if definition is None:
            raise MessageUpgradeError(
                f"its stored definition of {msgtype} uses {name}, which is defined nowhere"
            )
        found[name] = definition
        pending.extend(_referenced(definition[1]))
    return found


def same_layout(msgtype: str, stored: Typesdict, installed: Typestore) -> bool:
    """Whether the stored definition of ``msgtype`` serializes like the installed one: the same fields, of the
    same types, in every type it uses (constants and comments do not matter)."""
    for name, (_consts, fields) in _closure(msgtype, stored, installed.fielddefs).items():
        current = installed.fielddefs.get(name)
        if current is None or list(current[1]) != list(fields):
            return False
    return True


def _stored_typestore(msgtype: str, stored: Typesdict, installed: Typestore) -> Typestore:
    """A fresh typestore holding ``msgtype`` as the bag stored it (one per connection: no clash between
    bags that hold different versions of one type)."""
    store = get_typestore(Stores.EMPTY)
    try:
        store.register(_closure(msgtype, stored, installed.fielddefs))
    except MessageUpgradeError:
        raise
    except Exception as error:
        raise MessageUpgradeError(
            f"its stored definition of {msgtype} is unusable: {_one_line(error)}"
        ) from error
    return store


# -- conversion -------------------------------------------------------------------------------------------


def _type_name(slot: NamespacedType) -> str:
    return "/".join([*slot.namespaces, slot.name])


def _message_class(slot: NamespacedType) -> Any:
    module = importlib.import_module(".".join(slot.namespaces))
    found = getattr(module, slot.name, None)
    if found is None and "_" in slot.name:  # an action's part (VerifyInstance_Goal): VerifyInstance.Goal
        action, part = slot.name.rsplit("_", 1)
        found = getattr(getattr(module, action, None), part, None)
    if found is None:
        raise MessageUpgradeError(f"no message class {_type_name(slot)} is installed")
    return found


def _scalar(value: Any, slot: AbstractType, where: str) -> Any:
    if isinstance(slot, AbstractGenericString):
        if not isinstance(value, str):
            raise MessageUpgradeError(f"{where}: recorded {type(value).__name__}, now a string")
        return value
    if not isinstance(slot, BasicType):
        raise MessageUpgradeError(f"{where}: a field of type {type(slot).__name__} is not supported")
    if hasattr(value, "__msgtype__") or isinstance(value, (str, list, tuple, np.ndarray)):
        raise MessageUpgradeError(f"{where}: recorded {type(value).__name__}, now {slot.typename}")
    if slot.typename in _FLOAT_TYPES:
        return float(value)
    if slot.typename in _INTEGER_TYPES:
        return int(value)
    if slot.typename == "boolean":
        return bool(value)
    if slot.typename == "octet":
        return bytes([int(value)]) if not isinstance(value, bytes) else value
    if slot.typename in ("char", "wchar"):
        return chr(int(value)) if not isinstance(value, str) else value
    raise MessageUpgradeError(f"{where}: basic type {slot.typename} is not supported")


def _primitive_list(value: np.ndarray[Any, Any], item: AbstractType) -> list[Any] | None:
    """A numeric array as the list its current item type takes (None: convert item by item)."""
    typename = item.typename if isinstance(item, BasicType) else ""
    if typename in _FLOAT_TYPES and value.dtype.kind in "biuf":
        return list(value.astype(np.float64).tolist())
    if (typename in _INTEGER_TYPES and value.dtype.kind in "iu") or (
        typename == "boolean" and value.dtype.kind == "b"
    ):
        return list(value.tolist())
    return None


def _convert(value: Any, slot: AbstractType, where: str) -> Any:
    if isinstance(slot, NamespacedType):
        return upgrade_message(value, _message_class(slot), _type_name(slot), where=where)
    if isinstance(slot, AbstractNestedType):
        if isinstance(value, np.ndarray):
            fast = _primitive_list(value, slot.value_type)
            if fast is not None:
                return fast
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise MessageUpgradeError(f"{where}: recorded {type(value).__name__}, now an array or sequence")
        return [_convert(item, slot.value_type, f"{where}[{index}]") for index, item in enumerate(value)]
    return _scalar(value, slot, where)


def upgrade_message(old: Any, target: Any, msgtype: str, *, where: str | None = None) -> Any:
    """``old`` (a rosbags message of an older layout) as an instance of the rclpy class ``target`` (type
    name ``msgtype``): fields copied by name, absent ones defaulted (NaN for :data:`NAN_WHEN_ABSENT`)."""
    where = where or msgtype
    if not hasattr(old, "__msgtype__"):
        raise MessageUpgradeError(f"{where}: recorded {type(old).__name__}, now a message {msgtype}")
    message = target()
    nan_fields = NAN_WHEN_ABSENT.get(msgtype, frozenset())
    for name, slot in zip(target.get_fields_and_field_types(), target.SLOT_TYPES, strict=True):
        if not hasattr(old, name):
            if name in nan_fields:
                setattr(message, name, math.nan)
            continue
        value = _convert(getattr(old, name), slot, f"{where}.{name}")
        try:
            setattr(message, name, value)
        except (AssertionError, TypeError, ValueError) as error:  # rclpy's setters check with assert
            raise MessageUpgradeError(f"{where}.{name}: {_one_line(error)}") from error
    return message


# -- one connection ---------------------------------------------------------------------------------------


class ConnectionDecoder:
    """Decodes the raw messages of one bag connection into the current rclpy class ``target``.

    ``upgrading`` says which way: False (the stored definition is the installed one, or the bag stores none)
    is rclpy's ``deserialize_message``; True is rosbags with the stored definition, then
    :func:`upgrade_message`.
    """

    def __init__(self, msgtype: str, msgdef: MessageDefinition, target: Any, installed: Typestore) -> None:
        self.msgtype, self.target = msgtype, target
        stored = stored_types(msgtype, msgdef)
        self.upgrading = stored is not None and not same_layout(msgtype, stored, installed)
        self._store = (
            _stored_typestore(msgtype, stored, installed) if stored is not None and self.upgrading else None
        )

    def __call__(self, raw: bytes) -> Any:
        if self._store is None:
            return deserialize_message(raw, self.target)
        try:
            old = self._store.deserialize_cdr(raw, self.msgtype)
        except Exception as error:  # rosbags raises SerdeError, struct.error, IndexError, ...
            raise MessageUpgradeError(
                f"a message does not decode with the {self.msgtype} definition stored in the bag: "
                f"{_one_line(error)}"
            ) from error
        try:
            return upgrade_message(old, self.target, self.msgtype)
        except MessageUpgradeError as error:
            raise MessageUpgradeError(
                f"a message recorded with an older {self.msgtype} layout does not fit the current one: {error}"
            ) from error
