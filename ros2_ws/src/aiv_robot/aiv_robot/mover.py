"""The MoveToSector procedure on a mobile base, without ROS: plan the viewing pose, drive there, wait for a frame.

:class:`SectorMover` is what the adapter node calls for each MoveToSector goal. It reads the world through a
:class:`RobotView` (robot pose with its age, object position, camera stamps, the caller's cancel flag) and
drives through a :class:`Navigator` (Nav2's NavigateToPose or a pose-goal topic, see the node), so every rule
below is tested with fakes:

* ``front`` stays (``stayed``, the newest frame); a sector already seen is ``already_visited`` (no motion);
* otherwise the viewing pose of the target sector at the preferred stand-off (``far`` unless set otherwise)
  is sent; if navigation refuses, fails or times out, the other stand-off is tried (``try_other_distance``);
  if none arrives the move is ``unreachable`` and the robot is driven back to the pose it saw the current
  view from (``return_after_failure``), so "the camera did not move" stays true as in the benchmark;
* arrival = the robot's pose within ``position_tolerance`` / ``yaw_tolerance`` of the goal (and, when the pose
  source gives velocities, slower than ``arrival_max_speed``; with Nav2 also its SUCCEEDED, and a Nav2 success
  whose pose stays outside those tolerances for ``answer_timeout`` fails the drive); then the move
  waits for a camera frame stamped at least ``frame_settle`` after the stop and returns its stamp.

Height levels (``up`` / ``down``, when the robot has them, see :mod:`aiv_robot.heights`): the torso / mast goes
to the next level's joint positions (FollowJointTrajectory), the head is aimed at the object (PointHead), and a
frame taken after both stopped is the new view (``moved``, with its ``level``). A robot without levels, a level
it does not have, or a joint server that rejects or aborts the goal makes the view ``unreachable`` (after a
failure part-way the torso is sent back to the level it came from); a seen (sector, level) is
``already_visited``. Planar moves keep the level.

Faults end the move as ``rejected`` with the cause in ``message`` (the verifier then ends its request with
DECISION_FAILED and that cause) after stopping the robot: no object position yet, no or stale robot pose,
navigation that neither answers nor moves within ``answer_timeout``, the camera sending no frame after the
stop, the robot pushed off its viewing pose, a return to the last view that fails, a joint server that is
missing, does not answer within ``answer_timeout`` or does not finish within ``joint_timeout``, and a cancelled
goal (which cancels the navigation or joint goal too).
"""

from __future__ import annotations

import contextlib
import enum
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from aiv_dataset.levels import LEVEL_DIRECTIONS, level_direction
from aiv_dataset.vocabulary import SECTOR_COUNT, DirectionError, MoveOutcome, normalize_direction

from .geometry import Pose2D, viewing_pose
from .sector_session import DEFAULT_STEP_BUDGET, SectorSession

NANOS_PER_SECOND = 1_000_000_000
#: Longest single wait between two checks; every wait also ends as soon as new data arrives.
POLL_S = 0.1
_T = TypeVar("_T")

if TYPE_CHECKING:
    from .heights import HeightDriver


class MoveFault(Exception):
    """The move cannot be carried out; the message is the cause the verifier reports."""


class MoveCancelled(MoveFault):
    """The MoveToSector goal was cancelled while the robot was moving or waiting."""


class NavStatus(str, enum.Enum):
    """What navigation has said about the goal sent last."""

    PENDING = "pending"  # nothing yet
    ACTIVE = "active"  # accepted / executing
    SUCCEEDED = "succeeded"  # navigation says it arrived
    FAILED = "failed"  # refused, rejected, aborted or failed: the pose cannot be reached


