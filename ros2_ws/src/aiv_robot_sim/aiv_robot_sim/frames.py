"""The stand-in's world frame and how it maps onto the generator's scene frame.

The generator (:mod:`aiv_synth`) builds its rooms in Habitat's convention: **y up**, the floor at y = 0, the
room spanning x in [0, width] and z in [0, depth]; a camera looks along its local -z. ROS frames are **z up**
(REP-103). The stand-in's world frame (``map`` by default) is the scene frame turned by the one mapping the
project already uses for bags (:data:`aiv_bags.geometry.ROS_FROM_HABITAT`):

    ROS (x, y, z) = (-z_scene, -x_scene, y_scene)

a proper rotation, so the room occupies x in [-depth, 0], y in [-width, 0] of ``map`` with the floor at z = 0.
A base heading ``yaw`` (radians about +z, 0 = +x of ``map``) is the scene heading (hx, hz) = (-sin yaw, -cos yaw);
the camera's optical frame (REP-103 ``_optical``: z along the view, x right, y down) sits
:data:`aiv_synth.camera.SENSOR_HEIGHT` above the base, pitched by the pitch rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from aiv_bags.geometry import Transform, dataset_point, world_point, world_pose

#: Up axis of the stand-in's world frame, in :mod:`aiv_bags.geometry`'s terms.
UP_AXIS = "z"


@dataclass(frozen=True)
class BasePose:
    """A planar base pose in the world frame: position (x, y) on the floor and heading ``yaw`` (radians)."""

    x: float
    y: float
    yaw: float

    def is_finite(self) -> bool:
        return all(math.isfinite(v) for v in (self.x, self.y, self.yaw))


def scene_xz(pose: BasePose) -> tuple[float, float]:
    """Floor position of the base in the scene frame (x_scene, z_scene)."""
    p = dataset_point((pose.x, pose.y, 0.0), UP_AXIS)
    return p[0], p[2]


def scene_heading(yaw: float) -> tuple[float, float]:
    """Unit heading (hx, hz) in the scene's XZ plane of a world-frame yaw."""
    return -math.sin(yaw), -math.cos(yaw)


def yaw_of_heading(hx: float, hz: float) -> float:
    """World-frame yaw of a scene heading (inverse of :func:`scene_heading`)."""
    return math.atan2(-hx, -hz)


def base_pose_from_scene(x_scene: float, z_scene: float, hx: float, hz: float) -> BasePose:
    """The base pose standing at scene (x, z) and facing the scene heading (hx, hz)."""
    p = world_point((x_scene, 0.0, z_scene), UP_AXIS)
    return BasePose(p[0], p[1], yaw_of_heading(hx, hz))


def world_from_scene_point(point: Sequence[float]) -> tuple[float, float, float]:
    """A scene point (y up) in the world frame (z up)."""
    return world_point(point, UP_AXIS)


def optical_pose_in_world(
    position: Sequence[float] | np.ndarray, rotation_wxyz: Sequence[float]
) -> Transform:
    """The optical frame's pose in the world frame from a scene camera position and camera-to-scene rotation."""
    return world_pose([float(c) for c in position], rotation_wxyz, UP_AXIS)


def yaw_to_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation by ``yaw`` about +z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def quaternion_to_yaw(x: float, y: float, z: float, w: float) -> float:
    """Heading about +z of a quaternion (its roll and pitch are ignored: the base is planar)."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def wrap_angle(angle: float) -> float:
    """``angle`` wrapped into [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi
