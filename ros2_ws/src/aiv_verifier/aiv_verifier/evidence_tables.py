"""The two data files of the evidential mode: the calibration table and the visibility model.

Both are JSON written by commands (``aiv-eval calibrate``, ``aiv-eval visibility``) from labelled data, never by
hand, and both record what they were fitted on (dataset presets, seeds and splits, or session bags), so an
evaluation can refuse to report numbers on data a table was fitted on. Reading checks everything and fails
with one line naming the file and the problem (:class:`EvidenceFileError`).

Calibration file::

    {"format": "aiv-evidence-calibration", "version": 1, "fitted_on": [{...}], "command": "...",
     "backends": {"classical": {"evidence_scale": 1.0,
                                "target_model": {"target_share": ..., "other_category_share": ...,
                                                 "indistinguishable_share": ..., "claim_fails_rate": ...},
                                "cells": [{"kind": "main_colour", "quality": "large",
                                           "holds": {"yes": 1, "no": 0, "unsure": 2}, "fails": {...}, ...}]}}}

Visibility file::

    {"format": "aiv-evidence-visibility", "version": 1, "fitted_on": [{...}], "command": "...",
     "rows": [{"kind": "logo", "hint": "sided", "view_type": "far", "distance": "180",
               "visible": 12, "views": 40}],
     "level_rows": [{"kind": "part_colour", "vertical": "top", "level": 1, "view_type": "far",
                     "distance": "same", "visible": 30, "views": 41}]}

``level_rows`` (the rows by camera height level) is optional: a table fitted on one-level data has none.

Only the counts are read; the likelihood ratios, intervals and accuracies written beside them are for people.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiv_dataset.levels import MAX_LEVEL, MIN_LEVEL

from .claims import EVIDENCE_KINDS, VIEW_HINTS
from .core.evidence import AnswerCounts, ReliabilityCell, ReliabilityTable, TargetModel
from .core.evidential import VIEW_QUALITIES
from .core.visibility import (
    DISTANCE_BINS,
    LEVEL_DISTANCE_BINS,
    VERTICAL_HINTS,
    LevelKey,
    VisibilityCount,
    VisibilityModel,
)

CALIBRATION_FORMAT = "aiv-evidence-calibration"
VISIBILITY_FORMAT = "aiv-evidence-visibility"
FORMAT_VERSION = 1
TABLES_DIR = Path(__file__).resolve().parent / "evidence_tables"
#: The shipped files (``verifier.calibration_file`` / ``agent.visibility_file`` = "" means these).
DEFAULT_CALIBRATION_FILE = TABLES_DIR / "calibration.json"
DEFAULT_VISIBILITY_FILE = TABLES_DIR / "visibility.json"


class EvidenceFileError(ValueError):
    """A calibration or visibility file cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class FittedOn:
    """What a table was fitted on: a synthetic dataset (preset, seed, split) or a set of session bags."""

    source: str
    preset: str = ""
    seed: int | None = None
    split: str = ""
    pairs: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "preset": self.preset,
            "seed": self.seed,
            "split": self.split,
            "pairs": self.pairs,
        }

    def describe(self) -> str:
        if self.seed is None:
            return f"{self.source} ({self.pairs} pairs)"
        return f"{self.preset or '?'} seed {self.seed} {self.split} ({self.pairs} pairs)"


@dataclass(frozen=True)
class BackendCalibration:
    table: ReliabilityTable
    model: TargetModel


@dataclass(frozen=True)
class CalibrationFile:
    path: Path
    fitted_on: tuple[FittedOn, ...]
    backends: Mapping[str, BackendCalibration]

    def for_backend(self, key: str) -> BackendCalibration:
        try:
            return self.backends[key]
        except KeyError:
            raise EvidenceFileError(
                f"{self.path}: no calibration for verifier backend {key!r} (it has {sorted(self.backends)}); "
                "fit one with `aiv-eval calibrate` or name another with verifier.calibration_key"
            ) from None


@dataclass(frozen=True)
class VisibilityFile:
    path: Path
    fitted_on: tuple[FittedOn, ...]
    model: VisibilityModel


def fitted_seeds(fitted_on: Sequence[FittedOn]) -> frozenset[int]:
    return frozenset(item.seed for item in fitted_on if item.seed is not None)


