"""The reference's legacy index records (spec §2.6), converted into pair records the environment can play.

The reference ships one older index shape in ``data/examples/index.jsonl``: per line ``scene_key``,
``episode_id``, ``object_id``, ``object_category``, ``episode_path``, ``captures_meta`` (a capture list of
``{tag, sector_index, view_type, rgb_filename}``), ``query_object_id``, ``text_pos``, ``text_neg`` and
``neg_object_id``. Its evaluation script (spec §4.1-4.2) reads such a line through fallbacks, and those
fallbacks are what this module applies:

==========================  ==================================================================================
pair field                  taken from (first present), else the reference default
==========================  ==================================================================================
``scene``                   ``scene_key``, ``scene``, else the second-to-last component of ``episode_path``
``episode``                 ``episode_id``, ``episode`` (required)
``target_object_id``        ``object_id`` (the object in the scene, as in meta.json §2.2), ``target_object_id``
``target_object_category``  ``object_category``, ``target_object_category``, else ``"unknown"``
``query_object_id``         ``query_object_id``, else ``object_id``
``query_object_category``   ``query_object_category``, else the target category
``label`` / ``pair_type``   as given, else ``1`` / ``"positive"``
==========================  ==================================================================================

``valid_start_sectors`` / ``navigable_sectors`` (and their counts), which the legacy shape lacks, are computed
from ``captures_meta`` as the index builder computes them from meta.json (flags absent there read as true, the
v1 defaults). ``captures_meta``, ``text_pos``, ``text_neg``, ``neg_object_id`` and any other key are kept in the
record's ``extra`` (the environment plays ``captures_meta`` instead of reading meta.json, spec §3.1 step 2),
after being validated here, so a bad capture is reported with its file, line and field at conversion time
rather than when the episode is first played. ``text_pos`` are the query descriptions: the reference prefers them to its
description database, and :func:`legacy_descriptions` turns them into a description file that this
project's simulator can serve.

Where the reference and this module differ (deliberately):

* The reference fills ``target_object_id`` / ``target_object_category`` of its result records only from keys
  of those names, so a legacy line yields ``null`` / ``"unknown"`` there; here ``object_id`` /
  ``object_category`` fill them, because that is what those keys mean in meta.json.
* The reference scores whatever the defaults make of a line (e.g. ``label`` 0 under the default pair type
  "positive"); here the usual pair consistency rules apply and such a line is refused, naming the field.

Our own index reader stays strict (it does not read legacy lines, and says so when it meets one): a legacy
file is converted once, with ``aiv-dataset import-legacy-index IN OUT``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .errors import DatasetError, ProblemReport
from .fields import Where, as_id, as_int, as_list, as_mapping, as_str
from .index_records import PairRecord, parse_pair_record, write_jsonl
from .json_text import parse_json
from .meta import parse_view_list, sector_summary
from .paths import check_relative

#: The keys of a legacy record as spec §2.6 lists them.
LEGACY_KEYS: tuple[str, ...] = (
    "scene_key",
    "episode_id",
    "object_id",
    "object_category",
    "episode_path",
    "captures_meta",
    "query_object_id",
    "text_pos",
    "text_neg",
    "neg_object_id",
)
#: Reference defaults for keys a line may omit (spec §4.2 record fields; ``scripts/evaluate.py`` fallbacks).
DEFAULT_LABEL = 1
DEFAULT_PAIR_TYPE = "positive"
DEFAULT_CATEGORY = "unknown"

#: Where each pair field comes from, for error messages that name the key actually written in the line.
_SOURCE_KEYS: Mapping[str, tuple[str, ...]] = {
    "scene": ("scene_key", "scene"),
    "episode": ("episode_id", "episode"),
    "target_object_id": ("object_id", "target_object_id"),
    "target_object_category": ("object_category", "target_object_category"),
}
#: Legacy keys whose content moves into a pair field (they are not repeated in ``extra``).
_CONSUMED = frozenset({"scene_key", "episode_id", "object_id", "object_category"})


def is_legacy_record(obj: Mapping[str, Any]) -> bool:
    """True for a line in the legacy shape (it names its scene/episode/object with the legacy keys)."""
    return any(key in obj for key in ("scene_key", "episode_id", "captures_meta")) or (
        "object_id" in obj and "target_object_id" not in obj
    )


def _first(
    obj: Mapping[str, Any], keys: tuple[str, ...], where: Where, convert: Any
) -> tuple[str | None, Any]:
    """The converted value of the first key present (non-null); keys that are all present must agree."""
    found: tuple[str | None, Any] = (None, None)
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        converted = convert(value, where.at(key))
        if found[0] is None:
            found = (key, converted)
        elif converted != found[1]:
            raise where.at(key).error(f"value {converted!r} disagrees with {found[0]!r} ({found[1]!r})")
    return found


def _texts(value: Any, where: Where) -> list[str]:
    items = as_list(value, where)
    return [as_str(item, where.at(i)) for i, item in enumerate(items)]


def _scene_from_path(episode_path: str) -> str | None:
    parts = PurePosixPath(episode_path.replace("\\", "/")).parts
    return parts[-2] if len(parts) >= 3 else None


def legacy_to_pair_dict(data: Any, where: Where) -> dict[str, Any]:
    """A legacy line as a pair-index dict (new key names, reference defaults applied, extras kept).

    Validates everything the conversion reads; the pair rules themselves are checked by
    :func:`~aiv_dataset.index_records.parse_pair_record` afterwards.
    """
    obj = as_mapping(data, where)
    episode_path_value = obj.get("episode_path")
    if episode_path_value is None:
        raise where.at("episode_path").error("missing required field (the episode directory to play)")
    episode_path = as_str(episode_path_value, where.at("episode_path"))
    check_relative(episode_path, where.at("episode_path"))

    scene_key, scene = _first(obj, _SOURCE_KEYS["scene"], where, as_str)
    if scene_key is None:
        scene = _scene_from_path(episode_path)
        if scene is None:
            raise where.at("scene_key").error(
                "missing required field, and episode_path has no <split>/<scene>/<episode> components to take "
                "the scene from"
            )
    episode_key, episode = _first(obj, _SOURCE_KEYS["episode"], where, as_id)
    if episode_key is None:
        raise where.at("episode_id").error("missing required field")
    target_key, target = _first(obj, _SOURCE_KEYS["target_object_id"], where, as_id)
    if target_key is None:
        raise where.at("object_id").error("missing required field (the object placed in the scene)")
    category_key, category = _first(obj, _SOURCE_KEYS["target_object_category"], where, as_str)
    if category_key is None:
        category = DEFAULT_CATEGORY
    query = obj.get("query_object_id")
    query = target if query is None else as_id(query, where.at("query_object_id"))
    query_category = obj.get("query_object_category")
    query_category = (
        category if query_category is None else as_str(query_category, where.at("query_object_category"))
    )
    label = obj.get("label")
    label = DEFAULT_LABEL if label is None else as_int(label, where.at("label"), minimum=0, maximum=1)
    pair_type = obj.get("pair_type")
    pair_type = DEFAULT_PAIR_TYPE if pair_type is None else as_str(pair_type, where.at("pair_type"))

    extras: dict[str, Any] = {}
    for key, value in obj.items():
        if key in _CONSUMED or key in ("scene", "episode", "target_object_id", "target_object_category"):
            continue
        if key in ("query_object_id", "query_object_category", "label", "pair_type", "episode_path"):
            continue
        extras[key] = value
    captures = obj.get("captures_meta")
    sectors: dict[str, list[int]] = {}
    if captures is not None:
        views = parse_view_list(captures, where.at("captures_meta"), generation="v1")
        valid, navigable = sector_summary(views)
        # Index statistics (spec §2.4) the legacy shape lacks, from the captures it plays.
        if obj.get("valid_start_sectors") is None:
            sectors["valid_start_sectors"] = list(valid)
        if obj.get("navigable_sectors") is None:
            sectors["navigable_sectors"] = list(navigable)
    for key in ("text_pos", "text_neg"):
        if obj.get(key) is not None:
            _texts(obj[key], where.at(key))
    if obj.get("neg_object_id") is not None:
        as_id(obj["neg_object_id"], where.at("neg_object_id"))

    return {
        "episode_path": episode_path,
        "scene": scene,
        "episode": episode,
        "target_object_id": target,
        "target_object_category": category,
        "query_object_id": query,
        "query_object_category": query_category,
        "label": label,
        "pair_type": pair_type,
        **sectors,
        **extras,
    }


def _source_field(obj: Mapping[str, Any], error: DatasetError) -> DatasetError:
    """The error with its field renamed to the key the legacy line actually carries."""
    if error.field is not None and error.field in _SOURCE_KEYS:
        for key in _SOURCE_KEYS[error.field]:
            if key in obj:
                return DatasetError(error.reason, path=error.path, line=error.line, field=key)
    defaulted = [key for key in ("label", "pair_type") if obj.get(key) is None]
    if defaulted and error.field in ("label", "pair_type", "query_object_id", "query_object_category"):
        defaults = {"label": str(DEFAULT_LABEL), "pair_type": repr(DEFAULT_PAIR_TYPE)}
        applied = ", ".join(f"{key} = {defaults[key]}" for key in defaulted)
        return DatasetError(
            f"{error.reason} (the line has no {' / '.join(defaulted)}, so the reference default {applied} "
            "applies; give them explicitly)",
            path=error.path,
            line=error.line,
            field=error.field,
        )
    return error


def parse_legacy_record(data: Any, where: Where) -> PairRecord:
    """Validate one index line in the legacy shape (a line already in the pair shape is accepted as is)."""
    obj = as_mapping(data, where)
    if not is_legacy_record(obj):
        return parse_pair_record(obj, where)
    converted = legacy_to_pair_dict(obj, where)
    try:
        return parse_pair_record(converted, where)
    except DatasetError as error:
        raise _source_field(obj, error) from None


def _read(
    path: Path, report: ProblemReport | None, display: str | None
) -> list[tuple[int, PairRecord, bool]]:
    name = display or str(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetError("index file is missing", path=name) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"file is not valid UTF-8 ({exc.reason} at byte {exc.start})", path=name) from None
    except OSError as exc:
        raise DatasetError(f"cannot read file ({exc.strerror or exc})", path=name) from None
    records: list[tuple[int, PairRecord, bool]] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        where = Where.of(name, number)
        try:
            data = parse_json(text, where)
            legacy = isinstance(data, Mapping) and is_legacy_record(data)
            records.append((number, parse_legacy_record(data, where), legacy))
        except DatasetError as error:
            if report is None:
                raise
            report.add(error)
    return records


def read_legacy_index(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> list[tuple[int, PairRecord]]:
    """Read a legacy (or mixed) index: ``(line number, record)`` per non-blank line.

    Without ``report`` the first bad line raises a :class:`DatasetError` naming file, line and field; with it,
    bad lines are reported and skipped.
    """
    return [(number, record) for number, record, _ in _read(path, report, display)]


def _add_texts(
    out: dict[str, dict[str, Any]],
    origin: dict[str, Where],
    object_id: str,
    texts: list[str],
    category: str | None,
    where: Where,
) -> None:
    entry = out.get(object_id)
    if entry is None:
        out[object_id] = (
            {"descriptions": texts}
            if category is None
            else {"object_category": category, "descriptions": texts}
        )
        origin[object_id] = where
        return
    if entry["descriptions"] != texts:
        first = origin[object_id]
        raise where.error(
            f"descriptions of object {object_id!r} differ from those given at line {first.line} ({first.field})"
        )
    if category is not None and entry.get("object_category") not in (None, category):
        raise where.error(
            f"object {object_id!r} has category {category!r} here, {entry['object_category']!r} before"
        )
    if category is not None:
        out[object_id] = {"object_category": category, "descriptions": texts}


def legacy_descriptions(records: Iterable[tuple[int, PairRecord]], display: str) -> dict[str, dict[str, Any]]:
    """A description file (``object_descriptions_with_category.json`` shape) from the records' texts.

    ``text_pos`` describes the query object (with the query category), ``text_neg`` the ``neg_object_id``
    object (category unknown, so none is written). The same object described differently on two lines is an
    error naming the second line.
    """
    out: dict[str, dict[str, Any]] = {}
    origin: dict[str, Where] = {}
    for number, record in records:
        where = Where.of(display, number)
        positive = record.extra.get("text_pos")
        if positive:
            _add_texts(
                out,
                origin,
                record.query_object_id,
                list(positive),
                record.query_object_category,
                where.at("text_pos"),
            )
        negative = record.extra.get("text_neg")
        neg_id = record.extra.get("neg_object_id")
        if negative and neg_id is not None:
            _add_texts(out, origin, str(neg_id), list(negative), None, where.at("text_neg"))
    return out


@dataclass(frozen=True)
class LegacyConversion:
    """What :func:`convert_legacy_index` wrote."""

    records: int
    legacy_lines: int
    index_path: Path
    descriptions_path: Path | None = None
    described_objects: int = 0
    pair_types: Mapping[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.pair_types.items()))
        text = (
            f"wrote {self.records} pair record(s) to {self.index_path} ({self.legacy_lines} converted from the "
            f"legacy shape; {kinds})"
        )
        if self.descriptions_path is not None:
            text += f"; descriptions of {self.described_objects} object(s) to {self.descriptions_path}"
        return text


def convert_legacy_index(
    source: Path, target: Path, *, descriptions_out: Path | None = None
) -> LegacyConversion:
    """Convert a legacy index file into a pair index (``pv_index`` shape), optionally writing its texts as a
    description file. Every line is validated before anything is written; the first problem raises."""
    if target.resolve() == source.resolve():
        raise DatasetError("the output index must not be the input file", path=target)
    if descriptions_out is not None and descriptions_out.exists():
        raise DatasetError(
            "file exists; refusing to overwrite a description file (remove it or name another)",
            path=descriptions_out,
        )
    display = str(source)
    lines = _read(source, None, display)
    if not lines:
        raise DatasetError("no index records found", path=display)
    records = [(number, record) for number, record, _ in lines]
    texts = legacy_descriptions(records, display) if descriptions_out is not None else {}
    legacy_lines = sum(1 for _, _, legacy in lines if legacy)
    written = target
    try:
        write_jsonl(target, (record for _, record in records))
        if descriptions_out is not None:
            written = descriptions_out
            descriptions_out.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(texts, indent=2, ensure_ascii=False) + "\n"
            descriptions_out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"cannot write file ({exc.strerror or exc})", path=written) from None
    counts: dict[str, int] = {}
    for _, record in records:
        counts[record.pair_type] = counts.get(record.pair_type, 0) + 1
    return LegacyConversion(
        records=len(records),
        legacy_lines=legacy_lines,
        index_path=target,
        descriptions_path=descriptions_out,
        described_objects=len(texts),
        pair_types=counts,
    )
