"""Compare runs: a paired comparison of two run dirs and a summary table across many.

Pairing uses the episode keys that *both* runs completed ("ok" in both); keys present in only one run, or an
infra failure in either, are dropped and counted. Differences are B − A.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from aiv_dataset.constants import PAIR_TYPES

from ..records.episode import EpisodeRecord, is_prediction_correct
from ..records.store import LoadedRun, load_run
from .metrics import compute_metrics
from .statistics import DEFAULT_RESAMPLES, DEFAULT_SEED, mcnemar_exact, paired_bootstrap_diff

RunLike = LoadedRun | str | os.PathLike[str]


class CompareError(ValueError):
    """The two runs cannot be paired (e.g. the same key carries different labels)."""


def _load(run: RunLike) -> LoadedRun:
    return run if isinstance(run, LoadedRun) else load_run(run)


def _paired_block(
    pairs: Sequence[tuple[EpisodeRecord, EpisodeRecord]],
    ua: bool,
    ub: bool,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    a = [is_prediction_correct(x.prediction, x.label, ua) for x, _ in pairs]
    b = [is_prediction_correct(y.prediction, y.label, ub) for _, y in pairs]
    n = len(pairs)
    boot = paired_bootstrap_diff(a, b, [x.target_object_id for x, _ in pairs], resamples=resamples, seed=seed)
    mc = mcnemar_exact(a, b)
    acc_a = sum(a) / n if n else 0.0
    acc_b = sum(b) / n if n else 0.0
    return {
        "n": n,
        "accuracy_a": round(acc_a, 4),
        "accuracy_b": round(acc_b, 4),
        "difference_b_minus_a": round(acc_b - acc_a, 4),
        "paired_bootstrap_ci": [round(boot.low, 4), round(boot.high, 4)],
        "n_clusters": boot.n_clusters,
        "mcnemar": {"only_a_correct": mc.only_a, "only_b_correct": mc.only_b, "p_value": mc.p_value},
    }


def compare_runs(
    run_a: RunLike,
    run_b: RunLike,
    *,
    unsure_as_negative: bool | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Paired comparison of two runs on their common completed episodes.

    Each run's correctness uses its own ``unsure_as_negative`` unless one is given here. The bootstrap
    resamples target instances jointly (paired, clustered); McNemar is exact. ``per_pair_type`` repeats the
    comparison within each pair type.
    """
    la, lb = _load(run_a), _load(run_b)
    ua = la.run_config.unsure_as_negative if unsure_as_negative is None else unsure_as_negative
    ub = lb.run_config.unsure_as_negative if unsure_as_negative is None else unsure_as_negative
    ok_a = {r.episode_key: r for r in la.records if r.is_ok}
    ok_b = {r.episode_key: r for r in lb.records if r.is_ok}
    common = sorted(set(ok_a) & set(ok_b), key=lambda k: (ok_a[k].episode_index, k))
    pairs = [(ok_a[k], ok_b[k]) for k in common]
    for x, y in pairs:
        if (x.label, x.pair_type, x.target_object_id) != (y.label, y.pair_type, y.target_object_id):
            raise CompareError(
                f"episode {x.episode_key!r} differs between the runs (label/pair type/target); "
                "were they run on the same index?"
            )
    keys_a = {r.episode_key for r in la.records}
    keys_b = {r.episode_key for r in lb.records}
    result: dict[str, Any] = {
        "run_a": {"name": la.name, "dir": str(la.run_dir), "episodes": len(la.records)},
        "run_b": {"name": lb.name, "dir": str(lb.run_dir), "episodes": len(lb.records)},
        "common_episodes": len(common),
        "dropped": {
            "only_in_a": len(keys_a - keys_b),
            "only_in_b": len(keys_b - keys_a),
            "infra_failure_in_either": len((keys_a & keys_b) - set(common)),
        },
        "unsure_as_negative": {"a": ua, "b": ub},
        "resamples": resamples,
        "seed": seed,
        "overall": _paired_block(pairs, ua, ub, resamples, seed),
        "per_pair_type": {},
    }
    for pt in PAIR_TYPES:
        sub = [(x, y) for x, y in pairs if x.pair_type == pt]
        if sub:
            result["per_pair_type"][pt] = _paired_block(sub, ua, ub, resamples, seed)
    return result


def _pct(x: float | None, decimals: int = 1) -> str:
    return "–" if x is None else f"{100.0 * x:.{decimals}f}"


