"""The robot adapter's geometry and session bookkeeping (aiv_robot.geometry / .session), without ROS."""

from __future__ import annotations

import math

import pytest
from aiv_dataset.vocabulary import DIRECTIONS
from aiv_robot.geometry import (
    Pose2D,
    bearing,
    camera_faces,
    quaternion_from_yaw,
    sector_bearing,
    viewing_pose,
    wrap_angle,
    yaw_from_quaternion,
)
from aiv_robot.sector_session import SectorSession

OBJECT = (2.0, -1.0)


def test_sector_bearings_turn_to_the_agents_own_left_for_front_left() -> None:
    # The robot stands on +x of the object, looking back at it along -x: its left is -y on the map.
    front = 0.0
    expected_deg = {
        "front": 0,
        "front-left": -60,
        "back-left": -120,
        "back": 180,
        "back-right": 120,
        "front-right": 60,
    }
    for sector, name in enumerate(DIRECTIONS):
        assert math.degrees(sector_bearing(front, sector)) == pytest.approx(expected_deg[name]), name
    left = viewing_pose((0.0, 0.0), sector_bearing(front, 1), 1.0)
    assert left.y < 0.0  # the robot's left while it faced the object along -x


@pytest.mark.parametrize("sector", range(6))
@pytest.mark.parametrize("distance", [1.5, 0.9])
def test_viewing_pose_stands_at_the_stand_off_and_faces_the_object(sector: int, distance: float) -> None:
    front = math.radians(37.0)
    pose = viewing_pose(OBJECT, sector_bearing(front, sector), distance)
    assert math.hypot(pose.x - OBJECT[0], pose.y - OBJECT[1]) == pytest.approx(distance)
    assert camera_faces(pose, OBJECT) == pytest.approx(0.0, abs=1e-9)
    assert bearing(OBJECT, pose.as_xy()) == pytest.approx(wrap_angle(front - sector * math.pi / 3))


def test_a_sideways_camera_turns_the_base_so_the_camera_faces_the_object() -> None:
    offset = math.radians(90.0)  # camera looks to the base's left
    pose = viewing_pose(OBJECT, 0.3, 1.2, camera_yaw_offset=offset)
    assert camera_faces(pose, OBJECT, offset) == pytest.approx(0.0, abs=1e-9)
    assert camera_faces(pose, OBJECT) == pytest.approx(math.pi / 2)
    with pytest.raises(ValueError, match="stand-off"):
        viewing_pose(OBJECT, 0.0, 0.0)


def test_pose_tolerances_and_quaternions() -> None:
    a = Pose2D(1.0, 1.0, math.radians(179.0))
    b = Pose2D(1.1, 1.0, math.radians(-179.0))
    assert a.heading_error(b) == pytest.approx(math.radians(2.0))
    assert a.within(b, 0.15, math.radians(3.0)) and not a.within(b, 0.05, math.radians(3.0))
    for yaw in (-3.0, -1.0, 0.0, 0.5, 3.1):
        qx, qy, qz, qw = quaternion_from_yaw(yaw)
        assert yaw_from_quaternion(qz, qw, qx, qy) == pytest.approx(yaw)
    assert wrap_angle(-math.pi) == pytest.approx(math.pi)


def test_a_session_anchors_front_at_the_current_bearing_and_tracks_visits() -> None:
    session = SectorSession(request_id="r1")
    assert session.visited == {0} and session.current == 0 and not session.anchored
    robot = Pose2D(OBJECT[0], OBJECT[1] + 1.5, -math.pi / 2)  # north of the object, facing it
    session.anchor(OBJECT, robot)
    assert session.anchored and session.view_pose == robot
    assert session.bearing_of(0) == pytest.approx(math.pi / 2)
    assert session.target("back") == 3 and session.target("front-right") == 5
    session.arrive(3, Pose2D(0.0, 0.0, 0.0))
    assert session.current == 3 and session.visited == {0, 3}
    assert session.target("back") == 0  # relative to the current view


def test_a_session_may_start_in_a_named_sector() -> None:
    session = SectorSession(request_id="r2", start_sector=2)
    session.anchor(OBJECT, Pose2D(OBJECT[0] + 1.0, OBJECT[1], math.pi))
    assert session.visited == {2}
    assert session.bearing_of(2) == pytest.approx(0.0, abs=1e-12)  # here
    assert session.bearing_of(0) == pytest.approx(math.radians(120.0))
    with pytest.raises(ValueError):
        SectorSession(start_sector=6)
