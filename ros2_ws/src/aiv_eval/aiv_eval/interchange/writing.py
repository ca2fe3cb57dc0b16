"""Writing a run of ours in the reference's per-episode format.

Writing (:func:`export_reference`)
    A run dir of ours becomes ``OUT/results.json`` (list, ``indent=2``), ``OUT/metrics.json`` (the reference
    keys of spec §4.4 only, same rounding) and one ``OUT/<pair_type>/<correct|wrong>/<scene>/<episode_id>/
    episode.json`` per completed episode, with exactly the §4.2 keys in the reference's order, followed by
    ``prediction_flips`` and ``flip_direction`` as the shipped example files carry them. The transcript keeps
    the reference shape ``{step, observation{rgb_path}, action{...}, info{...}}``: ``action`` has ``decision``,
    ``nav_rel`` (when a move was requested), ``_step_prediction``, ``_detection_confidence``,
    ``_current_abs_sector`` (goal-anchored name of the virtual sector) and ``_per_attribute_results`` (per view
    state and reconciled state); ``info`` has ``navigation_failed`` / ``trap_view`` (only when true, like the
    reference env), ``decision`` and ``tracker_state`` (this step's reconciled states, not the reference's
    aliased final state). ``rgb_path`` is dataset-relative (``<episode_path>/rgb/rgb_<tag>.png`` when the
    pair index is available, else ``rgb/rgb_<tag>.png``), where the reference writes an absolute path.
    Infra-failure records have no reference counterpart and are left out (and counted).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiv_dataset.descriptions import DescriptionDB, load_descriptions
from aiv_dataset.errors import DatasetError
from aiv_dataset.index_records import read_pair_index
from aiv_dataset.vocabulary import DIRECTIONS, SECTOR_COUNT

from ..analysis.metrics import compute_metrics
from ..records.episode import (
    EpisodeRecord,
    TranscriptStep,
)
from ..records.store import (
    LoadedRun,
    load_run,
)
from .checking import reference_metrics_part
from .formats import (
    _ANSWER_STATE,
    _TAG,
    REFERENCE_EPISODE_FILE,
    REFERENCE_METRICS_FILE,
    REFERENCE_RESULTS_FILE,
)


def _rgb_path(tag: str, episode_path: str | None) -> str:
    if not _TAG.match(tag):
        return ""
    name = f"rgb/rgb_{tag}.png"
    return f"{episode_path}/{name}" if episode_path else name


def reference_step(step: TranscriptStep, *, episode_path: str | None = None) -> dict[str, Any]:
    """One transcript step in the reference shape ``{step, observation, action, info}``."""
    action: dict[str, Any] = {"decision": step.decision}
    if step.nav_rel is not None:
        action["nav_rel"] = step.nav_rel
    action["_step_prediction"] = step.step_prediction
    action["_detection_confidence"] = step.detection_confidence
    action["_current_abs_sector"] = (
        DIRECTIONS[step.sector] if 0 <= step.sector < SECTOR_COUNT else str(step.sector)
    )
    if step.attributes:
        action["_per_attribute_results"] = [
            {
                "name": a.name,
                "expected": a.expected,
                "observed": _ANSWER_STATE.get(a.observed, "Missing"),
                "accumulated_status": a.reconciled_state,
            }
            for a in step.attributes
        ]
    info: dict[str, Any] = {}
    if step.failed_move:
        info["navigation_failed"] = True
    if step.trap_view:
        info["trap_view"] = True
    info["decision"] = step.decision
    info["tracker_state"] = {a.name: a.reconciled_state for a in step.attributes}
    return {
        "step": step.step,
        "observation": {"rgb_path": _rgb_path(step.capture_tag, episode_path)},
        "action": action,
        "info": info,
    }


def reference_episode(
    record: EpisodeRecord,
    *,
    episode_path: str | None = None,
    target_descriptions: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A completed record of ours as a reference per-episode record (spec §4.2 keys and order).

    ``target_descriptions`` defaults to the query's for a positive pair (as the reference) and to ``[]``
    otherwise.
    """
    if not record.is_ok:
        raise ValueError(
            f"record {record.episode_key!r} is an infra failure; the reference has no such record"
        )
    if target_descriptions is None:
        target_descriptions = record.query_descriptions if record.pair_type == "positive" else ()
    out: dict[str, Any] = {
        "episode_id": record.episode_id,
        "scene_id": record.scene_id,
        "object_id": record.object_id,
        "target_object_id": record.target_object_id,
        "target_object_category": record.target_object_category,
        "query_object_category": record.query_object_category,
        "prediction": record.prediction,
        "label": record.label,
        "pair_type": record.pair_type,
        "query_descriptions": list(record.query_descriptions),
        "target_descriptions": list(target_descriptions),
        "steps": record.steps,
        "is_correct": record.is_correct,
        "transcript": [reference_step(s, episode_path=episode_path) for s in record.transcript],
        "nav_failures": record.nav_failures,
        "nav_fail_unreachable": record.nav_fail_unreachable,
        "nav_fail_trap": record.nav_fail_trap,
        "effective_views": record.effective_views,
        # null (which the reference metric code does not score) only for a record imported without one.
        "first_view_prediction": record.first_view_prediction,
        "prediction_flips": record.prediction_flips,
        "flip_direction": record.flip_direction,
    }
    return out


