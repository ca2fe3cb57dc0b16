"""The stand-in's lifting torso and tilting head, served through ros2_control's own action types.

A robot's camera height and tilt are joints: a prismatic torso (or mast) lifts the head, a revolute joint
tilts it. Real robots expose them through ``control_msgs/action/FollowJointTrajectory`` (the joint trajectory
controller) and ``control_msgs/action/PointHead`` (the head controller), so the stand-in serves exactly those
types, and the robot adapter talks to it as it would to a robot:

* FollowJointTrajectory: joints ``torso_joint`` and ``head_tilt_joint`` (either or both). The joints move
  linearly to the trajectory's *last* point, taking its ``time_from_start`` or what the joint speeds allow,
  whichever is longer (intermediate points are not followed: nothing here needs them). Unknown joints
  (``INVALID_JOINTS``), no points, a multi-DOF trajectory or a position outside the joint limits
  (``INVALID_GOAL``) abort the goal with the error code and a one-line ``error_string``.
* PointHead: ``target`` in the world frame (an empty frame id means the world frame); the head tilts so the
  camera's optical axis points at the target's height. The stand-in has no pan joint: the base's heading
  aims horizontally, and ``pointing_angle_error`` reports the angle left between the optical axis and the
  target (a tilt beyond the limits is clamped and shows there too). ``pointing_frame`` / ``pointing_axis``
  are taken to be the camera's optical axis.
* A new goal replaces the one in progress (that one is aborted); a cancel stops the joints where they are.

The joints' positions are published as ``sensor_msgs/JointState``, and every camera frame is rendered from the
torso height and head tilt at its stamp (:meth:`aiv_robot_sim.live_scene.LiveScene.camera_pose`).
``trajectory_fault`` / ``point_head_fault`` make a server abort every goal or accept and never finish it, for
the adapter's fault tests.
"""

from __future__ import annotations

import importlib
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from aiv_synth.camera import SENSOR_HEIGHT
from sensor_msgs.msg import JointState

from .motion import Base, Joints

#: How often a running goal checks for its end, a cancel or a replacement (wall seconds).
SLICE_S = 0.02


def control_msgs_available() -> bool:
    """Whether control_msgs is importable (built by scripts/install_ros2_tools.sh, or apt ROS)."""
    try:
        importlib.import_module("control_msgs.action")
    except ImportError:
        return False
    return True


