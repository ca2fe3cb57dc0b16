"""A Nav2-like ``NavigateToPose`` server (the real nav2_msgs type) that drives the robot stand-in, for tests.

It serves the action as Nav2's bt_navigator does, as far as a client can tell, and moves the base through the
stand-in's own interface (``aiv_robot_sim``: PoseStamped goals on ``goal_pose``, ``std_msgs/String`` answers on
``goal_status``, ``std_msgs/Empty`` on ``goal_cancel``, the base's pose on ``odom_pose``):

* goals are rejected while the navigator is not active (``active = False``, as a bt_navigator whose lifecycle
  is not active) or when ``behavior_tree`` names a tree other than the default; otherwise accepted;
* an accepted goal is sent to the stand-in; while the base drives, feedback carries its current pose (the
  stand-in's odometry), the distance remaining (the stand-in drives the straight line), the navigation time
  and an estimate of the time remaining; ``arrived`` ends the goal SUCCEEDED with error_code NONE;
* a goal the stand-in refuses (outside the room, inside a wall or furniture) is one Nav2's planner cannot plan:
  ABORTED with the planner's error code (nav2_msgs/ComputePathToPose: GOAL_OUTSIDE_MAP, GOAL_OCCUPIED) and the
  stand-in's reason as error_msg; ``abort_next`` queues aborts of the next goals right after acceptance (e.g.
  TF_ERROR), as the navigator reports a failure of its own;
* a cancel request is accepted: the base is stopped (``goal_cancel``) and the goal ends CANCELED;
* a newer goal preempts the one being pursued, which ends ABORTED (nav2_util's SimpleActionServer);
* a base stopped by someone else (a zero ``cmd_vel``) is sent the goal again, as Nav2's controller keeps
  commanding its goal.

Everything it saw is recorded (``goals``, ``rejected``) for the test to check.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiv_robot.geometry import Pose2D, yaw_from_quaternion
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import PoseStamped
from nav2_msgs.action import NavigateToPose
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Empty, String

#: nav2_msgs/ComputePathToPose result codes (Jazzy and later) that NavigateToPose passes on from its planner.
GOAL_OUTSIDE_MAP = 204
GOAL_OCCUPIED = 206
#: Longest wait for the stand-in to answer a goal or to stop after a cancel.
ROBOT_ANSWER_S = 10.0
#: A goal the stand-in has not answered by then is sent again (see :meth:`Nav2Server._answer`).
RESEND_S = 1.0
FEEDBACK_PERIOD_S = 0.1


def planner_error(reason: str) -> int:
    """The planner error code Nav2 reports for a goal the stand-in refuses for ``reason``."""
    if "outside" in reason:
        return GOAL_OUTSIDE_MAP
    if "inside" in reason:
        return GOAL_OCCUPIED
    return int(NavigateToPose.Result.UNKNOWN)


def _pose2d(message: PoseStamped) -> Pose2D:
    q = message.pose.orientation
    return Pose2D(message.pose.position.x, message.pose.position.y, yaw_from_quaternion(q.z, q.w, q.x, q.y))


def _duration(seconds: float) -> Duration:
    whole = math.floor(max(0.0, seconds))
    return Duration(sec=int(whole), nanosec=int((max(0.0, seconds) - whole) * 1e9))


@dataclass
class GoalRecord:
    """One accepted goal: where to, what the stand-in answered, its feedback and how it ended."""

    goal_id: bytes
    pose: Pose2D
    robot_answers: list[str] = field(default_factory=list)
    distances: list[float] = field(default_factory=list)  # feedback distance_remaining, in order
    feedback_poses: list[Pose2D] = field(default_factory=list)  # feedback current_pose, in order
    cancel_requested: bool = False
    ending: str = ""  # succeeded | aborted | canceled
    error_code: int = 0
    error_msg: str = ""


class Nav2Server:
    """``NavigateToPose`` on ``action_name``, driving the stand-in (see the module docstring)."""

    def __init__(self, node: Node, action_name: str = "navigate_to_pose") -> None:
        self.node = node
        self.active = True
        self.abort_next: list[tuple[int, str]] = []
        self.goals: list[GoalRecord] = []
        self.rejected = 0
        self.changed = threading.Condition()
        self._statuses: list[str] = []
        self._pose: PoseStamped | None = None
        self._newest: bytes = b""
        self._records: dict[bytes, GoalRecord] = {}
        self._driving = threading.Lock()  # one goal drives the stand-in at a time
        self.goal_pub = node.create_publisher(PoseStamped, "goal_pose", 10)
        self.cancel_pub = node.create_publisher(Empty, "goal_cancel", 10)
        node.create_subscription(String, "goal_status", self._on_status, 10)
        node.create_subscription(PoseStamped, "odom_pose", self._on_pose, 10)
        self.server = ActionServer(
            node,
            NavigateToPose,
            action_name,
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            cancel_callback=self._on_cancel,
            callback_group=ReentrantCallbackGroup(),
        )

    # -- the stand-in --------------------------------------------------------------------------------------

    def _on_status(self, message: String) -> None:
        with self.changed:
            self._statuses.append(message.data)
            self.changed.notify_all()

    def _on_pose(self, message: PoseStamped) -> None:
        with self.changed:
            self._pose = message
            self.changed.notify_all()

    def _robot_goal(self, goal: PoseStamped) -> int:
        """Send ``goal`` to the stand-in; the index its answer will have among the statuses."""
        deadline = time.monotonic() + ROBOT_ANSWER_S
        with self.changed:
            while self.goal_pub.get_subscription_count() == 0 and time.monotonic() < deadline:
                self.changed.wait(0.05)  # discovery of the stand-in's goal subscription
            first = len(self._statuses)
        self.goal_pub.publish(goal)
        return first

    def _next_status(self, index: int, words: tuple[str, ...], deadline: float) -> tuple[int, str] | None:
        """The first status at or after ``index`` whose first word is one of ``words`` (None at the deadline)."""
        with self.changed:
            while True:
                for at in range(index, len(self._statuses)):
                    text = self._statuses[at]
                    if text.split(":", 1)[0].strip() in words:
                        return at, text
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(left)

    # -- the action ----------------------------------------------------------------------------------------

    def _on_goal(self, goal: Any) -> GoalResponse:
        if not self.active or goal.behavior_tree:
            with self.changed:
                self.rejected += 1
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle: Any) -> CancelResponse:
        with self.changed:
            record = self._records.get(bytes(goal_handle.goal_id.uuid))
            if record is not None:
                record.cancel_requested = True
            self.changed.notify_all()
        return CancelResponse.ACCEPT

    def _execute(self, goal_handle: Any) -> NavigateToPose.Result:
        goal_id = bytes(goal_handle.goal_id.uuid)
        record = GoalRecord(goal_id, _pose2d(goal_handle.request.pose))
        with self.changed:
            self.goals.append(record)
            self._records[goal_id] = record
            self._newest = goal_id
            self.changed.notify_all()
        with self._driving:
            return self._drive(goal_handle, record)

    def _end(
        self, goal_handle: Any, record: GoalRecord, ending: str, code: int = 0, message: str = ""
    ) -> Any:
        result = NavigateToPose.Result(error_code=code, error_msg=message)
        with self.changed:
            record.ending, record.error_code, record.error_msg = ending, code, message
        if ending == "succeeded":
            goal_handle.succeed()
        elif ending == "canceled":
            goal_handle.canceled()
        else:
            goal_handle.abort()
        return result

    def _answer(self, goal: PoseStamped, index: int) -> tuple[int, str] | None:
        """The stand-in's answer (accepted / refused) to ``goal``, sent with its answer expected at ``index``.

        Discovery is per side: the stand-in's status writer may not have matched our reader yet when it answers,
        and that answer is lost. Unanswered after RESEND_S, the goal is sent again (the stand-in answers each one;
        a repeat of a goal it is driving to is preempted by itself and accepted again).
        """
        deadline = time.monotonic() + ROBOT_ANSWER_S
        while True:
            answer = self._next_status(
                index, ("accepted", "refused"), min(deadline, time.monotonic() + RESEND_S)
            )
            if answer is not None or time.monotonic() >= deadline:
                return answer
            index = self._robot_goal(goal)

    def _stop_robot(self, since: int) -> None:
        self.cancel_pub.publish(Empty())
        self._next_status(since, ("cancelled", "arrived"), time.monotonic() + ROBOT_ANSWER_S)

    def _drive(self, goal_handle: Any, record: GoalRecord) -> Any:
        started = time.monotonic()
        if self.abort_next:
            code, message = self.abort_next.pop(0)
            return self._end(goal_handle, record, "aborted", code, message)
        goal = goal_handle.request.pose
        index = self._robot_goal(goal)
        last_feedback, last_pose = 0.0, None
        while True:
            answer = self._answer(goal, index)
            if answer is None:
                return self._end(
                    goal_handle, record, "aborted", NavigateToPose.Result.TIMEOUT, "no robot answer"
                )
            index, text = answer
            record.robot_answers.append(text)
            if text.startswith("refused"):
                reason = text.split(":", 1)[1].strip() if ":" in text else text
                return self._end(goal_handle, record, "aborted", planner_error(reason), reason)
            while True:  # driving: feedback until the stand-in ends the goal, a cancel, or a newer goal
                ending = self._next_status(
                    index + 1, ("arrived", "cancelled", "preempted"), time.monotonic() + FEEDBACK_PERIOD_S
                )
                with self.changed:
                    cancel, preempted = record.cancel_requested, self._newest != record.goal_id
                    pose = self._pose
                if ending is None and (cancel or preempted):
                    self._stop_robot(index + 1)
                if cancel:
                    return self._end(goal_handle, record, "canceled")
                if preempted:
                    return self._end(goal_handle, record, "aborted")
                if ending is not None:
                    break
                now = time.monotonic()
                if pose is not None and now - last_feedback >= FEEDBACK_PERIOD_S:
                    here = _pose2d(pose)
                    distance = here.distance_to(record.pose)
                    speed = 0.0 if last_pose is None else last_pose.distance_to(here) / (now - last_feedback)
                    feedback = NavigateToPose.Feedback(
                        current_pose=pose,
                        navigation_time=_duration(now - started),
                        estimated_time_remaining=_duration(distance / speed if speed > 1e-6 else 0.0),
                        number_of_recoveries=0,
                        distance_remaining=distance,
                    )
                    goal_handle.publish_feedback(feedback)
                    with self.changed:
                        record.distances.append(distance)
                        record.feedback_poses.append(here)
                    last_feedback, last_pose = now, here
            index, text = ending
            record.robot_answers.append(text)
            if text == "arrived":
                return self._end(goal_handle, record, "succeeded")
            # Stopped by someone else (a zero cmd_vel): Nav2's controller keeps commanding its goal.
            index = self._robot_goal(goal)
