"""TEMPORARY (issue #31 item 3): descriptions and ranges of the classical verifier's knobs, read from its source.

Every other setting of the verifier declares its description and range on its field
(:func:`aiv_common.setting_fields.setting`). The classical backend's parameter dataclasses are being moved into
the ``aiv_checks`` package with every field declared that way; until then their fields say nothing about
themselves, so this module reads their docstrings and derives ranges from the naming convention, as the
configuration did before. Delete this module (and the ``undocumented=`` hook in
:mod:`.verifier_parameters`) once ``aiv_checks`` lands: an undocumented field then is an error.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import re
import textwrap
from typing import Any

from aiv_common.parameter_spec import ParameterSpec

from .agent.factory import classical_ocr_choices

#: The only knobs this fallback may describe.
CLASSICAL_PREFIX = "verifier.classical."
#: Leaf names of classical knobs that are shares, scores or ratios in [0, 1] (the naming convention there).
_UNIT_INTERVAL = re.compile(r"(share|support|dominant|fraction|score|ratio|confidence|fill|span|merge|rate)$")
#: Classical knobs with another natural range.
_CLASSICAL_RANGES: dict[str, tuple[float, float]] = {
    "exposure_target": (0.0, 255.0),
    "exposure_percentile": (0.0, 100.0),
    "box_max_roundness": (-1.0, 1.0),  # category.outline_roundness: ellipse fit minus polygon fit
}
_CHOICES = {"verifier.classical.ocr_engine": classical_ocr_choices()}


def spec(name: str, owner: type, field: dataclasses.Field[Any], value: Any) -> ParameterSpec:
    """The spec of an undocumented classical knob; any other undocumented field is a programming error."""
    if not name.startswith(CLASSICAL_PREFIX):
        raise TypeError(f"parameter {name!r}: field {field.name!r} was not declared with setting(...)")
    description = _field_descriptions(owner).get(field.name) or (
        f"{owner.__name__}.{field.name} (see that class's docstring)"
    )
    minimum, maximum = _classical_range(name, value)
    return ParameterSpec(
        name, value, description, choices=tuple(_CHOICES.get(name, ())), minimum=minimum, maximum=maximum
    )


def _classical_range(name: str, default: Any) -> tuple[float | None, float | None]:
    if isinstance(default, (bool, str)):
        return None, None
    leaf = name.rsplit(".", 1)[-1]
    if leaf in _CLASSICAL_RANGES:
        return _CLASSICAL_RANGES[leaf]
    if _UNIT_INTERVAL.search(leaf):
        return 0.0, 1.0
    return (0 if isinstance(default, int) else 0.0), None


@functools.cache
def _field_descriptions(cls: type) -> dict[str, str]:
    """What a dataclass says about each field: metadata, attribute docstring, or its class docstring entry."""
    if not dataclasses.is_dataclass(cls):
        return {}
    names = [field.name for field in dataclasses.fields(cls)]
    found = _docstring_entries(inspect.cleandoc(cls.__doc__ or ""), names)
    found.update(_attribute_docstrings(cls))
    for field in dataclasses.fields(cls):
        if field.metadata.get("description"):
            found[field.name] = str(field.metadata["description"])
    return {name: _plain(text) for name, text in found.items()}


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """Docstrings written right under a field (``x: int = 1`` then ``\"\"\"text\"\"\"``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    found: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            found[statement.target.id] = following.value.value
    return found


def _docstring_entries(doc: str, names: list[str]) -> dict[str, str]:
    """Per-field text of a class docstring: numpy-style entries (a line naming fields, indented text under
    it), else the clause that mentions ````field````."""
    found: dict[str, str] = {}
    lines = doc.splitlines()
    for index, line in enumerate(lines):
        listed = [part.strip() for part in line.split(",")]
        if line[:1].isspace() or not all(part in names for part in listed):
            continue
        text = []
        for following in lines[index + 1 :]:
            if following and not following[:1].isspace():
                break
            text.append(following.strip())
        if any(text):
            for name in listed:
                found[name] = " ".join(text)
    clauses = [
        clause
        for sentence in re.split(r"(?<=\.)\s+(?=[A-Z`])", " ".join(doc.split()))
        for clause in sentence.split("; ")
    ]
    for name in names:
        mentioned = [clause for clause in clauses if f"``{name}``" in clause]
        if name not in found and mentioned:
            found[name] = mentioned[0]
    return found


def _plain(text: str) -> str:
    """Docstring markup (````x````, :func:`x`) as plain text, on one line."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")
    return " ".join(text.split()).rstrip(".")
