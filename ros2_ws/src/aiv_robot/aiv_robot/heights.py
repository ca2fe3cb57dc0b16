"""Camera height levels on a robot, without ROS: which joint positions make each level, and what drives them.

A robot changes its camera height with a joint (a torso or mast lift, an arm joint under a wrist camera) and
re-aims the camera with its head. The adapter moves the joints through ``control_msgs/FollowJointTrajectory``
and aims through ``control_msgs/PointHead`` (:mod:`aiv_robot.height_actions`); this module holds the rules:

* the levels are a table of joint positions, ``level: position [position ...]`` per level, one position per
  joint of ``height_joint_names``. Level 0 is the eye-level position (the height the verifier's first view is
  taken at); levels lie in :data:`aiv_dataset.levels.MIN_LEVEL` .. ``MAX_LEVEL``;
* every position lies inside that joint's limits (``height_joint_min`` / ``height_joint_max``), checked at
  start-up, so a wrong table stops the node with one line instead of failing on the robot;
* no joint names: the robot has no height levels, and ``up`` / ``down`` are unreachable (today's behaviour
  for everything else).

ROS parameters cannot nest, so the table and the per-joint lists are strings; each parse error is one line
that names the parameter.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiv_common.parameter_spec import ParameterError
from aiv_dataset.levels import EYE_LEVEL, MAX_LEVEL, MIN_LEVEL

from .mover import NavStatus

_SEPARATORS = re.compile(r"[,\s]+")


@dataclass(frozen=True)
class HeightSettings:
    """The robot's height levels: joints, their limits, the positions of each level, the aiming set-up."""

    joint_names: tuple[str, ...] = ()
    positions: Mapping[int, tuple[float, ...]] = field(default_factory=dict)
    limits: tuple[tuple[float, float], ...] = ()
    move_time_s: float = 4.0
    aim: bool = True

    @property
    def levels(self) -> tuple[int, ...]:
        """The configured levels, sorted; empty when the robot has none."""
        return tuple(sorted(self.positions)) if self.joint_names else ()


def _names(text: str) -> tuple[str, ...]:
    return tuple(part for part in _SEPARATORS.split(text.strip()) if part)


def _numbers(where: str, text: str, count: int) -> tuple[float, ...]:
    """``count`` finite numbers separated by commas or spaces; ``where`` starts the one-line error."""
    try:
        values = tuple(float(part) for part in _names(text))
    except ValueError:
        values = ()
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise ParameterError(f"{where} {text.strip()!r}; expected {count} finite number(s), one per joint")
    return values


def parse_level_positions(text: str, joints: int) -> dict[int, tuple[float, ...]]:
    """``"-1: -0.4; 0: 0; 1: 0.45"`` -> {-1: (-0.4,), 0: (0.0,), 1: (0.45,)} (``joints`` positions per level)."""
    name = "height_level_positions"
    table: dict[int, tuple[float, ...]] = {}
    for entry in (part.strip() for part in text.split(";")):
        if not entry:
            continue
        level_text, colon, values = entry.partition(":")
        try:
            level = int(level_text.strip())
        except ValueError:
            level = None
        if not colon or level is None:
            raise ParameterError(
                f"parameter {name!r}: entry {entry!r} is not 'LEVEL: POSITION ...' (e.g. '-1: -0.4; 0: 0; 1: 0.45')"
            )
        if not MIN_LEVEL <= level <= MAX_LEVEL:
            raise ParameterError(f"parameter {name!r}: level {level} lies outside {MIN_LEVEL}..{MAX_LEVEL}")
        if level in table:
            raise ParameterError(f"parameter {name!r}: level {level} is given twice")
        table[level] = _numbers(f"parameter {name!r}: level {level} gives", values, joints)
    if EYE_LEVEL not in table:
        raise ParameterError(f"parameter {name!r} = {text!r}; it must give level 0, the eye-level position")
    return table


def height_settings(values: Mapping[str, Any]) -> HeightSettings:
    """The height levels from the adapter's parameter values; ParameterError (one line) for a bad table."""
    joints = _names(str(values["height_joint_names"]))
    if not joints:
        return HeightSettings(move_time_s=float(values["height_move_time_s"]))
    if len(set(joints)) != len(joints):
        raise ParameterError(
            f"parameter 'height_joint_names' = {values['height_joint_names']!r} names a joint twice"
        )
    positions = parse_level_positions(str(values["height_level_positions"]), len(joints))
    low = _numbers("parameter 'height_joint_min' =", str(values["height_joint_min"]), len(joints))
    high = _numbers("parameter 'height_joint_max' =", str(values["height_joint_max"]), len(joints))
    for joint, lo, hi in zip(joints, low, high, strict=True):
        if lo > hi:
            raise ParameterError(
                f"parameters 'height_joint_min' / 'height_joint_max': {joint} has {lo:g} > {hi:g}"
            )
    for level, row in sorted(positions.items()):
        for joint, position, lo, hi in zip(joints, row, low, high, strict=True):
            if not lo <= position <= hi:
                raise ParameterError(
                    f"parameter 'height_level_positions': level {level} puts {joint} at {position:g}, outside its "
                    f"limits [{lo:g}, {hi:g}] (height_joint_min / height_joint_max)"
                )
    return HeightSettings(
        joint_names=joints,
        positions=positions,
        limits=tuple(zip(low, high, strict=True)),
        move_time_s=float(values["height_move_time_s"]),
        aim=bool(str(values["point_head_action"]).strip()),
    )


class HeightDriver(Protocol):
    """The robot's torso / mast and head: go to a level, aim the camera at the object, report, stop.

    One goal at a time: ``status`` is about the goal sent last."""

    settings: HeightSettings

    def send_level(self, level: int) -> str | None:
        """Send the joint goal of ``level``; a text saying why it could not be sent at all (a fault), else None."""
        ...

    def send_aim(self) -> str | None:
        """Aim the camera at the object (PointHead); the same contract as :meth:`send_level`."""
        ...

    def status(self) -> tuple[NavStatus, str]:
        """Status of the goal sent last, with the server's own words."""
        ...

    def stop(self) -> None:
        """Cancel the goal in progress (nothing when none is)."""
        ...
