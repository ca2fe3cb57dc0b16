"""Driving the base: straight-line motion toward a goal at a set speed, in scaled time (no rclpy).

The stand-in is not a navigation stack: it turns and translates at the same time along the straight line to
the goal (linear speed and angular speed limits, whichever takes longer sets the duration), without planning
around obstacles. What it shares with a real base is what the robot adapter can observe: goals it refuses, a
continuously changing pose while it moves, and an arrival. ``time_scale`` multiplies elapsed time, so a
test drives a 2 m move at 0.5 m/s in 40 ms of wall time with ``time_scale`` 100.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .frames import BasePose, wrap_angle


def _progress(started: float, duration: float, now: float, time_scale: float) -> float:
    """Fraction of a move of ``duration`` simulated seconds, begun at wall time ``started``, done at wall time
    ``now`` (0 to 1; a move of no duration is done at once)."""
    if duration <= 0.0:
        return 1.0
    return min(1.0, max(0.0, (now - started) * time_scale / duration))


@dataclass(frozen=True)
class Move:
    """One move from ``start`` to ``goal`` that began at ``started`` (seconds, wall clock)."""

    start: BasePose
    goal: BasePose
    started: float
    duration: float  # seconds of simulated time

    def progress(self, now: float, time_scale: float) -> float:
        """Fraction done at wall time ``now`` (0 to 1)."""
        return _progress(self.started, self.duration, now, time_scale)

    def pose_at(self, now: float, time_scale: float) -> BasePose:
        t = self.progress(now, time_scale)
        if t >= 1.0:
            return self.goal
        dyaw = wrap_angle(self.goal.yaw - self.start.yaw)
        return BasePose(
            self.start.x + t * (self.goal.x - self.start.x),
            self.start.y + t * (self.goal.y - self.start.y),
            wrap_angle(self.start.yaw + t * dyaw),
        )

    def velocity(self, time_scale: float) -> tuple[float, float, float]:
        """(vx, vy, wz) in the world frame while moving, in simulated time (m/s, rad/s)."""
        if self.duration <= 0.0:
            return (0.0, 0.0, 0.0)
        dyaw = wrap_angle(self.goal.yaw - self.start.yaw)
        return (
            (self.goal.x - self.start.x) / self.duration,
            (self.goal.y - self.start.y) / self.duration,
            dyaw / self.duration,
        )


def move_duration(start: BasePose, goal: BasePose, linear_speed: float, angular_speed: float) -> float:
    """Simulated seconds for a move: the longer of translating and turning at the given speeds."""
    distance = math.hypot(goal.x - start.x, goal.y - start.y)
    turn = abs(wrap_angle(goal.yaw - start.yaw))
    return max(distance / linear_speed, turn / angular_speed)


class Base:
    """The base's state: a pose, at most one move in progress, and what changed at the last update."""

    def __init__(self, pose: BasePose, linear_speed: float, angular_speed: float, time_scale: float) -> None:
        self._pose = pose
        self.linear_speed = linear_speed
        self.angular_speed = angular_speed
        self.time_scale = time_scale
        self.move: Move | None = None

    @property
    def moving(self) -> bool:
        return self.move is not None

    def pose(self, now: float) -> BasePose:
        """The pose at wall time ``now`` (does not finish the move; :meth:`update` does)."""
        return self.move.pose_at(now, self.time_scale) if self.move is not None else self._pose

    def start(self, goal: BasePose, now: float) -> Move:
        """Start driving from wherever the base is now (a move in progress is replaced)."""
        here = self.pose(now)
        self._pose = here
        self.move = Move(here, goal, now, move_duration(here, goal, self.linear_speed, self.angular_speed))
        return self.move

    def stop(self, now: float) -> BasePose:
        """Stop where the base is now."""
        self._pose = self.pose(now)
        self.move = None
        return self._pose

    def teleport(self, pose: BasePose) -> None:
        """Put the base somewhere else at once (a push or a kidnap); any move is dropped."""
        self._pose = pose
        self.move = None

    def update(self, now: float) -> bool:
        """Advance to ``now``; True exactly once, when a move has just arrived."""
        if self.move is None:
            return False
        if self.move.progress(now, self.time_scale) >= 1.0:
            self._pose = self.move.goal
            self.move = None
            return True
        return False


@dataclass(frozen=True)
class JointMove:
    """One joint's move from ``start`` to ``goal`` that began at ``started`` (wall seconds)."""

    start: float
    goal: float
    started: float
    duration: float  # seconds of simulated time

    def progress(self, now: float, time_scale: float) -> float:
        return _progress(self.started, self.duration, now, time_scale)

    def position(self, now: float, time_scale: float) -> float:
        return self.start + self.progress(now, time_scale) * (self.goal - self.start)


class Joints:
    """Positions of the stand-in's joints (a lifting torso, a tilting head), each moved linearly toward a goal.

    Like :class:`Base`, it is only what a client can observe: joint states that change while a move runs and
    end exactly at the goal. Each joint moves on its own (a torso goal does not stop the head); a move of
    several joints takes the longer of the requested duration and what each joint's speed limit allows, in
    simulated time (``time_scale``)."""

    def __init__(self, positions: dict[str, float], speeds: dict[str, float], time_scale: float) -> None:
        self._positions = dict(positions)
        self.speeds = dict(speeds)
        self.time_scale = time_scale
        self.moves: dict[str, JointMove] = {}

    def moving(self, names: Iterable[str]) -> bool:
        """Whether any of ``names`` is still moving."""
        return any(name in self.moves for name in names)

    def positions(self, now: float) -> dict[str, float]:
        """Every joint's position at wall time ``now``."""
        out = dict(self._positions)
        for name, move in self.moves.items():
            out[name] = move.position(now, self.time_scale)
        return out

    def velocities(self) -> dict[str, float]:
        """Each joint's velocity in simulated time (0 when still)."""
        out = dict.fromkeys(self._positions, 0.0)
        for name, move in self.moves.items():
            if move.duration > 0.0:
                out[name] = (move.goal - move.start) / move.duration
        return out

    def start(self, goal: dict[str, float], duration: float, now: float) -> None:
        """Move the named joints to ``goal``, together (a move of one of them in progress is replaced)."""
        here = self.positions(now)
        needed = max((abs(goal[n] - here[n]) / self.speeds[n] for n in goal), default=0.0)
        for name, target in goal.items():
            self._positions[name] = here[name]
            self.moves[name] = JointMove(here[name], target, now, max(duration, needed))

    def stop(self, names: Iterable[str], now: float) -> None:
        """Stop the named joints where they are."""
        here = self.positions(now)
        for name in names:
            self._positions[name] = here[name]
            self.moves.pop(name, None)

    def update(self, now: float) -> None:
        """Advance to ``now``: a joint whose move has ended stands exactly at its goal."""
        for name, move in list(self.moves.items()):
            if move.progress(now, self.time_scale) >= 1.0:
                self._positions[name] = move.goal
                del self.moves[name]
