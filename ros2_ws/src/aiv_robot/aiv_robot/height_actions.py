"""The robot's height joints and head over ros2_control's actions (control_msgs): the adapter's HeightDriver.

* a level -> ``control_msgs/action/FollowJointTrajectory`` on ``follow_joint_trajectory_action``: one point,
  the level's positions for ``height_joint_names``, reached at ``height_move_time_s``;
* aiming -> ``control_msgs/action/PointHead`` on ``point_head_action``: the object's position (the newest object
  pose, in ``world_frame``) as ``target``, with the configured pointing frame, axis, minimum duration and
  maximum velocity.

Each goal is sent as the Nav2 goal is (:func:`aiv_common.action_waits.send_goal_confirmed`): a server that is
missing or does not answer within ``answer_timeout_s`` is a fault; a rejected goal, or one that ends aborted or
cancelled by someone else, fails with the server's words (FollowJointTrajectory's error code, its name and
``error_string``). :meth:`stop` cancels the goal in progress. control_msgs is imported only when the robot has
height levels, so a robot without them runs where control_msgs is not installed.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

from aiv_common.action_waits import SentGoal, ServerLostError, action_server_watch, send_goal_confirmed
from geometry_msgs.msg import PointStamped
from rclpy.node import Node

from .heights import HeightSettings
from .mover import NavStatus


def _duration(seconds: float) -> Any:
    from builtin_interfaces.msg import Duration

    whole = int(seconds)
    return Duration(sec=whole, nanosec=min(999_999_999, round((seconds - whole) * 1e9)))


class ControlHeightDriver:
    """FollowJointTrajectory + PointHead clients; one goal at a time, its status read by the mover."""

    def __init__(
        self,
        node: Node,
        settings: HeightSettings,
        values: dict[str, Any],
        object_point: Callable[[], tuple[float, float, float] | None],
        notify: Callable[[], None],
        group: Any,
    ) -> None:
        from action_msgs.msg import GoalStatus
        from rclpy.action import ActionClient

        actions = importlib.import_module("control_msgs.action")
        self.follow_type = actions.FollowJointTrajectory
        self.point_type = actions.PointHead
        self.goal_status = GoalStatus
        self.node = node
        self.settings = settings
        self.object_point = object_point
        self.notify = notify
        self.world_frame = str(values["world_frame"])
        self.answer_timeout_s = float(values["answer_timeout_s"])
        self.follow_name = str(values["follow_joint_trajectory_action"])
        self.point_name = str(values["point_head_action"])
        self.pointing_frame = str(values["point_head_pointing_frame"])
        self.pointing_axis = tuple(
            float(v) for v in str(values["point_head_pointing_axis"]).replace(",", " ").split()
        )
        self.min_duration_s = float(values["point_head_min_duration_s"])
        self.max_velocity = float(values["point_head_max_velocity"])
        self.follow_client: Any = ActionClient(node, self.follow_type, self.follow_name, callback_group=group)
        self.point_client: Any = (
            ActionClient(node, self.point_type, self.point_name, callback_group=group)
            if settings.aim
            else None
        )
        #: FollowJointTrajectory's result codes by value (SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS, ...).
        self.error_names = {
            value: name
            for name, value in vars(self.follow_type.Result).items()
            if name.isupper() and isinstance(value, int) and not isinstance(value, bool)
        }
        self._lock = threading.Lock()
        self._status: tuple[NavStatus, str] = (NavStatus.PENDING, "")
        self._goal: SentGoal | None = None
        self._generation = 0

    # -- sending ---------------------------------------------------------------------------------------------

    def send_level(self, level: int) -> str | None:
        goal = self.follow_type.Goal()
        goal.trajectory.joint_names = list(self.settings.joint_names)
        point = importlib.import_module("trajectory_msgs.msg").JointTrajectoryPoint()
        point.positions = [float(p) for p in self.settings.positions[level]]
        point.time_from_start = _duration(self.settings.move_time_s)
        goal.trajectory.points = [point]
        return self._send(self.follow_client, self.follow_name, "FollowJointTrajectory", goal)

    def send_aim(self) -> str | None:
        if self.point_client is None:
            return "no PointHead action is configured (point_head_action is empty)"
        target = self.object_point()
        if target is None:
            return "no object pose to aim at"
        goal = self.point_type.Goal()
        goal.target = PointStamped()
        goal.target.header.frame_id = self.world_frame
        goal.target.header.stamp = self.node.get_clock().now().to_msg()
        goal.target.point.x, goal.target.point.y, goal.target.point.z = target
        goal.pointing_frame = self.pointing_frame
        if len(self.pointing_axis) == 3:
            goal.pointing_axis.x, goal.pointing_axis.y, goal.pointing_axis.z = self.pointing_axis
        goal.min_duration = _duration(self.min_duration_s)
        goal.max_velocity = self.max_velocity
        return self._send(self.point_client, self.point_name, "PointHead", goal)

    def _send(self, client: Any, name: str, kind: str, goal: Any) -> str | None:
        resolved = self.node.resolve_topic_name(name)
        where = f"the {kind} server {resolved!r}"
        if not client.wait_for_server(timeout_sec=self.answer_timeout_s):
            return f"no {kind} server on {resolved!r} within {self.answer_timeout_s:g} s (answer_timeout_s)"
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._status, self._goal = (NavStatus.PENDING, ""), None
        try:
            sent = send_goal_confirmed(
                client,
                goal,
                timeout_s=self.answer_timeout_s,
                alive=action_server_watch(self.node, name),
                what=where,
                resend_after_s=min(1.0, self.answer_timeout_s / 2.0),
            )
        except ServerLostError as error:
            return str(error)
        if sent is None:
            return f"{where} did not answer the goal within {self.answer_timeout_s:g} s (answer_timeout_s)"
        if not sent.accepted:
            self._set(generation, NavStatus.FAILED, f"{kind} rejected the goal")
            return None
        with self._lock:
            if generation == self._generation:
                self._goal = sent
        self._set(generation, NavStatus.ACTIVE, f"accepted by {kind}")
        result = sent.result_future if sent.result_future is not None else sent._handle().get_result_async()
        result.add_done_callback(lambda done: self._on_result(done, generation, kind))
        return None

    # -- results ---------------------------------------------------------------------------------------------

    def ending_words(self, kind: str, status: int, result: Any) -> str:
        """What the server's final status and result say, e.g. "FollowJointTrajectory aborted the goal: error
        code -1 (INVALID_GOAL): point 0: torso_lift_joint = 1.5 lies outside its limits"."""
        if status == self.goal_status.STATUS_SUCCEEDED:
            return f"{kind} succeeded"
        if status == self.goal_status.STATUS_CANCELED:
            words = f"{kind} canceled the goal"
        elif status == self.goal_status.STATUS_ABORTED:
            words = f"{kind} aborted the goal"
        else:
            words = f"{kind} ended the goal with status {status}"
        details: list[str] = []
        code = int(getattr(result, "error_code", 0) or 0)
        if code:
            name = self.error_names.get(code)
            details.append(f"error code {code}" + (f" ({name})" if name else ""))
        message = str(getattr(result, "error_string", "") or "")
        if message:
            details.append(message)
        return ": ".join([words, *details])

    def _on_result(self, future: Any, generation: int, kind: str) -> None:
        response = future.result()
        status = int(response.status) if response is not None else self.goal_status.STATUS_UNKNOWN
        with self._lock:
            if generation == self._generation:
                self._goal = None
        ended = NavStatus.SUCCEEDED if status == self.goal_status.STATUS_SUCCEEDED else NavStatus.FAILED
        self._set(
            generation, ended, self.ending_words(kind, status, None if response is None else response.result)
        )

    def _set(self, generation: int, status: NavStatus, words: str) -> None:
        with self._lock:
            if generation == self._generation:
                self._status = (status, words)
        self.notify()

    def status(self) -> tuple[NavStatus, str]:
        with self._lock:
            return self._status

    def stop(self) -> None:
        with self._lock:
            goal, self._goal = self._goal, None
            self._generation += 1
        if goal is not None:
            goal.cancel()
