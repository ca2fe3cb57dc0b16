"""The robot's height joints and head over ros2_control's actions (control_msgs): the adapter's HeightDriver.

* a level -> ``control_msgs/action/FollowJointTrajectory`` on ``follow_joint_trajectory_action``: one point,
  the level's positions for ``height_joint_names``, reached at ``height_move_time_s``;
* aiming -> ``control_msgs/action/PointHead`` on ``point_head_action``: the object's position (the newest object
  pose, in ``world_frame``) as ``target``, with the configured pointing frame, axis, minimum duration and
  maximum velocity.

Each goal is sent as the Nav2 goal is (:class:`.action_goal.GoalTracker`): a server that is
missing or does not answer within ``answer_timeout_s`` is a fault; a rejected goal, or one that ends aborted or
cancelled by someone else, fails with the server's words (FollowJointTrajectory's error code, its name and
``error_string``). :meth:`stop` cancels the goal in progress. control_msgs is imported only when the robot has
height levels, so a robot without them runs where control_msgs is not installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from geometry_msgs.msg import PointStamped
from rclpy.node import Node

from .action_goal import GoalTracker
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
        from rclpy.action import ActionClient

        actions = importlib.import_module("control_msgs.action")
        self.follow_type = actions.FollowJointTrajectory
        self.point_type = actions.PointHead
        self.node = node
        self.settings = settings
        self.object_point = object_point
        self.world_frame = str(values["world_frame"])
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
        #: One goal at a time (a level or an aim); FollowJointTrajectory's error codes name its failures.
        self.goal = GoalTracker(
            node, self.follow_type.Result, "error_string", float(values["answer_timeout_s"]), notify
        )

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
        return self.goal.send(client, name, lambda: goal, server=kind, speaker=kind)

    def status(self) -> tuple[NavStatus, str]:
        return self.goal.status()

    def stop(self) -> None:
        self.goal.stop()
