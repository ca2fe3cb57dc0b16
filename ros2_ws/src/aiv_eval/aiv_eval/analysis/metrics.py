"""``metrics.json``: the reference schema (spec §4.4, ``pver/eval/metrics.py``) plus the project's extras.

Reference part (same keys, order, semantics and rounding as the reference):
``accuracy``, ``asd``, ``total_episodes``, ``correct_count``, ``wrong_count``, ``nav_stats``, ``diagnostic_stats``,
``correct_episodes``, ``wrong_episodes``, ``per_pair_type``, ``per_category``, ``wall_time_s`` (only when given, as
the reference writes it only for single-process runs), ``config_info``.

Rounding follows the reference exactly: rates via Python ``round(x, 4)``; ASD and average effective views via
numpy (``round(np.mean(...), 2)``); average failures per episode via ``round(x, 2)``; ``wall_time_s`` via
``round(x, 1)``, as ``scripts/evaluate.py`` writes it. Correctness is recomputed
from prediction and label with the given ``unsure_as_negative`` mapping (spec §4.3).

Deviations, all deliberate: infra-failure records are excluded from every score and counted under
``infra_failures``; an empty set of scored records yields the full structure with zeros / None instead of the
reference's ``{}``.

Extras (after the reference keys): ``evaluation`` (the mapping used), ``flip_stats``, ``confidence_intervals``
(Wilson), ``bootstrap`` (instance-cluster bootstrap), ``model_calls``, ``infra_failures``, ``degraded_episodes``
(scored episodes some of whose language-model calls failed: how many, their accuracy and the others' apart),
``stop_reasons``,
``nav_fail_variants`` (the candidate readings of the paper's undefined "NavFail %": per step, per episode, episodes
with an unreachable request, and episodes that exhausted the budget or hit an unreachable sector — the
ARCHITECTURE.md reading, needs ``config_info.max_steps``), and ``levels`` (:func:`level_stats`: views taken per
camera height level, moves by kind and outcome, which kind of move led to the view that changed the decision),
present only when some scored episode judged a view off eye level, so a one-level run's file is unchanged.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from aiv_dataset.constants import PAIR_TYPES
from aiv_dataset.levels import EYE_LEVEL, LEVEL_NAMES, level_direction

from ..records.episode import (
    FLIP_DIRECTIONS,
    STOP_REASONS,
    EpisodeRecord,
    derive_flip_direction,
    is_prediction_correct,
)
from ..records.store import CONFIG_INFO_KEYS, METRICS_FILE, LoadedRun, load_run, write_json_atomic
from .statistics import DEFAULT_RESAMPLES, DEFAULT_SEED, cluster_bootstrap_ci, wilson_interval

METRICS_EXTRAS_VERSION = 1
#: Decimals of ``wall_time_s``: the reference's ``scripts/evaluate.py`` writes ``round(elapsed, 1)``.
WALL_TIME_DECIMALS = 1
_FV_MAP = {"Yes": 1, "No": 0}


def _np_round(values: Sequence[int], decimals: int) -> float:
    """``round(np.mean(values), decimals)`` as the reference computes it (0 for an empty list)."""
    if not values:
        return 0.0
    return float(round(np.mean(values), decimals))


def _rate(num: int, den: int, decimals: int = 4) -> float:
    return round(num / den, decimals) if den > 0 else 0


def _first_view_accuracy(records: Sequence[EpisodeRecord]) -> float | None:
    scored = [r for r in records if r.first_view_prediction in _FV_MAP]
    if not scored:
        return None
    correct = sum(
        1
        for r in scored
        if r.first_view_prediction is not None and _FV_MAP[r.first_view_prediction] == r.label
    )
    return round(correct / len(scored), 4)


def _ordered_pair_types(present: Iterable[str]) -> list[str]:
    present = set(present)
    return [p for p in PAIR_TYPES if p in present] + sorted(present - set(PAIR_TYPES))


def compute_metrics(
    records: Iterable[EpisodeRecord],
    *,
    unsure_as_negative: bool = True,
    config_info: Mapping[str, Any] | None = None,
    wall_time_s: float | None = None,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Metrics of the effective records of one run (order = the order given; store order is by index)."""
    all_records = list(records)
    scored = [r for r in all_records if r.is_ok]
    infra = [r for r in all_records if not r.is_ok]
    correct_flags = [is_prediction_correct(r.prediction, r.label, unsure_as_negative) for r in scored]
    total = len(scored)
    correct = sum(correct_flags)

    # ---- per pair type (reference: only the types present, ordered positive, neg_same, neg_diff)
    by_type: dict[str, list[tuple[EpisodeRecord, bool]]] = defaultdict(list)
    for r, ok in zip(scored, correct_flags, strict=True):
        by_type[r.pair_type].append((r, ok))
    per_pair_type: dict[str, Any] = {}
    for pt in _ordered_pair_types(by_type):
        items = by_type[pt]
        recs = [r for r, _ in items]
        n_ok = sum(1 for _, ok in items if ok)
        per_pair_type[pt] = {
            "accuracy": round(n_ok / len(items), 4),
            "correct": n_ok,
            "total": len(items),
            "correct_episodes": [r.scene_episode for r, ok in items if ok],
            "wrong_episodes": [r.scene_episode for r, ok in items if not ok],
            "asd": _np_round([r.steps for r in recs], 2),
            "nav_fail_unreachable": sum(r.nav_fail_unreachable for r in recs),
            "nav_fail_trap": sum(r.nav_fail_trap for r in recs),
            "first_view_accuracy": _first_view_accuracy(recs),
            "avg_effective_views": _np_round([r.effective_views for r in recs], 2),
        }

    # ---- navigation
    failures = [r.nav_failures for r in scored]
    total_failures = sum(failures)
    eps_with_failure = sum(1 for f in failures if f > 0)
    total_steps = sum(r.steps for r in scored)
    nav_stats = {
        "total_nav_failures": total_failures,
        "nav_fail_unreachable": sum(r.nav_fail_unreachable for r in scored),
        "nav_fail_trap": sum(r.nav_fail_trap for r in scored),
        "episodes_with_nav_failure": eps_with_failure,
        "nav_failure_rate_per_step": _rate(total_failures, total_steps),
        "nav_failure_rate_per_episode": _rate(eps_with_failure, total),
        "avg_nav_failures_per_episode": _rate(total_failures, total, 2),
    }

    # ---- per category (by target category; all three pair types listed, zeros included)
    by_cat: dict[str, list[tuple[EpisodeRecord, bool]]] = defaultdict(list)
    for r, ok in zip(scored, correct_flags, strict=True):
        by_cat[r.target_object_category].append((r, ok))
    per_category: dict[str, Any] = {}
    for cat in sorted(by_cat):
        items = by_cat[cat]
        n_ok = sum(1 for _, ok in items if ok)
        entry: dict[str, Any] = {
            "total": len(items),
            "correct": n_ok,
            "accuracy": round(n_ok / len(items), 4),
        }
        for pt in PAIR_TYPES:
            sub = [ok for r, ok in items if r.pair_type == pt]
            entry[pt] = {"total": len(sub), "correct": sum(sub), "accuracy": float(_rate(sum(sub), len(sub)))}
        per_category[cat] = entry

    out: dict[str, Any] = {
        "accuracy": float(_rate(correct, total)),
        "asd": _np_round([r.steps for r in scored], 2),
        "total_episodes": total,
        "correct_count": correct,
        "wrong_count": total - correct,
        "nav_stats": nav_stats,
        "diagnostic_stats": {
            "first_view_accuracy": _first_view_accuracy(scored),
            "avg_effective_views": _np_round([r.effective_views for r in scored], 2),
        },
        "correct_episodes": [r.scene_episode for r, ok in zip(scored, correct_flags, strict=True) if ok],
        "wrong_episodes": [r.scene_episode for r, ok in zip(scored, correct_flags, strict=True) if not ok],
        "per_pair_type": per_pair_type,
        "per_category": per_category,
    }
    if wall_time_s is not None:
        out["wall_time_s"] = round(float(wall_time_s), WALL_TIME_DECIMALS)
    info = dict(config_info or {})
    out["config_info"] = {k: info.get(k) for k in CONFIG_INFO_KEYS}

    # ---- extras
    out["evaluation"] = {
        "unsure_as_negative": unsure_as_negative,
        "metrics_extras_version": METRICS_EXTRAS_VERSION,
        "records_in_file": len(all_records),
    }
    out["flip_stats"] = _flip_stats(scored, unsure_as_negative)
    out["confidence_intervals"] = _wilson_block(scored, correct_flags, confidence)
    boot = cluster_bootstrap_ci(
        correct_flags,
        [r.target_object_id for r in scored],
        resamples=bootstrap_resamples,
        seed=bootstrap_seed,
        confidence=confidence,
    )
    out["bootstrap"] = {
        "method": "percentile bootstrap, resampling target instances (target_object_id) with replacement",
        "cluster_key": "target_object_id",
        "n_clusters": boot.n_clusters,
        "resamples": boot.resamples,
        "seed": boot.seed,
        "confidence": boot.confidence,
        "accuracy": [round(boot.low, 4), round(boot.high, 4)],
        "std_error": round(boot.std_error, 4),
    }
    out["model_calls"] = _model_call_stats(scored)
    out["infra_failures"] = {
        "count": len(infra),
        "keys": [r.episode_key for r in infra],
        "reasons": dict(sorted(Counter(r.failure_reason for r in infra).items())),
    }
    out["degraded_episodes"] = _degraded_stats(scored, correct_flags)
    counts = Counter(r.stop_reason for r in scored)
    # Every basic reason (zero when unused), plus the "+"-joined combinations the agent reports.
    out["stop_reasons"] = {reason: counts.get(reason, 0) for reason in STOP_REASONS} | {
        reason: count for reason, count in sorted(counts.items()) if reason not in STOP_REASONS
    }
    out["nav_fail_variants"] = _nav_fail_variants(scored, info.get("max_steps"))
    levels = level_stats(scored, correct_flags)
    if levels is not None:
        out["levels"] = levels
    return out


