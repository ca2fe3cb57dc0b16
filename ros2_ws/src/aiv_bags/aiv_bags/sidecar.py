"""The tour sidecar: what a bag cannot say about its object — descriptions, identity, labels.

A small YAML file (JSON is accepted too, being YAML) next to or inside the bag directory, ``tour.yaml`` by
default. ``aiv-bag export`` writes it; for a robot's bag a person writes it. Shape (``#`` = optional)::

    format: aiv-tour/1
    object:
      id: mug_7                       # object id (the target of the episode)
      category: mug
      descriptions: [a blue mug with white flowers, ...]
      position: [x, y, z]             # object centre in the fixed frame, instead of the tf frame below
    scene: kitchen-2026-05-01         # scene key and episode id of the imported episode; defaults: the bag
    episode: "0"                      #   directory name and "0"
    split: val
    frames: {fixed: map, object: object, camera: camera_optical, up_axis: z}
    topics: {image: /camera/image_raw, camera_info: /camera/camera_info, tf: /tf, tf_static: /tf_static,
             detections: /detections}  # detections: the object's boxes (aiv_interfaces/Detection2DArray)
    queries:                          # verification pairs to index (labels for the evaluator); default:
      - object_id: mug_7              #   one positive pair with the object's own descriptions
      - object_id: mug_2
        category: mug
        descriptions: [a plain white mug]
        label: 0                      # derived from the ids when left out (checked when given)
        pair_type: neg_same           # derived from ids and categories when left out (checked when given)
    views:                            # per-view ground truth, keyed by the image header stamp
      - {stamp_ns: 1700000000000000000, target_visible: true, label: s0_far}

``target_visible`` is the capture pipeline's mask flag (false = trap view); views the sidecar does not list
count as showing the target. Labels and flags are for evaluation only: the verifier never sees them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiv_dataset.constants import PAIR_TYPES
from aiv_dataset.query_rules import description_problem

from .geometry import UP_AXES, Vector3
from .tour import TourError, TourFrames, TourTopics

SIDECAR_FORMAT = "aiv-tour/1"
SIDECAR_NAME = "tour.yaml"

_FRAME_KEYS = ("fixed", "object", "camera", "base", "up_axis")
_TOPIC_KEYS = ("image", "camera_info", "tf", "tf_static", "detections")
_TOP_KEYS = ("format", "object", "scene", "episode", "split", "frames", "topics", "queries", "views")


@dataclass(frozen=True)
class QueryPair:
    """One verification pair of the imported episode: the query object and the evaluator's labels."""

    object_id: str
    category: str
    descriptions: tuple[str, ...]
    label: int
    pair_type: str


@dataclass(frozen=True)
class ViewTruth:
    """Ground truth about one view, matched to the image by its header stamp."""

    stamp_ns: int
    target_visible: bool | None = None
    label: str | None = None


@dataclass(frozen=True)
class Sidecar:
    """A validated sidecar."""

    object_id: str
    category: str
    descriptions: tuple[str, ...]
    object_position: Vector3 | None = None
    scene: str | None = None
    episode: str | None = None
    split: str | None = None
    frames: Mapping[str, str] = field(default_factory=dict)
    topics: Mapping[str, str] = field(default_factory=dict)
    queries: tuple[QueryPair, ...] = ()
    views: tuple[ViewTruth, ...] = ()

    def apply_frames(self, base: TourFrames) -> TourFrames:
        values = {key: self.frames.get(key, getattr(base, key)) for key in _FRAME_KEYS}
        return TourFrames(**values)

    def apply_topics(self, base: TourTopics) -> TourTopics:
        return TourTopics(**{key: self.topics.get(key, getattr(base, key)) for key in _TOPIC_KEYS})

    def pairs(self) -> tuple[QueryPair, ...]:
        """The pairs to index: the listed queries, or one positive pair of the object itself."""
        if self.queries:
            return self.queries
        return (QueryPair(self.object_id, self.category, self.descriptions, 1, "positive"),)

    def visibility(self) -> dict[int, bool]:
        return {v.stamp_ns: v.target_visible for v in self.views if v.target_visible is not None}

    def to_document(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": self.object_id,
            "category": self.category,
            "descriptions": list(self.descriptions),
        }
        if self.object_position is not None:
            obj["position"] = list(self.object_position)
        doc: dict[str, Any] = {"format": SIDECAR_FORMAT, "object": obj}
        for key in ("scene", "episode", "split"):
            if getattr(self, key) is not None:
                doc[key] = getattr(self, key)
        if self.frames:
            doc["frames"] = dict(self.frames)
        if self.topics:
            doc["topics"] = dict(self.topics)
        if self.queries:
            doc["queries"] = [
                {
                    "object_id": q.object_id,
                    "category": q.category,
                    "descriptions": list(q.descriptions),
                    "label": q.label,
                    "pair_type": q.pair_type,
                }
                for q in self.queries
            ]
        if self.views:
            doc["views"] = [
                {
                    "stamp_ns": v.stamp_ns,
                    **({} if v.target_visible is None else {"target_visible": v.target_visible}),
                    **({} if v.label is None else {"label": v.label}),
                }
                for v in self.views
            ]
        return doc


