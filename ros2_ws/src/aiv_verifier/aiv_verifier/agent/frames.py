"""Conversions from simulator-side facts to the agent's :class:`ViewFrame` inputs.

Both drivers need the same conversions (capture layout → sector geometry, privileged view → oracle info), so
they live here rather than in either driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..core.sector_geometry import SectorCapture, SectorGeometry

LayoutTuple = tuple[int, str, tuple[float, float, float] | None]


def geometry_from_layout(
    layout: Iterable[LayoutTuple], goal_position: Sequence[float] | None
) -> SectorGeometry | None:
    """Sector geometry from (virtual sector, view type, camera position) triples in file order.

    None when there is no goal position or no capture at all, which geometric NBV treats as "no coordinates".
    """
    captures = [SectorCapture(int(sector), view_type, position) for sector, view_type, position in layout]
    if goal_position is None or not captures:
        return None
    return SectorGeometry.from_records(captures, goal_position)