#: The kinds of move a step can request: along the ring at the current height, or one level up or down.
MOVE_KINDS: tuple[str, ...] = ("planar", "up", "down")
#: Outcomes counted per move kind ("none" is a step that asked for no move, so it is no move at all).
_KIND_OUTCOMES: tuple[str, ...] = ("moved", "stayed", "unreachable", "already_visited", "rejected")


def move_kind(nav_rel: str | None) -> str | None:
    """``"up"`` / ``"down"`` for a height move, ``"planar"`` for any other requested direction, None for none."""
    if nav_rel is None:
        return None
    return level_direction(nav_rel) or "planar"


def decision_change_step(record: EpisodeRecord) -> int | None:
    """The 0-based transcript position whose view last changed the step prediction (after it, the prediction
    held to the end), None when the first view's prediction never changed."""
    changed = None
    for position in range(1, len(record.transcript)):
        if record.transcript[position].step_prediction != record.transcript[position - 1].step_prediction:
            changed = position
    return changed


def _level_key(level: int) -> str:
    return LEVEL_NAMES.get(level, str(level))


def level_stats(scored: Sequence[EpisodeRecord], flags: Sequence[bool]) -> dict[str, Any] | None:
    """Views by camera height level, or None when every scored step judged an eye-level view.

    * ``views``: per level (named, lowest first), the steps that judged a view there and the episodes that
      judged at least one;
    * ``moves``: per kind (planar / up / down), how many steps asked for one and how each ended;
    * ``decision_changes``: per episode, the last step whose view changed the step prediction and the kind of
      move requested one step earlier that brought that view in (``by_move``; ``to_correct`` only those whose
      final answer is correct), and the level of that view (``by_level``); ``all_by_move`` counts every change;
    * ``episodes``: accuracy and ASD of the episodes that judged some view off eye level, and of the others.

    A move whose outcome was a failure brings no new view: a change right after it is the same view judged
    again, counted under the kind that was asked for all the same (the request is what the agent chose).
    """
    if not any(step.level != EYE_LEVEL for r in scored for step in r.transcript):
        return None
    present = sorted({step.level for r in scored for step in r.transcript} | {EYE_LEVEL})
    views = {
        _level_key(level): {
            "views": sum(1 for r in scored for s in r.transcript if s.level == level),
            "episodes": sum(1 for r in scored if any(s.level == level for s in r.transcript)),
        }
        for level in present
    }
    moves: dict[str, dict[str, int]] = {
        kind: {"requested": 0, **{o: 0 for o in _KIND_OUTCOMES}} for kind in MOVE_KINDS
    }
    for r in scored:
        for s in r.transcript:
            kind = move_kind(s.nav_rel)
            if kind is None:
                continue
            moves[kind]["requested"] += 1
            if s.outcome in moves[kind]:
                moves[kind][s.outcome] += 1
    by_move = dict.fromkeys(MOVE_KINDS, 0)
    to_correct = dict.fromkeys(MOVE_KINDS, 0)
    all_by_move = dict.fromkeys(MOVE_KINDS, 0)
    by_level = {_level_key(level): 0 for level in present}
    changed_episodes = 0
    for r, ok in zip(scored, flags, strict=True):
        for position in range(1, len(r.transcript)):
            if r.transcript[position].step_prediction != r.transcript[position - 1].step_prediction:
                kind = move_kind(r.transcript[position - 1].nav_rel)
                if kind is not None:
                    all_by_move[kind] += 1
        changed = decision_change_step(r)
        if changed is None:
            continue
        changed_episodes += 1
        by_level[_level_key(r.transcript[changed].level)] += 1
        kind = move_kind(r.transcript[changed - 1].nav_rel)
        if kind is None:
            continue
        by_move[kind] += 1
        to_correct[kind] += ok
    with_level = [(r, ok) for r, ok in zip(scored, flags, strict=True) if any(s.level for s in r.transcript)]
    eye_only = [
        (r, ok) for r, ok in zip(scored, flags, strict=True) if not any(s.level for s in r.transcript)
    ]

    def group(items: Sequence[tuple[EpisodeRecord, bool]]) -> dict[str, Any]:
        return {
            "n": len(items),
            "accuracy": _rate(sum(ok for _, ok in items), len(items)) if items else None,
            "asd": _np_round([r.steps for r, _ in items], 2) if items else None,
        }

    return {
        "levels": [_level_key(level) for level in present],
        "views": views,
        "moves": moves,
        "decision_changes": {
            "episodes": changed_episodes,
            "by_move": by_move,
            "to_correct": to_correct,
            "by_level": by_level,
            "all_by_move": all_by_move,
        },
        "episodes": {"off_eye_level": group(with_level), "eye_level_only": group(eye_only)},
    }


