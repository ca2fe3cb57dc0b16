"""The distractor map: which other objects may serve as negative queries for a target (spec §2.4).

``object_goal_distractors_map.json`` = ``{target_id: {object_category, distractors: [{object_id,
object_category}, ...]}}``. Same-category entries give neg_same pairs, the others neg_diff pairs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DatasetError, ProblemReport
from .fields import Where, as_id, as_list, as_mapping, as_str, required
from .meta import read_json


@dataclass(frozen=True)
class Distractor:
    object_id: str
    object_category: str


@dataclass(frozen=True)
class DistractorEntry:
    object_category: str
    distractors: tuple[Distractor, ...]

    def same_category(self) -> list[Distractor]:
        return [d for d in self.distractors if d.object_category == self.object_category]

    def other_category(self) -> list[Distractor]:
        return [d for d in self.distractors if d.object_category != self.object_category]


DistractorMap = dict[str, DistractorEntry]


def _distractor(value: Any, where: Where) -> Distractor:
    obj = as_mapping(value, where)
    return Distractor(
        object_id=required(obj, "object_id", where, as_id),
        object_category=required(obj, "object_category", where, as_str),
    )


def parse_entry(target_id: str, value: Any, where: Where) -> DistractorEntry:
    obj = as_mapping(value, where)
    items = required(obj, "distractors", where, as_list)
    entry = DistractorEntry(
        object_category=required(obj, "object_category", where, as_str),
        distractors=tuple(_distractor(item, where.at("distractors").at(i)) for i, item in enumerate(items)),
    )
    for i, distractor in enumerate(entry.distractors):
        if distractor.object_id == target_id:
            raise where.at("distractors").at(i).error("an object cannot be its own distractor")
    return entry


def load_distractor_map(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> DistractorMap:
    """Load and validate a distractor map; with ``report`` bad entries are recorded and skipped."""
    name = display or str(path)
    where = Where.of(name)
    obj = as_mapping(read_json(path, display=name), where)
    out: DistractorMap = {}
    for target_id, value in obj.items():
        try:
            out[target_id] = parse_entry(target_id, value, where.at(target_id))
        except DatasetError as error:
            if report is None:
                raise
            report.add(error)
    return out


def distractor_map_to_json(mapping: Mapping[str, DistractorEntry]) -> dict[str, Any]:
    return {
        target_id: {
            "object_category": entry.object_category,
            "distractors": [
                {"object_id": d.object_id, "object_category": d.object_category} for d in entry.distractors
            ],
        }
        for target_id, entry in mapping.items()
    }


def save_distractor_map(path: Path, mapping: Mapping[str, DistractorEntry]) -> None:
    """Write the map in the reference layout (UTF-8, two-space indent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(distractor_map_to_json(mapping), ensure_ascii=False, indent=2), encoding="utf-8"
    )