def _load_json(path: Path, expected_format: str) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvidenceFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise EvidenceFileError(f"{path}: cannot be read: {error}") from None
    except json.JSONDecodeError as error:
        raise EvidenceFileError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(data, Mapping):
        raise EvidenceFileError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if data.get("format") != expected_format:
        raise EvidenceFileError(f"{path}: 'format' must be {expected_format!r}, got {data.get('format')!r}")
    if data.get("version") != FORMAT_VERSION:
        raise EvidenceFileError(
            f"{path}: 'version' {data.get('version')!r} is not supported ({FORMAT_VERSION})"
        )
    return data


def _fitted_on(path: Path, data: Mapping[str, Any]) -> tuple[FittedOn, ...]:
    items = data.get("fitted_on")
    if not isinstance(items, list) or not items:
        raise EvidenceFileError(
            f"{path}: 'fitted_on' must be a non-empty list of what the table was fitted on"
        )
    out = []
    for position, item in enumerate(items):
        where = f"{path}: fitted_on[{position}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("source"), str):
            raise EvidenceFileError(f"{where} must be an object with a 'source' string")
        seed = item.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise EvidenceFileError(f"{where}.seed must be an integer or null, got {seed!r}")
        pairs = item.get("pairs", 0)
        if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 0:
            raise EvidenceFileError(f"{where}.pairs must be an integer >= 0, got {pairs!r}")
        out.append(
            FittedOn(
                str(item["source"]),
                str(item.get("preset", "") or ""),
                seed,
                str(item.get("split", "") or ""),
                pairs,
            )
        )
    return tuple(out)


def _counts(where: str, value: Any) -> AnswerCounts:
    if not isinstance(value, Mapping):
        raise EvidenceFileError(f"{where} must be an object with yes / no / unsure counts")
    try:
        return AnswerCounts(value.get("yes", 0), value.get("no", 0), value.get("unsure", 0))
    except ValueError as error:
        raise EvidenceFileError(f"{where}: {error}") from None


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EvidenceFileError(f"{where} must be a finite number, got {value!r}")
    return float(value)


def load_calibration(path: str | Path) -> CalibrationFile:
    """Read and check a calibration file (:class:`EvidenceFileError` names what is wrong)."""
    path = Path(path)
    data = _load_json(path, CALIBRATION_FORMAT)
    fitted_on = _fitted_on(path, data)
    backends_data = data.get("backends")
    if not isinstance(backends_data, Mapping) or not backends_data:
        raise EvidenceFileError(f"{path}: 'backends' must be a non-empty object of backend tables")
    backends: dict[str, BackendCalibration] = {}
    for key, entry in backends_data.items():
        where = f"{path}: backends.{key}"
        if not isinstance(entry, Mapping):
            raise EvidenceFileError(f"{where} must be an object")
        cells: dict[tuple[str, str], ReliabilityCell] = {}
        rows = entry.get("cells")
        if not isinstance(rows, list):
            raise EvidenceFileError(f"{where}.cells must be a list")
        for position, row in enumerate(rows):
            cell_where = f"{where}.cells[{position}]"
            if not isinstance(row, Mapping):
                raise EvidenceFileError(f"{cell_where} must be an object")
            kind, quality = row.get("kind"), row.get("quality")
            if kind not in EVIDENCE_KINDS:
                raise EvidenceFileError(
                    f"{cell_where}.kind must be one of {list(EVIDENCE_KINDS)}, got {kind!r}"
                )
            if quality not in VIEW_QUALITIES:
                raise EvidenceFileError(
                    f"{cell_where}.quality must be one of {list(VIEW_QUALITIES)}, got {quality!r}"
                )
            if (kind, quality) in cells:
                raise EvidenceFileError(f"{cell_where}: ({kind}, {quality}) is listed twice")
            cells[(kind, quality)] = ReliabilityCell(
                _counts(f"{cell_where}.holds", row.get("holds")),
                _counts(f"{cell_where}.fails", row.get("fails")),
            )
        model_data = entry.get("target_model")
        if not isinstance(model_data, Mapping):
            raise EvidenceFileError(f"{where}.target_model must be an object")
        kind_rates = model_data.get("kind_fails_rates", {})
        if not isinstance(kind_rates, Mapping) or any(kind not in EVIDENCE_KINDS for kind in kind_rates):
            raise EvidenceFileError(
                f"{where}.target_model.kind_fails_rates must map claim kinds ({list(EVIDENCE_KINDS)}) to rates"
            )
        try:
            model = TargetModel(
                **{
                    name: _number(f"{where}.target_model.{name}", model_data.get(name))
                    for name in _MODEL_FIELDS
                },
                kind_fails_rates={
                    str(kind): _number(f"{where}.target_model.kind_fails_rates.{kind}", rate)
                    for kind, rate in kind_rates.items()
                },
            )
            table = ReliabilityTable(
                cells, _number(f"{where}.evidence_scale", entry.get("evidence_scale", 1.0))
            )
        except ValueError as error:
            raise EvidenceFileError(f"{where}: {error}") from None
        backends[str(key)] = BackendCalibration(table, model)
    return CalibrationFile(path, fitted_on, backends)


