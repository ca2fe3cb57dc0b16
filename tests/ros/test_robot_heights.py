"""Camera height levels on the robot, closed loop over real DDS: the adapter's ``up`` / ``down`` go through
``control_msgs/action/FollowJointTrajectory`` (the torso) and ``control_msgs/action/PointHead`` (the head), the
stand-in (``aiv_robot_sim``) serves both with those types, and its next frame is rendered from the raised,
re-aimed camera.

Both nodes run as processes with their installed parameter files, as ``robot_verify.launch.py standin:=true``
starts them. The stand-in shows micro seed 42's mug in scene 00801 (episode 0), whose pink inside shows only
from above: at eye level (1.31 m, near ring) no render lists ``inside_color``; with the torso 1.0 m up and the
head aimed at the mug, it shows. Bad input (docs/robot.md): a level the robot does not have, a position outside
the joint limits (refused at start-up, exit code 2; or by the joint server: unreachable), a PointHead server
that aborts (unreachable) or never finishes (a fault after ``joint_timeout_s``, the joint goal cancelled) --
each one line, nothing hangs, and the next request is served. A cancelled height move cancels the joint goal.

Needs control_msgs (built by scripts/install_ros2_tools.sh from ../shared/ros2-upstream): without it the
module skips with one line, and fails where AIV_REQUIRE_ROS2_TOOLS=1.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from action_msgs.msg import GoalStatus, GoalStatusArray
from aiv_common.action_waits import SentGoal
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.action import MoveToSector
from aiv_interfaces.msg import GroundTruthView
from aiv_synth.camera import SENSOR_HEIGHT
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.srv import SetParameters
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from support.robot_nodes import (
    ADAPTER,
    ADAPTER_DEFAULTS,
    move,
    send_move,
    start_adapter,
    start_stand_in,
    wait_for_robot,
)
from support.ros2_cli import require_tools
from support.ros_harness import ros_args, wait_until

require_tools("control_msgs")

pytestmark = pytest.mark.ros

#: micro, seed 42: a mug (pink inside) on a table; from the s0_near capture the inside shows only from above.
SCENE, EPISODE, START = "00801-ewdjD8FaWq4", "0", "s0_near"
TOP_ATTRIBUTE = "inside_color"
TORSO, HEAD = "torso_lift_joint", "head_tilt_joint"
FOLLOW = "/torso_controller/follow_joint_trajectory"
POINT = "/head_controller/point_head"
UP_M = 1.0
HEIGHTS = {
    "height_joint_names": TORSO,
    "height_level_positions": f"'-1: -0.5; 0: 0.0; 1: {UP_M}'",
    "height_joint_min": "'-0.6'",  # strings (one number per joint): quoted, or YAML reads a double
    "height_joint_max": "'1.0'",
    "height_move_time_s": 1.0,
}
OUTCOME = MoveToSector.Result


def _start(node_process: Any, stand_in_params: dict[str, object] | None = None, **adapter_params: object):
    """The stand-in and the adapter with the stand-in's parameter file, heights on unless overridden."""
    stand_in = start_stand_in(
        node_process, {"scene": SCENE, "episode": EPISODE, "start_view": START, **(stand_in_params or {})}
    )
    adapter = start_adapter(
        node_process,
        {
            "request_topic": "''",  # no verifier: one session for the adapter's life
            "answer_timeout_s": 5.0,  # the first move waits this long for the object and robot poses
            "joint_timeout_s": 8.0,
            **HEIGHTS,
            **adapter_params,
        },
    )
    return stand_in, adapter


