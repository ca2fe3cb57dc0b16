"""Poses the stand-in tests drive to (shared by the ROS-free and the ROS tests)."""

from __future__ import annotations

import math

from aiv_robot_sim.frames import BasePose
from aiv_robot_sim.live_scene import CaptureView, LiveScene


def off_capture_pose(scene: LiveScene) -> tuple[CaptureView, BasePose]:
    """A capture showing the object and a reachable pose 7 deg further round and 0.1 m farther (or nearer).

    A capture showing at least 1000 object pixels is preferred; small objects (eyeglasses, keys) may have none,
    and then any capture that meets the episode's own mask threshold will do."""
    for minimum_px in (1000, scene.threshold):
        for view in scene.captures():
            if view.mask_area_px < minimum_px:
                continue
            azimuth, radius = scene.azimuth_and_radius(view.base_pose)
            for d_azimuth, d_radius in ((7.0, 0.1), (-7.0, 0.1), (7.0, -0.1), (-7.0, -0.1)):
                pose = scene.pose_around(azimuth + math.radians(d_azimuth), radius + d_radius)
                if scene.refusal(pose) is None:
                    return view, pose
    raise AssertionError("no reachable off-capture pose next to a capture showing the object")


def refused_poses(scene: LiveScene) -> dict[str, BasePose]:
    """One pose per refusal reason: outside the room, inside a (partition) wall, inside furniture."""
    from aiv_robot_sim.frames import base_pose_from_scene

    room = scene.room
    furniture = next(fp for fp in room.obstacles if fp not in room.walls)
    poses = {
        "outside the room": base_pose_from_scene(-0.5, room.depth / 2, 1.0, 0.0),
        "inside furniture": base_pose_from_scene(furniture.cx, furniture.cz, 1.0, 0.0),
    }
    if room.walls:
        poses["inside a wall"] = base_pose_from_scene(room.walls[0].cx, room.walls[0].cz, 1.0, 0.0)
    return poses
