"""LLM-output caches keyed by the *query* object id (spec §2.5).

The reference agents consult these before any online model call, and the paper's timings assume all three
are loaded: ``category_cache.json`` (predicted coarse category), ``attr_cache.json`` (attribute
decomposition) and ``merge_cache.json`` (one merged sentence). Loading them here, validated, lets the
verifier run the cached path without a language model and fail loudly on a malformed entry instead of
silently falling back to an online call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .errors import DatasetError, ProblemReport
from .fields import Where, as_int, as_list, as_mapping, as_number, as_str, optional, required
from .meta import read_json

T = TypeVar("T")


@dataclass(frozen=True)
class CategoryCacheEntry:
    pred_coarse: str
    raw: str | None = None


@dataclass(frozen=True)
class CachedAttribute:
    """One extracted attribute as ``attr_cache.json`` stores it: ``name = evidence_phrase``, with a type and a
    weight (3 = most telling), both optional in the file. The verifier turns it into its own, validated
    ``aiv_verifier.core.types.Attribute``.
    """

    name: str
    evidence_phrase: str
    type: str | None = None
    weight: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class AttrCacheEntry:
    attributes: tuple[CachedAttribute, ...]
    target_class: str | None = None
    raw: str | None = None
    max_attrs: int | None = None


@dataclass(frozen=True)
class MergeCacheEntry:
    merged_description: str
    raw: str | None = None


def _category(value: Any, where: Where) -> CategoryCacheEntry:
    obj = as_mapping(value, where)
    return CategoryCacheEntry(
        pred_coarse=required(obj, "pred_coarse", where, as_str),
        raw=optional(obj, "raw", where, lambda v, w: as_str(v, w, allow_empty=True)),
    )


def _attribute(value: Any, where: Where) -> CachedAttribute:
    obj = as_mapping(value, where)
    known = {"name", "evidence_phrase", "type", "weight"}
    return CachedAttribute(
        name=required(obj, "name", where, as_str),
        evidence_phrase=required(obj, "evidence_phrase", where, lambda v, w: as_str(v, w, allow_empty=True)),
        type=optional(obj, "type", where, as_str),
        weight=optional(obj, "weight", where, as_number),
        extra={k: v for k, v in obj.items() if k not in known},
    )


def _attrs(value: Any, where: Where) -> AttrCacheEntry:
    obj = as_mapping(value, where)
    items = required(obj, "attributes", where, as_list)
    return AttrCacheEntry(
        attributes=tuple(_attribute(item, where.at("attributes").at(i)) for i, item in enumerate(items)),
        target_class=optional(obj, "target_class", where, as_str),
        raw=optional(obj, "raw", where, lambda v, w: as_str(v, w, allow_empty=True)),
        max_attrs=optional(obj, "max_attrs", where, lambda v, w: as_int(v, w, minimum=0)),
    )


def _merge(value: Any, where: Where) -> MergeCacheEntry:
    obj = as_mapping(value, where)
    return MergeCacheEntry(
        merged_description=required(obj, "merged_description", where, as_str),
        raw=optional(obj, "raw", where, lambda v, w: as_str(v, w, allow_empty=True)),
    )


def _load(
    path: Path, parse: Callable[[Any, Where], T], report: ProblemReport | None, display: str | None
) -> dict[str, T]:
    name = display or str(path)
    where = Where.of(name)
    obj = as_mapping(read_json(path, display=name), where)
    out: dict[str, T] = {}
    for object_id, value in obj.items():
        try:
            out[object_id] = parse(value, where.at(object_id))
        except DatasetError as error:
            if report is None:
                raise
            report.add(error)
    return out


def load_category_cache(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> dict[str, CategoryCacheEntry]:
    return _load(path, _category, report, display)


def load_attr_cache(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> dict[str, AttrCacheEntry]:
    return _load(path, _attrs, report, display)


def load_merge_cache(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> dict[str, MergeCacheEntry]:
    return _load(path, _merge, report, display)
