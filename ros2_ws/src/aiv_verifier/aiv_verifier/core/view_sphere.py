"""Views as (sector, level) pairs: which ones are one move away, and where they look at the object from.

An episode with camera height levels (:mod:`aiv_dataset.levels`) has views at several heights of each sector.
The next-best-view strategies then choose among the views one move away: the planar moves at the current
level (the level stays while the base drives) and ``up`` / ``down`` at the current sector. Angular
farthest-point sampling measures gaps on the view sphere around the object (the angle between viewing
directions from the goal, camera height included) instead of on the ring. A one-level episode never comes
here: the strategies keep their ring code for it, so its answers stay bit for bit what they were.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from aiv_dataset.levels import LEVEL_DIRECTIONS
from aiv_dataset.vocabulary import SECTOR_COUNT, relative_direction

from .sector_geometry import SectorAzimuths, SectorGeometry, Vector3

#: (virtual sector, camera height level)
View = tuple[int, int]


def is_multi_level(levels: Iterable[int]) -> bool:
    """Whether an episode with these levels offers height moves at all."""
    return len(set(levels)) > 1


def candidate_views(current: View, levels: Iterable[int], used: Iterable[View]) -> list[View]:
    """Views one move away that are not used up (visited or refused): planar ones at the current level in
    sector order, then the view above, then the one below. This order breaks every strategy's ties."""
    sector, level = current
    known = set(levels)
    spent = set(used)
    planar = [(k, level) for k in range(SECTOR_COUNT) if k != sector and (k, level) not in spent]
    vertical = [
        (sector, level + offset)
        for offset in (LEVEL_DIRECTIONS["up"], LEVEL_DIRECTIONS["down"])
        if level + offset in known and (sector, level + offset) not in spent
    ]
    return planar + vertical


def neighbour_views(current: View, levels: Iterable[int]) -> list[View]:
    """Every view one move away, used up or not (the last resort when nothing unused is left)."""
    return candidate_views(current, levels, ())


def move_to(current: View, target: View) -> str:
    """The direction that goes from ``current`` to ``target`` (one move away): a planar name or up / down."""
    if target[0] == current[0] and target[1] != current[1]:
        offset = target[1] - current[1]
        for name, step in LEVEL_DIRECTIONS.items():
            if step == offset:
                return name
        raise ValueError(f"view {target} is not one level from {current}")
    if target[1] != current[1]:
        raise ValueError(f"view {target} is not one move from {current}: a planar move keeps the level")
    return relative_direction(current[0], target[0])


def unit_direction(geometry: SectorGeometry, position: Vector3) -> Vector3:
    """The unit vector from the goal to a camera position (zero vector for a camera at the goal)."""
    gx, gy, gz = geometry.goal_position
    dx, dy, dz = position[0] - gx, position[1] - gy, position[2] - gz
    norm = math.sqrt(dx * dx + dy * dy + dz * dz)
    if norm == 0.0:
        return (0.0, 0.0, 0.0)
    return (dx / norm, dy / norm, dz / norm)


def angle_between(a: Vector3, b: Vector3) -> float:
    """Angle in [0, pi] between two unit vectors."""
    dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    return math.acos(max(-1.0, min(1.0, dot)))


def level_elevations(geometry: SectorGeometry) -> dict[int, float]:
    """Mean elevation angle (radians above the goal's horizontal plane) of each level's located captures."""
    sums: dict[int, list[float]] = {}
    goal_y = geometry.goal_position[1]
    for capture in geometry.located_captures:
        assert capture.camera_position is not None
        radius = geometry.horizontal_radius(capture.camera_position)
        elevation = math.atan2(capture.camera_position[1] - goal_y, radius)
        sums.setdefault(capture.level, []).append(elevation)
    return {level: sum(values) / len(values) for level, values in sums.items()}


def view_direction(
    geometry: SectorGeometry, azimuths: SectorAzimuths, elevations: dict[int, float], view: View
) -> Vector3:
    """Where a view looks at the object from: the first listed located capture of that view, else a point at
    the sector's azimuth (measured or synthetic, as the ring rule has it) and the level's mean elevation (the
    mean of all levels when the level has no located capture)."""
    sector, level = view
    for capture in geometry.located_captures:
        if capture.virtual_sector == sector and capture.level == level:
            assert capture.camera_position is not None
            return unit_direction(geometry, capture.camera_position)
    if level in elevations:
        elevation = elevations[level]
    else:
        elevation = sum(elevations.values()) / len(elevations) if elevations else 0.0
    azimuth = azimuths.by_sector[sector]
    # Azimuth is atan2(z, x) around the goal with y up (aiv_dataset.azimuth).
    return (
        math.cos(elevation) * math.cos(azimuth),
        math.sin(elevation),
        math.cos(elevation) * math.sin(azimuth),
    )


def seen_directions(geometry: SectorGeometry, views: Iterable[View]) -> list[Vector3]:
    """Viewing directions of every located capture (far and near) of the given views."""
    wanted = set(views)
    out = []
    for capture in geometry.located_captures:
        if (capture.virtual_sector, capture.level) in wanted:
            assert capture.camera_position is not None
            out.append(unit_direction(geometry, capture.camera_position))
    return out


__all__ = [
    "View",
    "angle_between",
    "candidate_views",
    "is_multi_level",
    "level_elevations",
    "move_to",
    "neighbour_views",
    "seen_directions",
    "unit_direction",
    "view_direction",
]