#: Words a robot may publish on the goal-status topic, and what each means (compared lowercased, trimmed).
STATUS_WORDS: dict[str, NavStatus] = {
    **dict.fromkeys(("accepted", "active", "executing", "running", "moving"), NavStatus.ACTIVE),
    **dict.fromkeys(("succeeded", "success", "arrived", "reached"), NavStatus.SUCCEEDED),
    **dict.fromkeys(
        ("refused", "rejected", "aborted", "failed", "failure", "unreachable", "blocked"),
        NavStatus.FAILED,
    ),
}


#: Words about a goal this adapter replaced or stopped itself (a stand-in says "preempted"): not about the
#: goal being pursued, so they change nothing.
IGNORED_STATUS_WORDS = frozenset(("preempted", "canceled", "cancelled", "stopped"))


class UnknownStatus(ValueError):
    """A goal-status text whose first word means nothing here."""


def status_from_text(text: str) -> NavStatus | None:
    """The status a goal-status text names (its first word decides: "refused: inside furniture"); None for a
    word about a goal the adapter itself replaced or stopped; :class:`UnknownStatus` for any other word."""
    words = text.strip().lower().split(":", 1)[0].split(None, 1)
    word = words[0] if words else ""
    if word in IGNORED_STATUS_WORDS:
        return None
    if word not in STATUS_WORDS:
        raise UnknownStatus(f"goal status {text!r} is not understood")
    return STATUS_WORDS[word]


@dataclass(frozen=True)
class PoseSample:
    """The newest robot pose, how old it is, and (when the source gives them) its speeds."""

    pose: Pose2D
    age_s: float
    linear_speed: float | None = None
    angular_speed: float | None = None


class RobotView(Protocol):
    """What the move procedure reads; the node implements it from its subscriptions (thread-safe)."""

    def pose(self) -> PoseSample | None: ...

    def object_xy(self) -> tuple[float, float] | None: ...

    def newest_frame_ns(self) -> int | None: ...

    def frame_at_or_after(self, stamp_ns: int) -> int | None:
        """Stamp of the first camera frame stamped at or after ``stamp_ns``, if one has arrived."""
        ...

    def now_ns(self) -> int:
        """The clock camera stamps are compared with (ROS time)."""
        ...

    def wait(self, timeout_s: float) -> None:
        """Block until something new arrives (pose, status, frame, cancel) or ``timeout_s`` passes."""
        ...

    def cancel_requested(self) -> bool: ...


class Navigator(Protocol):
    """The robot's navigation: take a goal pose, report on it, stop."""

    #: True when arrival also needs the navigation's own success report (Nav2), not the pose alone.
    reports_arrival: bool

    def send(self, goal: Pose2D) -> str | None:
        """Send ``goal``; a text saying why it could not be sent at all (a fault), else None."""
        ...

    def status(self) -> tuple[NavStatus, str]:
        """Status of the goal sent last, with the navigation's own words."""
        ...

    def stop(self) -> None:
        """Cancel the goal being pursued and stop the base."""
        ...


@dataclass(frozen=True)
class MoveSettings:
    """The adapter's geometry, tolerances and time limits (the node fills them from its parameters)."""

    far_distance: float = 1.5
    near_distance: float = 0.9
    view_priority: str = "far"
    try_other_distance: bool = True
    camera_yaw_offset: float = 0.0
    position_tolerance: float = 0.15
    yaw_tolerance: float = math.radians(10.0)
    arrival_max_speed: float = 0.05
    push_tolerance: float = 0.3
    push_yaw_tolerance: float = math.radians(20.0)
    motion_epsilon: float = 0.02
    navigation_timeout_s: float = 60.0
    answer_timeout_s: float = 5.0
    pose_timeout_s: float = 1.0
    frame_timeout_s: float = 3.0
    frame_settle_s: float = 0.2
    return_after_failure: bool = True
    joint_timeout_s: float = 20.0
    #: Why a robot has no height levels, for the warning of an unreachable up / down.
    no_levels_reason: str = "parameter height_joint_names is empty"
    pose_source: str = "the robot pose topic"
    object_source: str = "the object pose topic"

    def __post_init__(self) -> None:
        if self.view_priority not in ("far", "near"):
            raise ValueError(f"view_priority must be far or near, got {self.view_priority!r}")
        if not (self.far_distance > 0 and self.near_distance > 0):
            raise ValueError("stand-off distances must be > 0 m")

    def distances(self) -> list[tuple[str, float]]:
        """Stand-offs to try, preferred first."""
        both = {"far": self.far_distance, "near": self.near_distance}
        order = ["far", "near"] if self.view_priority == "far" else ["near", "far"]
        return [(name, both[name]) for name in (order if self.try_other_distance else order[:1])]