class Probe:
    """The test's view of the stand-in: frames with their ground truth, joint states, the joint servers'
    goal statuses; and the MoveToSector client."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.lock = threading.Lock()
        self.views: list[GroundTruthView] = []
        self.camera: list[PoseStamped] = []
        self.joints: list[JointState] = []
        self.goal_states: dict[str, dict[bytes, int]] = {FOLLOW: {}, POINT: {}}
        sensor = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
        node.create_subscription(GroundTruthView, "sim/ground_truth_view", self._keep(self.views), sensor)
        node.create_subscription(PoseStamped, "camera/pose", self._keep(self.camera), sensor)
        node.create_subscription(JointState, "joint_states", self._keep(self.joints), 10)
        for action in (FOLLOW, POINT):
            node.create_subscription(GoalStatusArray, f"{action}/_action/status", self._on_status(action), 10)
        self.mover: Any = ActionClient(node, MoveToSector, "move_to_sector")
        self.parameters = node.create_client(SetParameters, "/robot_sim/set_parameters")

    def _keep(self, into: list[Any]) -> Any:
        def keep(message: Any) -> None:
            with self.lock:
                into.append(message)

        return keep

    def _on_status(self, action: str) -> Any:
        def keep(message: GoalStatusArray) -> None:
            with self.lock:
                for status in message.status_list:
                    self.goal_states[action][bytes(status.goal_info.goal_id.uuid)] = int(status.status)

        return keep

    def ended(self, action: str) -> list[int]:
        """Final statuses of the goals ``action``'s server has reported ending (in no particular order)."""
        with self.lock:
            return [s for s in self.goal_states[action].values() if s >= GoalStatus.STATUS_SUCCEEDED]

    def running(self, action: str) -> bool:
        with self.lock:
            return GoalStatus.STATUS_EXECUTING in self.goal_states[action].values()

    def wait_for_robot(self, processes: list[Any]) -> None:
        def seen() -> bool:
            with self.lock:
                return bool(self.views) and bool(self.joints)

        wait_for_robot(seen, "the stand-in's frames and joint states", processes, self.mover, timeout_s=90.0)

    def send(self, direction: str) -> SentGoal:
        return send_move(self.mover, direction)

    def move(self, direction: str) -> tuple[int, MoveToSector.Result]:
        return move(self.mover, direction, 90.0)

    def view_from(self, stamp_ns: int) -> tuple[GroundTruthView, PoseStamped]:
        """Ground truth and camera pose of the first frame stamped at or after ``stamp_ns`` that the probe got
        both of (the streams are best-effort, like a driver's; nothing moves after a move's frame)."""

        def found() -> tuple[GroundTruthView, PoseStamped] | None:
            with self.lock:
                poses = {stamp_to_nanoseconds(p.header.stamp): p for p in self.camera}
                views = [v for v in self.views if stamp_to_nanoseconds(v.header.stamp) >= stamp_ns]
            for view in sorted(views, key=lambda v: stamp_to_nanoseconds(v.header.stamp)):
                pose = poses.get(stamp_to_nanoseconds(view.header.stamp))
                if pose is not None:
                    return view, pose
            return None

        wait_until(lambda: found() is not None, "the ground truth of the move's frame")
        result = found()
        assert result is not None
        return result

    def joint(self, name: str) -> float:
        with self.lock:
            message = self.joints[-1]
        return float(message.position[list(message.name).index(name)])

    def joint_reaches(self, name: str, position: float) -> None:
        """Wait until the joint states show ``name`` at ``position`` (they are published at 20 Hz)."""
        wait_until(
            lambda: abs(self.joint(name) - position) < 1e-9, f"{name} at {position:g} in the joint states"
        )

    def set_stand_in(self, name: str, value: str) -> None:
        """Set a run-time parameter of the stand-in (its fault switches)."""
        assert self.parameters.wait_for_service(timeout_sec=30.0)
        request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        future = self.parameters.call_async(request)
        wait_until(future.done, f"the stand-in to take {name}")
        assert future.result().results[0].successful


@pytest.fixture
def probe(ros_executor: Any) -> Iterator[Probe]:
    yield ros_executor.spin_new("heights_test", Probe)


def _action_types(node: Node, action: str) -> set[str]:
    """Types of the services behind ``action`` (their names carry the action type)."""
    names = dict(node.get_service_names_and_types())
    return set(names.get(f"{action}/_action/send_goal", []))


