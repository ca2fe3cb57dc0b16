"""Camera height levels in the robot adapter without ROS: the level table and its limits (one-line refusals),
and the move rules for ``up`` / ``down`` against a fake torso and head in simulated time (tests/ros/
test_robot_heights.py runs the same over DDS with ros2_control's action types)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from aiv_common.parameter_spec import ParameterError, parameter_defaults
from aiv_dataset.vocabulary import MoveOutcome
from aiv_robot.heights import HeightSettings, height_settings, parse_level_positions
from aiv_robot.mover import NavStatus, SectorMover
from aiv_robot.robot_adapter_parameters import ADAPTER_PARAMETERS

from .test_sector_mover import SETTINGS, FakeWorld, Nav, View

DEFAULTS = parameter_defaults(ADAPTER_PARAMETERS)
TORSO = {
    "height_joint_names": "torso_lift_joint",
    "height_level_positions": "-1: -0.4; 0: 0.0; 1: 0.45",
    "height_joint_min": "-0.5",
    "height_joint_max": "0.5",
}


def _settings(**values: object) -> HeightSettings:
    return height_settings({**DEFAULTS, **TORSO, **values})


def test_the_defaults_give_a_robot_without_levels() -> None:
    assert height_settings(DEFAULTS).levels == ()


def test_a_level_table_reads_one_position_per_joint_per_level() -> None:
    settings = _settings()
    assert settings.levels == (-1, 0, 1) and settings.positions[1] == (0.45,) and settings.aim
    two = parse_level_positions("0: 0 0.1; 1: 0.3, -0.2", joints=2)
    assert two == {0: (0.0, 0.1), 1: (0.3, -0.2)}
    assert not _settings(point_head_action="").aim


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"height_joint_max": "0.4"},
            "parameter 'height_level_positions': level 1 puts torso_lift_joint at 0.45, outside its limits "
            "[-0.5, 0.4] (height_joint_min / height_joint_max)",
        ),
        (
            {"height_level_positions": "1: 0.3"},
            "parameter 'height_level_positions' = '1: 0.3'; it must give level 0, the eye-level position",
        ),
        (
            {"height_level_positions": "0: 0; 3: 0.2"},
            "parameter 'height_level_positions': level 3 lies outside -2..2",
        ),
        (
            {"height_level_positions": "0: 0; 0: 0.1"},
            "parameter 'height_level_positions': level 0 is given twice",
        ),
        (
            {"height_level_positions": "up: 0.2"},
            "parameter 'height_level_positions': entry 'up: 0.2' is not 'LEVEL: POSITION ...' (e.g. '-1: -0.4; "
            "0: 0; 1: 0.45')",
        ),
        (
            {"height_level_positions": "0: 0 0.1"},
            "parameter 'height_level_positions': level 0 gives '0 0.1'; expected 1 finite number(s), one per joint",
        ),
        (
            {"height_joint_min": ""},
            "parameter 'height_joint_min' = ''; expected 1 finite number(s), one per joint",
        ),
        (
            {"height_joint_min": "0.6"},
            "parameters 'height_joint_min' / 'height_joint_max': torso_lift_joint has 0.6 > 0.5",
        ),
    ],
)
def test_a_bad_level_table_is_refused_with_one_line(values: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError) as error:
        _settings(**values)
    assert str(error.value) == message


@dataclass
class FakeJoints:
    """A torso and head that answer in simulated time: succeed, reject, abort, or never finish."""

    world: FakeWorld
    settings: HeightSettings
    behaviour: dict[str, str] = field(default_factory=dict)  # kind -> succeed | abort | hang | absent
    sent: list[tuple[str, object]] = field(default_factory=list)
    stops: int = 0
    _status: tuple[NavStatus, str] = (NavStatus.PENDING, "")

    def _send(self, kind: str, what: object) -> str | None:
        behaviour = self.behaviour.get(kind, "succeed")
        if behaviour == "absent":
            return f"no {kind} server within 0.5 s (answer_timeout_s)"
        self.sent.append((kind, what))
        self._status = {
            "succeed": (NavStatus.SUCCEEDED, f"{kind} succeeded"),
            "abort": (NavStatus.FAILED, f"{kind} aborted the goal"),
            "hang": (NavStatus.ACTIVE, f"accepted by {kind}"),
        }[behaviour]
        return None

    def send_level(self, level: int) -> str | None:
        return self._send("FollowJointTrajectory", level)

    def send_aim(self) -> str | None:
        return self._send("PointHead", "object")

    def status(self) -> tuple[NavStatus, str]:
        return self._status

    def stop(self) -> None:
        self.stops += 1


def _mover(world: FakeWorld, joints: FakeJoints | None) -> SectorMover:
    mover = SectorMover(SETTINGS, View(world), Nav(world), monotonic=lambda: world.now, heights=joints)
    mover.reset("request-1")
    return mover


def test_up_moves_the_torso_then_aims_the_head_and_returns_a_later_frame_at_the_new_level() -> None:
    world = FakeWorld()
    joints = FakeJoints(world, _settings())
    mover = _mover(world, joints)
    up = mover.move("up")
    assert up.outcome is MoveOutcome.MOVED and up.level == 1 and up.sector == 0, up
    assert joints.sent == [("FollowJointTrajectory", 1), ("PointHead", "object")]
    assert up.frame_stamp_ns is not None and world.goals == []  # the base did not drive
    assert mover.move("up").outcome is MoveOutcome.UNREACHABLE  # no level 2
    down = mover.move("down")  # eye level at sector 0 was the start view
    assert down.outcome is MoveOutcome.ALREADY_VISITED and down.level == 1
    # A planar move keeps the level; the view (sector 1, level 1) is new, (sector 1, level 0) still unseen.
    side = mover.move("front-left")
    assert side.outcome is MoveOutcome.MOVED and (side.sector, side.level) == (1, 1)
    assert joints.sent[-1] == ("PointHead", "object") and len(joints.sent) == 3  # re-aimed after the drive
    lower = mover.move("down")
    assert lower.outcome is MoveOutcome.MOVED and (lower.sector, lower.level) == (1, 0)
    assert [s.steps_taken for s in (up, down, side, lower)] == [1, 3, 4, 5]


def test_a_robot_whose_head_was_never_aimed_drives_exactly_as_before() -> None:
    world = FakeWorld()
    joints = FakeJoints(world, _settings())
    mover = _mover(world, joints)
    assert mover.move("front-left").outcome is MoveOutcome.MOVED
    assert mover.move("up").outcome is MoveOutcome.MOVED
    assert joints.sent == [
        ("FollowJointTrajectory", 1),
        ("PointHead", "object"),
    ]  # nothing before the height move


def test_a_robot_without_levels_answers_up_and_down_unreachable_with_one_line() -> None:
    world = FakeWorld()
    mover = _mover(world, None)
    for direction in ("up", "down", "Up (MLLM-Reasoning)"):
        result = mover.move(direction)
        assert result.outcome is MoveOutcome.UNREACHABLE and result.level == 0
        assert "no camera height levels" in result.warning and "\n" not in result.warning
    assert world.goals == [] and world.stops == 0


def test_a_joint_server_that_aborts_makes_the_level_unreachable_and_the_torso_goes_back() -> None:
    world = FakeWorld()
    joints = FakeJoints(world, _settings(), behaviour={"PointHead": "abort"})
    mover = _mover(world, joints)
    result = mover.move("up")
    assert result.outcome is MoveOutcome.UNREACHABLE and result.level == 0
    assert (
        result.warning
        == "level 1 (up) is unreachable; the camera stayed at level 0: PointHead aborted the goal"
    )
    assert joints.sent == [
        ("FollowJointTrajectory", 1),
        ("PointHead", "object"),
        ("FollowJointTrajectory", 0),
    ]
    joints.behaviour.clear()  # the next request is served
    assert mover.move("up").outcome is MoveOutcome.MOVED


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (
            {"FollowJointTrajectory": "absent"},
            "FollowJointTrajectory did not take the goal: no FollowJointTrajectory server within 0.5 s "
            "(answer_timeout_s)",
        ),
        (
            {"PointHead": "hang"},
            f"PointHead did not finish within {SETTINGS.joint_timeout_s:g} s (joint_timeout_s); its goal was cancelled",
        ),
    ],
)
def test_a_missing_or_silent_joint_server_is_a_fault_and_nothing_hangs(
    behaviour: dict[str, str], message: str
) -> None:
    world = FakeWorld()
    joints = FakeJoints(world, _settings(), behaviour=behaviour)
    mover = _mover(world, joints)
    result = mover.move("up")
    assert result.outcome is MoveOutcome.REJECTED and result.message == message and result.level == 0
    assert joints.stops >= 1 and world.stops >= 1
    joints.behaviour.clear()
    assert mover.move("up").outcome is MoveOutcome.MOVED


def test_cancelling_a_height_move_cancels_the_joint_goal() -> None:
    world = FakeWorld(cancel_at=100.5)
    joints = FakeJoints(world, _settings(), behaviour={"FollowJointTrajectory": "hang"})
    mover = _mover(world, joints)
    result = mover.move("up")
    assert result.cancelled and result.outcome is MoveOutcome.REJECTED and joints.stops >= 1