@dataclass(frozen=True)
class MoveResult:
    """What one MoveToSector goal did (the node turns it into the action result)."""

    outcome: MoveOutcome
    sector: int
    frame_stamp_ns: int | None = None
    warning: str = ""
    message: str = ""
    steps_taken: int = 0
    steps_remaining: int = 0
    cancelled: bool = False
    level: int = 0


@dataclass(frozen=True)
class _Attempt:
    arrived: bool
    why: str = ""


class SectorMover:
    """Serves moves of the current session; one move at a time (the node's action server is the caller).

    :meth:`reset` starts a new session; it may be called from another thread while a move runs, and then takes
    effect when that move has ended.
    """

    def __init__(
        self,
        settings: MoveSettings,
        robot: RobotView,
        navigator: Navigator,
        log: Callable[[str], object] = lambda _text: None,
        monotonic: Callable[[], float] = time.monotonic,
        heights: HeightDriver | None = None,
        warn: Callable[[str], object] | None = None,
    ) -> None:
        self.settings = settings
        self.robot = robot
        self.navigator = navigator
        self.heights = heights
        #: The level the camera was last brought to (0 until a height move succeeds): a new session starts there.
        self.robot_level = 0
        #: Whether PointHead has aimed the head: from then on it is re-aimed after every drive (the tilt that
        #: suited one stand-off does not suit the other). A robot never moved in height keeps today's moves.
        self.head_aimed = False
        self.log = log
        #: Where a move the robot could not make is reported, with its cause (the node's warning log; ``log``
        #: when not given): the verifier's notes say it too, but the robot's own log is where its operator looks.
        self.warn = log if warn is None else warn
        self.monotonic = monotonic
        self.session: SectorSession | None = None
        self._busy = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: SectorSession | None = None

    # -- sessions -------------------------------------------------------------------------------------------

    def reset(self, request_id: str, start_sector: int = 0, step_budget: int = 0) -> None:
        """Start a new session: nothing visited, the robot's current bearing becomes ``start_sector``."""
        session = SectorSession(
            request_id=request_id,
            start_sector=start_sector if 0 <= start_sector < SECTOR_COUNT else 0,
            step_budget=step_budget or DEFAULT_STEP_BUDGET,
            level=self.robot_level,
        )
        with self._pending_lock:
            self._pending = session
        if self._busy.acquire(blocking=False):  # idle: anchor now, so a push before the first move shows
            try:
                self._take_pending()
            finally:
                self._busy.release()

    def _take_pending(self) -> None:
        with self._pending_lock:
            session, self._pending = self._pending, None
        if session is None:
            return
        self.session = session
        self._try_anchor(session)
        self.log(
            f"new session for request {session.request_id!r}: sector {session.start_sector} is here"
            + ("" if session.anchored else " (anchored at the first move: no robot or object pose yet)")
        )

    def _try_anchor(self, session: SectorSession) -> None:
        try:
            sample, object_xy = self.robot.pose(), self.robot.object_xy()
        except MoveFault:  # reported by the first move, which needs them
            return
        if sample is not None and object_xy is not None and sample.age_s <= self.settings.pose_timeout_s:
            session.anchor(object_xy, sample.pose)

    # -- one move -------------------------------------------------------------------------------------------

    def move(self, raw_direction: str) -> MoveResult:
        """Carry out one MoveToSector goal; never raises (faults come back as ``rejected``). A move that was not
        made (unreachable, already visited) is reported through ``warn`` with its cause, e.g. the error code
        Nav2 aborted the goal with; a rejected one is the node's to log (it ends the goal with the message)."""
        result = self._serve(raw_direction)
        if result.outcome.navigation_failed:
            session = self.session
            request = (
                f"request {session.request_id!r}: " if session is not None and session.request_id else ""
            )
            self.warn(f"{request}move {raw_direction!r} not made ({result.outcome.value}): {result.warning}")
        return result

    def _serve(self, raw_direction: str) -> MoveResult:
        with self._busy:
            self._take_pending()
            if self.session is None:
                self.session = SectorSession(request_id="", level=self.robot_level)
                self.log("a move arrived before any verification request: started a session here")
            session = self.session
            vertical = level_direction(raw_direction)
            if vertical is not None:
                try:
                    return self._move_level(session, vertical)
                except MoveCancelled as cancelled:
                    self._stop_all()
                    return self._result(MoveOutcome.REJECTED, message=str(cancelled), cancelled=True)
                except MoveFault as fault:
                    self._stop_all()
                    self.log(f"move {vertical!r} failed: {fault}")
                    return self._result(MoveOutcome.REJECTED, message=str(fault))
            try:
                direction = normalize_direction(raw_direction, strict=True)
            except DirectionError as error:
                return self._result(MoveOutcome.REJECTED, message=str(error), count=False)
            try:
                return self._move(session, direction)
            except MoveCancelled as cancelled:
                self.navigator.stop()
                return self._result(MoveOutcome.REJECTED, message=str(cancelled), cancelled=True)
            except MoveFault as fault:
                self.navigator.stop()
                self.log(f"move {direction!r} failed: {fault}")
                return self._result(MoveOutcome.REJECTED, message=str(fault))

    def _stop_all(self) -> None:
        self.navigator.stop()
        if self.heights is not None:
            self.heights.stop()

    def _move(self, session: SectorSession, direction: str) -> MoveResult:
        if direction == "front":
            return self._result(MoveOutcome.STAYED, frame=self.robot.newest_frame_ns())
        target = session.target(direction)
        if session.seen(target):
            return self._result(
                MoveOutcome.ALREADY_VISITED,
                warning=f"sector {target} ({direction}) was already visited; the robot did not move",
            )
        object_xy = self._object()
        sample = self._fresh_pose()
        if not session.anchored:
            session.anchor(object_xy, sample.pose)
        self._check_not_pushed(session, sample)
        settings = self.settings
        failures: list[str] = []
        for label, distance in settings.distances():
            goal = viewing_pose(object_xy, session.bearing_of(target), distance, settings.camera_yaw_offset)
            attempt = self._navigate(goal)
            if attempt.arrived:
                note = self._reaim_head()
                stamp = self._frame_after_stop(goal)
                session.arrive(target, goal)
                return self._result(MoveOutcome.MOVED, frame=stamp, warning=note)
            failures.append(f"{label} view ({distance:g} m): {attempt.why}")
        self._return_to_view(session)
        return self._result(
            MoveOutcome.UNREACHABLE,
            warning=f"sector {target} ({direction}) is unreachable; the robot did not move: "
            + "; ".join(failures),
        )

    def _result(
        self,
        outcome: MoveOutcome,
        *,
        frame: int | None = None,
        warning: str = "",
        message: str = "",
        count: bool = True,
        cancelled: bool = False,
    ) -> MoveResult:
        session = self.session
        assert session is not None
        if count:
            session.steps_taken += 1
        return MoveResult(
            outcome=outcome,
            sector=session.current,
            frame_stamp_ns=frame,
            warning=warning,
            message=message,
            steps_taken=session.steps_taken,
            steps_remaining=session.steps_remaining,
            cancelled=cancelled,
            level=session.level,
        )

    # -- height levels --------------------------------------------------------------------------------------

    def _move_level(self, session: SectorSession, direction: str) -> MoveResult:
        """``up`` / ``down``: the next level's joint positions, the head aimed at the object, a fresh frame."""
        levels = self.heights.settings.levels if self.heights is not None else ()
        if not levels:
            return self._result(
                MoveOutcome.UNREACHABLE,
                warning=f"{direction!r} is unreachable: this robot has no camera height levels "
                f"({self.settings.no_levels_reason}); the camera did not move",
            )
        assert self.heights is not None
        target = session.level + LEVEL_DIRECTIONS[direction]
        if target not in levels:
            return self._result(
                MoveOutcome.UNREACHABLE,
                warning=f"level {target} ({direction}) is unreachable: this robot's levels are "
                f"{', '.join(str(level) for level in levels)}; the camera did not move",
            )
        if session.seen(session.current, target):
            return self._result(
                MoveOutcome.ALREADY_VISITED,
                warning=f"sector {session.current} at level {target} ({direction}) was already visited; the camera "
                "did not move",
            )
        object_xy = self._object()
        sample = self._fresh_pose()
        if not session.anchored:
            session.anchor(object_xy, sample.pose)
        self._check_not_pushed(session, sample)
        why = self._joint_goal("FollowJointTrajectory", lambda: self.heights.send_level(target))  # type: ignore[union-attr]
        if why is None and self.heights.settings.aim:
            try:
                why = self._joint_goal("PointHead", self.heights.send_aim)
            except MoveCancelled:
                raise
            except MoveFault:
                with contextlib.suppress(MoveFault):  # the torso went up: bring it back before reporting
                    self._return_to_level(session)
                raise
        if why is not None:
            self._return_to_level(session)
            return self._result(
                MoveOutcome.UNREACHABLE,
                warning=f"level {target} ({direction}) is unreachable; the camera stayed at level {session.level}: "
                + why,
            )
        self.robot_level = target
        self.head_aimed = self.head_aimed or self.heights.settings.aim
        view = session.view_pose if session.view_pose is not None else sample.pose
        stamp = self._frame_after_stop(view)
        session.change_level(target)
        return self._result(MoveOutcome.MOVED, frame=stamp)

    def _joint_goal(self, what: str, send: Callable[[], str | None]) -> str | None:
        """Send one joint goal and wait for its end: None when it succeeded, else the server's words (it
        rejected or aborted the goal). A missing or silent server, or one that does not finish within
        ``joint_timeout_s``, is a fault; a cancel cancels the joint goal."""
        assert self.heights is not None
        self._check_cancel()
        problem = send()
        if problem is not None:
            raise MoveFault(f"{what} did not take the goal: {problem}")
        started = self.monotonic()
        while True:
            self._check_cancel()
            status, words = self.heights.status()
            if status is NavStatus.SUCCEEDED:
                return None
            if status is NavStatus.FAILED:
                return words or f"{what} failed (no reason given)"
            if self.monotonic() - started >= self.settings.joint_timeout_s:
                self.heights.stop()
                raise MoveFault(
                    f"{what} did not finish within {self.settings.joint_timeout_s:g} s (joint_timeout_s); its "
                    "goal was cancelled"
                )
            self.robot.wait(POLL_S)

    def _reaim_head(self) -> str:
        """After a drive, aim the head at the object again once it has been aimed before; a note when that
        failed (the view still counts: the base arrived, the camera may look past the object)."""
        if self.heights is None or not self.head_aimed or not self.heights.settings.aim:
            return ""
        why = self._joint_goal("PointHead", self.heights.send_aim)
        return "" if why is None else f"the head could not be re-aimed at the object after the drive: {why}"

    def _return_to_level(self, session: SectorSession) -> None:
        """After a failed height move, send the joints back to the current level (they may have moved part-way)."""
        if not self.settings.return_after_failure or self.heights is None:
            return
        level = session.level
        why = self._joint_goal("FollowJointTrajectory", lambda: self.heights.send_level(level))  # type: ignore[union-attr]
        if why is not None:
            raise MoveFault(f"could not return the camera to level {level} after a failed height move: {why}")

    # -- checks ---------------------------------------------------------------------------------------------

    def _object(self) -> tuple[float, float]:
        object_xy = self._first_value(self.robot.object_xy)
        if object_xy is None:
            raise MoveFault(
                f"no object pose yet ({self.settings.object_source}; waited answer_timeout_s = "
                f"{self.settings.answer_timeout_s:g} s)"
            )
        return object_xy

    def _fresh_pose(self) -> PoseSample:
        sample = self._first_value(self.robot.pose)
        if sample is None:
            raise MoveFault(
                f"no robot pose yet ({self.settings.pose_source}; waited answer_timeout_s = "
                f"{self.settings.answer_timeout_s:g} s)"
            )
        if sample.age_s > self.settings.pose_timeout_s:
            raise MoveFault(
                f"the robot pose is stale: the newest is {sample.age_s:.1f} s old "
                f"(pose_timeout_s = {self.settings.pose_timeout_s:g}; {self.settings.pose_source})"
            )
        return sample

    def _first_value(self, read: Callable[[], _T | None]) -> _T | None:
        """``read()``, waiting up to ``answer_timeout_s`` while it has never given a value.

        A request sent right after bring-up may reach the adapter before the latched object pose or the first
        odometry does (discovery and delivery take a moment, seconds on a loaded machine); the first move then
        waits for them, as it waits for the navigation to appear, instead of failing. Once a value has come,
        this returns at once (staleness is the caller's check)."""
        value = read()
        started = self.monotonic()
        while value is None:
            remaining = self.settings.answer_timeout_s - (self.monotonic() - started)
            if remaining <= 0:
                return None
            self._check_cancel()
            self.robot.wait(min(remaining, POLL_S))
            value = read()
        return value

    def _check_cancel(self) -> None:
        if self.robot.cancel_requested():
            raise MoveCancelled("the move was cancelled; the robot was stopped")

    def _check_not_pushed(self, session: SectorSession, sample: PoseSample) -> None:
        view = session.view_pose
        if view is None or sample.pose.within(
            view, self.settings.push_tolerance, self.settings.push_yaw_tolerance
        ):
            return
        raise MoveFault(
            f"the robot was pushed off its pose: it stands {sample.pose.distance_to(view):.2f} m and "
            f"{math.degrees(sample.pose.heading_error(view)):.0f}° from where it saw sector {session.current} "
            f"(push_tolerance_m = {self.settings.push_tolerance:g}, "
            f"push_yaw_tolerance_deg = {math.degrees(self.settings.push_yaw_tolerance):g})"
        )

    # -- driving --------------------------------------------------------------------------------------------

    def _arrived(self, sample: PoseSample, goal: Pose2D) -> bool:
        settings = self.settings
        if not sample.pose.within(goal, settings.position_tolerance, settings.yaw_tolerance):
            return False
        return (sample.linear_speed is None or abs(sample.linear_speed) <= settings.arrival_max_speed) and (
            sample.angular_speed is None or abs(sample.angular_speed) <= 2.0 * settings.arrival_max_speed
        )

    def _navigate(self, goal: Pose2D) -> _Attempt:
        """Drive to ``goal``; arrived, or why not (refused / failed / timed out). Faults raise."""
        settings = self.settings
        self._check_cancel()
        start_pose = self._fresh_pose().pose
        problem = self.navigator.send(goal)
        if problem is not None:
            raise MoveFault(f"navigation did not take the goal: {problem}")
        started = self.monotonic()
        answered = False
        succeeded_at: float | None = None
        while True:
            self._check_cancel()
            sample = self._fresh_pose()
            status, words = self.navigator.status()
            if status is NavStatus.FAILED:
                return _Attempt(False, f"navigation refused or failed ({words or 'no reason given'})")
            if status is not NavStatus.PENDING or (
                sample.pose.distance_to(start_pose) > settings.motion_epsilon
                or sample.pose.heading_error(start_pose) > settings.motion_epsilon
            ):
                answered = True
            if self._arrived(sample, goal) and (
                status is NavStatus.SUCCEEDED or not self.navigator.reports_arrival
            ):
                return _Attempt(True)
            elapsed = self.monotonic() - started
            if status is NavStatus.SUCCEEDED and self.navigator.reports_arrival:
                # Nav2 ended the goal within its own goal tolerance and stopped: waiting on changes nothing.
                succeeded_at = self.monotonic() if succeeded_at is None else succeeded_at
                if self.monotonic() - succeeded_at >= settings.answer_timeout_s:
                    return _Attempt(
                        False,
                        f"navigation reported success but after {settings.answer_timeout_s:g} s the robot stands "
                        f"{sample.pose.distance_to(goal):.2f} m and {math.degrees(sample.pose.heading_error(goal)):.0f}° "
                        f"from the viewing pose (position_tolerance_m = {settings.position_tolerance:g}, "
                        f"yaw_tolerance_deg = {math.degrees(settings.yaw_tolerance):g}: at least the navigation's own "
                        "goal tolerance)",
                    )
            if not answered and elapsed >= settings.answer_timeout_s:
                raise MoveFault(
                    f"navigation never answered: no status and no motion within {settings.answer_timeout_s:g} s "
                    "of sending the goal (answer_timeout_s)"
                )
            if elapsed >= settings.navigation_timeout_s:
                self.navigator.stop()
                off = sample.pose.distance_to(goal)
                return _Attempt(
                    False,
                    f"navigation timed out after {settings.navigation_timeout_s:g} s, {off:.2f} m from the "
                    f"viewing pose"
                    + (" (navigation reported success)" if status is NavStatus.SUCCEEDED else ""),
                )
            self.robot.wait(min(POLL_S, max(0.0, settings.navigation_timeout_s - elapsed)))

    def _frame_after_stop(self, goal: Pose2D) -> int:
        """Stamp of a camera frame taken at least ``frame_settle_s`` after arrival (the robot must stay put)."""
        settings = self.settings
        wanted = self.robot.now_ns() + round(settings.frame_settle_s * NANOS_PER_SECOND)
        started = self.monotonic()
        while True:
            self._check_cancel()
            sample = self._fresh_pose()
            if not sample.pose.within(goal, settings.push_tolerance, settings.push_yaw_tolerance):
                raise MoveFault(
                    f"the robot was pushed off the viewing pose while waiting for a frame "
                    f"({sample.pose.distance_to(goal):.2f} m, {math.degrees(sample.pose.heading_error(goal)):.0f}° off)"
                )
            stamp = self.robot.frame_at_or_after(wanted)
            if stamp is not None:
                return stamp
            if self.monotonic() - started >= settings.frame_timeout_s:
                newest = self.robot.newest_frame_ns()
                seen = "no frame at all" if newest is None else f"the newest is stamped {newest / 1e9:.3f} s"
                raise MoveFault(
                    f"the camera stopped publishing: no frame stamped after the stop within "
                    f"{settings.frame_timeout_s:g} s (frame_timeout_s; {seen}, the stop at {wanted / 1e9:.3f} s)"
                )
            self.robot.wait(POLL_S)

    def _return_to_view(self, session: SectorSession) -> None:
        """After a failed move, drive back to where the current view was seen (when the robot left it)."""
        view = session.view_pose
        if not self.settings.return_after_failure or view is None:
            return
        sample = self._fresh_pose()
        if sample.pose.within(view, self.settings.position_tolerance, self.settings.yaw_tolerance):
            return
        attempt = self._navigate(view)
        if not attempt.arrived:
            raise MoveFault(
                f"could not return to the sector {session.current} view after a failed move: {attempt.why}"
            )