class HeadAndTorso:
    """The two joints, the execute callbacks of their action servers and their joint-state topic.

    rclpy stays in the node module (tests/test_package_boundaries.py): :mod:`.node` creates the two action
    servers with :meth:`follow` and :meth:`point` as their execute callbacks; ``node`` is only called."""

    def __init__(
        self,
        node: Any,
        values: dict[str, Any],
        lock: threading.Lock,
        base: Base,
        initial_tilt: float,
        now_s: Callable[[], float],
    ) -> None:
        actions = importlib.import_module("control_msgs.action")  # optional: imported only where it exists
        FollowJointTrajectory, PointHead = actions.FollowJointTrajectory, actions.PointHead

        self.follow_type = FollowJointTrajectory
        self.point_type = PointHead
        self.node = node
        self.lock = lock
        self.base = base
        self.now_s = now_s
        self.world_frame = str(values["world_frame"])
        self.torso = str(values["torso_joint"])
        self.tilt = str(values["head_tilt_joint"])
        self.limits = {
            self.torso: (float(values["torso_min_m"]), float(values["torso_max_m"])),
            self.tilt: (
                math.radians(float(values["head_tilt_min_deg"])),
                math.radians(float(values["head_tilt_max_deg"])),
            ),
        }
        low, high = self.limits[self.tilt]
        if not low <= initial_tilt <= high:
            raise ValueError(
                f"the pitch rule's head tilt {math.degrees(initial_tilt):.0f} deg lies outside head_tilt_min_deg / "
                "head_tilt_max_deg"
            )
        self.joints = Joints(
            {self.torso: 0.0, self.tilt: initial_tilt},
            {
                self.torso: float(values["torso_speed_mps"]),
                self.tilt: math.radians(float(values["head_speed_deg"])),
            },
            float(values["time_scale"]),
        )
        #: Per server, bumped by every goal it starts: an older goal of that server then ends as replaced.
        self._generation = {"follow_joint_trajectory": 0, "point_head": 0}
        #: Goal counts by action, for tests and the log: what this robot was asked to do.
        self.received = {"follow_joint_trajectory": 0, "point_head": 0}
        self.joint_pub = node.create_publisher(JointState, str(values["joint_states_topic"]), 10)

    # -- state read by the node ----------------------------------------------------------------------------

    def camera_lift_and_pitch(self, now: float) -> tuple[float, float]:
        """(torso lift m, camera pitch rad, + = up) at wall time ``now``; call with the node's lock held."""
        positions = self.joints.positions(now)
        return positions[self.torso], -positions[self.tilt]

    def publish_joint_states(self, header: Any, now: float) -> None:
        """Publish the joints' state; call with the node's lock held."""
        self.joints.update(now)
        positions = self.joints.positions(now)
        velocities = self.joints.velocities()
        names = [self.torso, self.tilt]
        self.joint_pub.publish(
            JointState(
                header=header,
                name=names,
                position=[positions[n] for n in names],
                velocity=[velocities[n] for n in names],
            )
        )

    # -- FollowJointTrajectory -----------------------------------------------------------------------------

    def _trajectory_problem(self, goal: Any) -> tuple[int, str] | None:
        result = self.follow_type.Result
        trajectory = goal.trajectory
        names = list(trajectory.joint_names)
        unknown = [n for n in names if n not in self.limits]
        if not names or unknown or len(set(names)) != len(names):
            return result.INVALID_JOINTS, (
                f"joints {names} are not this controller's (it moves {self.torso!r} and {self.tilt!r}, each once)"
            )
        if goal.multi_dof_trajectory.joint_names or goal.multi_dof_trajectory.points:
            return result.INVALID_GOAL, "this controller has no multi-DOF joints"
        if not trajectory.points:
            return result.INVALID_GOAL, "the trajectory has no points"
        for index, point in enumerate(trajectory.points):
            if len(point.positions) != len(names):
                return (
                    result.INVALID_GOAL,
                    f"point {index} has {len(point.positions)} positions for {len(names)} joints",
                )
            for name, position in zip(names, point.positions, strict=True):
                low, high = self.limits[name]
                if not (math.isfinite(position) and low <= position <= high):
                    return result.INVALID_GOAL, (
                        f"point {index}: {name} = {position:g} lies outside its limits [{low:g}, {high:g}]"
                    )
        return None

    def follow(self, goal_handle: Any) -> Any:
        result = self.follow_type.Result()
        with self.lock:
            self.received["follow_joint_trajectory"] += 1
        fault = str(self.node.get_parameter("trajectory_fault").value)
        problem = self._trajectory_problem(goal_handle.request)
        if fault == "abort":
            problem = (result.INVALID_GOAL, "trajectory_fault is 'abort'")
        if problem is not None:
            result.error_code, result.error_string = problem
            self.node.get_logger().warning(f"FollowJointTrajectory aborted: {result.error_string}")
            goal_handle.abort()
            return result
        trajectory = goal_handle.request.trajectory
        last = trajectory.points[-1]
        duration = float(last.time_from_start.sec) + float(last.time_from_start.nanosec) * 1e-9
        target = dict(zip(trajectory.joint_names, (float(p) for p in last.positions), strict=True))
        return self._run("follow_joint_trajectory", goal_handle, target, duration, fault, result)

    # -- PointHead -----------------------------------------------------------------------------------------

    def _aim(self, target: tuple[float, float, float], now: float) -> tuple[float, float]:
        """(tilt that points the camera at ``target``, clamped to the limits; the angle it leaves, rad)."""
        pose = self.base.pose(now)
        lift = self.joints.positions(now)[self.torso]
        dx, dy, dz = target[0] - pose.x, target[1] - pose.y, target[2] - (SENSOR_HEIGHT + lift)
        low, high = self.limits[self.tilt]
        tilt = min(high, max(low, -math.atan2(dz, math.hypot(dx, dy))))
        axis = (math.cos(tilt) * math.cos(pose.yaw), math.cos(tilt) * math.sin(pose.yaw), -math.sin(tilt))
        norm = math.sqrt(dx * dx + dy * dy + dz * dz) or 1.0
        cosine = (axis[0] * dx + axis[1] * dy + axis[2] * dz) / norm
        return tilt, math.acos(max(-1.0, min(1.0, cosine)))

    def point(self, goal_handle: Any) -> Any:
        result = self.point_type.Result()
        with self.lock:
            self.received["point_head"] += 1
        fault = str(self.node.get_parameter("point_head_fault").value)
        request = goal_handle.request
        frame = request.target.header.frame_id or self.world_frame
        if fault == "abort" or frame.lstrip("/") != self.world_frame.lstrip("/"):
            why = (
                "point_head_fault is 'abort'"
                if fault == "abort"
                else f"target frame {frame!r} is not {self.world_frame!r}"
            )
            self.node.get_logger().warning(f"PointHead aborted: {why}")
            goal_handle.abort()
            return result
        point = request.target.point
        with self.lock:
            tilt, _ = self._aim((point.x, point.y, point.z), self.now_s())
            speed = math.radians(float(self.node.get_parameter("head_speed_deg").value))
        if request.max_velocity > 0.0:
            speed = min(speed, float(request.max_velocity))
        minimum = float(request.min_duration.sec) + float(request.min_duration.nanosec) * 1e-9
        with self.lock:
            current = self.joints.positions(self.now_s())[self.tilt]
        duration = max(minimum, abs(tilt - current) / speed)
        done = self._run("point_head", goal_handle, {self.tilt: tilt}, duration, fault, result)
        with self.lock:
            _, error = self._aim((point.x, point.y, point.z), self.now_s())
        done.pointing_angle_error = error
        return done

    # -- one joint move --------------------------------------------------------------------------------------

    def _run(
        self,
        server: str,
        goal_handle: Any,
        target: dict[str, float],
        duration: float,
        fault: str,
        result: Any,
    ) -> Any:
        """Move the joints to ``target`` and end the goal: succeeded, canceled, or aborted when a newer goal of
        the same server replaced it."""
        with self.lock:
            self._generation[server] += 1
            generation = self._generation[server]
            if fault != "hang":
                self.joints.start(target, duration, self.now_s())
        while True:
            with self.lock:
                now = self.now_s()
                if generation != self._generation[server]:
                    goal_handle.abort()
                    if hasattr(result, "error_string"):
                        result.error_string = "replaced by a newer goal"
                    return result
                if goal_handle.is_cancel_requested:
                    self.joints.stop(target, now)
                    goal_handle.canceled()
                    return result
                if fault != "hang":
                    self.joints.update(now)
                    if not self.joints.moving(target):
                        goal_handle.succeed()
                        return result
            if not self.node.context.ok():
                goal_handle.abort()
                return result
            time.sleep(SLICE_S)