def _nav_fail_variants(scored: Sequence[EpisodeRecord], max_steps: Any) -> dict[str, Any]:
    """The candidate readings of the paper's undefined "NavFail %" (spec §4.3, §10 item 11, §11 item 2)."""
    n = len(scored)
    with_unreachable = sum(1 for r in scored if r.nav_fail_unreachable > 0)
    out: dict[str, Any] = {
        "per_step": _rate(sum(r.nav_failures for r in scored), sum(r.steps for r in scored)),
        "per_episode": _rate(sum(1 for r in scored if r.nav_failures > 0), n),
        "episodes_with_unreachable": _rate(with_unreachable, n),
        "episodes_budget_exhausted_or_unreachable": None,
    }
    if isinstance(max_steps, int) and not isinstance(max_steps, bool) and max_steps > 0:
        hit = sum(1 for r in scored if r.nav_fail_unreachable > 0 or r.steps >= max_steps)
        out["episodes_budget_exhausted_or_unreachable"] = _rate(hit, n)
    return out


def _flip_stats(scored: Sequence[EpisodeRecord], unsure_as_negative: bool) -> dict[str, Any]:
    def block(recs: Sequence[EpisodeRecord]) -> dict[str, Any]:
        directions = Counter(
            derive_flip_direction(r.first_view_prediction, r.prediction, r.label, unsure_as_negative)
            for r in recs
        )
        flips = [r.prediction_flips for r in recs]
        with_flip = sum(1 for f in flips if f > 0)
        return {
            "episodes_with_flip": with_flip,
            "flip_rate_per_episode": _rate(with_flip, len(recs)),
            "total_flips": sum(flips),
            "mean_flips": _rate(sum(flips), len(recs), 2),
            "flip_direction": {d: directions.get(d, 0) for d in FLIP_DIRECTIONS},
        }

    out = block(scored)
    out["per_pair_type"] = {
        pt: block([r for r in scored if r.pair_type == pt])
        for pt in _ordered_pair_types(r.pair_type for r in scored)
    }
    return out


