"""The per-episode sector ring: where the agent looked from, in which order, and which moves failed.

:func:`ring_state` reads it off the transcript; :func:`sector_ring_svg` draws it with matplotlib (six wedges
around the target, sector 0 = front at the bottom, then front-left at the lower left, as the agent circles to
its left; back at the top).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from aiv_dataset.vocabulary import DIRECTIONS, SECTOR_COUNT

from ..records.episode import FAILED_MOVE_OUTCOMES, EpisodeRecord, direction_offset
from .figures import chart_style, inline_svg, new_figure

R_OUT, R_IN = 1.0, 0.4
VISITED, TRAP, IDLE = "#9ecae1", "#fdae6b", "#f4f4f4"


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


def sector_angle(v: float) -> float:
    """Angle in degrees (counter-clockwise from +x, y up) of virtual sector ``v``'s centre: 0 at the bottom,
    1 at the lower left, 3 at the top."""
    return -90.0 - 60.0 * v


def _sector_notes(v: int, st: RingState, order_of: dict[int, int]) -> tuple[str, str]:
    """The mark drawn in sector ``v`` and its tooltip."""
    marks, notes = [], []
    if v == st.start:
        notes.append("start")
    if v in order_of:
        marks.append(str(order_of[v]))
        notes.append(f"visit #{order_of[v]}")
    if v in st.trap_arrivals:
        marks.append("T")
        notes.append("trap arrival")
    if v in st.failed_targets:
        marks.append("✗")
        notes.append("failed move target")
    tip = f"sector {v} ({DIRECTIONS[v]})" + (": " + ", ".join(notes) if notes else "")
    return " ".join(marks), tip


def sector_ring_svg(record: EpisodeRecord, size_in: float = 4.0) -> str:
    """Six sectors around the target: visit order numbers, start (thick outline), failed move targets (red
    dashed, ✗), trap arrivals (orange, T)."""
    from matplotlib.patches import Wedge

    st = ring_state(record)
    order_of = {v: i + 1 for i, v in enumerate(st.visited_order)}
    tips: dict[str, str] = {}
    with chart_style():
        figure = new_figure(size_in, size_in * 1.3 / 1.75, layout=None)
        ax = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_axis_off()
        ax.set_aspect("equal")
        mid = (R_IN + R_OUT) / 2
        for v in range(SECTOR_COUNT):
            centre = sector_angle(v)
            theta = (centre - 30.0, centre + 30.0)
            fill = TRAP if v in st.trap_arrivals else VISITED if v in order_of else IDLE
            gid = f"sector-{v}"
            ax.add_patch(
                Wedge((0, 0), R_OUT, *theta, width=R_OUT - R_IN, facecolor=fill, edgecolor="#888", gid=gid)
            )
            mark, tips[gid] = _sector_notes(v, st, order_of)
            x, y = math.cos(math.radians(centre)), math.sin(math.radians(centre))
            if mark:
                ax.text(mid * x, mid * y, mark, ha="center", va="center", fontsize=12, fontweight="bold")
            side = "left" if x > 0.3 else "right" if x < -0.3 else "center"  # names grow away from the ring
            ax.text(1.1 * x, 1.12 * y, f"{v} {DIRECTIONS[v]}", ha=side, va="center", fontsize=8, color="#444")
        # emphasised outlines after every wedge (neighbours cannot cover them): failed targets, then the start
        for v in st.failed_targets:
            theta = (sector_angle(v) - 30.0, sector_angle(v) + 30.0)
            ax.add_patch(Wedge((0, 0), R_OUT, *theta, width=R_OUT - R_IN, fill=False, edgecolor="#d62728",
                               linewidth=2.0, linestyle=(0, (4, 2)), gid=f"failed-{v}"))  # fmt: skip
        if st.start is not None:
            theta = (sector_angle(st.start) - 30.0, sector_angle(st.start) + 30.0)
            ax.add_patch(Wedge((0, 0), R_OUT, *theta, width=R_OUT - R_IN, fill=False, edgecolor="#111",
                               linewidth=2.8, gid="start"))  # fmt: skip
        if len(st.visited_order) > 1:  # the path through the visited sectors, in order
            r = mid - 0.13
            xs = [r * math.cos(math.radians(sector_angle(v))) for v in st.visited_order]
            ys = [r * math.sin(math.radians(sector_angle(v))) for v in st.visited_order]
            ax.plot(xs, ys, color="#3182bd", linewidth=1.5, alpha=0.8, gid="path")
        ax.plot([0], [0], marker="o", markersize=7, color="#d62728", gid="target")
        tips["target"] = "target object"
        ax.set_xlim(-1.75, 1.75)
        ax.set_ylim(-1.3, 1.3)
        return inline_svg(figure, css_class="ring", label=f"Sector ring of {record.episode_key}", tips=tips)


__all__ = ["RingState", "ring_state", "sector_angle", "sector_ring_svg"]
