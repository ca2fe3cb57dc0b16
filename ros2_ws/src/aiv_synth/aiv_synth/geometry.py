"""Azimuth and sector arithmetic around the goal (paper App. A.2, spec §2.3).

Everything that decides *which raw sector a camera belongs to* lives here, so that the sampler, the writer of
``angle_deg_range`` and the tests use one definition. Conventions are Habitat's: y is up, the azimuth is the
benchmark's ``atan2(z - g_z, x - g_x)`` (:func:`aiv_dataset.azimuth.azimuth`) normalised to ``[0, 2*pi)``, and
raw sector ``i`` covers ``[i * 30deg, (i + 1) * 30deg)``. The sector layout itself is the format's
(:mod:`aiv_dataset.constants`). All arithmetic is in radians; degrees are labels only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aiv_dataset.azimuth import azimuth, horizontal_distance
from aiv_dataset.constants import RAW_SECTOR_COUNT

#: Width of one raw sector (30 degrees).
SECTOR_WIDTH = 2.0 * math.pi / RAW_SECTOR_COUNT

#: Horizontal camera-to-goal distance ranges (metres), paper Table 9.
RANGES: dict[str, tuple[float, float]] = {"near": (0.9, 1.2), "far": (1.4, 1.7)}


def positive_azimuth(camera: Sequence[float], goal: Sequence[float]) -> float:
    """Azimuth of a camera position around the goal in [0, 2*pi) (paper Eq. 8), as raw sectors count it."""
    theta = azimuth(camera, goal)
    if theta < 0.0:
        theta += 2.0 * math.pi
    # atan2 of a tiny negative z can round to exactly 2*pi after the shift; keep the half-open interval.
    return 0.0 if theta >= 2.0 * math.pi else theta


def sector_of(theta: float) -> int:
    """Raw sector index of an azimuth (radians, any value; wrapped into [0, 2*pi))."""
    wrapped = theta % (2.0 * math.pi)
    return min(int(wrapped // SECTOR_WIDTH), RAW_SECTOR_COUNT - 1)


def sector_bounds(sector: int) -> tuple[float, float]:
    """Angular bounds ``[lo, hi)`` of a raw sector in radians."""
    return sector * SECTOR_WIDTH, (sector + 1) * SECTOR_WIDTH


def sector_bounds_deg(sector: int) -> list[int]:
    """``angle_deg_range`` as meta.json writes it, e.g. ``[60, 90]`` for sector 2."""
    return [sector * 30, (sector + 1) * 30]


def in_sector(camera: Sequence[float], goal: Sequence[float], sector: int) -> bool:
    """Whether a camera position lies in the given raw sector around the goal."""
    return sector_of(positive_azimuth(camera, goal)) == sector


def in_range(camera: Sequence[float], goal: Sequence[float], range_label: str) -> bool:
    """Whether the horizontal distance (paper Eq. 7) lies in the far/near range (closed interval)."""
    lo, hi = RANGES[range_label]
    return lo <= horizontal_distance(camera, goal) <= hi


def point_at(goal: Sequence[float], radius: float, theta: float) -> tuple[float, float]:
    """XZ position at a horizontal radius and azimuth around the goal (ring / ray sampling)."""
    return goal[0] + radius * math.cos(theta), goal[2] + radius * math.sin(theta)