def _wilson_block(
    scored: Sequence[EpisodeRecord], flags: Sequence[bool], confidence: float
) -> dict[str, Any]:
    def interval(k: int, n: int) -> list[float]:
        lo, hi = wilson_interval(k, n, confidence)
        return [round(lo, 4), round(hi, 4)]

    per_type = {}
    for pt in _ordered_pair_types(r.pair_type for r in scored):
        sub = [ok for r, ok in zip(scored, flags, strict=True) if r.pair_type == pt]
        per_type[pt] = interval(sum(sub), len(sub))
    return {
        "method": "wilson",
        "confidence": confidence,
        "accuracy": interval(sum(flags), len(flags)),
        "per_pair_type": per_type,
    }


def _degraded_stats(scored: Sequence[EpisodeRecord], flags: Sequence[bool]) -> dict[str, Any]:
    """Scored episodes with failed language-model calls (``degraded``), their accuracy and the others' apart
    (None for an empty group): an accuracy drop that lives in the degraded ones is an outage, not the agent."""
    degraded = [ok for r, ok in zip(scored, flags, strict=True) if r.degraded]
    others = [ok for r, ok in zip(scored, flags, strict=True) if not r.degraded]
    return {
        "count": len(degraded),
        "correct": sum(degraded),
        "accuracy": round(sum(degraded) / len(degraded), 4) if degraded else None,
        "others_accuracy": round(sum(others) / len(others), 4) if others else None,
        "keys": [r.episode_key for r in scored if r.degraded],
    }


