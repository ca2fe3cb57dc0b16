"""Index ``.jsonl`` records: one verification pair (or, before pairing, one episode) per line.

Spec §2.4 / paper App. D, I.3. Two record shapes share one file format:

* :class:`EpisodeEntry` — the raw, per-episode record the builder emits before pairing (``_tmp_raw.jsonl``);
* :class:`PairRecord` — an episode plus the query object, ``label`` and ``pair_type`` (``pv_index_*.jsonl``).

Every field is validated, cross-field rules included (a positive pair has equal ids and label 1, a neg_same
pair shares the category, ...), because a silently wrong label corrupts a benchmark number without any
visible failure. Unknown keys are kept in ``extra`` and written back unchanged. A line that names one key
twice is refused (the decoder would otherwise keep the last value silently).

A pair index as a whole must list every pair once, at least one pair, and no line may name a key twice: a
repeated pair would be scored twice (or stop a resumable run at its second occurrence), an empty index would
be "evaluated" as a run over zero episodes, and a repeated key means the writer of the file cannot be
trusted. :func:`read_pair_index_lines` — the one reader every caller goes through — refuses such an index as a
whole, naming the file and the line, even when a report lets it skip other malformed lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .constants import PAIR_TYPES, RAW_SECTOR_COUNT
from .errors import DatasetError, ProblemReport
from .fields import Where, as_id, as_int, as_list, as_mapping, as_str, optional, required
from .json_text import RepeatedKeyError, parse_json
from .paths import check_relative


def _sector_list(value: Any, where: Where) -> tuple[int, ...]:
    items = as_list(value, where)
    sectors = tuple(
        as_int(item, where.at(i), minimum=0, maximum=RAW_SECTOR_COUNT - 1) for i, item in enumerate(items)
    )
    if list(sectors) != sorted(set(sectors)):
        raise where.error(f"expected a sorted list of distinct raw sectors, got {list(sectors)}")
    return sectors


def _rel_path(value: Any, where: Where) -> str:
    text = as_str(value, where)
    check_relative(text, where)
    return text.replace("\\", "/").rstrip("/")


@dataclass(frozen=True, kw_only=True)
class EpisodeEntry:
    """One captured episode as listed in an index (raw, unpaired)."""

    episode_path: str
    scene: str
    episode: str
    meta_path: str
    rgb_dir: str
    depth_dir: str | None = None
    target_object_id: str
    target_object_category: str
    valid_start_sectors: tuple[int, ...] = ()
    navigable_sectors: tuple[int, ...] = ()
    n_navigable: int = 0
    n_mask_visible: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON form in the reference builder's key order (``depth_dir`` only if set, unknown keys last)."""
        out = self._core_dict()
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    def _core_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "episode_path": self.episode_path,
            "scene": self.scene,
            "episode": self.episode,
            "meta_path": self.meta_path,
            "rgb_dir": self.rgb_dir,
        }
        if self.depth_dir is not None:
            out["depth_dir"] = self.depth_dir
        out.update(
            {
                "target_object_id": self.target_object_id,
                "target_object_category": self.target_object_category,
                "valid_start_sectors": list(self.valid_start_sectors),
                "navigable_sectors": list(self.navigable_sectors),
                "n_navigable": self.n_navigable,
                "n_mask_visible": self.n_mask_visible,
            }
        )
        return out


@dataclass(frozen=True, kw_only=True)
class PairRecord(EpisodeEntry):
    """An episode paired with a query object: the unit the evaluator scores."""

    query_object_id: str
    query_object_category: str
    label: int
    pair_type: str

    def _core_dict(self) -> dict[str, Any]:
        out = super()._core_dict()
        out.update(
            {
                "query_object_id": self.query_object_id,
                "query_object_category": self.query_object_category,
                "label": self.label,
                "pair_type": self.pair_type,
            }
        )
        return out

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """Identity of a pair, as the reference merger deduplicates results."""
        return (self.scene, self.episode, self.target_object_id, self.query_object_id, self.pair_type)


_ENTRY_KEYS = {f.name for f in fields(EpisodeEntry)} - {"extra"}
_PAIR_KEYS = {f.name for f in fields(PairRecord)} - {"extra"}


