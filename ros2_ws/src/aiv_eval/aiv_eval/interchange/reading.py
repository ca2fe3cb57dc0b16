"""Reading the reference's result files into our records.

Reading (:func:`read_reference_results`, :func:`import_reference`)
    The reference writes one record per episode (spec §4.2): the run-level ``results.json`` (a JSON list) and,
    per episode, ``<pair_type>/<correct|wrong>/<scene>/<episode_id>/episode.json``. A path given to the reader
    may be a ``results.json``, one ``episode.json``, or a directory: its ``results.json`` if it has one, else
    every ``episode.json`` below it. Each record becomes an :class:`~aiv_eval.records.episode.EpisodeRecord`, so
    ``aiv-eval metrics`` / ``table`` / ``compare`` / ``report`` work on it unchanged.

    Required per record: what the reference evaluation always writes and what scoring needs —
    ``episode_id``, ``scene_id``, ``object_id`` (the query), ``prediction``, ``label``, ``pair_type``,
    ``steps``, ``is_correct``. Optional, with the defaults the reference metric code (``pver/eval/metrics.py``)
    or evaluation script applies: ``target_object_category`` ("unknown"), ``query_object_category`` (the
    target category), ``target_object_id`` (may be null in runs over legacy index lines; then it is the query
    id when ``label`` is 1, and an error otherwise), ``query_descriptions`` ([]), ``nav_fail_unreachable`` /
    ``nav_fail_trap`` (counted from the transcript's ``info.navigation_failed`` / ``info.trap_view`` flags,
    0 without a transcript), ``nav_failures`` and ``effective_views`` (derived), ``first_view_prediction``
    (absent = not scored, as in the reference). When a scalar and the transcript are both present they must
    agree, as must ``is_correct`` with prediction and label. ``is_correct`` of an "Unsure" prediction on a
    negative pair tells how the run mapped "Unsure" (true: as "No", the shipped setting; false: as wrong);
    that mapping is recorded in the imported run and all records must agree on it.

    Duplicates: the reference merger keeps the later of two records with the same (scene_id, episode_id,
    target_object_id, object_id, pair_type); the same happens here for a results list. Two ``episode.json``
    files of one pair (e.g. a stale ``correct/`` copy next to a ``wrong/`` one) are an error.

    Not carried over: the reference transcript itself (its action/info dicts are free-form debug output;
    only the flags and per-step predictions above are read), ``prediction_flips`` / ``flip_direction`` (derived
    again from the per-step predictions), stop reasons (not recorded by the reference; imported records say
    "final"), ``target_descriptions``.

All input errors are :class:`~aiv_dataset.errors.DatasetError` (a ``ValueError``) naming the file, the
episode (position and scene/episode) or JSON line, and the field; the CLI prints them on one line and exits 2.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiv_dataset.constants import PAIR_TYPES
from aiv_dataset.errors import DatasetError
from aiv_dataset.fields import Where, as_bool, as_id, as_int, as_list, as_mapping, as_str, describe

from ..records.episode import (
    PREDICTIONS,
    STEP_PREDICTIONS,
    EpisodeRecord,
    RecordError,
    count_flips,
    derive_flip_direction,
    make_episode_key,
)
from ..records.store import (
    CONFIG_INFO_KEYS,
    RESULTS_FILE,
    RUN_FILE,
    LoadedRun,
    ResultsStore,
    RunConfig,
)
from .formats import (
    DEFAULT_CATEGORY,
    IMPORTED_STOP_REASON,
    REFERENCE_EPISODE_FILE,
    REFERENCE_METRICS_FILE,
    REFERENCE_RESULTS_FILE,
)


def _read_json(path: Path) -> Any:
    """A whole JSON file; failures name the file (and the line of a syntax error)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError("file is missing", path=path) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"file is not valid UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None
    except OSError as exc:
        raise DatasetError(f"cannot read file ({exc.strerror or exc})", path=path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno
        ) from None
    except (RecursionError, ValueError) as exc:
        raise DatasetError(f"invalid JSON: {exc}", path=path) from None


def _choice(choices: Sequence[str]) -> Any:
    def convert(value: Any, where: Where) -> str:
        if not isinstance(value, str) or value not in choices:
            raise where.expected(f"one of {list(choices)}", value)
        return value

    return convert


