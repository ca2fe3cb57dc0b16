"""``report.md``: the same numbers as the HTML index, as Markdown tables (text escaped for table cells)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aiv_dataset.constants import PAIR_TYPES

from ..analysis.compare import format_runs_table_markdown, md_escape, runs_table_rows
from ..records.episode import EpisodeRecord, is_prediction_correct
from ..records.store import LoadedRun

#: Short names of the pair types in tables and charts.
PAIR_TYPE_LABELS = {"positive": "Pos", "neg_same": "N_S", "neg_diff": "N_D"}


def _acc(x: float | None, decimals: int = 4) -> str:
    return "–" if x is None else f"{x:.{decimals}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _degraded(m: Mapping[str, Any]) -> str:
    """The scored episodes some of whose model calls failed, with their accuracy apart ("" when none)."""
    block = m.get("degraded_episodes") or {"count": 0}
    if not block["count"]:
        return ""
    return (
        f"; scored with failed model calls: {block['count']}, accuracy {_acc(block['accuracy'])} "
        f"(the others {_acc(block['others_accuracy'])})"
    )


def _ci(ci: Sequence[float] | None) -> str:
    return "–" if not ci else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return [*out, ""]


def level_tables(levels: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The tables of "Views by height level" (caption, headers, plain-text rows), shared with the HTML report:
    views per level, moves by kind and outcome, the move that brought in the view that changed the decision."""
    changes = levels["decision_changes"]
    views = [
        [name, str(d["views"]), str(d["episodes"]), str(changes["by_level"].get(name, 0))]
        for name, d in levels["views"].items()
    ]
    moves = [
        [
            kind,
            str(d["requested"]),
            str(d["moved"]),
            str(d["stayed"]),
            str(d["unreachable"]),
            str(d["already_visited"]),
            str(d["rejected"]),
            str(changes["by_move"][kind]),
            str(changes["to_correct"][kind]),
            str(changes["all_by_move"][kind]),
        ]
        for kind, d in levels["moves"].items()
    ]
    groups = [
        [label, str(d["n"]), _acc(d["accuracy"]), "–" if d["asd"] is None else f"{d['asd']:.2f}"]
        for label, d in (
            ("judged a view off eye level", levels["episodes"]["off_eye_level"]),
            ("eye level only", levels["episodes"]["eye_level_only"]),
        )
    ]
    return [
        ("Views taken per level", ["Level", "Views", "Episodes", "Decision changed here"], views),
        (
            "Moves by kind; the last change of the step prediction by the kind of move that brought its view "
            f"({changes['episodes']} episodes changed their prediction)",
            [
                "Move",
                "Requested",
                "Moved",
                "Stayed",
                "Unreachable",
                "Already visited",
                "Rejected",
                "Changed the decision",
                "… to a correct answer",
                "Every change",
            ],
            moves,
        ),
        ("Episodes", ["Episodes", "N", "Accuracy", "ASD"], groups),
    ]


def levels_markdown(levels: Mapping[str, Any]) -> list[str]:
    lines = ["## Views by height level", ""]
    for caption, headers, rows in level_tables(levels):
        lines += [f"{md_escape(caption)}:", ""]
        lines += _table(headers, [[md_escape(cell) for cell in row] for row in rows])
    return lines


