"""Inline SVG charts (no plotting library): heatmap, scatter, grouped bars and the per-episode sector ring.

Every function returns one ``<svg>…</svg>`` string with all text escaped; numbers are formatted with fixed
precision so the same data always gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import pairwise
from typing import Any

from aiv_dataset.constants import PAIR_TYPES
from aiv_dataset.vocabulary import DIRECTIONS, SECTOR_COUNT

from ..records import FAILED_MOVE_OUTCOMES, EpisodeRecord, direction_offset

PAIR_TYPE_LABELS = {"positive": "Pos", "neg_same": "N_S", "neg_diff": "N_D"}
FONT = 'font-family="system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif"'


def _f(x: float) -> str:
    """Compact fixed-precision number for SVG attributes."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _text(x: float, y: float, text: str, *, size: int = 12, anchor: str = "middle", extra: str = "") -> str:
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" text-anchor="{anchor}"{" " + extra if extra else ""}>'
        f"{escape(text)}</text>"
    )


def _open_svg(width: float, height: float, label: str, css_class: str) -> str:
    return (
        f'<svg class="{escape(css_class)}" role="img" aria-label="{escape(label)}" width="{_f(width)}" '
        f'height="{_f(height)}" viewBox="0 0 {_f(width)} {_f(height)}" {FONT}>'
        f"<title>{escape(label)}</title>"
    )


def accuracy_color(acc: float | None) -> str:
    """Red (0) → yellow (0.5) → green (1); grey for no data."""
    if acc is None:
        return "#e0e0e0"
    a = min(1.0, max(0.0, acc))
    stops = [(0.0, (215, 48, 39)), (0.5, (254, 224, 139)), (1.0, (26, 152, 80))]
    for (x0, c0), (x1, c1) in pairwise(stops):
        if a <= x1:
            t = (a - x0) / (x1 - x0)
            r, g, b = (round(c0[i] + t * (c1[i] - c0[i])) for i in range(3))
            return f"#{r:02x}{g:02x}{b:02x}"
    return "#1a9850"


# ------------------------------------------------------------------------------------------------ heatmap


def category_heatmap_svg(metrics: Mapping[str, Any]) -> str:
    """Per-category × pair-type accuracy (plus an "all" column and an overall row) from ``metrics.json``."""
    per_cat = metrics.get("per_category", {})
    cats = sorted(per_cat)
    cols = [*PAIR_TYPES, "all"]
    col_labels = [PAIR_TYPE_LABELS[p] for p in PAIR_TYPES] + ["All"]
    label_w, cell_w, cell_h, top = 130, 72, 22, 40
    rows: list[tuple[str, list[tuple[float | None, int, int]]]] = []
    for cat in cats:
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

    width = label_w + cell_w * len(cols) + 10
    height = top + cell_h * len(rows) + 10
    parts = [_open_svg(width, height, "Accuracy per category and pair type", "heatmap")]
    for j, lab in enumerate(col_labels):
        parts.append(
            _text(label_w + cell_w * j + cell_w / 2, top - 12, lab, size=12, extra='font-weight="600"')
        )
    for i, (cat, cells) in enumerate(rows):
        y = top + cell_h * i
        weight = ' font-weight="600"' if cat == "overall" else ""
        parts.append(_text(label_w - 8, y + cell_h / 2 + 4, cat, size=12, anchor="end", extra=weight.strip()))
        for j, (acc, k, n) in enumerate(cells):
            x = label_w + cell_w * j
            tip = f"{cat} / {col_labels[j]}: " + (
                f"{k}/{n} = {acc:.4f}" if acc is not None else "no episodes"
            )
            parts.append(
                f'<rect x="{_f(x)}" y="{_f(y)}" width="{cell_w - 2}" height="{cell_h - 2}" '
                f'fill="{accuracy_color(acc)}"><title>{escape(tip)}</title></rect>'
            )
            label = "–" if acc is None else f"{100 * acc:.1f}"
            fill = "#fff" if acc is not None and (acc < 0.15 or acc > 0.9) else "#111"
            parts.append(
                _text(x + cell_w / 2 - 1, y + cell_h / 2 + 3, label, size=11, extra=f'fill="{fill}"')
            )
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------------------------------------ scatter