def _entry_fields(obj: Mapping[str, Any], where: Where) -> dict[str, Any]:
    episode_path = required(obj, "episode_path", where, _rel_path)
    values: dict[str, Any] = {
        "episode_path": episode_path,
        "scene": required(obj, "scene", where, as_str),
        "episode": required(obj, "episode", where, as_id),
        "meta_path": optional(obj, "meta_path", where, _rel_path, f"{episode_path}/meta.json"),
        "rgb_dir": optional(obj, "rgb_dir", where, _rel_path, f"{episode_path}/rgb"),
        "depth_dir": optional(obj, "depth_dir", where, _rel_path),
        "target_object_id": required(obj, "target_object_id", where, as_id),
        "target_object_category": required(obj, "target_object_category", where, as_str),
        "valid_start_sectors": optional(obj, "valid_start_sectors", where, _sector_list, ()),
        "navigable_sectors": optional(obj, "navigable_sectors", where, _sector_list, ()),
    }
    counts = (
        ("n_navigable", "navigable_sectors"),
        ("n_mask_visible", "valid_start_sectors"),
    )
    for count_key, list_key in counts:
        count = optional(
            obj, count_key, where, lambda v, w: as_int(v, w, minimum=0, maximum=RAW_SECTOR_COUNT)
        )
        listed = len(values[list_key])
        if count is None:
            count = listed
        elif list_key in obj and count != listed:
            raise where.at(count_key).error(f"value {count} disagrees with len({list_key}) = {listed}")
        values[count_key] = count
    return values


def parse_episode_entry(data: Any, where: Where) -> EpisodeEntry:
    """Validate a raw (unpaired) index line."""
    obj = as_mapping(data, where)
    values = _entry_fields(obj, where)
    return EpisodeEntry(**values, extra={k: v for k, v in obj.items() if k not in _ENTRY_KEYS})


def parse_pair_record(data: Any, where: Where) -> PairRecord:
    """Validate a pair index line, including the label / pair_type / id consistency rules."""
    obj = as_mapping(data, where)
    if "scene" not in obj and "scene_key" in obj:
        raise where.at("scene").error(
            "missing required field; the line is in the reference's legacy shape (scene_key, episode_id, "
            "object_id, ...): convert the file with 'aiv-dataset import-legacy-index IN OUT'"
        )
    values = _entry_fields(obj, where)
    query_id = required(obj, "query_object_id", where, as_id)
    query_cat = required(obj, "query_object_category", where, as_str)
    label = required(obj, "label", where, lambda v, w: as_int(v, w, minimum=0, maximum=1))
    pair_type = required(obj, "pair_type", where, as_str)
    if pair_type not in PAIR_TYPES:
        raise where.at("pair_type").expected(f"one of {list(PAIR_TYPES)}", pair_type)
    same_id = query_id == values["target_object_id"]
    same_cat = query_cat == values["target_object_category"]
    if label != (1 if pair_type == "positive" else 0):
        raise where.at("label").error(f"label {label} contradicts pair_type {pair_type!r}")
    if (pair_type == "positive") != same_id:
        raise where.at("query_object_id").error(
            f"pair_type {pair_type!r} requires the query id to "
            f"{'equal' if pair_type == 'positive' else 'differ from'} target_object_id"
        )
    if pair_type in ("positive", "neg_same") and not same_cat:
        raise where.at("query_object_category").error(
            f"pair_type {pair_type!r} requires the same category as the target "
            f"({values['target_object_category']!r})"
        )
    if pair_type == "neg_diff" and same_cat:
        raise where.at("query_object_category").error(
            "pair_type 'neg_diff' requires a category different from the target's"
        )
    return PairRecord(
        **values,
        query_object_id=query_id,
        query_object_category=query_cat,
        label=label,
        pair_type=pair_type,
        extra={k: v for k, v in obj.items() if k not in _PAIR_KEYS},
    )


def _read_lines(path: Path, display: str) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetError("index file is missing", path=display) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(
            f"file is not valid UTF-8 ({exc.reason} at byte {exc.start})", path=display
        ) from None
    except OSError as exc:
        raise DatasetError(f"cannot read file ({exc.strerror or exc})", path=display) from None


@dataclass
class _JsonlLines:
    records: list[tuple[int, Any]] = field(default_factory=list)  # parsed, with 1-based line numbers
    non_blank: int = 0
    repeated_keys: list[DatasetError] = field(default_factory=list)  # lines naming a key twice


def _read_jsonl(
    path: Path, parse: Callable[[Any, Where], Any], report: ProblemReport | None, display: str | None
) -> _JsonlLines:
    """Parse every non-blank line; a bad line raises (no ``report``) or is reported and skipped."""
    name = display or str(path)
    out = _JsonlLines()
    for number, text in enumerate(_read_lines(path, name), start=1):
        if not text.strip():
            continue
        out.non_blank += 1
        where = Where.of(name, number)
        try:
            out.records.append((number, parse(parse_json(text, where), where)))
        except DatasetError as error:
            if report is None:
                raise
            report.add(error)
            if isinstance(error, RepeatedKeyError):
                out.repeated_keys.append(error)
    return out


