"""Where the captured views of an episode sit around the goal, in the virtual 6-sector frame.

NBV strategies only need azimuths around the object, so this is a dataset-independent description (whoever
owns the dataset converts its capture records into :class:`SectorCapture`). Azimuths are the benchmark's
(:mod:`aiv_dataset.azimuth`, the same functions the simulator maps sectors with): θ(p) = atan2(p_z − g_z,
p_x − g_x) in the horizontal XZ plane of the capture data (y up).

A dataset with camera height levels (:mod:`aiv_dataset.levels`) lists views of several levels; each capture
carries its level. The virtual sectors and the per-sector azimuths come from the eye-level captures alone,
exactly as the simulator builds its sector map, so a one-level episode's numbers are today's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aiv_dataset.azimuth import SECTOR_SPAN_RAD, azimuth, horizontal_distance, virtual_index
from aiv_dataset.vocabulary import DIRECTIONS, SECTOR_COUNT, relative_direction

Vector3 = tuple[float, float, float]


@dataclass(frozen=True)
class SectorCapture:
    """One captured viewpoint: its virtual sector, "far"/"near", camera position (None if unknown) and camera
    height level (0 = eye level, the only one of a one-level dataset)."""

    virtual_sector: int
    view_type: str
    camera_position: Vector3 | None
    level: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.virtual_sector < SECTOR_COUNT:
            raise ValueError(f"virtual_sector must lie in 0..{SECTOR_COUNT - 1}, got {self.virtual_sector}")
        if self.camera_position is not None and len(self.camera_position) != 3:
            raise ValueError(f"camera_position must be (x, y, z), got {self.camera_position!r}")


@dataclass(frozen=True)
class SectorGeometry:
    """All captures of an episode in their listed order (order matters: the first one sets the reference)."""

    captures: tuple[SectorCapture, ...]
    goal_position: Vector3

    @classmethod
    def from_records(
        cls, captures: Iterable[SectorCapture], goal_position: Sequence[float]
    ) -> SectorGeometry:
        if len(goal_position) != 3:
            raise ValueError(f"goal_position must be (x, y, z), got {goal_position!r}")
        x, y, z = (float(value) for value in goal_position)
        return cls(tuple(captures), (x, y, z))

    @property
    def located_captures(self) -> tuple[SectorCapture, ...]:
        return tuple(capture for capture in self.captures if capture.camera_position is not None)

    @property
    def levels(self) -> tuple[int, ...]:
        """The camera height levels the captures are at, sorted ((0,) for a one-level episode or no capture)."""
        return tuple(sorted({capture.level for capture in self.captures})) or (0,)

    def eye_level(self) -> SectorGeometry:
        """The same geometry restricted to eye-level captures (itself when every capture is at eye level)."""
        if all(capture.level == 0 for capture in self.captures):
            return self
        return SectorGeometry(tuple(c for c in self.captures if c.level == 0), self.goal_position)

    def azimuth(self, position: Vector3) -> float:
        """θ of a point around the goal, in (−π, π]."""
        return azimuth(position, self.goal_position)

    def horizontal_radius(self, position: Vector3) -> float:
        return horizontal_distance(position, self.goal_position)


def shortest_arc(alpha: float, beta: float) -> float:
    """Δ(α, β) of paper Eq. 4: angular distance on the circle, in [0, π]."""
    difference = abs(alpha - beta) % (2.0 * math.pi)
    return min(difference, 2.0 * math.pi - difference)


@dataclass(frozen=True)
class SectorAzimuths:
    """Azimuth standing in for each virtual sector, as the reference FPS builds it.

    ``measured`` sectors take the azimuth of their first listed capture; every other sector gets a synthetic
    point at θ_ref + k·60° on a circle of the mean capture radius, so FPS has no navigability prior.
    """

    reference_azimuth: float
    mean_radius: float
    by_sector: tuple[float, ...]
    measured: frozenset[int]


def sector_azimuths(geometry: SectorGeometry) -> SectorAzimuths | None:
    """Per-sector azimuths, or None when no capture has coordinates (callers then fall back to random).

    Only eye-level captures count (virtual sectors are defined by them); a one-level geometry is unchanged."""
    located = geometry.eye_level().located_captures
    if not located:
        return None
    reference = geometry.azimuth(_position(located[0]))
    measured: dict[int, float] = {}
    for capture in located:
        measured.setdefault(capture.virtual_sector, geometry.azimuth(_position(capture)))
    mean_radius = sum(geometry.horizontal_radius(_position(c)) for c in located) / len(located)

    goal_x, goal_y, goal_z = geometry.goal_position
    by_sector = []
    for sector in range(SECTOR_COUNT):
        if sector in measured:
            by_sector.append(measured[sector])
            continue
        angle = reference + sector * SECTOR_SPAN_RAD
        synthetic = (goal_x + mean_radius * math.cos(angle), goal_y, goal_z + mean_radius * math.sin(angle))
        by_sector.append(geometry.azimuth(synthetic))
    return SectorAzimuths(reference, mean_radius, tuple(by_sector), frozenset(measured))


def capture_azimuths_of(geometry: SectorGeometry, sectors: Iterable[int]) -> list[float]:
    """Azimuths of every located capture (far and near) that belongs to one of ``sectors``."""
    wanted = set(sectors)
    return [
        geometry.azimuth(_position(capture))
        for capture in geometry.located_captures
        if capture.virtual_sector in wanted
    ]


def relative_direction_by_geometry(
    geometry: SectorGeometry | None, current_sector: int, target_sector: int
) -> str:
    """Name of ``target_sector`` seen from ``current_sector``, from measured azimuths when both are known.

    Falls back to index arithmetic (the two agree whenever captures sit inside their nominal sector windows).
    """
    azimuths = sector_azimuths(geometry) if geometry is not None else None
    if azimuths is not None and {current_sector, target_sector} <= azimuths.measured:
        turn = virtual_index(azimuths.by_sector[target_sector], azimuths.by_sector[current_sector])
        return DIRECTIONS[turn]
    return relative_direction(current_sector, target_sector)


def _position(capture: SectorCapture) -> Vector3:
    if capture.camera_position is None:
        raise ValueError(f"capture in sector {capture.virtual_sector} has no camera position")
    return capture.camera_position