@dataclass(frozen=True)
class ScatterPoint:
    name: str
    asd: float
    accuracy: float
    highlight: bool = False


def nice_step(span: float, target: int = 5) -> float:
    """A 1/2/2.5/5 × 10^k step that cuts ``span`` into about ``target`` intervals."""
    if span <= 0:
        return 1.0
    raw = span / target
    base: float = 10 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * base >= raw - 1e-12:
            return m * base
    return 10 * base


def _ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    step = nice_step(hi - lo, target)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    k = 0
    while first + k * step <= hi + 1e-9:
        out.append(round(first + k * step, 10))
        k += 1
    return out


def accuracy_asd_scatter_svg(points: Sequence[ScatterPoint]) -> str:
    """Accuracy (y) against ASD (x), one labelled point per run; the primary run is highlighted."""
    width, height = 520, 340
    left, right, top, bottom = 60, 150, 20, 45
    pw, ph = width - left - right, height - top - bottom
    if points:
        xs = [p.asd for p in points]
        ys = [p.accuracy for p in points]
        x_lo = math.floor(min(1.0, *xs) * 2) / 2
        x_hi = max(x_lo + 1.0, math.ceil(max(xs) * 2) / 2 + 0.5)
        y_lo = min(0.5, math.floor(min(ys) * 10) / 10)
        y_hi = 1.0
    else:
        x_lo, x_hi, y_lo, y_hi = 1.0, 2.0, 0.5, 1.0
    y_lo = math.floor(y_lo / nice_step(y_hi - y_lo) + 1e-9) * nice_step(y_hi - y_lo)

    def sx(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * pw

    def sy(v: float) -> float:
        return top + (1.0 - (v - y_lo) / (y_hi - y_lo)) * ph

    parts = [_open_svg(width, height, "Accuracy vs average steps (ASD)", "scatter")]
    parts.append(
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999" stroke-width="1"/>'
    )
    for t in _ticks(x_lo, x_hi):
        parts.append(f'<line x1="{_f(sx(t))}" y1="{top}" x2="{_f(sx(t))}" y2="{top + ph}" stroke="#e3e3e3"/>')
        parts.append(_text(sx(t), top + ph + 16, f"{t:.2f}", size=11))
    for t in _ticks(y_lo, y_hi):
        parts.append(
            f'<line x1="{left}" y1="{_f(sy(t))}" x2="{left + pw}" y2="{_f(sy(t))}" stroke="#e3e3e3"/>'
        )
        parts.append(_text(left - 6, sy(t) + 4, f"{t:.2f}", size=11, anchor="end"))
    parts.append(_text(left + pw / 2, height - 8, "ASD (average steps per episode)", size=12))
    parts.append(
        _text(14, top + ph / 2, "Accuracy", size=12, extra=f'transform="rotate(-90 14 {_f(top + ph / 2)})"')
    )
    for p in points:
        x, y = sx(p.asd), sy(p.accuracy)
        color = "#d62728" if p.highlight else "#1f77b4"
        r = 6 if p.highlight else 4.5
        parts.append(
            f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{r}" fill="{color}" stroke="#222" stroke-width="0.8">'
            f"<title>{escape(f'{p.name}: accuracy {p.accuracy:.4f}, ASD {p.asd:.2f}')}</title></circle>"
        )
        label = p.name if len(p.name) <= 24 else p.name[:23] + "…"
        parts.append(_text(x + 8, y + 4, label, size=11, anchor="start"))
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------------------------------------ bars


def nav_failure_bars_svg(groups: Sequence[tuple[str, int, int]]) -> str:
    """Grouped bars of unreachable vs trap failures; ``groups`` = ``(label, unreachable, trap)``."""
    width, height = 480, 260
    left, top, bottom, right = 50, 30, 40, 20
    pw, ph = width - left - right, height - top - bottom
    peak = max([1] + [max(u, t) for _, u, t in groups])
    step = max(1, int(nice_step(peak, 4)))
    vmax = step * math.ceil(peak / step)
    parts = [_open_svg(width, height, "Navigation failures: unreachable vs trap, per pair type", "navbars")]
    for v in range(0, vmax + 1, step):
        y = top + ph - ph * v / vmax
        parts.append(f'<line x1="{left}" y1="{_f(y)}" x2="{left + pw}" y2="{_f(y)}" stroke="#e3e3e3"/>')
        parts.append(_text(left - 6, y + 4, str(v), size=11, anchor="end"))
    colors = {"unreachable": "#4c78a8", "trap": "#f58518"}
    n = max(1, len(groups))
    gw = pw / n
    bw = min(40.0, gw * 0.35)
    for i, (label, unreachable, trap) in enumerate(groups):
        gx = left + gw * i + gw / 2
        for j, (kind, value) in enumerate((("unreachable", unreachable), ("trap", trap))):
            h = ph * value / vmax
            x = gx - bw + j * bw
            y = top + ph - h
            parts.append(
                f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(bw - 2)}" height="{_f(h)}" fill="{colors[kind]}">'
                f"<title>{escape(f'{label}: {value} {kind}')}</title></rect>"
            )
            parts.append(_text(x + (bw - 2) / 2, y - 3, str(value), size=10))
        parts.append(_text(gx, top + ph + 16, label, size=12))
    lx = left + 8
    for j, kind in enumerate(("unreachable", "trap")):
        parts.append(f'<rect x="{lx + j * 110}" y="8" width="12" height="12" fill="{colors[kind]}"/>')
        parts.append(_text(lx + j * 110 + 16, 18, kind, size=11, anchor="start"))
    parts.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#555"/>')
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------------------------------------ sector ring