def _count(value: Any, where: Where) -> int:
    return as_int(value, where, minimum=0)


def _get(obj: Mapping[str, Any], key: str, where: Where, convert: Any, default: Any = None) -> Any:
    value = obj.get(key)
    return default if value is None else convert(value, where.at(key))


def _need(obj: Mapping[str, Any], key: str, where: Where, convert: Any) -> Any:
    if key not in obj:
        raise where.at(key).error("missing required field")
    if obj[key] is None:
        raise where.at(key).error("required field is null")
    return convert(obj[key], where.at(key))


def _texts(value: Any, where: Where) -> tuple[str, ...]:
    items = as_list(value, where)
    return tuple(as_str(item, where.at(i), allow_empty=True) for i, item in enumerate(items))


@dataclass(frozen=True)
class ReferenceEpisode:
    """One reference per-episode record, validated, with the reference defaults applied."""

    position: int
    where: Where
    episode_id: str
    scene_id: str
    object_id: str
    target_object_id: str
    target_object_category: str
    query_object_category: str
    prediction: str
    label: int
    pair_type: str
    query_descriptions: tuple[str, ...]
    steps: int
    is_correct: bool
    nav_fail_unreachable: int
    nav_fail_trap: int
    first_view_prediction: str | None
    step_predictions: tuple[str, ...]
    unsure_as_negative: bool | None
    """What ``is_correct`` of an Unsure prediction on a negative pair says about the mapping (None: nothing)."""

    @property
    def key(self) -> str:
        return make_episode_key(self.scene_id, self.episode_id, self.object_id)

    @property
    def merge_key(self) -> tuple[str, str, str, str, str]:
        """What the reference merger deduplicates on."""
        return (self.scene_id, self.episode_id, self.target_object_id, self.object_id, self.pair_type)

    def to_record(
        self, *, index: int, run_id: str, unsure_as_negative: bool, query_mode: str
    ) -> EpisodeRecord:
        failures = self.nav_fail_unreachable + self.nav_fail_trap
        try:
            return EpisodeRecord(
                episode_key=self.key,
                episode_index=index,
                episode_id=self.episode_id,
                scene_id=self.scene_id,
                object_id=self.object_id,
                target_object_id=self.target_object_id,
                target_object_category=self.target_object_category,
                query_object_category=self.query_object_category,
                prediction=self.prediction,
                label=self.label,
                pair_type=self.pair_type,
                query_descriptions=self.query_descriptions,
                steps=self.steps,
                is_correct=self.is_correct,
                nav_failures=failures,
                nav_fail_unreachable=self.nav_fail_unreachable,
                nav_fail_trap=self.nav_fail_trap,
                effective_views=self.steps - failures,
                first_view_prediction=self.first_view_prediction,
                step_predictions=self.step_predictions,
                prediction_flips=count_flips(self.step_predictions),
                flip_direction=derive_flip_direction(
                    self.first_view_prediction, self.prediction, self.label, unsure_as_negative
                ),
                stop_reason=IMPORTED_STOP_REASON,
                query_mode=query_mode,
                run_id=run_id,
            )
        except RecordError as exc:  # every rule is checked before; this is a last line of defence
            raise self.where.error(str(exc)) from None


def _episode_where(source: str, position: int | None, data: Any) -> Where:
    """``file [episode #i: scene/episode]``: where a record's problems are reported."""
    label = source
    ident = ""
    if isinstance(data, Mapping):
        scene, episode = data.get("scene_id"), data.get("episode_id")
        if isinstance(scene, str | int) and isinstance(episode, str | int):
            ident = f"{scene}/{episode}"
    if position is not None:
        label += f" [episode #{position}{': ' + ident if ident else ''}]"
    elif ident:
        label += f" [episode {ident}]"
    return Where(label)


def _transcript_facts(transcript: list[Any], where: Where) -> tuple[int, int, list[str | None]]:
    """Failed moves, trap arrivals and per-step predictions read from a reference transcript."""
    unreachable = trap = 0
    predictions: list[str | None] = []
    for i, item in enumerate(transcript):
        at = where.at(i)
        step = as_mapping(item, at)
        info = _get(step, "info", at, as_mapping, {})
        action = _get(step, "action", at, as_mapping, {})
        if _get(info, "navigation_failed", at.at("info"), as_bool, False):
            unreachable += 1
        if _get(info, "trap_view", at.at("info"), as_bool, False):
            trap += 1
        predictions.append(_get(action, "_step_prediction", at.at("action"), as_str))
    return unreachable, trap, predictions