def test_up_raises_the_torso_aims_the_head_and_the_next_frame_shows_the_top(probe, node_process) -> None:
    stand_in, adapter = _start(node_process)
    probe.wait_for_robot([stand_in, adapter])

    status, eye = probe.move("front")  # the eye-level view the verifier starts from
    assert status == GoalStatus.STATUS_SUCCEEDED and eye.outcome == OUTCOME.OUTCOME_STAYED, eye.message
    assert eye.level == 0
    eye_view, eye_camera = probe.view_from(stamp_to_nanoseconds(eye.frame_stamp))
    assert eye_view.mask_meets_threshold and TOP_ATTRIBUTE not in eye_view.visible_attributes
    assert eye_camera.pose.position.z == pytest.approx(SENSOR_HEIGHT, abs=1e-6)

    status, up = probe.move("up")
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert up.outcome == OUTCOME.OUTCOME_MOVED, (up.message, up.visibility_warning)
    assert up.level == 1 and up.sector == eye.sector
    # Both joint servers, with ros2_control's types, took exactly one goal each and finished it.
    assert _action_types(probe.node, FOLLOW) == {"control_msgs/action/FollowJointTrajectory_SendGoal"}
    assert _action_types(probe.node, POINT) == {"control_msgs/action/PointHead_SendGoal"}
    wait_until(lambda: len(probe.ended(FOLLOW)) == 1 and len(probe.ended(POINT)) == 1, "both goals' ends")
    assert probe.ended(FOLLOW) == [GoalStatus.STATUS_SUCCEEDED] == probe.ended(POINT)
    # The joints stand where the level and the aim put them, and the move's frame was rendered from there.
    probe.joint_reaches(TORSO, UP_M)
    assert probe.joint(HEAD) > 0.3  # tilted down toward the mug, well below the camera now
    top_view, top_camera = probe.view_from(stamp_to_nanoseconds(up.frame_stamp))
    assert top_camera.pose.position.z == pytest.approx(SENSOR_HEIGHT + UP_M, abs=1e-6)
    assert TOP_ATTRIBUTE in top_view.visible_attributes, top_view.visible_attributes

    status, again = probe.move("up")  # level 2 is not configured
    assert again.outcome == OUTCOME.OUTCOME_UNREACHABLE and again.level == 1
    assert "level 2 (up) is unreachable: this robot's levels are -1, 0, 1" in again.visibility_warning
    status, down = probe.move("down")  # back at eye level: seen already, nothing moves
    assert down.outcome == OUTCOME.OUTCOME_ALREADY_VISITED and down.level == 1, down.visibility_warning
    assert len(probe.ended(FOLLOW)) == 1
    adapter.assert_running()
    stand_in.assert_running()


def test_without_height_joints_up_and_down_are_unreachable_and_nothing_moves(probe, node_process) -> None:
    stand_in, adapter = _start(node_process, height_joint_names="''")
    probe.wait_for_robot([stand_in, adapter])
    for direction in ("up", "down"):
        status, result = probe.move(direction)
        assert status == GoalStatus.STATUS_SUCCEEDED and result.outcome == OUTCOME.OUTCOME_UNREACHABLE
        assert result.level == 0 and "no camera height levels" in result.visibility_warning
        assert "\n" not in result.visibility_warning
    assert probe.ended(FOLLOW) == [] and probe.ended(POINT) == []
    assert probe.joint(TORSO) == 0.0


