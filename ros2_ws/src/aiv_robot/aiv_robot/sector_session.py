"""One verification request's sector bookkeeping on a robot (no ROS): where "front" is, which virtual sectors
were seen, where the current view was taken, and the step count.

A session starts when the verifier starts a VerifyInstance request (see :mod:`aiv_robot.adapter_node`): the
robot's bearing from the object at that moment becomes sector ``start_sector`` (0, "front", unless the goal
names another), that sector counts as visited, and the pose the robot stands at is the current view's pose.
The benchmark's move rules then apply: "front" stays, a visited sector is ``already_visited`` without motion,
any other sector is a target the robot tries to reach.

With camera height levels a view is (sector, level): the session starts at eye level (0) unless the torso was
left at another level by the previous request (``start_level``), ``up`` / ``down`` change the level at the same
sector, planar moves keep the level, and "visited" is judged per (sector, level).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiv_dataset.vocabulary import DIRECTION_OFFSETS, SECTOR_COUNT

from .geometry import SECTOR_SPAN_RAD as _SPAN
from .geometry import Pose2D, bearing, sector_bearing, wrap_angle

#: Budget assumed when a request says 0 (the verifier's default_step_budget).
DEFAULT_STEP_BUDGET = 6


@dataclass
class SectorSession:
    """Sector state of one request. ``front_bearing`` and ``view_pose`` stay None until a robot pose and the
    object position are known (then :meth:`anchor` sets them from the robot's pose)."""

    request_id: str = ""
    start_sector: int = 0
    step_budget: int = DEFAULT_STEP_BUDGET
    current: int = 0
    visited: set[int] = field(default_factory=set)
    front_bearing: float | None = None
    view_pose: Pose2D | None = None
    steps_taken: int = 0
    #: The camera height level now (0 = eye level) and every (sector, level) view seen; ``visited`` keeps the
    #: sectors seen at any level.
    level: int = 0
    views: set[tuple[int, int]] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not 0 <= self.start_sector < SECTOR_COUNT:
            raise ValueError(f"start_sector must lie in 0..{SECTOR_COUNT - 1}, got {self.start_sector}")
        self.current = self.start_sector
        self.visited = {self.start_sector}
        self.views = {(self.start_sector, self.level)}

    @property
    def anchored(self) -> bool:
        return self.front_bearing is not None and self.view_pose is not None

    def anchor(self, object_xy: tuple[float, float], robot: Pose2D) -> None:
        """Take the robot's current bearing as the start sector's bearing and its pose as the current view."""
        here = bearing(object_xy, robot.as_xy())
        # sector_bearing(front, start) == here  <=>  front = here + start * span
        self.front_bearing = wrap_angle(here + self.start_sector * _SPAN)
        self.view_pose = robot

    def target(self, direction: str) -> int:
        """Virtual sector a (validated) direction name leads to from the current one."""
        return (self.current + DIRECTION_OFFSETS[direction]) % SECTOR_COUNT

    def bearing_of(self, sector: int) -> float:
        if self.front_bearing is None:
            raise RuntimeError("the session has no front bearing yet (anchor it first)")
        return sector_bearing(self.front_bearing, sector)

    def arrive(self, sector: int, pose: Pose2D) -> None:
        self.current = sector
        self.visited.add(sector)
        self.views.add((sector, self.level))
        self.view_pose = pose

    def seen(self, sector: int, level: int | None = None) -> bool:
        """Whether the view (sector, level) was seen (level: the current one when None)."""
        return (sector, self.level if level is None else level) in self.views

    def change_level(self, level: int) -> None:
        """The camera now looks from ``level`` at the current sector (the base did not move)."""
        self.level = level
        self.views.add((self.current, level))

    @property
    def steps_remaining(self) -> int:
        return max(0, self.step_budget - self.steps_taken)