def parse_reference_episode(data: Any, where: Where, position: int) -> ReferenceEpisode:
    """Validate one reference per-episode record (module docstring: required keys and defaults)."""
    obj = as_mapping(data, where)
    episode_id = _need(obj, "episode_id", where, as_id)
    scene_id = _need(obj, "scene_id", where, as_str)
    object_id = _need(obj, "object_id", where, as_id)
    prediction = _need(obj, "prediction", where, _choice(PREDICTIONS))
    label = _need(obj, "label", where, lambda v, w: as_int(v, w, minimum=0, maximum=1))
    pair_type = _need(obj, "pair_type", where, _choice(PAIR_TYPES))
    steps = _need(obj, "steps", where, lambda v, w: as_int(v, w, minimum=1))
    is_correct = _need(obj, "is_correct", where, as_bool)

    if (pair_type == "positive") != (label == 1):
        raise where.at("label").error(f"label {label} contradicts pair_type {pair_type!r}")
    target = _get(obj, "target_object_id", where, as_id)
    if target is None:
        if label != 1:
            raise where.at("target_object_id").error(
                "missing or null; a negative pair needs the id of the object in the scene"
            )
        target = object_id  # a positive pair: the query is the object in the scene
    if (target == object_id) != (label == 1):
        relation = "equals" if target == object_id else "differs from"
        raise where.at("target_object_id").error(
            f"{target!r} {relation} object_id {object_id!r}, which contradicts label {label}"
        )
    target_category = _get(obj, "target_object_category", where, as_str, DEFAULT_CATEGORY)
    query_category = _get(obj, "query_object_category", where, as_str, target_category)
    descriptions = _get(obj, "query_descriptions", where, _texts, ())

    transcript = _get(obj, "transcript", where, as_list, [])
    t_unreachable, t_trap, t_predictions = _transcript_facts(transcript, where.at("transcript"))
    if transcript and len(transcript) != steps:
        raise where.at("steps").error(
            f"value {steps} disagrees with the transcript's {len(transcript)} step(s)"
        )
    counts = {}
    for key, from_transcript in (("nav_fail_unreachable", t_unreachable), ("nav_fail_trap", t_trap)):
        given = _get(obj, key, where, _count)
        if given is not None and transcript and given != from_transcript:
            raise where.at(key).error(
                f"value {given} disagrees with the transcript, which counts {from_transcript}"
            )
        counts[key] = from_transcript if given is None else given
    unreachable, trap = counts["nav_fail_unreachable"], counts["nav_fail_trap"]
    total = _get(obj, "nav_failures", where, _count)
    if total is not None and total != unreachable + trap:
        raise where.at("nav_failures").error(
            f"value {total} is not nav_fail_unreachable + nav_fail_trap = {unreachable + trap}"
        )
    if unreachable + trap > steps:
        raise where.at("nav_failures").error(f"{unreachable + trap} navigation failures in {steps} step(s)")
    effective = _get(obj, "effective_views", where, _count)
    if effective is not None and effective != steps - unreachable - trap:
        raise where.at("effective_views").error(
            f"value {effective} is not steps - nav_fail_unreachable - nav_fail_trap = {steps - unreachable - trap}"
        )

    first_view = _get(obj, "first_view_prediction", where, _choice(PREDICTIONS))
    step_predictions: tuple[str, ...] = ()
    if transcript and all(p in STEP_PREDICTIONS for p in t_predictions):
        step_predictions = tuple(p for p in t_predictions if p is not None)
    first_logged = next((p for p in t_predictions if p is not None), None)
    if first_view is not None and first_logged is not None and first_view != first_logged:
        raise where.at("first_view_prediction").error(
            f"value {first_view!r} disagrees with the transcript's first _step_prediction {first_logged!r}"
        )
    if first_view is None:
        step_predictions = ()  # the reference scores no first view for this record; keep it that way

    implied: bool | None = None
    if prediction == "Unsure":
        if label == 1 and is_correct:
            raise where.at("is_correct").error("an 'Unsure' prediction cannot be correct on a positive pair")
        if label == 0:
            implied = is_correct
    elif is_correct != ((prediction == "Yes") == (label == 1)):
        raise where.at("is_correct").error(
            f"value {str(is_correct).lower()} contradicts prediction {prediction!r} and label {label}"
        )
    return ReferenceEpisode(
        position=position,
        where=where,
        episode_id=episode_id,
        scene_id=scene_id,
        object_id=object_id,
        target_object_id=target,
        target_object_category=target_category,
        query_object_category=query_category,
        prediction=prediction,
        label=label,
        pair_type=pair_type,
        query_descriptions=descriptions,
        steps=steps,
        is_correct=is_correct,
        nav_fail_unreachable=unreachable,
        nav_fail_trap=trap,
        first_view_prediction=first_view,
        step_predictions=step_predictions,
        unsure_as_negative=implied,
    )


