"""Human descriptions of the objects: the verification query (spec §2.5, paper App. I.7).

Two files exist: ``object_descriptions.json`` (``{id: [d1, d2, d3]}``) and
``object_descriptions_with_category.json`` (``{id: {"object_category": c, "descriptions": [...]}}``, the one
the reference evaluator loads). The reference accepts, per entry, a list, or a dict read through
``descriptions``, then ``text``, then its values; :func:`parse_descriptions` accepts the same shapes so that
either file (or a hand-written variant) can feed the query. Descriptions are kept verbatim — typos included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DatasetError, ProblemReport
from .fields import Where, as_list, as_mapping, as_str, describe, optional
from .meta import read_json


@dataclass(frozen=True)
class ObjectDescriptions:
    """The descriptions of one object (usually 3) and, when the file carries it, its category."""

    object_id: str
    descriptions: tuple[str, ...]
    category: str | None = None


def _text_list(value: Any, where: Where) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    items = as_list(value, where)
    return tuple(as_str(item, where.at(i), allow_empty=True) for i, item in enumerate(items))


def parse_entry(object_id: str, value: Any, where: Where) -> ObjectDescriptions:
    """One entry in any accepted shape; an entry must yield at least one description."""
    category: str | None = None
    if isinstance(value, Mapping):
        category = optional(value, "object_category", where, as_str)
        if value.get("descriptions"):
            texts = _text_list(value["descriptions"], where.at("descriptions"))
        elif value.get("text"):
            texts = _text_list(value["text"], where.at("text"))
        else:
            # Last resort of the reference loader: the dict's own values (only the textual ones make sense).
            texts = tuple(v for k, v in value.items() if k != "object_category" and isinstance(v, str))
    elif isinstance(value, list | str):
        texts = _text_list(value, where)
    else:
        raise where.expected("a list of descriptions or an object with 'descriptions'", value)
    if not texts:
        raise where.error(f"no descriptions found in {describe(value)}")
    return ObjectDescriptions(object_id=object_id, descriptions=texts, category=category)


class DescriptionDB(Mapping[str, ObjectDescriptions]):
    """Read-only ``object_id -> ObjectDescriptions`` mapping."""

    def __init__(self, entries: Mapping[str, ObjectDescriptions], source: str | None = None) -> None:
        self._entries = dict(entries)
        self.source = source

    def __getitem__(self, object_id: str) -> ObjectDescriptions:
        return self._entries[object_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def descriptions_for(self, object_id: str) -> tuple[str, ...]:
        """The query texts of an object; a clear error if the object is unknown."""
        try:
            return self._entries[object_id].descriptions
        except KeyError:
            raise DatasetError(
                f"no descriptions for object id {object_id!r}", path=self.source, field=object_id
            ) from None


def parse_descriptions(data: Any, source: str, *, report: ProblemReport | None = None) -> DescriptionDB:
    """Validate a whole descriptions document; with ``report`` bad entries are recorded and skipped."""
    where = Where.of(source)
    obj = as_mapping(data, where)
    entries: dict[str, ObjectDescriptions] = {}
    for object_id, value in obj.items():
        try:
            entries[object_id] = parse_entry(object_id, value, where.at(object_id))
        except DatasetError as error:
            if report is None:
                raise
            report.add(error)
    return DescriptionDB(entries, source)


def load_descriptions(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> DescriptionDB:
    """Load ``object_descriptions.json`` or ``object_descriptions_with_category.json``."""
    name = display or str(path)
    return parse_descriptions(read_json(path, display=name), name, report=report)
