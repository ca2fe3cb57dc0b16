"""Virtual sectors around the goal and the resolution of relative moves (spec §3.2, §3.6, §3.7).

Pure functions over an episode's viewpoints, with no I/O, so that the rules that decide every benchmark
transition can be pinned by golden tests. The arithmetic deliberately mirrors the reference
(``atan2`` in the XZ plane, Python ``round`` = round-half-even, modulo on floats, a strict ``< pi/6`` test) so
that boundary cases fall the same way.

Vocabulary: *capture index* = position in the stably sorted capture list; *virtual sector* = 0..5, with
0 = the lowest navigable raw sector ("front" in goal-anchored logs) and ascending counter-clockwise.

Height levels (:mod:`aiv_dataset.levels`): an episode may hold views at several camera heights. Each level gets
a sector map of its own (:func:`build_level_maps`); the eye-level map is exactly the one-level map of the
eye-level views, and the other levels reuse its theta_ref, so that "sector 2" names the same direction around
the goal at every height and ``up`` / ``down`` (:func:`resolve_level_move`) keep the sector.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aiv_dataset.azimuth import azimuth, horizontal_distance, virtual_index, wrap_angle
from aiv_dataset.levels import EYE_LEVEL, LEVEL_DIRECTIONS
from aiv_dataset.meta import Viewpoint
from aiv_dataset.vocabulary import SECTOR_COUNT, MoveOutcome, direction_angle, target_sector

#: Below this horizontal distance (m) from the goal a camera has no usable azimuth (reference threshold).
MIN_RADIUS = 1e-6


def within_sector(delta: float, sectors: int = SECTOR_COUNT) -> bool:
    """The acceptance test of a move: strictly less than half a sector (30 degrees) off the request."""
    return abs(delta) < math.pi / sectors


def sort_captures(views: Sequence[Viewpoint]) -> tuple[Viewpoint, ...]:
    """Stable sort by raw sector (views without one first, as the reference's -1 default puts them)."""
    return tuple(sorted(views, key=lambda v: -1 if v.sector_index is None else v.sector_index))


def is_mappable(view: Viewpoint) -> bool:
    """Only navigable views with an image can be observed (missing flags already defaulted at parse time)."""
    return view.navigable and bool(view.rgb)


@dataclass(frozen=True)
class SectorMap:
    """Which capture the agent sees in each virtual sector of one episode.

    ``slots[v][view_type]`` is a capture index; ``capture_sector[i]`` the virtual sector of capture i
    (including captures that were overwritten in ``slots`` by a later one of the same type).
    """

    captures: tuple[Viewpoint, ...]
    goal: tuple[float, float, float]
    sectors: int
    slots: Mapping[int, Mapping[str, int]]
    capture_sector: Mapping[int, int]
    reference_capture: int | None

    @property
    def available(self) -> tuple[int, ...]:
        """Virtual sectors that have at least one observable capture, ascending."""
        return tuple(sorted(self.slots))

    def capture_for(self, sector: int, priority: str = "far") -> int | None:
        """The capture shown in a sector: the ``priority`` view type, else the other one."""
        views = self.slots.get(sector)
        if not views:
            return None
        if priority in views:
            return views[priority]
        other = "near" if priority == "far" else "far"
        return views.get(other)

    def describe(self, priority: str = "far") -> dict[str, object]:
        """JSON-ready summary for debug logs (which raw capture sits in which virtual sector)."""
        details: dict[str, object] = {}
        for sector in self.available:
            details[str(sector)] = [
                {
                    "tag": self.captures[index].name,
                    "raw_sector": self.captures[index].sector_index,
                    "view_type": view_type,
                    "shown": index == self.capture_for(sector, priority),
                }
                for view_type, index in self.slots[sector].items()
            ]
        return {
            "total_captures": len(self.captures),
            "available_virtual_sectors": list(self.available),
            "reference_capture": None
            if self.reference_capture is None
            else self.captures[self.reference_capture].name,
            "sectors": details,
        }


def build_sector_map(
    views: Sequence[Viewpoint],
    goal: Sequence[float] | None,
    sectors: int = SECTOR_COUNT,
    *,
    presorted: bool = False,
    theta_ref: float | None = None,
) -> SectorMap:
    """Build the virtual sector map of an episode (spec §3.2).

    * Only navigable views with an rgb path take part. theta_ref is the azimuth of the first of them (in
      sorted order) that has a camera position.
    * Each such view lands in ``virtual_index(theta, theta_ref)``; a later view of the same type overwrites.
    * Views without a position go to sector 0 without overwriting — unless *no* view has a position, in
      which case the reference leaves the map empty (every view is nominally in sector 0, none is shown by
      sector, and every move fails); we reproduce that.

    ``theta_ref`` imposes the reference azimuth instead (the map of a height level other than eye level takes
    the eye-level map's, see :func:`build_level_maps`); such a map names no ``reference_capture``.
    """
    captures = tuple(views) if presorted else sort_captures(views)
    goal3 = (0.0, 0.0, 0.0) if goal is None else (float(goal[0]), float(goal[1]), float(goal[2]))
    located: list[tuple[int, float]] = []
    unlocated: list[int] = []
    for index, view in enumerate(captures):
        if not is_mappable(view):
            continue
        if view.camera_position is None:
            unlocated.append(index)
        else:
            located.append((index, azimuth(view.camera_position, goal3)))

    slots: dict[int, dict[str, int]] = {}
    capture_sector: dict[int, int] = {}
    reference: int | None = None
    if not located:
        capture_sector = {index: 0 for index in range(len(captures))}
    else:
        if theta_ref is None:
            reference, theta_ref = located[0]
        for index, theta in located:
            sector = virtual_index(theta, theta_ref, sectors)
            capture_sector[index] = sector
            slots.setdefault(sector, {})[captures[index].view_type] = index
        for index in unlocated:
            capture_sector[index] = 0
            slots.setdefault(0, {}).setdefault(captures[index].view_type, index)
    return SectorMap(
        captures=captures,
        goal=goal3,
        sectors=sectors,
        slots=slots,
        capture_sector=capture_sector,
        reference_capture=reference,
    )


@dataclass(frozen=True)
class MoveResolution:
    """Result of resolving one relative move from the current capture.

    ``outcome`` is one of the four a navigation request can have: ``MOVED`` (to another sector), ``STAYED``
    ("front": a successful no-op that still costs a step), ``UNREACHABLE`` (no capture within +-30 degrees
    of the requested direction) or ``ALREADY_VISITED`` (the only captures there belong to visited sectors).
    """

    outcome: MoveOutcome
    capture: int | None  # capture index moved to (the current one for "front"); None on failure
    target_sector: int | None  # virtual sector aimed at, when one can be named
    method: str  # "coordinates" or "fallback" (no usable position for the current capture)
    delta: float | None = None  # angular miss (radians) of the chosen / best rejected candidate


def resolve_move(
    smap: SectorMap,
    current: int,
    direction: str,
    visited: frozenset[int] | set[int],
    priority: str = "far",
) -> MoveResolution:
    """Resolve a normalised direction from capture ``current`` (spec §3.6).

    With a usable current position: "front" stays; otherwise the target azimuth is theta(current) + offset and
    the unvisited sector whose shown capture is nearest to it, strictly within +-30 degrees, is chosen
    (ties: lowest virtual index). Without one (no position, or standing on the goal): the target is
    ``(current sector + offset) mod 6`` and must exist and be unvisited — "front" included, so it fails.
    """
    view = smap.captures[current]
    current_sector = smap.capture_sector.get(current, 0)
    position = view.camera_position
    if position is None or horizontal_distance(position, smap.goal) < MIN_RADIUS:
        return _resolve_by_index(smap, current_sector, direction, visited, priority)

    if direction == "front":
        return MoveResolution(
            MoveOutcome.STAYED, smap.capture_for(current_sector, priority), current_sector, "coordinates"
        )

    target = azimuth(position, smap.goal) + direction_angle(direction, smap.sectors)
    best: tuple[float, int, int] | None = None  # (|delta|, sector, capture)
    best_visited: tuple[float, int] | None = None
    for sector in smap.available:
        index = smap.capture_for(sector, priority)
        if index is None:
            continue
        candidate = smap.captures[index].camera_position
        if candidate is None or horizontal_distance(candidate, smap.goal) < MIN_RADIUS:
            continue
        miss = abs(wrap_angle(azimuth(candidate, smap.goal) - target))
        if not within_sector(miss, smap.sectors):
            continue
        if sector in visited:
            if best_visited is None or miss < best_visited[0]:
                best_visited = (miss, sector)
        elif best is None or miss < best[0]:
            best = (miss, sector, index)
    if best is not None:
        return MoveResolution(MoveOutcome.MOVED, best[2], best[1], "coordinates", best[0])
    if best_visited is not None:
        return MoveResolution(
            MoveOutcome.ALREADY_VISITED, None, best_visited[1], "coordinates", best_visited[0]
        )
    return MoveResolution(MoveOutcome.UNREACHABLE, None, None, "coordinates")


def _resolve_by_index(
    smap: SectorMap, current_sector: int, direction: str, visited: frozenset[int] | set[int], priority: str
) -> MoveResolution:
    target = target_sector(current_sector, direction, smap.sectors)
    if target not in smap.slots:
        return MoveResolution(MoveOutcome.UNREACHABLE, None, target, "fallback")
    if target in visited:
        return MoveResolution(MoveOutcome.ALREADY_VISITED, None, target, "fallback")
    index = smap.capture_for(target, priority)
    outcome = MoveOutcome.STAYED if target == current_sector else MoveOutcome.MOVED
    return MoveResolution(outcome, index, target, "fallback")


def reference_azimuth(smap: SectorMap) -> float | None:
    """The theta_ref a map was built with (the azimuth of its reference capture), None when it has none."""
    if smap.reference_capture is None:
        return None
    position = smap.captures[smap.reference_capture].camera_position
    return None if position is None else azimuth(position, smap.goal)


@dataclass(frozen=True)
class LevelMaps:
    """The sector maps of one episode, one per camera height level that has views.

    ``maps[0]`` (eye level) is always present (empty when the episode has no eye-level view), ``levels`` the
    sorted levels the episode has views at (observable or not: a level whose views are all blocked is still a
    level of the episode, and a move to it is unreachable, not refused).
    """

    maps: Mapping[int, SectorMap]
    levels: tuple[int, ...]

    @property
    def eye(self) -> SectorMap:
        return self.maps[EYE_LEVEL]

    @property
    def one_level(self) -> bool:
        """Whether ``up`` / ``down`` have nowhere to go in this episode (a one-level dataset's episodes)."""
        return self.levels == (EYE_LEVEL,)

    def __getitem__(self, level: int) -> SectorMap:
        return self.maps[level]


def build_level_maps(
    views: Sequence[Viewpoint], goal: Sequence[float] | None, sectors: int = SECTOR_COUNT
) -> LevelMaps:
    """Build the sector map of every height level of an episode.

    The eye-level views build today's map, unchanged (same theta_ref, same overwrite rules), so a one-level
    episode's map is :func:`build_sector_map` of all its views. The views of every other level build a map with
    the eye-level theta_ref; when the eye level has no located view to take it from, such a level falls back to
    its own first located view, as a one-level map would.
    """
    by_level: dict[int, list[Viewpoint]] = {}
    for view in views:
        by_level.setdefault(view.height_level, []).append(view)
    eye = build_sector_map(by_level.get(EYE_LEVEL, ()), goal, sectors)
    theta_ref = reference_azimuth(eye)
    maps: dict[int, SectorMap] = {EYE_LEVEL: eye}
    for level, level_views in by_level.items():
        if level != EYE_LEVEL:
            maps[level] = build_sector_map(level_views, goal, sectors, theta_ref=theta_ref)
    levels = tuple(sorted(set(by_level) | {EYE_LEVEL}))
    return LevelMaps(maps=maps, levels=levels)


@dataclass(frozen=True)
class LevelMoveResolution:
    """Result of an ``up`` / ``down`` request: ``MOVED`` (to ``capture`` of ``maps[target_level]``),
    ``UNREACHABLE`` (no such level, or no observable view of it at the current sector) or ``ALREADY_VISITED``."""

    outcome: MoveOutcome
    capture: int | None
    target_level: int
    sector: int


def resolve_level_move(
    maps: LevelMaps,
    level: int,
    sector: int,
    direction: str,
    visited: frozenset[tuple[int, int]] | set[tuple[int, int]],
    priority: str = "far",
) -> LevelMoveResolution:
    """Resolve ``up`` / ``down`` from virtual ``sector`` at ``level``: one level, the same sector, the view the
    sector shows there with the usual far/near priority. ``visited`` holds (sector, level) pairs."""
    target = level + LEVEL_DIRECTIONS[direction]
    smap = maps.maps.get(target)
    capture = None if smap is None else smap.capture_for(sector, priority)
    if capture is None:
        return LevelMoveResolution(MoveOutcome.UNREACHABLE, None, target, sector)
    if (sector, target) in visited:
        return LevelMoveResolution(MoveOutcome.ALREADY_VISITED, None, target, sector)
    return LevelMoveResolution(MoveOutcome.MOVED, capture, target, sector)