_MODEL_FIELDS = ("target_share", "other_category_share", "indistinguishable_share", "claim_fails_rate")


def calibration_document(
    fitted_on: Sequence[FittedOn],
    command: str,
    backends: Mapping[str, tuple[ReliabilityTable, TargetModel, Mapping[str, Any]]],
) -> dict[str, Any]:
    """The JSON document of a calibration file (``backends``: key -> (table, model, extra facts))."""
    out: dict[str, Any] = {
        "format": CALIBRATION_FORMAT,
        "version": FORMAT_VERSION,
        "fitted_on": [item.to_dict() for item in fitted_on],
        "command": command,
        "backends": {},
    }
    for key, (table, model, extra) in sorted(backends.items()):
        cells = [
            {"kind": kind, "quality": quality, **cell.to_dict()}
            for (kind, quality), cell in sorted(table.cells.items())
        ]
        out["backends"][key] = {
            "evidence_scale": table.evidence_scale,
            "target_model": {
                **{name: getattr(model, name) for name in _MODEL_FIELDS},
                "kind_fails_rates": dict(sorted(model.kind_fails_rates.items())),
            },
            **dict(extra),
            "cells": cells,
        }
    return out


def load_visibility(path: str | Path) -> VisibilityFile:
    """Read and check a visibility file."""
    path = Path(path)
    data = _load_json(path, VISIBILITY_FORMAT)
    fitted_on = _fitted_on(path, data)
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
        raise EvidenceFileError(f"{path}: 'rows' must be a non-empty list")
    table: dict[tuple[str, str, str, str], VisibilityCount] = {}
    for position, row in enumerate(rows):
        where = f"{path}: rows[{position}]"
        if not isinstance(row, Mapping):
            raise EvidenceFileError(f"{where} must be an object")
        key = (row.get("kind"), row.get("hint"), row.get("view_type"), row.get("distance"))
        if key[0] not in EVIDENCE_KINDS:
            raise EvidenceFileError(f"{where}.kind must be one of {list(EVIDENCE_KINDS)}, got {key[0]!r}")
        if key[1] not in VIEW_HINTS:
            raise EvidenceFileError(f"{where}.hint must be one of {list(VIEW_HINTS)}, got {key[1]!r}")
        if key[2] not in ("far", "near"):
            raise EvidenceFileError(f"{where}.view_type must be far or near, got {key[2]!r}")
        if key[3] not in DISTANCE_BINS:
            raise EvidenceFileError(f"{where}.distance must be one of {list(DISTANCE_BINS)}, got {key[3]!r}")
        visible, views = row.get("visible"), row.get("views")
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (visible, views)):
            raise EvidenceFileError(f"{where}: visible and views must be integers")
        assert isinstance(visible, int) and isinstance(views, int)
        row_key = (str(key[0]), str(key[1]), str(key[2]), str(key[3]))
        if row_key in table:
            raise EvidenceFileError(f"{where}: {row_key} is listed twice")
        try:
            table[row_key] = VisibilityCount(visible, views)
        except ValueError as error:
            raise EvidenceFileError(f"{where}: {error}") from None
    return VisibilityFile(
        path, fitted_on, VisibilityModel(table, _level_rows(path, data.get("level_rows", [])))
    )