def test_a_level_position_outside_the_joint_limits_stops_the_adapter_at_start_up() -> None:
    argv = [
        str(ADAPTER),
        "--ros-args",
        "--params-file",
        str(ADAPTER_DEFAULTS),
        *ros_args({**HEIGHTS, "height_joint_max": "'0.8'"}),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [
        "robot_adapter: parameter 'height_level_positions': level 1 puts torso_lift_joint at 1, outside its "
        "limits [-0.6, 0.8] (height_joint_min / height_joint_max)"
    ], done.stderr


def test_a_joint_server_that_refuses_the_limits_makes_the_level_unreachable_and_the_next_move_is_served(
    probe, node_process
) -> None:
    # The adapter believes in a taller torso than the stand-in has: the stand-in aborts with INVALID_GOAL.
    stand_in, adapter = _start(node_process, {"torso_max_m": 0.5})
    probe.wait_for_robot([stand_in, adapter])
    status, up = probe.move("up")
    assert status == GoalStatus.STATUS_SUCCEEDED and up.outcome == OUTCOME.OUTCOME_UNREACHABLE, up.message
    assert up.level == 0
    assert up.visibility_warning == (
        "level 1 (up) is unreachable; the camera stayed at level 0: FollowJointTrajectory aborted the goal: "
        "error code -1 (INVALID_GOAL): point 0: torso_lift_joint = 1 lies outside its limits [-0.6, 0.5]"
    ), up.visibility_warning
    status, down = probe.move("down")  # the next request is served: level -1 is within the stand-in's limits
    assert down.outcome == OUTCOME.OUTCOME_MOVED and down.level == -1, (down.message, down.visibility_warning)
    probe.joint_reaches(TORSO, -0.5)


def test_a_point_head_server_that_aborts_makes_the_view_unreachable_and_the_torso_returns(
    probe, node_process
) -> None:
    stand_in, adapter = _start(node_process, {"point_head_fault": "abort"})
    probe.wait_for_robot([stand_in, adapter])
    _status, up = probe.move("up")
    assert up.outcome == OUTCOME.OUTCOME_UNREACHABLE and up.level == 0, (up.message, up.visibility_warning)
    assert up.visibility_warning.endswith("; the camera stayed at level 0: PointHead aborted the goal")
    # The torso went up, the head refused, and the torso was sent back to eye level.
    wait_until(lambda: len(probe.ended(FOLLOW)) == 2, "the torso's way up and back")
    assert probe.ended(FOLLOW) == [GoalStatus.STATUS_SUCCEEDED] * 2
    probe.joint_reaches(TORSO, 0.0)

    probe.set_stand_in("point_head_fault", "none")  # the head works again: the next request is served
    _status, again = probe.move("up")
    assert again.outcome == OUTCOME.OUTCOME_MOVED and again.level == 1, (
        again.message,
        again.visibility_warning,
    )


def test_a_point_head_server_that_never_finishes_fails_the_move_after_joint_timeout_and_is_cancelled(
    probe, node_process
) -> None:
    stand_in, adapter = _start(node_process, {"point_head_fault": "hang"}, joint_timeout_s=3.0)
    probe.wait_for_robot([stand_in, adapter])
    status, up = probe.move("up")
    assert status == GoalStatus.STATUS_ABORTED and up.outcome == OUTCOME.OUTCOME_REJECTED
    assert up.message == ("PointHead did not finish within 3 s (joint_timeout_s); its goal was cancelled"), (
        up.message
    )
    wait_until(lambda: probe.ended(POINT) == [GoalStatus.STATUS_CANCELED], "the PointHead goal's cancel")
    status, front = probe.move("front")  # nothing hangs: the next request is served
    assert front.outcome == OUTCOME.OUTCOME_STAYED, front.message


def test_cancelling_a_height_move_cancels_the_joint_goal(probe, node_process) -> None:
    stand_in, adapter = _start(node_process, {"trajectory_fault": "hang"})
    probe.wait_for_robot([stand_in, adapter])
    sent = probe.send("up")
    wait_until(lambda: probe.running(FOLLOW), "the torso goal to run")
    sent.cancel()
    response = sent.result(60.0, lambda: True, "the cancelled move")
    assert response is not None and int(response.status) == GoalStatus.STATUS_CANCELED
    wait_until(lambda: probe.ended(FOLLOW) == [GoalStatus.STATUS_CANCELED], "the torso goal's cancel")
    probe.set_stand_in("trajectory_fault", "none")
    _status, up = probe.move("up")
    assert up.outcome == OUTCOME.OUTCOME_MOVED and up.level == 1, (up.message, up.visibility_warning)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