@dataclass(frozen=True)
class ReferenceResults:
    """The records read from one reference result source, ready to be scored or stored."""

    source: Path
    kind: str
    """"results_list", "episode_file" or "episode_files"."""
    episodes: tuple[ReferenceEpisode, ...]
    unsure_as_negative: bool
    config_info: Mapping[str, Any]
    duplicates_dropped: int = 0
    files_read: int = 1
    reference_metrics: Mapping[str, Any] | None = None
    """The ``metrics.json`` found next to the results (None when there is none, or it is unreadable)."""
    notes: tuple[str, ...] = ()

    def run_config(self, name: str = "") -> RunConfig:
        return RunConfig(
            config={"imported_from": "reference", "source_kind": self.kind},
            index_file=str(self.source),
            slice=(0, None),
            seed=42,
            code_version="reference",
            config_info=dict(self.config_info),
            unsure_as_negative=self.unsure_as_negative,
            name=name or self.source.resolve().name,
        )

    def records(self, run_config: RunConfig) -> list[EpisodeRecord]:
        query_mode = self.config_info.get("query_mode")
        return [
            episode.to_record(
                index=i,
                run_id=run_config.run_id,
                unsure_as_negative=self.unsure_as_negative,
                query_mode=query_mode if isinstance(query_mode, str) else "",
            )
            for i, episode in enumerate(self.episodes)
        ]

    def loaded_run(self, name: str = "") -> LoadedRun:
        """The records as an in-memory run, for the analysis functions (nothing is written)."""
        config = self.run_config(name)
        records = tuple(self.records(config))
        return LoadedRun(self.source, config, records, None, len(records))


def _source_files(path: Path) -> tuple[str, list[Path]]:
    if path.is_dir():
        results = path / REFERENCE_RESULTS_FILE
        if results.is_file():
            return "results_list", [results]
        files = sorted(path.rglob(REFERENCE_EPISODE_FILE))
        if not files:
            raise DatasetError(
                f"no {REFERENCE_RESULTS_FILE} and no {REFERENCE_EPISODE_FILE} files in this directory",
                path=path,
            )
        return "episode_files", files
    if not path.exists():
        raise DatasetError("no such file or directory", path=path)
    return "file", [path]