def render_markdown(
    primary: LoadedRun,
    metrics: Mapping[str, Any],
    *,
    others: Sequence[tuple[LoadedRun, Mapping[str, Any]]] = (),
    listed: Sequence[EpisodeRecord] = (),
    pages: Mapping[str, str] | None = None,
) -> str:
    pages = pages or {}
    m = metrics
    nav = m["nav_stats"]
    diag = m["diagnostic_stats"]
    info = m["config_info"]
    lines = [f"# AIV evaluation report — {md_escape(primary.name)}", ""]
    lines.append(
        f"- Run dir: `{md_escape(primary.run_dir)}`; run id `{md_escape(primary.run_config.run_id)}`"
    )
    lines.append(f"- Index: `{md_escape(primary.run_config.index_file)}`")
    lines.append("- Config: " + ", ".join(f"{k}={md_escape(v)}" for k, v in info.items()))
    lines.append(
        "- Unsure counted as "
        + ("negative" if m["evaluation"]["unsure_as_negative"] else "wrong")
        + f"; infra failures excluded: {m['infra_failures']['count']}"
        + _degraded(m)
    )
    lines.append("")
    lines.append("## Metrics")
    lines.append("")
    b = m["bootstrap"]
    rows = [
        ["Accuracy", _acc(m["accuracy"])],
        ["95% CI (Wilson)", _ci(m["confidence_intervals"]["accuracy"])],
        [
            f"95% CI (instance bootstrap, {b['resamples']} resamples, {b['n_clusters']} instances)",
            _ci(b["accuracy"]),
        ],
        ["ASD", f"{m['asd']:.2f}"],
        ["Scored episodes", str(m["total_episodes"])],
        ["Correct / wrong", f"{m['correct_count']} / {m['wrong_count']}"],
        ["First-view accuracy", _acc(diag["first_view_accuracy"])],
        ["Average effective views", f"{diag['avg_effective_views']:.2f}"],
        ["NavFail per episode", _pct(nav["nav_failure_rate_per_episode"])],
        ["NavFail per step", _pct(nav["nav_failure_rate_per_step"])],
        ["Failures per episode", f"{nav['avg_nav_failures_per_episode']:.2f}"],
        ["Episodes with an unreachable request", _pct(m["nav_fail_variants"]["episodes_with_unreachable"])],
        [
            "Episodes that exhausted the budget or hit an unreachable sector",
            _pct(m["nav_fail_variants"]["episodes_budget_exhausted_or_unreachable"]),
        ],
        ["Failures unreachable / trap", f"{nav['nav_fail_unreachable']} / {nav['nav_fail_trap']}"],
        ["Episodes with a flip", str(m["flip_stats"]["episodes_with_flip"])],
    ]
    if "wall_time_s" in m:
        rows.append(["Wall time (s)", f"{m['wall_time_s']:.1f}"])
    lines += _table(["Metric", "Value"], rows)

    lines.append("## Per pair type")
    lines.append("")
    ci = m["confidence_intervals"]["per_pair_type"]
    rows = []
    for pt, d in m["per_pair_type"].items():
        rows.append(
            [
                md_escape(PAIR_TYPE_LABELS.get(pt, pt)),
                str(d["total"]),
                _acc(d["accuracy"]),
                _ci(ci.get(pt)),
                f"{d['asd']:.2f}",
                str(d["nav_fail_unreachable"]),
                str(d["nav_fail_trap"]),
                _acc(d["first_view_accuracy"]),
                f"{d['avg_effective_views']:.2f}",
            ]
        )
    lines += _table(
        [
            "Pair type",
            "N",
            "Accuracy",
            "95% CI (Wilson)",
            "ASD",
            "Unreachable",
            "Trap",
            "First-view",
            "Eff. views",
        ],
        rows,
    )

    lines.append("## Per category (accuracy %, N)")
    lines.append("")
    rows = []
    for cat, d in m["per_category"].items():
        cells = [md_escape(cat)]
        for pt in PAIR_TYPES:
            sub = d[pt]
            cells.append(f"{100 * sub['accuracy']:.2f} ({sub['total']})" if sub["total"] else "–")
        cells.append(f"{100 * d['accuracy']:.2f} ({d['total']})")
        rows.append(cells)
    lines += _table(["Category", "Pos", "N_S", "N_D", "All"], rows)

    if "levels" in m:
        lines += levels_markdown(m["levels"])

    lines.append("## Prediction flips, stop reasons, model calls")
    lines.append("")
    lines += _table(
        ["Flip direction", "Episodes"], [[k, str(v)] for k, v in m["flip_stats"]["flip_direction"].items()]
    )
    lines += _table(["Stop reason", "Episodes"], [[k, str(v)] for k, v in m["stop_reasons"].items()])
    mc = m["model_calls"]
    rows = [[md_escape(k), str(v), f"{mc['per_episode_mean'][k]:.2f}"] for k, v in mc["totals"].items()]
    rows.append(["total", str(mc["total"]), f"{mc['per_episode_mean_total']:.2f}"])
    lines += _table(["Model", "Calls", "Per episode"], rows)

    if others:
        lines.append("## Runs")
        lines.append("")
        table_rows = runs_table_rows([primary] + [r for r, _ in others], metrics=[m] + [x for _, x in others])
        lines.append(format_runs_table_markdown(table_rows))

    if m["infra_failures"]["count"]:
        lines.append("## Infra failures")
        lines.append("")
        lines += _table(
            ["Reason", "Episodes"],
            [[md_escape(k), str(v)] for k, v in m["infra_failures"]["reasons"].items()],
        )

    lines.append("## Episode pages")
    lines.append("")
    rows = []
    ua = m["evaluation"]["unsure_as_negative"]
    for r in listed:
        link = pages.get(r.episode_key)
        key = f"[{md_escape(r.episode_key)}]({link})" if link else md_escape(r.episode_key)
        ok = is_prediction_correct(r.prediction, r.label, ua)
        result = "infra failure" if not r.is_ok else ("correct" if ok else "wrong")
        rows.append([str(r.episode_index), key, r.pair_type, md_escape(r.prediction), str(r.label), result])
    lines += _table(["#", "Episode", "Pair type", "Prediction", "Label", "Result"], rows)
    return "\n".join(lines).rstrip("\n") + "\n"
