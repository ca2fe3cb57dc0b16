"""The benchmark's query caches (spec §2.5), read before any model call and optionally extended.

Files (in one directory, normally the dataset root): ``category_cache.json`` ``{id: {"pred_coarse", "raw"}}``,
``attr_cache.json`` ``{id: {"attributes", "target_class", "raw", "max_attrs"}}`` and ``merge_cache.json``
``{id: {"merged_description", "raw"}}``, all keyed by the **query object id**. Missing files are empty caches;
a malformed file is an error at start-up (loaders of ``aiv_dataset.caches``), never a silent
fallback to online calls.

The verifier is only given descriptions, so the id is recovered from a description database
(``object_descriptions_with_category.json`` or ``object_descriptions.json``): the id whose description tuple
equals the query's exactly (same strings, same order; the first id in file order if several objects share a
tuple). When no database entry matches, the key is derived from the descriptions themselves:
``"desc-sha256:" + sha256(json.dumps(list_of_descriptions, ensure_ascii=False, separators=(",", ":")))[:32]``
— stable across runs and machines, so entries written under it are found again.

Write-back (optional) stores new *model* results only (weight-free results are cheap to recompute and must not
be mistaken for LLM output): the file is re-read, the entry added, and the whole file replaced atomically
(temporary file in the same directory + ``os.replace``). Failed model calls (empty answer) are not cached. A
write that fails (disk, permissions, a file corrupted meanwhile) is recorded in :attr:`QueryCaches.problems`
and never interrupts the query.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aiv_dataset.caches import (
    AttrCacheEntry,
    CachedAttribute,
    CategoryCacheEntry,
    MergeCacheEntry,
    load_attr_cache,
    load_category_cache,
    load_merge_cache,
)
from aiv_dataset.constants import (
    ATTR_CACHE_FILENAME,
    CATEGORY_CACHE_FILENAME,
    DESCRIPTIONS_FILENAME,
    DESCRIPTIONS_WITH_CATEGORY_FILENAME,
    MERGE_CACHE_FILENAME,
)
from aiv_dataset.descriptions import load_descriptions

from ..core.types import ATTRIBUTE_TYPES, Attribute

DESCRIPTION_DB_FILES: tuple[str, ...] = (DESCRIPTIONS_WITH_CATEGORY_FILENAME, DESCRIPTIONS_FILENAME)
"""Looked for in the cache directory when no description database is configured."""
DERIVED_KEY_PREFIX = "desc-sha256:"


def derived_key(descriptions: Sequence[str]) -> str:
    payload = json.dumps(list(descriptions), ensure_ascii=False, separators=(",", ":"))
    return DERIVED_KEY_PREFIX + hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def cache_attribute_to_core(attribute: CachedAttribute) -> Attribute:
    """A cached attribute as the verifier's type: unknown/missing type → "other", weight → nearest of 1..3
    (missing → 2). Name and evidence are kept verbatim (the cache is already filtered and renamed)."""
    type_ = attribute.type if attribute.type in ATTRIBUTE_TYPES else "other"
    weight = 2 if attribute.weight is None else int(min(3, max(1, round(attribute.weight))))
    return Attribute(attribute.name, type_, weight, attribute.evidence_phrase)


class QueryCaches:
    """In-memory view of the three caches plus the id resolver; see the module docstring."""

    def __init__(
        self,
        cache_dir: str | Path | None,
        description_dbs: Sequence[str | Path] = (),
        *,
        write_back: bool = False,
    ) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.write_back = bool(write_back) and self.cache_dir is not None
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self.category: dict[str, CategoryCacheEntry] = {}
        self.attributes: dict[str, AttrCacheEntry] = {}
        self.merged: dict[str, MergeCacheEntry] = {}
        if self.cache_dir is not None:
            if self.cache_dir.exists() and not self.cache_dir.is_dir():
                raise NotADirectoryError(f"query cache directory is not a directory: {self.cache_dir}")
            self.category = self._load(CATEGORY_CACHE_FILENAME, load_category_cache)
            self.attributes = self._load(ATTR_CACHE_FILENAME, load_attr_cache)
            self.merged = self._load(MERGE_CACHE_FILENAME, load_merge_cache)
        self._ids: dict[tuple[str, ...], str] = {}
        paths = [Path(p) for p in description_dbs if str(p)]
        if not paths and self.cache_dir is not None:
            paths = [
                self.cache_dir / name for name in DESCRIPTION_DB_FILES if (self.cache_dir / name).is_file()
            ][:1]
        for path in paths:
            for object_id, entry in load_descriptions(path).items():
                self._ids.setdefault(tuple(entry.descriptions), object_id)
        self.description_db_paths = tuple(paths)

    def _load(self, name: str, loader: Any) -> dict:
        assert self.cache_dir is not None
        path = self.cache_dir / name
        return loader(path) if path.is_file() else {}

    # -- keys --------------------------------------------------------------------------------------------------

    def resolve(self, descriptions: Sequence[str]) -> tuple[str, bool]:
        """(cache key, whether it is a real object id from the description database)."""
        object_id = self._ids.get(tuple(descriptions))
        if object_id is not None:
            return object_id, True
        return derived_key(descriptions), False

    # -- reads -------------------------------------------------------------------------------------------------

    def get_category(self, key: str) -> CategoryCacheEntry | None:
        return self.category.get(key)

    def get_attributes(self, key: str) -> AttrCacheEntry | None:
        return self.attributes.get(key)

    def get_merged(self, key: str) -> MergeCacheEntry | None:
        return self.merged.get(key)

    # -- writes ------------------------------------------------------------------------------------------------

    def put_category(self, key: str, category: str, raw: str) -> None:
        self.category[key] = CategoryCacheEntry(category, raw)
        self._write(CATEGORY_CACHE_FILENAME, key, {"pred_coarse": category, "raw": raw})

    def put_attributes(
        self, key: str, attributes: Sequence[Attribute], target_class: str, raw: str, max_attrs: int
    ) -> None:
        records = [
            {"name": a.name, "type": a.type, "weight": a.weight, "evidence_phrase": a.evidence_phrase}
            for a in attributes
        ]
        self.attributes[key] = AttrCacheEntry(
            tuple(CachedAttribute(a.name, a.evidence_phrase, a.type, float(a.weight)) for a in attributes),
            target_class,
            raw,
            max_attrs,
        )
        self._write(
            ATTR_CACHE_FILENAME,
            key,
            {"attributes": records, "target_class": target_class, "raw": raw, "max_attrs": max_attrs},
        )

    def put_merged(self, key: str, merged: str, raw: str) -> None:
        self.merged[key] = MergeCacheEntry(merged, raw)
        self._write(MERGE_CACHE_FILENAME, key, {"merged_description": merged, "raw": raw})

    def _write(self, name: str, key: str, entry: Mapping[str, Any]) -> None:
        if not self.write_back or self.cache_dir is None:
            return
        path = self.cache_dir / name
        with self._lock:
            try:
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                document: dict[str, Any] = {}
                if path.is_file():
                    document = json.loads(path.read_text(encoding="utf-8"))
                    if not isinstance(document, dict):
                        raise ValueError("top level is not a JSON object")
                document[key] = dict(entry)
                handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.cache_dir)
                try:
                    with os.fdopen(handle, "w", encoding="utf-8") as stream:
                        json.dump(document, stream, ensure_ascii=False, indent=2)
                        stream.write("\n")
                    os.replace(temporary, path)
                except BaseException:
                    Path(temporary).unlink(missing_ok=True)
                    raise
            except (OSError, ValueError) as error:
                self.problems.append(f"could not write {key!r} to {path}: {type(error).__name__}: {error}")