@dataclass(frozen=True)
class PairIndexScan:
    """A pair index read line by line, before the whole-file rules are applied.

    ``lines`` holds the valid pairs with their line numbers, a repeated pair only at its first line;
    ``repeats`` one error per line that repeats an earlier pair; ``repeated_keys`` the lines that name a key
    twice (already in the caller's report, like every malformed line); ``empty`` the refusal of an index without
    a single valid pair (``None`` when there is one). :func:`read_pair_index_lines` raises the first of these;
    ``aiv-dataset validate`` reports them all.
    """

    path: str
    lines: list[tuple[int, PairRecord]]
    repeats: list[DatasetError]
    repeated_keys: list[DatasetError]
    empty: DatasetError | None

    def refusal(self) -> DatasetError | None:
        """Why the index as a whole cannot be served (the earliest such line first), or ``None``."""
        fatal = sorted((*self.repeated_keys, *self.repeats), key=lambda error: error.line or 0)
        if not fatal:
            return self.empty
        first = fatal[0]
        if len(fatal) == 1:
            return first
        return DatasetError(
            f"{first.reason} (and {len(fatal) - 1} more line(s) that make the index unusable)",
            path=first.path,
            line=first.line,
            field=first.field,
        )


def _repeated_pairs(
    lines: list[tuple[int, PairRecord]], name: str
) -> tuple[list[tuple[int, PairRecord]], list[DatasetError]]:
    """Split lines into first occurrences and repeats.

    Two lines name the same pair when they share ``episode_path`` and ``query_object_id`` (the episode the
    simulator loads and the query it hands out), or when they share the key results are filed under
    (``scene``/``episode``/``query_object_id``, see ``aiv_eval.records.episode.make_episode_key``): either way the
    evaluator would score one pair twice.
    """
    by_episode: dict[tuple[str, str], int] = {}
    by_result: dict[tuple[str, str, str], int] = {}
    kept: list[tuple[int, PairRecord]] = []
    repeats: list[DatasetError] = []
    for number, record in lines:
        where = Where.of(name, number).at("query_object_id")
        episode_id = (record.episode_path, record.query_object_id)
        result_id = (record.scene, record.episode, record.query_object_id)
        if episode_id in by_episode:
            repeats.append(
                where.error(
                    f"the pair (episode_path {record.episode_path!r}, query_object_id {record.query_object_id!r})"
                    f" is already listed on line {by_episode[episode_id]}; an index lists every pair once"
                )
            )
            continue
        if result_id in by_result:
            repeats.append(
                where.error(
                    f"the pair (scene {record.scene!r}, episode {record.episode!r}, query_object_id "
                    f"{record.query_object_id!r}) is already listed on line {by_result[result_id]}, which "
                    "files its results under the same key; an index lists every pair once"
                )
            )
            continue
        by_episode[episode_id] = number
        by_result[result_id] = number
        kept.append((number, record))
    return kept, repeats


def scan_pair_index(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> PairIndexScan:
    """Read a pair index and find repeated pairs and emptiness without refusing the file for them.

    Malformed lines raise (without ``report``) or are reported and skipped (with it), as in
    :func:`read_pair_index`. Callers that serve or evaluate an index use :func:`read_pair_index_lines`.
    """
    name = display or str(path)
    read = _read_jsonl(path, parse_pair_record, report, display)
    kept, repeats = _repeated_pairs(read.records, name)
    empty = None
    if not kept:
        lines = read.non_blank
        detail = "the file has no lines" if lines == 0 else f"none of its {lines} line(s) is a valid pair"
        empty = DatasetError(f"the index holds no verification pairs ({detail})", path=name)
    return PairIndexScan(name, kept, repeats, read.repeated_keys, empty)


def read_pair_index_lines(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> list[tuple[int, PairRecord]]:
    """Read a pair index: every record with its 1-based line number.

    Without ``report`` the first bad line raises; with it, bad lines are reported and skipped so the remaining
    pairs can still be served. An index that repeats a pair, has a line naming a key twice, or holds no valid
    pair at all is refused as a whole either way (:class:`DatasetError` naming the file and the first such
    line): serving part of it would hide the problem.
    """
    scan = scan_pair_index(path, report=report, display=display)
    refusal = scan.refusal()
    if refusal is not None:
        raise refusal
    return scan.lines


def read_pair_index(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> list[PairRecord]:
    """As :func:`read_pair_index_lines`, without the line numbers."""
    return [record for _, record in read_pair_index_lines(path, report=report, display=display)]


def read_episode_index(
    path: Path, *, report: ProblemReport | None = None, display: str | None = None
) -> list[EpisodeEntry]:
    """Read a raw (unpaired) index; malformed lines are handled as by :func:`read_pair_index`."""
    return [record for _, record in _read_jsonl(path, parse_episode_entry, report, display).records]


def write_jsonl(path: Path, records: Iterable[EpisodeEntry]) -> int:
    """Write records one JSON object per line (reference formatting); returns the number written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record.to_dict()) + "\n")
            count += 1
    return count