def _level_rows(path: Path, rows: object) -> dict[LevelKey, VisibilityCount]:
    """The optional rows by height level of a visibility file, checked like the eye-level ones."""
    if not isinstance(rows, list):
        raise EvidenceFileError(f"{path}: 'level_rows' must be a list")
    table: dict[LevelKey, VisibilityCount] = {}
    for position, row in enumerate(rows):
        where = f"{path}: level_rows[{position}]"
        if not isinstance(row, Mapping):
            raise EvidenceFileError(f"{where} must be an object")
        kind, vertical, level = row.get("kind"), row.get("vertical"), row.get("level")
        view_type, distance = row.get("view_type"), row.get("distance")
        if kind not in EVIDENCE_KINDS:
            raise EvidenceFileError(f"{where}.kind must be one of {list(EVIDENCE_KINDS)}, got {kind!r}")
        if vertical not in VERTICAL_HINTS:
            raise EvidenceFileError(
                f"{where}.vertical must be one of {list(VERTICAL_HINTS)}, got {vertical!r}"
            )
        if isinstance(level, bool) or not isinstance(level, int) or not MIN_LEVEL <= level <= MAX_LEVEL:
            raise EvidenceFileError(
                f"{where}.level must be an integer in {MIN_LEVEL}..{MAX_LEVEL}, got {level!r}"
            )
        if view_type not in ("far", "near"):
            raise EvidenceFileError(f"{where}.view_type must be far or near, got {view_type!r}")
        if distance not in LEVEL_DISTANCE_BINS:
            raise EvidenceFileError(
                f"{where}.distance must be one of {list(LEVEL_DISTANCE_BINS)}, got {distance!r}"
            )
        visible, views = row.get("visible"), row.get("views")
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (visible, views)):
            raise EvidenceFileError(f"{where}: visible and views must be integers")
        assert isinstance(visible, int) and isinstance(views, int)
        key = (str(kind), str(vertical), level, str(view_type), str(distance))
        if key in table:
            raise EvidenceFileError(f"{where}: {key} is listed twice")
        try:
            table[key] = VisibilityCount(visible, views)
        except ValueError as error:
            raise EvidenceFileError(f"{where}: {error}") from None
    return table


def visibility_document(
    fitted_on: Sequence[FittedOn],
    command: str,
    rows: Mapping[tuple[str, str, str, str], VisibilityCount],
    level_rows: Mapping[LevelKey, VisibilityCount] | None = None,
) -> dict[str, Any]:
    """The visibility file's content; ``level_rows`` is written only when there are any (a one-level fit's
    document is what it always was)."""
    document = {
        "format": VISIBILITY_FORMAT,
        "version": FORMAT_VERSION,
        "fitted_on": [item.to_dict() for item in fitted_on],
        "command": command,
        "rows": [
            {
                "kind": kind,
                "hint": hint,
                "view_type": view_type,
                "distance": distance,
                "visible": count.visible,
                "views": count.views,
                "rate": round(count.rate, 4),
            }
            for (kind, hint, view_type, distance), count in sorted(rows.items())
        ],
    }
    if level_rows:
        document["level_rows"] = [
            {
                "kind": kind,
                "vertical": vertical,
                "level": level,
                "view_type": view_type,
                "distance": distance,
                "visible": count.visible,
                "views": count.views,
                "rate": round(count.rate, 4),
            }
            for (kind, vertical, level, view_type, distance), count in sorted(level_rows.items())
        ]
    return document


def resolve_table_path(value: str, default: Path) -> Path:
    """A parameter's file: "" means the shipped table."""
    return Path(value) if value.strip() else default


__all__ = [
    "CALIBRATION_FORMAT",
    "DEFAULT_CALIBRATION_FILE",
    "DEFAULT_VISIBILITY_FILE",
    "VISIBILITY_FORMAT",
    "BackendCalibration",
    "CalibrationFile",
    "EvidenceFileError",
    "FittedOn",
    "VisibilityFile",
    "calibration_document",
    "fitted_seeds",
    "load_calibration",
    "load_visibility",
    "resolve_table_path",
    "visibility_document",
]