@dataclass
class RingState:
    """What the sector ring shows for one episode (virtual sectors 0..5)."""

    start: int | None = None
    visited_order: list[int] = field(default_factory=list)
    failed_targets: list[int] = field(default_factory=list)
    trap_arrivals: list[int] = field(default_factory=list)
    final_sector: int | None = None


def ring_state(record: EpisodeRecord) -> RingState:
    """Derive the ring from the transcript: start, visit order, failed move targets and trap arrivals."""
    state = RingState()
    steps = record.transcript
    if not steps:
        return state
    state.start = steps[0].sector
    for i, s in enumerate(steps):
        if s.sector not in state.visited_order:
            state.visited_order.append(s.sector)
        offset = direction_offset(s.nav_rel)
        if s.outcome in FAILED_MOVE_OUTCOMES and offset is not None:
            target = (s.sector + offset) % SECTOR_COUNT
            if target not in state.failed_targets:
                state.failed_targets.append(target)
        if s.trap_view:
            if i + 1 < len(steps):
                arrival = steps[i + 1].sector
            elif s.outcome == "moved" and offset is not None:
                arrival = (s.sector + offset) % SECTOR_COUNT
            else:
                arrival = s.sector
            if arrival not in state.trap_arrivals:
                state.trap_arrivals.append(arrival)
    state.final_sector = steps[-1].sector
    return state


def _sector_angle(v: float) -> float:
    """Screen angle (radians, SVG y-down) of virtual sector ``v``'s centre: 0 = front at the bottom, then
    front-left at the lower left (the agent circles to its left), back at the top."""
    return math.radians(90.0 + 60.0 * v)


def _polar(cx: float, cy: float, r: float, angle: float) -> tuple[float, float]:
    return cx + r * math.cos(angle), cy + r * math.sin(angle)


