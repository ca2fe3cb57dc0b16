"""Where the camera must stand to see the object from a virtual sector, in a ROS map frame (no ROS here).

Frame: REP 103 (x forward, y left, z up), poses on the floor plane as (x, y, yaw). The *bearing* of the robot
is the angle of the vector object -> robot, counter-clockwise from +x. The session's start view defines
"front" (virtual sector 0); the benchmark's front-left is the agent's own left while it faces the object,
which on this map is clockwise around the object, so virtual sector ``v`` lies at bearing
``front - v * 60°``. (The benchmark's captures use Habitat's y-up XZ plane, where that same turn is +θ;
:data:`aiv_dataset.vocabulary.DIRECTIONS` lists the names in virtual-index order.)

A viewing pose stands ``distance`` metres from the object on the sector's bearing, turned so that the camera
(mounted ``camera_yaw_offset`` radians from the base's +x axis, counter-clockwise) faces the object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiv_dataset.vocabulary import SECTOR_COUNT

#: Angular width of one virtual sector.
SECTOR_SPAN_RAD = 2.0 * math.pi / SECTOR_COUNT


def wrap_angle(angle: float) -> float:
    """``angle`` wrapped into (-π, π]."""
    wrapped = math.remainder(angle, 2.0 * math.pi)
    return math.pi if wrapped == -math.pi else wrapped


@dataclass(frozen=True)
class Pose2D:
    """A pose on the floor: position (metres) and heading (radians, counter-clockwise from +x)."""

    x: float
    y: float
    yaw: float

    def as_xy(self) -> tuple[float, float]:
        return (self.x, self.y)

    def distance_to(self, other: Pose2D) -> float:
        return math.hypot(self.x - other.x, self.y - other.y)

    def heading_error(self, other: Pose2D) -> float:
        """Smallest absolute difference of the two headings, in [0, π]."""
        return abs(wrap_angle(self.yaw - other.yaw))

    def within(self, other: Pose2D, position_tolerance: float, yaw_tolerance: float) -> bool:
        """Whether the two poses agree within the tolerances (metres, radians)."""
        return self.distance_to(other) <= position_tolerance and self.heading_error(other) <= yaw_tolerance


def bearing(object_xy: tuple[float, float], robot_xy: tuple[float, float]) -> float:
    """Angle of object -> robot, counter-clockwise from +x, in (-π, π]."""
    return math.atan2(robot_xy[1] - object_xy[1], robot_xy[0] - object_xy[0])


def sector_bearing(front_bearing: float, sector: int) -> float:
    """Bearing of virtual sector ``sector`` when sector 0 ("front") lies at ``front_bearing``."""
    return wrap_angle(front_bearing - (sector % SECTOR_COUNT) * SECTOR_SPAN_RAD)


def viewing_pose(
    object_xy: tuple[float, float], bearing_rad: float, distance: float, camera_yaw_offset: float = 0.0
) -> Pose2D:
    """The base pose ``distance`` metres from the object on ``bearing_rad`` whose camera faces the object."""
    if not distance > 0.0:
        raise ValueError(f"a stand-off distance must be > 0 m, got {distance!r}")
    x = object_xy[0] + distance * math.cos(bearing_rad)
    y = object_xy[1] + distance * math.sin(bearing_rad)
    facing = bearing_rad + math.pi  # from the robot towards the object
    return Pose2D(x, y, wrap_angle(facing - camera_yaw_offset))


def camera_faces(pose: Pose2D, object_xy: tuple[float, float], camera_yaw_offset: float = 0.0) -> float:
    """Angle between the camera's axis at ``pose`` and the direction to the object, in [0, π]."""
    towards = math.atan2(object_xy[1] - pose.y, object_xy[0] - pose.x)
    return abs(wrap_angle(pose.yaw + camera_yaw_offset - towards))


def yaw_from_quaternion(z: float, w: float, x: float = 0.0, y: float = 0.0) -> float:
    """Heading (rotation about +z) of a quaternion."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def quaternion_from_yaw(yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation by ``yaw`` about +z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))
