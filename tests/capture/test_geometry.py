"""Camera model and capture geometry against the numbers of paper App. A / spec §2.3."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from aiv_dataset.constants import ACTIVE_RAW_SECTORS
from aiv_synth.camera import (
    BENCHMARK_INTRINSICS,
    CameraPose,
    matrix_to_quaternion,
    pitch_action,
    pitch_for_action,
)
from aiv_synth.geometry import (
    in_range,
    in_sector,
    positive_azimuth,
    sector_bounds_deg,
    sector_of,
)
from aiv_synth.sampling import episode_seed

GOAL = (2.0, 0.8, -1.0)


def test_intrinsics_match_the_benchmark() -> None:
    intr = BENCHMARK_INTRINSICS
    assert (intr.width, intr.height) == (360, 640)
    assert intr.fx == pytest.approx(469, abs=1)
    assert intr.fy == pytest.approx(intr.fx, rel=1e-9)  # square pixels
    assert intr.vfov_deg == pytest.approx(68.62, abs=0.01)
    assert (intr.cx, intr.cy) == (179.5, 319.5)
    assert intr.to_meta() == {"width": 360, "height": 640, "hfov_deg": 42.0, "vfov_deg": 68.62}


@pytest.mark.parametrize(
    ("offset", "expected_deg"),
    [((1.0, 0.0), 0.0), ((0.0, 1.0), 90.0), ((-1.0, 0.0), 180.0), ((0.0, -1.0), 270.0), ((1.0, -1e-17), 0.0)],
)
def test_azimuth_is_measured_from_plus_x_toward_plus_z(
    offset: tuple[float, float], expected_deg: float
) -> None:
    camera = (GOAL[0] + offset[0], 1.31, GOAL[2] + offset[1])
    theta = positive_azimuth(camera, GOAL)
    assert 0.0 <= theta < 2 * math.pi
    assert math.degrees(theta) == pytest.approx(expected_deg, abs=1e-6)


def test_sector_membership_is_half_open_thirty_degree_windows() -> None:
    assert ACTIVE_RAW_SECTORS == (0, 2, 4, 6, 8, 10)
    assert sector_of(math.radians(0.0)) == 0
    assert sector_of(math.radians(29.999)) == 0
    assert sector_of(math.radians(30.0) + 1e-9) == 1
    assert sector_of(math.radians(359.999)) == 11
    assert sector_of(-math.radians(1.0)) == 11
    assert sector_bounds_deg(4) == [120, 150]
    camera = (GOAL[0] + math.cos(math.radians(125)), 1.31, GOAL[2] + math.sin(math.radians(125)))
    assert in_sector(camera, GOAL, 4)
    assert not in_sector(camera, GOAL, 2)


def test_distance_ranges_are_horizontal() -> None:
    far = (GOAL[0] + 1.5, 5.0, GOAL[2])  # height does not count
    assert in_range(far, GOAL, "far")
    assert not in_range(far, GOAL, "near")
    assert in_range((GOAL[0], 0.0, GOAL[2] + 1.0), GOAL, "near")
    assert not in_range((GOAL[0] + 1.3, 0.0, GOAL[2]), GOAL, "near")
    assert not in_range((GOAL[0] + 1.3, 0.0, GOAL[2]), GOAL, "far")


@pytest.mark.parametrize(
    ("goal_y", "expected"),
    [
        (1.31, "none"),
        (1.31 + 0.29, "none"),
        (1.31 + 0.31, "look_up"),
        (1.31 - 0.29, "none"),
        (0.5, "look_down"),
    ],
)
def test_pitch_rule_uses_a_thirty_centimetre_threshold(goal_y: float, expected: str) -> None:
    assert pitch_action(goal_y, floor_y=0.0) == expected
    assert pitch_action(goal_y + 2.0, floor_y=2.0) == expected  # relative to the agent's floor
    sign = {"none": 0.0, "look_up": 1.0, "look_down": -1.0}[expected]
    assert pitch_for_action(expected) == pytest.approx(sign * math.radians(30.0))


def test_pose_looks_at_the_goal_in_yaw_and_pitches_by_the_step() -> None:
    position = (GOAL[0] + 1.5, 1.31, GOAL[2])
    pose = CameraPose.looking_at(position, (GOAL[0], 1.31, GOAL[2]), 0.0)
    assert np.allclose(pose.forward, [-1.0, 0.0, 0.0])
    # Habitat frame: camera -z is forward, +x right, +y up; the quaternion rotates camera to world.
    rot = pose.rotation_matrix()
    assert np.allclose(rot @ rot.T, np.eye(3))
    assert np.allclose(rot @ [0.0, 0.0, -1.0], pose.forward)
    w, x, y, z = matrix_to_quaternion(rot)
    assert w >= 0 and math.isclose(w * w + x * x + y * y + z * z, 1.0)
    tilted = CameraPose.looking_at(position, GOAL, pitch_for_action("look_down"))
    assert tilted.forward[1] < 0
    assert math.degrees(math.asin(-tilted.forward[1])) == pytest.approx(30.0)


def test_frustum_test_follows_the_half_angle_tangents() -> None:
    pose = CameraPose.looking_at((0.0, 1.31, 0.0), (1.0, 1.31, 0.0), 0.0)
    d = 2.0
    assert pose.in_frustum((d, 1.31, 0.0))
    assert pose.in_frustum((d, 1.31, d * math.tan(math.radians(21.0)) * 0.99))
    assert not pose.in_frustum((d, 1.31, d * math.tan(math.radians(21.0)) * 1.01))
    assert pose.in_frustum((d, 1.31 + d * 0.683 * 0.99, 0.0))
    assert not pose.in_frustum((d, 1.31 + d * 0.683 * 1.02, 0.0))
    assert not pose.in_frustum((-d, 1.31, 0.0))  # behind
    assert not pose.in_frustum((0.04, 1.31, 0.0))  # inside the near clip
    col, row = pose.project((d, 1.31, 0.0))
    assert (col, row) == pytest.approx((179.5, 319.5))


def test_episode_seed_is_md5_of_scene_episode_and_base_seed() -> None:
    expected = int(hashlib.md5(b"scene/a.glb_17_42").hexdigest(), 16) % 2**31
    assert episode_seed("scene/a.glb", "17", 42) == expected
    assert episode_seed("scene/a.glb", "17", 43) != expected
    assert 0 <= episode_seed("x", "0") < 2**31