def save_sidecar(sidecar: Sidecar, path: Path) -> None:
    text = yaml.safe_dump(sidecar.to_document(), sort_keys=False, allow_unicode=True, width=100)
    path.write_text("# Object tour sidecar (aiv-bag); see aiv_bags/sidecar.py for the format.\n" + text)


class _Fields:
    """Typed reads from the sidecar document; every failure names the file and the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> TourError:
        return TourError(f"field '{where}': {problem}", bag=self.source)

    def text(self, value: Any, where: str, *, allow_empty: bool = False) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.fail(where, f"expected text, got {type(value).__name__}")
        text = str(value)
        if not allow_empty and not text.strip():
            raise self.fail(where, "expected non-empty text")
        if "\x00" in text:
            raise self.fail(where, "contains a NUL character")
        return text

    def mapping(self, value: Any, where: str, allowed: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        unknown = sorted(str(k) for k in value if k not in allowed)
        if unknown:
            raise self.fail(where, f"unknown key(s) {unknown}; expected some of {list(allowed)}")
        return value

    def sequence(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, got {type(value).__name__}")
        return value

    def descriptions(self, value: Any, where: str) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else self.sequence(value, where)
        texts = tuple(self.text(item, f"{where}[{i}]", allow_empty=True) for i, item in enumerate(items))
        problem = description_problem(texts, max_descriptions=sys.maxsize, max_chars=sys.maxsize)
        if problem:
            raise self.fail(where, problem)
        return texts

    def vector3(self, value: Any, where: str) -> Vector3:
        items = self.sequence(value, where)
        if len(items) != 3 or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in items
        ):
            raise self.fail(where, f"expected three finite numbers [x, y, z], got {items}")
        return (float(items[0]), float(items[1]), float(items[2]))


def parse_sidecar(document: Any, source: str) -> Sidecar:
    """Validate a decoded sidecar document; ``source`` names the file in errors."""
    f = _Fields(source)
    doc = f.mapping(document, "<top level>", _TOP_KEYS)
    if doc.get("format") != SIDECAR_FORMAT:
        raise f.fail("format", f"expected {SIDECAR_FORMAT!r}, got {doc.get('format')!r}")
    if "object" not in doc:
        raise f.fail("object", "missing (the toured object's id, category and descriptions)")
    obj = f.mapping(doc["object"], "object", ("id", "category", "descriptions", "position"))
    for key in ("id", "category", "descriptions"):
        if key not in obj:
            raise f.fail(f"object.{key}", "missing")
    object_id = f.text(obj["id"], "object.id")
    category = f.text(obj["category"], "object.category")
    descriptions = f.descriptions(obj["descriptions"], "object.descriptions")
    position = f.vector3(obj["position"], "object.position") if obj.get("position") is not None else None

    frames = {
        k: f.text(v, f"frames.{k}")
        for k, v in f.mapping(doc.get("frames") or {}, "frames", _FRAME_KEYS).items()
    }
    if "up_axis" in frames and frames["up_axis"] not in UP_AXES:
        raise f.fail("frames.up_axis", f"expected one of {list(UP_AXES)}, got {frames['up_axis']!r}")
    topics = {
        k: f.text(v, f"topics.{k}")
        for k, v in f.mapping(doc.get("topics") or {}, "topics", _TOPIC_KEYS).items()
    }

    queries = []
    for i, item in enumerate(f.sequence(doc.get("queries") or [], "queries")):
        where = f"queries[{i}]"
        q = f.mapping(item, where, ("object_id", "category", "descriptions", "label", "pair_type"))
        if "object_id" not in q:
            raise f.fail(f"{where}.object_id", "missing")
        qid = f.text(q["object_id"], f"{where}.object_id")
        same = qid == object_id
        qcat = f.text(q["category"], f"{where}.category") if "category" in q else (category if same else None)
        if qcat is None:
            raise f.fail(f"{where}.category", "missing (needed for a query object other than the toured one)")
        if "descriptions" in q:
            qdesc = f.descriptions(q["descriptions"], f"{where}.descriptions")
        elif same:
            qdesc = descriptions
        else:
            raise f.fail(
                f"{where}.descriptions", "missing (needed for a query object other than the toured one)"
            )
        if same and qcat != category:
            raise f.fail(f"{where}.category", f"{qcat!r} differs from the object's category {category!r}")
        pair_type = "positive" if same else ("neg_same" if qcat == category else "neg_diff")
        label = 1 if same else 0
        if "pair_type" in q and q["pair_type"] != pair_type:
            expected = f"{pair_type!r} for query {qid!r} ({qcat}) against object {object_id!r} ({category})"
            if q["pair_type"] not in PAIR_TYPES:
                expected = f"one of {list(PAIR_TYPES)}"
            raise f.fail(f"{where}.pair_type", f"got {q['pair_type']!r}, expected {expected}")
        if "label" in q and (isinstance(q["label"], bool) or q["label"] != label):
            raise f.fail(f"{where}.label", f"got {q['label']!r}, expected {label} for a {pair_type} pair")
        queries.append(QueryPair(qid, qcat, qdesc, label, pair_type))
    if len({q.object_id for q in queries}) != len(queries):
        raise f.fail("queries", "an object id is listed twice")

    views = []
    for i, item in enumerate(f.sequence(doc.get("views") or [], "views")):
        where = f"views[{i}]"
        v = f.mapping(item, where, ("stamp_ns", "target_visible", "label"))
        stamp = v.get("stamp_ns")
        if isinstance(stamp, bool) or not isinstance(stamp, int) or stamp < 0:
            raise f.fail(f"{where}.stamp_ns", f"expected a non-negative integer (nanoseconds), got {stamp!r}")
        visible = v.get("target_visible")
        if visible is not None and not isinstance(visible, bool):
            raise f.fail(f"{where}.target_visible", f"expected true or false, got {visible!r}")
        view_label = f.text(v["label"], f"{where}.label") if v.get("label") is not None else None
        views.append(ViewTruth(stamp, visible, view_label))
    if len({v.stamp_ns for v in views}) != len(views):
        raise f.fail("views", "a stamp is listed twice")

    return Sidecar(
        object_id=object_id,
        category=category,
        descriptions=descriptions,
        object_position=position,
        scene=f.text(doc["scene"], "scene") if doc.get("scene") is not None else None,
        episode=f.text(doc["episode"], "episode") if doc.get("episode") is not None else None,
        split=f.text(doc["split"], "split") if doc.get("split") is not None else None,
        frames=frames,
        topics=topics,
        queries=tuple(queries),
        views=tuple(views),
    )


def load_sidecar(path: Path) -> Sidecar:
    """Read and validate a sidecar file (YAML or JSON)."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TourError("sidecar file is missing (descriptions and labels of the tour)", bag=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TourError(f"sidecar file cannot be read ({exc})", bag=source) from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise TourError(f"sidecar is not valid YAML/JSON{at}", bag=source) from None
    return parse_sidecar(document, source)
