"""Conversions from simulator-side facts to the agent's :class:`ViewFrame` inputs.

Both drivers need the same conversions (capture layout → sector geometry, privileged view → oracle info), so
they live here rather than in either driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..core.sector_geometry import SectorCapture, SectorGeometry

Position = tuple[float, float, float] | None
#: (virtual sector, view type, camera position) or, with height levels, (..., level)
LayoutTuple = tuple[int, str, Position] | tuple[int, str, Position, int]


def geometry_from_layout(
    layout: Iterable[LayoutTuple], goal_position: Sequence[float] | None
) -> SectorGeometry | None:
    """Sector geometry from (virtual sector, view type, camera position[, level]) tuples in file order (a
    triple is an eye-level view).

    None when there is no goal position or no capture at all, which geometric NBV treats as "no coordinates".
    """
    captures = [
        SectorCapture(int(item[0]), item[1], item[2], int(item[3]) if len(item) > 3 else 0) for item in layout
    ]
    if goal_position is None or not captures:
        return None
    return SectorGeometry.from_records(captures, goal_position)
