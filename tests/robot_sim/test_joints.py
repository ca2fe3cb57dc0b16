"""The stand-in's torso and head without ROS: joint motion in scaled time, and the camera they make.

An unmoved torso and head (lift 0, the pitch rule's tilt) give exactly today's camera, so every eye-level
render is unchanged; a raised torso lifts the camera by that much, and aiming down from there shows the inside
of micro seed 42's mug in scene 00801 (episode 0), which its eye-level views never show.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from aiv_robot_sim.frames import scene_xz
from aiv_robot_sim.live_scene import LiveScene
from aiv_robot_sim.motion import Joints
from aiv_synth.camera import SENSOR_HEIGHT


def test_joints_move_together_at_the_slower_speed_and_end_exactly_at_the_goal() -> None:
    joints = Joints({"torso": 0.0, "tilt": 0.5}, {"torso": 0.25, "tilt": 1.0}, time_scale=10.0)
    joints.start({"torso": 1.0}, 1.0, now=0.0)  # 1 m at 0.25 m/s: 4 s simulated, 0.4 s wall
    assert joints.positions(0.2) == pytest.approx({"torso": 0.5, "tilt": 0.5})
    joints.start({"tilt": -0.5}, 0.0, now=0.2)  # the head moves on its own; the torso keeps going
    joints.update(0.35)
    assert joints.moving(["torso"]) and not joints.moving(["tilt"])
    assert joints.positions(0.35)["tilt"] == -0.5
    joints.update(0.45)
    assert not joints.moving(["torso", "tilt"]) and joints.positions(9.0) == {"torso": 1.0, "tilt": -0.5}
    joints.start({"torso": 0.0}, 0.0, now=1.0)
    joints.stop(["torso"], now=1.2)
    assert joints.positions(5.0)["torso"] == pytest.approx(0.5) and not joints.moving(["torso"])


def test_an_unmoved_torso_and_head_give_todays_camera_and_a_raised_torso_shows_the_mugs_inside() -> None:
    scene = LiveScene("micro", 42, "val", "00801-ewdjD8FaWq4", "0")
    start = next(view for view in scene.captures() if view.tag == "s0_near").base_pose
    today = scene.camera_pose(start)
    initial_tilt = -scene.pitch  # what the stand-in's head starts at (+ = down); the camera pitch is -tilt
    unmoved = scene.camera_pose(start, 0.0, -initial_tilt)
    assert np.array_equal(today.position, unmoved.position) and np.array_equal(today.forward, unmoved.forward)
    eye = scene.render(start)
    assert eye.mask_meets_threshold and "inside_color" not in eye.visible_attributes

    x, z = scene_xz(start)
    gx, gy, gz = scene.goal
    pitch = math.atan2(gy - (SENSOR_HEIGHT + 1.0), math.hypot(gx - x, gz - z))  # aimed at the mug's centre
    above = scene.render(start, 1.0, pitch)
    assert above.pose.position[1] == pytest.approx(SENSOR_HEIGHT + 1.0)
    assert "inside_color" in above.visible_attributes, above.attribute_pixels
