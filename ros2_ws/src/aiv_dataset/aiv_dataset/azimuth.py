"""Angles around the goal: the one definition of azimuth, horizontal distance and virtual-sector offset.

The environment maps captures to virtual sectors with these, the verifier's next-best-view reasons about the
same azimuths, and the capture generator assigns raw sectors from them; if any of them computed an angle in a
different way, a boundary case could fall into one sector in the simulator and into another in the verifier.
The arithmetic deliberately mirrors the reference (``atan2`` in Habitat's XZ plane with y up, modulo on
floats, Python's round-half-even), so every caller keeps the reference's results bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .vocabulary import SECTOR_COUNT

#: Angular width of one virtual sector (60 degrees), in radians.
SECTOR_SPAN_RAD = 2.0 * math.pi / SECTOR_COUNT


def azimuth(position: Sequence[float], goal: Sequence[float]) -> float:
    """theta = atan2(z - g_z, x - g_x): azimuth of a point around the goal in the XZ plane, in (-pi, pi]."""
    return math.atan2(position[2] - goal[2], position[0] - goal[0])


def horizontal_distance(position: Sequence[float], goal: Sequence[float]) -> float:
    """Distance from the goal in the XZ plane (height ignored), as capture radii are measured."""
    return math.hypot(position[0] - goal[0], position[2] - goal[2])


def wrap_angle(angle: float) -> float:
    """Wrap to [-pi, pi) exactly as the reference does: ``(a + pi) % 2pi - pi``."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def virtual_index(theta: float, theta_ref: float, sectors: int = SECTOR_COUNT) -> int:
    """Sectors from ``theta_ref`` to ``theta`` counter-clockwise, to the nearest whole sector.

    v = round(((theta - theta_ref) mod 2pi) / span) mod sectors, with Python's round-half-even; the sector of
    a capture relative to the reference capture, or the turn between two sectors' azimuths.
    """
    span = 2.0 * math.pi / sectors
    return round(((theta - theta_ref) % (2.0 * math.pi)) / span) % sectors
