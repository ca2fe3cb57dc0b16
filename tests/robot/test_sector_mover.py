"""The robot adapter's move procedure (aiv_robot.mover) against a fake robot and navigation, in simulated time:
the benchmark outcomes, far/near fallback, return to the last view, session resets, and every fault ending the
move as ``rejected`` with its cause and a stop."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest
from aiv_dataset.vocabulary import MoveOutcome
from aiv_robot.geometry import Pose2D, bearing, camera_faces
from aiv_robot.mover import (
    MoveSettings,
    NavStatus,
    PoseSample,
    SectorMover,
    UnknownStatus,
    status_from_text,
)

OBJECT = (0.0, 0.0)
START = Pose2D(1.5, 0.0, math.pi)  # east of the object, facing it


@dataclass
class FakeWorld:
    """Robot + navigation + camera in simulated time; ``wait`` advances the clock and lets the robot act."""

    pose: Pose2D = START
    object_xy: tuple[float, float] | None = OBJECT
    now: float = 100.0
    pose_at: float = 100.0  # when the newest pose was published
    frames: list[float] = field(default_factory=list)
    # behaviour
    behaviour: str = "follow"  # follow | refuse | stuck | silent
    refuse_if: object = None  # callable(goal) -> bool
    odometry_stops: bool = False
    camera_stops: bool = False
    push_after_arrival: bool = False
    cancel_at: float | None = None
    object_at: float | None = None  # the (latched) object pose arrives at this time
    # record
    goals: list[Pose2D] = field(default_factory=list)
    stops: int = 0
    status: tuple[NavStatus, str] = (NavStatus.PENDING, "")
    reports_arrival: bool = False
    subscriber: bool = True

    # RobotView
    def pose_sample(self) -> PoseSample | None:
        return PoseSample(self.pose, self.now - self.pose_at)

    def wait(self, timeout_s: float) -> None:
        self.now += max(timeout_s, 0.01)
        if self.object_at is not None and self.now >= self.object_at:
            self.object_xy = OBJECT
        if (
            self.push_after_arrival and self.goals and self.pose == self.goals[-1]
        ):  # shoved once it stood there
            self.pose = Pose2D(self.pose.x + 0.6, self.pose.y, self.pose.yaw)
            self.push_after_arrival = False
        if not self.odometry_stops:
            self.pose_at = self.now
        if not self.camera_stops:
            self.frames.append(self.now)

    def cancel_requested(self) -> bool:
        return self.cancel_at is not None and self.now >= self.cancel_at

    # Navigator
    def send(self, goal: Pose2D) -> str | None:
        if not self.subscriber:
            return "nothing subscribes to the goal topic"
        self.goals.append(goal)
        refused = self.behaviour == "refuse" or (callable(self.refuse_if) and self.refuse_if(goal))
        if refused:
            self.status = (NavStatus.FAILED, "refused: inside furniture")
        elif self.behaviour == "silent":
            self.status = (NavStatus.PENDING, "")
        elif self.behaviour == "stuck":
            self.status = (NavStatus.ACTIVE, "accepted")
        else:
            self.pose = goal
            self.pose_at = self.now
            self.status = (NavStatus.SUCCEEDED, "arrived")
        return None

    def stop(self) -> None:
        self.stops += 1


class View:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def pose(self) -> PoseSample | None:
        return self.world.pose_sample()

    def object_xy(self) -> tuple[float, float] | None:
        return self.world.object_xy

    def newest_frame_ns(self) -> int | None:
        return round(self.world.frames[-1] * 1e9) if self.world.frames else None

    def frame_at_or_after(self, stamp_ns: int) -> int | None:
        later = [round(t * 1e9) for t in self.world.frames if round(t * 1e9) >= stamp_ns]
        return min(later) if later else None

    def now_ns(self) -> int:
        return round(self.world.now * 1e9)

    def wait(self, timeout_s: float) -> None:
        self.world.wait(timeout_s)

    def cancel_requested(self) -> bool:
        return self.world.cancel_requested()


class Nav:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world
        self.reports_arrival = world.reports_arrival

    def send(self, goal: Pose2D) -> str | None:
        return self.world.send(goal)

    def status(self) -> tuple[NavStatus, str]:
        return self.world.status

    def stop(self) -> None:
        self.world.stop()


SETTINGS = MoveSettings(
    navigation_timeout_s=2.0,
    answer_timeout_s=0.5,
    pose_timeout_s=0.3,
    frame_timeout_s=1.0,
    frame_settle_s=0.1,
)


def make(world: FakeWorld, settings: MoveSettings = SETTINGS) -> SectorMover:
    mover = SectorMover(settings, View(world), Nav(world), monotonic=lambda: world.now)
    mover.reset("request-1")
    return mover


def test_moves_reach_the_viewing_pose_of_each_sector_and_return_a_later_frame() -> None:
    world = FakeWorld()
    mover = make(world)
    stay = mover.move("front")
    assert stay.outcome is MoveOutcome.STAYED and stay.sector == 0 and world.goals == []

    moved = mover.move("front-left")
    assert moved.outcome is MoveOutcome.MOVED and moved.sector == 1 and not moved.message
    goal = world.goals[-1]
    assert math.hypot(goal.x, goal.y) == pytest.approx(SETTINGS.far_distance)
    assert math.degrees(bearing(OBJECT, goal.as_xy())) == pytest.approx(-60.0)  # the agent's left
    assert camera_faces(goal, OBJECT) == pytest.approx(0.0, abs=1e-9)
    assert moved.frame_stamp_ns is not None and moved.frame_stamp_ns >= round((world.now - 1.0) * 1e9)

    back = mover.move("back")  # relative to sector 1: sector 4, bearing +120°
    assert back.outcome is MoveOutcome.MOVED and back.sector == 4
    assert math.degrees(bearing(OBJECT, world.goals[-1].as_xy())) == pytest.approx(120.0)
    assert (stay.steps_taken, moved.steps_taken, back.steps_taken) == (1, 2, 3)
    assert back.steps_remaining == 3


def test_a_visited_sector_is_already_visited_without_motion() -> None:
    world = FakeWorld()
    mover = make(world)
    assert mover.move("back").outcome is MoveOutcome.MOVED
    goals = len(world.goals)
    again = mover.move("back")  # from 3, "back" is sector 0: the start view
    assert again.outcome is MoveOutcome.ALREADY_VISITED and again.sector == 3
    assert "already visited" in again.warning and len(world.goals) == goals


def test_refused_far_view_falls_back_to_near_and_both_refused_is_unreachable() -> None:
    world = FakeWorld(refuse_if=lambda goal: math.hypot(goal.x, goal.y) > 1.2)
    mover = make(world)
    near = mover.move("front-right")
    assert near.outcome is MoveOutcome.MOVED
    assert math.hypot(world.goals[-1].x, world.goals[-1].y) == pytest.approx(SETTINGS.near_distance)

    world.behaviour = "refuse"
    unreachable = mover.move("back")
    assert unreachable.outcome is MoveOutcome.UNREACHABLE and unreachable.sector == 5
    assert "far view" in unreachable.warning and "near view" in unreachable.warning
    assert "refused: inside furniture" in unreachable.warning
    assert not unreachable.message  # a benchmark outcome, not a fault


def test_navigation_that_times_out_is_unreachable_and_the_robot_returns_to_its_view() -> None:
    world = FakeWorld()
    mover = make(world)
    world.behaviour = "stuck"
    moved_away = Pose2D(0.5, 1.0, 0.0)  # the robot drives part of the way, then gets stuck
    original_send = world.send

    def send_and_drift(goal: Pose2D) -> str | None:
        answer = original_send(goal)
        if world.behaviour == "stuck":
            world.pose = moved_away
        return answer

    world.send = send_and_drift  # type: ignore[method-assign]
    settings = MoveSettings(**{**SETTINGS.__dict__, "try_other_distance": False})
    mover = make(world, settings)
    result = None

    def follow_back(goal: Pose2D) -> str | None:
        if goal == START:  # the way back works
            world.behaviour = "follow"
        return send_and_drift(goal)

    world.send = follow_back  # type: ignore[method-assign]
    result = mover.move("back-left")
    assert result.outcome is MoveOutcome.UNREACHABLE and "timed out after 2 s" in result.warning
    assert world.goals[-1] == START and world.pose == START
    assert world.stops >= 1  # the timed-out drive was stopped


def test_a_new_session_forgets_visits_and_takes_the_current_bearing_as_front() -> None:
    world = FakeWorld()
    mover = make(world)
    assert mover.move("back").outcome is MoveOutcome.MOVED  # now west of the object
    mover.reset("request-2")
    session = mover.session
    assert session is not None and session.request_id == "request-2" and session.visited == {0}
    assert session.bearing_of(0) == pytest.approx(math.pi)  # the robot's bearing now
    result = mover.move("back")  # sector 3 of the new session: east again
    assert result.outcome is MoveOutcome.MOVED and result.steps_taken == 1
    assert world.goals[-1].x == pytest.approx(1.5) and world.goals[-1].y == pytest.approx(0.0, abs=1e-9)


def test_a_reset_during_a_move_takes_effect_after_it() -> None:
    world = FakeWorld()
    mover = make(world)
    with mover._busy:  # a move is running
        mover.reset("request-2")
        assert mover.session is not None and mover.session.request_id == "request-1"
    assert mover.move("front").steps_taken == 1
    assert mover.session is not None and mover.session.request_id == "request-2"


@pytest.mark.parametrize(
    ("setup", "cause"),
    [
        (lambda w: setattr(w, "object_xy", None), "no object pose yet"),
        (lambda w: setattr(w, "behaviour", "silent"), "navigation never answered"),
        (lambda w: setattr(w, "subscriber", False), "nothing subscribes to the goal topic"),
        (
            lambda w: setattr(w, "odometry_stops", True) or setattr(w, "pose_at", w.now - 5.0),
            "robot pose is stale",
        ),
        (lambda w: setattr(w, "camera_stops", True), "the camera stopped publishing"),
        (lambda w: setattr(w, "push_after_arrival", True), "pushed off the viewing pose"),
        (lambda w: setattr(w, "pose", Pose2D(1.5, 0.8, math.pi)), "pushed off its pose"),
        (lambda w: setattr(w, "cancel_at", w.now), "cancelled"),
    ],
    ids=[
        "no-object",
        "silent-navigation",
        "no-navigation",
        "stale-odometry",
        "camera-stops",
        "pushed-on-arrival",
        "pushed-before-move",
        "cancelled",
    ],
)
def test_each_fault_rejects_the_move_with_its_cause_and_stops_the_robot(setup, cause: str) -> None:
    world = FakeWorld()
    mover = make(world)
    setup(world)
    result = mover.move("front-left")
    assert result.outcome is MoveOutcome.REJECTED and cause in result.message, result.message
    assert world.stops >= 1
    assert result.cancelled == (cause == "cancelled")
    assert 1 not in (mover.session.visited if mover.session else set())


def test_a_first_move_waits_for_an_object_pose_still_on_its_way_within_answer_timeout() -> None:
    """Right after bring-up the latched object pose may reach the adapter after the first move request."""
    late = FakeWorld(object_xy=None)
    late.object_at = late.now + 0.8 * SETTINGS.answer_timeout_s
    assert make(late).move("front-left").outcome is MoveOutcome.MOVED
    never = FakeWorld(object_xy=None)
    refused = make(never).move("front-left")
    assert refused.outcome is MoveOutcome.REJECTED
    assert refused.message.startswith(
        "no object pose yet (the object pose topic; waited answer_timeout_s = 0.5 s)"
    )
    assert never.now >= 100.0 + SETTINGS.answer_timeout_s


def test_the_node_keeps_serving_after_a_fault() -> None:
    world = FakeWorld(camera_stops=True)
    mover = make(world)
    assert mover.move("front-left").outcome is MoveOutcome.REJECTED
    world.camera_stops = False
    mover.reset("request-2")  # the verifier ended that request; the next one starts here
    assert mover.move("front-left").outcome is MoveOutcome.MOVED


def test_unknown_directions_are_rejected_without_a_step() -> None:
    world = FakeWorld()
    mover = make(world)
    result = mover.move("teleport")
    assert result.outcome is MoveOutcome.REJECTED and "unknown direction" in result.message
    assert result.steps_taken == 0 and world.goals == []


def test_nav2_style_navigation_needs_its_success_as_well_as_the_pose() -> None:
    world = FakeWorld(reports_arrival=True)
    mover = make(world)
    assert mover.move("back").outcome is MoveOutcome.MOVED
    view = world.pose
    original = world.send

    def arrive_without_success(goal: Pose2D) -> str | None:
        answer = original(goal)
        if goal != view:  # the way back to the last view succeeds
            world.status = (NavStatus.ACTIVE, "accepted")
        return answer

    world.send = arrive_without_success  # type: ignore[method-assign]
    result = mover.move("front-left")
    assert result.outcome is MoveOutcome.UNREACHABLE and "timed out" in result.warning
    assert "(navigation reported success)" not in result.warning and world.pose == view


def test_a_nav2_success_outside_the_tolerances_fails_the_drive_without_waiting_for_the_timeout() -> None:
    """Nav2 ends a goal SUCCEEDED within its own goal checker's tolerance (0.25 m by default) and stops there."""
    world = FakeWorld(reports_arrival=True)
    mover = make(world, SETTINGS)
    view = world.pose
    original = world.send

    def stop_short(goal: Pose2D) -> str | None:
        answer = original(goal)
        if goal != view:  # the way back to the last view ends on it
            world.pose = Pose2D(goal.x + 0.2, goal.y, goal.yaw)
        return answer

    world.send = stop_short  # type: ignore[method-assign]
    began = world.now
    result = mover.move("front-left")
    assert result.outcome is MoveOutcome.UNREACHABLE, result.message
    assert result.warning.count("navigation reported success but after 0.5 s the robot stands 0.20 m") == 2
    assert "position_tolerance_m = 0.15" in result.warning and "timed out" not in result.warning
    assert world.now - began < SETTINGS.navigation_timeout_s  # each drive ended after answer_timeout_s
    assert world.pose == view


def test_goal_status_words() -> None:
    assert status_from_text("refused: inside furniture") is NavStatus.FAILED
    assert status_from_text(" Accepted") is NavStatus.ACTIVE
    assert status_from_text("arrived") is NavStatus.SUCCEEDED
    assert status_from_text("preempted") is None and status_from_text("cancelled") is None
    with pytest.raises(UnknownStatus):
        status_from_text("dancing")
