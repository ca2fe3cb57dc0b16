"""The charts of ``report.html``, drawn with matplotlib (see :mod:`.figures` for the shared settings).

Each function returns one inline ``<svg>`` element. Artists a reader may want the exact figure of (a heatmap
cell, a run's point, a bar, a curve) carry a gid and a tooltip, so the numbers stay one hover away.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiv_dataset.constants import PAIR_TYPES

from .figures import chart_style, inline_svg, new_figure
from .markdown_report import PAIR_TYPE_LABELS
from .step_curves import StepCurves

#: Colours of the two failure kinds and of the step curves (matplotlib's tab10, fixed by name).
NAV_COLOURS = {"unreachable": "#4c78a8", "trap": "#f58518"}
STEP_SERIES = (
    ("accuracy", "accuracy", "#1f77b4", "o"),
    ("acceptance", "acceptance (YES on positives)", "#2ca02c", "s"),
    ("false_acceptance", "false acceptance (YES on negatives)", "#d62728", "v"),
)
NO_DATA = "#e0e0e0"


# ------------------------------------------------------------------------------------------------ heatmap


def _heatmap_rows(metrics: Mapping[str, Any]) -> list[tuple[str, list[tuple[float | None, int, int]]]]:
    """(row label, [(accuracy or None, correct, total) per pair type and "all"]), the overall row last."""
    per_cat = metrics.get("per_category", {})
    rows: list[tuple[str, list[tuple[float | None, int, int]]]] = []
    for cat in sorted(per_cat):
        entry = per_cat[cat]
        cells = []
        for pt in PAIR_TYPES:
            sub = entry.get(pt, {"total": 0, "correct": 0})
            cells.append((sub["accuracy"] if sub["total"] else None, sub["correct"], sub["total"]))
        cells.append((entry["accuracy"] if entry["total"] else None, entry["correct"], entry["total"]))
        rows.append((cat, cells))
    ppt = metrics.get("per_pair_type", {})
    overall = []
    for pt in PAIR_TYPES:
        sub = ppt.get(pt)
        overall.append((sub["accuracy"], sub["correct"], sub["total"]) if sub else (None, 0, 0))
    total = metrics.get("total_episodes", 0)
    overall.append((metrics.get("accuracy") if total else None, metrics.get("correct_count", 0), total))
    rows.append(("overall", overall))
    return rows


def category_heatmap_svg(metrics: Mapping[str, Any]) -> str:
    """Per-category × pair-type accuracy (plus an "all" column and an overall row) from ``metrics.json``."""
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle

    rows = _heatmap_rows(metrics)
    col_labels = [PAIR_TYPE_LABELS[p] for p in PAIR_TYPES] + ["All"]
    cmap = colormaps["RdYlGn"]
    tips: dict[str, str] = {}
    with chart_style():
        figure = new_figure(4.2, 0.9 + 0.24 * len(rows))
        ax = figure.add_subplot()
        ax.grid(False)
        for i, (cat, cells) in enumerate(rows):
            for j, (acc, k, n) in enumerate(cells):
                gid = f"cell-{i}-{j}"
                colour = NO_DATA if acc is None else cmap(min(1.0, max(0.0, acc)))
                ax.add_patch(Rectangle((j, i), 0.96, 0.9, facecolor=colour, edgecolor="none", gid=gid))
                tips[gid] = f"{cat} / {col_labels[j]}: " + (
                    f"{k}/{n} = {acc:.4f}" if acc is not None else "no episodes"
                )
                text = "–" if acc is None else f"{100 * acc:.1f}"
                dark = acc is not None and (acc < 0.15 or acc > 0.9)
                ax.text(
                    j + 0.48,
                    i + 0.45,
                    text,
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="#fff" if dark else "#111",
                )
        ax.set_xlim(0, len(col_labels))
        ax.set_ylim(len(rows), 0)
        ax.set_xticks([j + 0.48 for j in range(len(col_labels))], col_labels, fontweight="bold")
        ax.set_yticks([i + 0.45 for i in range(len(rows))], [cat for cat, _ in rows])
        ax.get_yticklabels()[-1].set_fontweight("bold")
        ax.xaxis.tick_top()
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        return inline_svg(figure, css_class="heatmap", label="Accuracy per category and pair type", tips=tips)


# ------------------------------------------------------------------------------------------------ scatter


@dataclass(frozen=True)
class ScatterPoint:
    name: str
    asd: float
    accuracy: float
    highlight: bool = False


def accuracy_asd_scatter_svg(points: Sequence[ScatterPoint]) -> str:
    """Accuracy (y) against ASD (x), one labelled point per run; the primary run is highlighted in red."""
    tips: dict[str, str] = {}
    with chart_style():
        figure = new_figure(5.2, 3.4)
        ax = figure.add_subplot()
        seen: dict[tuple[float, float], int] = {}
        for i, p in enumerate(points):
            gid = f"run-{i}"
            ax.plot(
                [p.asd], [p.accuracy], linestyle="none", marker="o", markersize=9 if p.highlight else 7,
                color="#d62728" if p.highlight else "#1f77b4", markeredgecolor="#222", gid=gid, zorder=3,
            )  # fmt: skip
            tips[gid] = f"{p.name}: accuracy {p.accuracy:.4f}, ASD {p.asd:.2f}"
            label = p.name if len(p.name) <= 24 else p.name[:23] + "…"
            stacked = seen.get((p.asd, p.accuracy), 0)  # runs on the same spot: labels one under the other
            seen[(p.asd, p.accuracy)] = stacked + 1
            ax.annotate(
                label,
                (p.asd, p.accuracy),
                xytext=(8, -4 - 11 * stacked),
                textcoords="offset points",
                fontsize=8,
            )
        xs = [p.asd for p in points] or [1.0, 2.0]
        ys = [p.accuracy for p in points] or [0.5]
        x_lo = math.floor(min(1.0, *xs) * 2) / 2
        ax.set_xlim(x_lo, max(x_lo + 1.0, math.ceil(max(xs) * 2) / 2 + 0.5))
        ax.set_ylim(min(0.5, math.floor(min(ys) * 10) / 10), 1.0)
        ax.set_xlabel("ASD (average steps per episode)")
        ax.set_ylabel("Accuracy")
        return inline_svg(figure, css_class="scatter", label="Accuracy vs average steps (ASD)", tips=tips)


# ------------------------------------------------------------------------------------------------ bars


def nav_failure_bars_svg(groups: Sequence[tuple[str, int, int]]) -> str:
    """Grouped bars of unreachable vs trap failures; ``groups`` = ``(label, unreachable, trap)``."""
    from matplotlib.ticker import MaxNLocator

    tips: dict[str, str] = {}
    with chart_style():
        figure = new_figure(4.8, 2.8)
        ax = figure.add_subplot()
        width = 0.38
        for j, kind in enumerate(("unreachable", "trap")):
            values = [group[1 + j] for group in groups]
            xs = [i + (j - 0.5) * width for i in range(len(groups))]
            bars = ax.bar(xs, values, width * 0.95, color=NAV_COLOURS[kind], label=kind)
            for i, ((label, *_), value, bar) in enumerate(zip(groups, values, bars, strict=True)):
                bar.set_gid(f"bar-{kind}-{i}")
                tips[f"bar-{kind}-{i}"] = f"{label}: {value} {kind}"
            ax.bar_label(bars, fontsize=7, padding=1)
        ax.set_xticks(range(len(groups)), [label for label, _, _ in groups])
        ax.set_ylim(0, max([1] + [max(u, t) for _, u, t in groups]) * 1.15)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts
        ax.grid(axis="x", visible=False)
        ax.set_ylabel("Failures")
        ax.legend(loc="upper left", ncols=2, fontsize=8)
        return inline_svg(
            figure,
            css_class="navbars",
            label="Navigation failures: unreachable vs trap, per pair type",
            tips=tips,
        )


# ------------------------------------------------------------------------------------------------ steps


def steps_chart_svg(curves: StepCurves, asd: float | None = None) -> str:
    """Accuracy, acceptance and false acceptance had every episode stopped after step k (lines), with the
    share of episodes still looking after step k (bars) and the run's ASD (dashed line)."""
    tips: dict[str, str] = {}
    with chart_style():
        figure = new_figure(5.6, 3.4)
        ax = figure.add_subplot()
        steps = list(curves.steps)
        still = [v if v is not None else 0.0 for v in curves.still_looking]
        bars = ax.bar(steps, still, 0.6, color="#d9d9d9", label="still looking after step k")
        for k, bar, value in zip(steps, bars, still, strict=True):
            bar.set_gid(f"still-{k}")
            tips[f"still-{k}"] = f"{100 * value:.1f}% of the episodes take more than {k} step(s)"
        for attr, label, colour, marker in STEP_SERIES:
            values = [math.nan if v is None else v for v in getattr(curves, attr)]
            ax.plot(
                steps, values, color=colour, marker=marker, markersize=5, label=label, gid=f"series-{attr}"
            )
            tips[f"series-{attr}"] = f"{label}: " + ", ".join(
                f"step {k} {'–' if math.isnan(v) else f'{v:.3f}'}" for k, v in zip(steps, values, strict=True)
            )
        if asd is not None and steps:
            ax.axvline(asd, color="#555", linestyle="--", linewidth=1, label=f"ASD {asd:.2f}", gid="asd")
        ax.set_xticks(steps or [1])
        ax.set_xlim(0.4, max(steps or [1]) + 0.6)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("steps taken (k)")
        ax.set_ylabel("share of episodes")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=8)
        return inline_svg(figure, css_class="steps", label="Accuracy and acceptance against steps", tips=tips)


__all__ = [
    "ScatterPoint",
    "accuracy_asd_scatter_svg",
    "category_heatmap_svg",
    "nav_failure_bars_svg",
    "steps_chart_svg",
]