def episode_file_path(episode: Mapping[str, Any]) -> Path:
    """``<pair_type>/<correct|wrong>/<scene>/<episode_id>/episode.json`` of a reference record (spec §4.2)."""
    correctness = "correct" if episode["is_correct"] else "wrong"
    parts = [str(episode["pair_type"]), correctness, str(episode["scene_id"]), str(episode["episode_id"])]
    for part in parts:
        if part in ("", ".", "..") or "/" in part or "\\" in part or "\x00" in part:
            raise ValueError(f"cannot use {part!r} as a directory name in the reference layout")
    return Path(*parts) / REFERENCE_EPISODE_FILE


@dataclass(frozen=True)
class ExportSummary:
    out_dir: Path
    exported: int
    infra_failures_skipped: int
    overwritten: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        text = (
            f"wrote {self.exported} episode record(s) to {self.out_dir} ({REFERENCE_RESULTS_FILE}, "
            f"{REFERENCE_METRICS_FILE}, per-episode {REFERENCE_EPISODE_FILE})"
        )
        if self.infra_failures_skipped:
            text += f"; left out {self.infra_failures_skipped} infra failure(s), which the reference has no record for"
        if self.overwritten:
            text += (
                f"; {len(self.overwritten)} episode file(s) shared a path with another pair and hold the later "
                f"one, as in the reference layout (all are in {REFERENCE_RESULTS_FILE})"
            )
        return text


def _episode_paths(index: Path | None, run: LoadedRun, notes: list[str]) -> dict[tuple[str, str], str]:
    """``(scene, episode) -> episode_path`` from the given pair index, else from the run's, when readable."""
    if index is not None:
        return {(r.scene, r.episode): r.episode_path for r in read_pair_index(index)}
    candidate = Path(run.run_config.index_file)
    if not candidate.is_file():
        notes.append("the run's index file is not at hand; rgb paths in the transcripts are episode-relative")
        return {}
    try:
        return {(r.scene, r.episode): r.episode_path for r in read_pair_index(candidate)}
    except DatasetError as error:
        notes.append(f"could not read the run's index ({error}); rgb paths are episode-relative")
        return {}


def _target_descriptions(record: EpisodeRecord, db: DescriptionDB | None) -> Sequence[str] | None:
    if record.pair_type == "positive" or db is None:
        return None
    entry = db.get(record.target_object_id)
    return entry.descriptions if entry is not None else ()


def _write_json(path: Path, data: Any, *, ensure_ascii: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=ensure_ascii, allow_nan=False)


def export_reference(
    run_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    index: str | os.PathLike[str] | None = None,
    descriptions: str | os.PathLike[str] | None = None,
) -> ExportSummary:
    """Write a run of ours in the reference layout (module docstring). ``out_dir`` must be new or empty."""
    run = load_run(run_dir)
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DatasetError("exists and is not an empty directory; export into a new one", path=out)
    notes: list[str] = []
    with_transcript = any(r.transcript for r in run.records)
    paths = _episode_paths(Path(index) if index is not None else None, run, notes) if with_transcript else {}
    db = load_descriptions(Path(descriptions)) if descriptions is not None else None
    ok = [r for r in run.records if r.is_ok]
    episodes = [
        reference_episode(
            r,
            episode_path=paths.get((r.scene_id, r.episode_id)),
            target_descriptions=_target_descriptions(r, db),
        )
        for r in ok
    ]
    written: dict[Path, str] = {}
    overwritten: list[str] = []
    for record, episode in zip(ok, episodes, strict=True):
        relative = episode_file_path(episode)
        if relative in written:
            overwritten.append(written[relative])
        written[relative] = record.episode_key
        # ensure_ascii as json.dump's default: the reference writes episode.json without the flag.
        _write_json(out / relative, episode, ensure_ascii=True)
    _write_json(out / REFERENCE_RESULTS_FILE, episodes, ensure_ascii=False)
    metrics = compute_metrics(
        ok,
        unsure_as_negative=run.run_config.unsure_as_negative,
        config_info=run.run_config.config_info,
        bootstrap_resamples=1,  # only the reference keys are written; no interval is needed
    )
    _write_json(out / REFERENCE_METRICS_FILE, reference_metrics_part(metrics), ensure_ascii=True)
    return ExportSummary(
        out_dir=out,
        exported=len(ok),
        infra_failures_skipped=len(run.records) - len(ok),
        overwritten=tuple(overwritten),
        notes=tuple(notes),
    )