def md_escape(text: object) -> str:
    """Escape text for a Markdown table cell (pipes, newlines and HTML-significant characters)."""
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def format_comparison_markdown(result: dict[str, Any]) -> str:
    """Markdown rendering of :func:`compare_runs`' result."""
    a, b = result["run_a"], result["run_b"]
    d = result["dropped"]
    lines = [
        f"## {md_escape(a['name'])} (A) vs {md_escape(b['name'])} (B)",
        "",
        f"Common completed episodes: **{result['common_episodes']}** "
        f"(dropped: {d['only_in_a']} only in A, {d['only_in_b']} only in B, "
        f"{d['infra_failure_in_either']} infra failure in either). "
        f"Bootstrap: {result['resamples']} resamples of target instances, seed {result['seed']}.",
        "",
        "| Subset | N | Acc A | Acc B | B − A (pp) | 95% paired CI (pp) | A✓B✗ | A✗B✓ | McNemar p |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    blocks = [("all", result["overall"]), *result["per_pair_type"].items()]
    for name, blk in blocks:
        lo, hi = blk["paired_bootstrap_ci"]
        mc = blk["mcnemar"]
        lines.append(
            f"| {name} | {blk['n']} | {blk['accuracy_a']:.4f} | {blk['accuracy_b']:.4f} | "
            f"{100 * blk['difference_b_minus_a']:+.1f} | [{100 * lo:+.1f}, {100 * hi:+.1f}] | "
            f"{mc['only_a_correct']} | {mc['only_b_correct']} | {mc['p_value']:.4g} |"
        )
    return "\n".join(lines) + "\n"


TABLE_COLUMNS: tuple[str, ...] = (
    "Run",
    "NBV",
    "Fusion",
    "Query",
    "N",
    "Acc",
    "Pos",
    "N_S",
    "N_D",
    "ASD",
    "NavFail/ep %",
    "First-view",
    "95% CI (Wilson)",
    "95% CI (instance bootstrap)",
)


def runs_table_rows(
    runs: Sequence[RunLike],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    metrics: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One summary row per run (computed from the records; pass ``metrics`` to reuse computed ones)."""
    rows = []
    for i, run in enumerate(runs):
        loaded = _load(run)
        m = (
            metrics[i]
            if metrics is not None
            else compute_metrics(
                loaded.records,
                unsure_as_negative=loaded.run_config.unsure_as_negative,
                config_info=loaded.run_config.config_info,
                bootstrap_resamples=resamples,
                bootstrap_seed=seed,
            )
        )
        info = m["config_info"]
        ppt = m["per_pair_type"]
        rows.append(
            {
                "name": loaded.name,
                "dir": str(loaded.run_dir),
                "nbv": info.get("nbv_type"),
                "fusion": info.get("fusion_type"),
                "query_mode": info.get("query_mode"),
                "n": m["total_episodes"],
                "accuracy": m["accuracy"],
                "positive": ppt.get("positive", {}).get("accuracy"),
                "neg_same": ppt.get("neg_same", {}).get("accuracy"),
                "neg_diff": ppt.get("neg_diff", {}).get("accuracy"),
                "asd": m["asd"],
                "nav_fail_per_episode": m["nav_stats"]["nav_failure_rate_per_episode"],
                "first_view_accuracy": m["diagnostic_stats"]["first_view_accuracy"],
                "wilson_ci": m["confidence_intervals"]["accuracy"],
                "bootstrap_ci": m["bootstrap"]["accuracy"],
                "infra_failures": m["infra_failures"]["count"],
            }
        )
    return rows


def format_runs_table_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`runs_table_rows` as a Markdown table (accuracies as fractions, NavFail in %)."""

    def acc(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    def ci(c: Sequence[float]) -> str:
        return f"[{c[0]:.3f}, {c[1]:.3f}]"

    lines = ["| " + " | ".join(TABLE_COLUMNS) + " |", "|" + "---|" * len(TABLE_COLUMNS)]
    for r in rows:
        cells = [
            md_escape(r["name"]),
            md_escape(r["nbv"] if r["nbv"] is not None else "–"),
            md_escape(r["fusion"] if r["fusion"] is not None else "–"),
            md_escape(r["query_mode"] if r["query_mode"] is not None else "–"),
            str(r["n"]),
            acc(r["accuracy"]),
            acc(r["positive"]),
            acc(r["neg_same"]),
            acc(r["neg_diff"]),
            f"{r['asd']:.2f}",
            _pct(r["nav_fail_per_episode"]),
            acc(r["first_view_accuracy"]),
            ci(r["wilson_ci"]),
            ci(r["bootstrap_ci"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def runs_table_markdown(runs: Sequence[RunLike], **kwargs: Any) -> str:
    return format_runs_table_markdown(runs_table_rows(runs, **kwargs))