def _model_call_stats(scored: Sequence[EpisodeRecord]) -> dict[str, Any]:
    totals: Counter[str] = Counter()
    for r in scored:
        totals.update(r.model_calls)
    n = len(scored)
    names = sorted(totals)
    grand = sum(totals.values())
    return {
        "totals": {k: totals[k] for k in names},
        "per_episode_mean": {k: _rate(totals[k], n, 2) for k in names},
        "total": grand,
        "per_episode_mean_total": _rate(grand, n, 2),
    }


def metrics_for_run(
    run: LoadedRun | str | os.PathLike[str],
    *,
    unsure_as_negative: bool | None = None,
    wall_time_s: float | None = None,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Metrics of a run dir; the unsure mapping and ``config_info`` default to the run's ``run.json``."""
    loaded = run if isinstance(run, LoadedRun) else load_run(run)
    cfg = loaded.run_config
    return compute_metrics(
        loaded.records,
        unsure_as_negative=cfg.unsure_as_negative if unsure_as_negative is None else unsure_as_negative,
        config_info=cfg.config_info,
        wall_time_s=wall_time_s,
        bootstrap_resamples=bootstrap_resamples,
        bootstrap_seed=bootstrap_seed,
    )


def write_metrics(
    run_dir: str | os.PathLike[str],
    *,
    unsure_as_negative: bool | None = None,
    wall_time_s: float | None = None,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = DEFAULT_SEED,
) -> tuple[Path, dict[str, Any]]:
    """Compute the metrics of ``run_dir`` and write ``<run_dir>/metrics.json`` atomically."""
    metrics = metrics_for_run(
        run_dir,
        unsure_as_negative=unsure_as_negative,
        wall_time_s=wall_time_s,
        bootstrap_resamples=bootstrap_resamples,
        bootstrap_seed=bootstrap_seed,
    )
    path = Path(run_dir) / METRICS_FILE
    write_json_atomic(path, metrics)
    return path, metrics