def sector_ring_svg(record: EpisodeRecord, size: int = 300) -> str:
    """Six sectors around the target: visited order numbers, start (thick outline), failed move targets (red
    dashed, ✗), trap arrivals (orange, T). Sector names are the goal-anchored virtual names."""
    st = ring_state(record)
    cx = cy = size / 2
    r_out, r_in = size * 0.3, size * 0.12
    parts = [_open_svg(size, size, f"Sector ring of {record.episode_key}", "ring")]
    order_of = {v: i + 1 for i, v in enumerate(st.visited_order)}
    outlines: list[str] = []
    for v in range(SECTOR_COUNT):
        a0, a1 = _sector_angle(v - 0.5), _sector_angle(v + 0.5)
        p0, p1 = _polar(cx, cy, r_out, a0), _polar(cx, cy, r_out, a1)
        q1, q0 = _polar(cx, cy, r_in, a1), _polar(cx, cy, r_in, a0)
        d = (
            f"M{_f(p0[0])},{_f(p0[1])} A{_f(r_out)},{_f(r_out)} 0 0 1 {_f(p1[0])},{_f(p1[1])} "
            f"L{_f(q1[0])},{_f(q1[1])} A{_f(r_in)},{_f(r_in)} 0 0 0 {_f(q0[0])},{_f(q0[1])} Z"
        )
        fill = "#f4f4f4"
        if v in order_of:
            fill = "#9ecae1"
        if v in st.trap_arrivals:
            fill = "#fdae6b"
        stroke, dash, sw = "#888", "", "1"  # emphasis: failed target (red dashed), start (thick black)
        if v in st.failed_targets:
            stroke, dash, sw = "#d62728", ' stroke-dasharray="5,3"', "2.5"
        if v == st.start:
            stroke, sw = "#111", "3.5"
        notes = []
        if v == st.start:
            notes.append("start")
        if v in order_of:
            notes.append(f"visit #{order_of[v]}")
        if v in st.trap_arrivals:
            notes.append("trap arrival")
        if v in st.failed_targets:
            notes.append("failed move target")
        tip = f"sector {v} ({DIRECTIONS[v]})" + (": " + ", ".join(notes) if notes else "")
        parts.append(
            f'<path d="{d}" fill="{fill}" stroke="#888" stroke-width="1"><title>{escape(tip)}</title></path>'
        )
        if sw != "1":  # emphasised outlines are drawn after every wedge so neighbours cannot cover them
            outlines.append(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{sw}"{dash}/>')
        mx, my = _polar(cx, cy, (r_in + r_out) / 2, _sector_angle(v))
        marks = []
        if v in order_of:
            marks.append(str(order_of[v]))
        if v in st.trap_arrivals:
            marks.append("T")
        if v in st.failed_targets:
            marks.append("✗")
        if marks:
            parts.append(_text(mx, my + 5, " ".join(marks), size=14, extra='font-weight="700"'))
        lx, ly = _polar(cx, cy, r_out + 16, _sector_angle(v))
        parts.append(_text(lx, ly + 4, f"{v} {DIRECTIONS[v]}", size=10, extra='fill="#444"'))
    # failed targets first, so that a start sector that is also a failed target shows the start outline
    parts.extend(sorted(outlines, key=lambda o: 'stroke="#111"' in o))
    # path through the visited sectors in order
    if len(st.visited_order) > 1:
        pts = [_polar(cx, cy, (r_in + r_out) / 2 - 14, _sector_angle(v)) for v in st.visited_order]
        coords = " ".join(f"{_f(x)},{_f(y)}" for x, y in pts)
        parts.append(
            f'<polyline points="{coords}" fill="none" stroke="#3182bd" stroke-width="1.5" opacity="0.8"/>'
        )
    parts.append(
        f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="5" fill="#d62728"><title>target object</title></circle>'
    )
    parts.append("</svg>")
    return "".join(parts)