def _reference_metrics(path: Path, notes: list[str]) -> Mapping[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = _read_json(path)
    except DatasetError as error:
        notes.append(f"ignored {path}: {error.reason}")
        return None
    if not isinstance(data, Mapping):
        notes.append(f"ignored {path}: expected a JSON object, got {describe(data)}")
        return None
    return data


def _config_info(metrics: Mapping[str, Any] | None, notes: list[str]) -> dict[str, Any]:
    if metrics is None:
        return {}
    info = metrics.get("config_info")
    if not isinstance(info, Mapping):
        return {}
    kept = {key: info[key] for key in CONFIG_INFO_KEYS if key in info}
    extra = sorted(set(info) - set(CONFIG_INFO_KEYS))
    if extra:
        notes.append(f"config_info keys not carried over: {', '.join(extra)}")
    return kept


def _unsure_mapping(episodes: Sequence[ReferenceEpisode], requested: bool | None) -> bool:
    """The run's "Unsure" mapping: as requested, else as the records imply, else the shipped default (True)."""
    implied = [e for e in episodes if e.unsure_as_negative is not None]
    if requested is not None:
        for e in implied:
            if e.unsure_as_negative != requested:
                raise e.where.at("is_correct").error(
                    f"value {str(e.is_correct).lower()} for an 'Unsure' prediction on a negative pair contradicts "
                    f"the requested mapping (Unsure counted as {'No' if requested else 'wrong'})"
                )
        return requested
    if not implied:
        return True
    first = implied[0]
    for e in implied[1:]:
        if e.unsure_as_negative != first.unsure_as_negative:
            raise e.where.at("is_correct").error(
                f"value {str(e.is_correct).lower()} for an 'Unsure' prediction on a negative pair contradicts "
                f"{first.where.path} (is_correct {str(first.is_correct).lower()}): the run must map 'Unsure' one way"
            )
    return bool(first.unsure_as_negative)


def read_reference_results(
    path: str | os.PathLike[str], *, unsure_as_negative: bool | None = None
) -> ReferenceResults:
    """Read a reference ``results.json``, one ``episode.json`` or a reference output directory."""
    source = Path(path)
    kind, files = _source_files(source)
    notes: list[str] = []
    parsed: list[ReferenceEpisode] = []
    origin: dict[str, Path] = {}
    duplicates = 0
    if kind in ("results_list", "file"):
        data = _read_json(files[0])
        if isinstance(data, list):
            kind = "results_list"
            by_merge_key: dict[tuple[str, str, str, str, str], ReferenceEpisode] = {}
            for i, item in enumerate(data):
                episode = parse_reference_episode(item, _episode_where(str(files[0]), i, item), i)
                if episode.merge_key in by_merge_key:
                    duplicates += 1
                by_merge_key[episode.merge_key] = episode  # the later record wins, as in the reference merger
            parsed = sorted(by_merge_key.values(), key=lambda e: e.position)
        elif isinstance(data, Mapping):
            kind = "episode_file"
            parsed = [parse_reference_episode(data, _episode_where(str(files[0]), None, data), 0)]
        else:
            raise DatasetError(
                f"expected a results list or one episode record, got {describe(data)}", path=files[0]
            )
        metrics_dir = files[0].parent
    else:
        for i, file in enumerate(files):
            data = _read_json(file)
            episode = parse_reference_episode(data, _episode_where(str(file), None, data), i)
            if episode.key in origin:
                raise episode.where.error(
                    f"the pair {episode.key} also has an episode file at {origin[episode.key]}; remove the stale one"
                )
            origin[episode.key] = file
            parsed.append(episode)
        metrics_dir = source
    seen: dict[str, ReferenceEpisode] = {}
    for episode in parsed:
        other = seen.get(episode.key)
        if other is not None:
            raise episode.where.at("object_id").error(
                f"the pair {episode.key} appears twice with different target/pair type ({other.where.path}: "
                f"{other.target_object_id}/{other.pair_type}, here {episode.target_object_id}/{episode.pair_type})"
            )
        seen[episode.key] = episode
    if not parsed:
        raise DatasetError("the results list is empty", path=files[0])
    reference_metrics = _reference_metrics(metrics_dir / REFERENCE_METRICS_FILE, notes)
    return ReferenceResults(
        source=source,
        kind=kind,
        episodes=tuple(parsed),
        unsure_as_negative=_unsure_mapping(parsed, unsure_as_negative),
        config_info=_config_info(reference_metrics, notes),
        duplicates_dropped=duplicates,
        files_read=len(files),
        reference_metrics=reference_metrics,
        notes=tuple(notes),
    )


def import_reference(
    path: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    *,
    name: str = "",
    unsure_as_negative: bool | None = None,
) -> ReferenceResults:
    """Store reference results as a run dir of ours (``run.json`` + ``results.jsonl``); the dir must be new."""
    imported = read_reference_results(path, unsure_as_negative=unsure_as_negative)
    target = Path(run_dir)
    for existing in (RUN_FILE, RESULTS_FILE):
        if (target / existing).exists():
            raise DatasetError(f"already holds a run ({existing}); import into a new directory", path=target)
    config = imported.run_config(name)
    with ResultsStore.open(target, config) as store:
        for record in imported.records(config):
            store.append(record)
    return imported
