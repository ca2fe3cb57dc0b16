"""The robot adapter's Nav2 path (``navigation: nav2``) against Nav2's own NavigateToPose type, and its
``nav_msgs/Odometry`` pose source, with the robot stand-in as the base (real DDS, real processes).

The adapter and the stand-in (``aiv_robot_sim``) run as processes; a Nav2-like NavigateToPose server
(tests/ros/peers/nav2_server.py: accepts or rejects, sends feedback with the current pose and the distance
remaining, succeeds, aborts with an error code, honours cancel) runs in the test and drives the stand-in through
its goal topic. The adapter reads the robot's pose from the stand-in's ``nav_msgs/Odometry``. Each documented
outcome ends as docs/robot.md ("The robot adapter") says: a sector move arrives (``moved``, a frame taken at the goal);
a goal Nav2 rejects or aborts, at both stand-offs, makes the sector ``unreachable`` (the abort's error code
and message in the warning) without moving the robot; no server within ``answer_timeout_s`` is a fault
(``rejected``, naming the action); a cancelled move cancels the Nav2 goal and the robot stops. The topic path
(``navigation: topic``) with ``pose_source: auto`` reads the same Odometry.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from action_msgs.msg import GoalStatus
from aiv_common.action_waits import SentGoal
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.action import MoveToSector
from aiv_robot.geometry import Pose2D, camera_faces, yaw_from_quaternion
from aiv_robot_sim.frames import world_from_scene_point
from aiv_robot_sim.live_scene import LiveScene
from rclpy.action import ActionClient
from rclpy.node import Node
from std_msgs.msg import String
from support.robot_nodes import move, send_move, start_adapter, start_stand_in, wait_for_robot
from support.ros2_cli import require_tools
from support.ros_harness import wait_until

require_tools("nav2_msgs")

from nav_msgs.msg import Odometry  # noqa: E402 - a pinned requirement; after the skip like the peer's import
from ros.peers.nav2_server import GOAL_OUTSIDE_MAP, Nav2Server  # noqa: E402 - needs nav2_msgs

pytestmark = pytest.mark.ros

#: micro, seed 42: the base starts at the episode's s0_far capture; the far view of "front-right" is free,
#: both views of "front-left" lie outside the room.
SCENE, EPISODE = "00800-Pnu8fTXhpCq", "0"
FAR_M, NEAR_M = 1.55, 1.05  # robot_verify_standin.yaml's stand-offs
NO_POSE_YET = "no robot pose yet"
FREE, BLOCKED = "front-right", "front-left"


def _object_xy() -> tuple[float, float]:
    x, y, _ = world_from_scene_point(LiveScene(scene=SCENE, episode=EPISODE).goal)
    return x, y


OBJECT_XY = _object_xy()


def _start(node_process: Any, time_scale: float = 10.0, **adapter_params: object) -> tuple[Any, Any]:
    """The stand-in and the adapter (the stand-in's params file, then Nav2 and Odometry unless overridden)."""
    stand_in = start_stand_in(
        node_process,
        {"scene": SCENE, "episode": EPISODE, "time_scale": time_scale, "privileged_output": False},
    )
    adapter = start_adapter(
        node_process,
        {
            "navigation": "nav2",
            "pose_source": "odometry",
            "object_from_parameters": True,  # no object-pose discovery race: the stand-in's object
            "object_x": OBJECT_XY[0],
            "object_y": OBJECT_XY[1],
            "pose_timeout_s": 1.5,  # above the delays of a loaded CI machine
            "navigation_timeout_s": 15.0,
            "request_topic": "''",  # no verifier: one session for the adapter's life
            **adapter_params,
        },
    )
    return stand_in, adapter


def _pose(message: Any) -> Pose2D:
    q = message.orientation
    return Pose2D(message.position.x, message.position.y, yaw_from_quaternion(q.z, q.w, q.x, q.y))


class Probe:
    """The test's view of the robot (the stand-in's Odometry and goal statuses) and its MoveToSector client."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.lock = threading.Lock()
        self.odometry: list[Odometry] = []
        self.statuses: list[str] = []
        node.create_subscription(Odometry, "odom", self._on_odometry, 10)
        node.create_subscription(String, "goal_status", self._on_status, 10)
        self.mover: Any = ActionClient(node, MoveToSector, "move_to_sector")

    def _on_odometry(self, message: Odometry) -> None:
        with self.lock:
            self.odometry.append(message)

    def _on_status(self, message: String) -> None:
        with self.lock:
            self.statuses.append(message.data)

    def pose(self) -> Pose2D:
        with self.lock:
            return _pose(self.odometry[-1].pose.pose)

    def wait_for_robot(self, processes: list[Any]) -> Pose2D:
        """Until the stand-in's odometry arrives, the adapter reads it and serves moves; the start pose."""

        def read() -> bool:
            readers = {info.node_name for info in self.node.get_subscriptions_info_by_topic("/odom")}
            return bool(self.odometry) and "robot_adapter" in readers

        wait_for_robot(
            read, "the stand-in's odometry and the adapter's subscription to it", processes, self.mover
        )
        return self.pose()

    def send(self, direction: str) -> SentGoal:
        return send_move(self.mover, direction)

    def move(self, direction: str) -> tuple[int, MoveToSector.Result]:
        return move(self.mover, direction, 60.0)

    def move_once_posed(self, direction: str) -> MoveToSector.Result:
        """The result of ``direction`` sent once the adapter has the robot's pose: a move that reaches the adapter
        before its first Odometry fails with "no robot pose yet" before anything goes to navigation (nothing
        moves), and is sent again after a few more odometry messages (each such failure also sends the zero
        Twist that stops the robot: a flood of them could still be reaching the stand-in during a later move)."""
        results: list[MoveToSector.Result] = []

        def posed() -> bool:
            results.append(self.move(direction)[1])
            if NO_POSE_YET not in results[-1].message:
                return True
            with self.lock:
                seen = len(self.odometry)
            wait_until(lambda: len(self.odometry) >= seen + 4, "more odometry before asking again")
            return False

        wait_until(posed, "a move the adapter plans with the robot's Odometry")
        return results[-1]

    def until_posed(self) -> MoveToSector.Result:
        """:meth:`move_once_posed` with a sector neither of whose views the stand-in accepts (outside the room):
        nothing moves, and the zero Twist each early failure sends to stop the robot has reached the stand-in
        before the move a test is about (the stand-in answered two goals sent after it)."""
        result = self.move_once_posed(BLOCKED)
        assert result.outcome == MoveToSector.Result.OUTCOME_UNREACHABLE, (
            result.message,
            result.visibility_warning,
        )
        return result

    def first_odometry_at(self, goal: Pose2D) -> int:
        """Stamp (ns) of the first Odometry with the base standing at ``goal``."""
        with self.lock:
            for message in self.odometry:
                if _pose(message.pose.pose).within(goal, 1e-6, 1e-6):
                    return stamp_to_nanoseconds(message.header.stamp)
        raise AssertionError(f"the base never stood at {goal}")

    def reads_odometry_only(self) -> None:
        """The adapter takes the robot pose from nav_msgs/Odometry on /odom, not from the PoseStamped topics."""
        odom = self.node.get_subscriptions_info_by_topic("/odom")
        assert any(
            info.node_name == "robot_adapter" and info.topic_type == "nav_msgs/msg/Odometry" for info in odom
        ), odom
        for topic in ("/odom_pose", "/robot_pose"):
            readers = {info.node_name for info in self.node.get_subscriptions_info_by_topic(topic)}
            assert "robot_adapter" not in readers, (topic, readers)


def _probe(ros_executor: Any) -> Probe:
    return ros_executor.spin_new("nav2_test", Probe)


@pytest.fixture
def start_nav2(ros_executor: Any) -> Iterator[Callable[..., Nav2Server]]:
    """Factory of Nav2-like servers in the test's executor; each is destroyed after the test.

    rclpy's destroy_node leaves a node's action servers alive, and a server left from an earlier test would
    still be in the graph (listed, never answering) when a later test needs there to be none.
    """
    servers: list[Nav2Server] = []

    def start(action_name: str = "navigate_to_pose") -> Nav2Server:
        servers.append(ros_executor.spin_new("bt_navigator", lambda node: Nav2Server(node, action_name)))
        return servers[-1]

    yield start
    ros_executor.executor.shutdown(timeout_sec=5.0)  # nothing waits on the servers' handles any more
    for server in servers:
        server.server.destroy()


def _still_at(probe: Probe, start: Pose2D) -> None:
    assert probe.pose().within(start, 1e-6, 1e-6), (probe.pose(), start)


def test_a_sector_move_through_nav2_arrives_and_returns_a_frame_taken_at_the_goal(
    ros_executor, node_process, start_nav2
) -> None:
    probe, nav2 = _probe(ros_executor), start_nav2()
    stand_in, adapter = _start(node_process, time_scale=4.0)  # 1.6 m in 0.8 s: several feedback messages
    start = probe.wait_for_robot([stand_in, adapter])
    probe.reads_odometry_only()
    probe.until_posed()  # Nav2 aborts both goals: their views lie outside the room

    status, result = probe.move(FREE)
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert result.outcome == MoveToSector.Result.OUTCOME_MOVED, (result.message, result.visibility_warning)
    assert [goal.ending for goal in nav2.goals] == ["aborted", "aborted", "succeeded"]
    goal = nav2.goals[-1]
    assert (
        goal.error_code == 0 and goal.robot_answers[0] == "accepted" and goal.robot_answers[-1] == "arrived"
    )
    # The viewing pose: the far stand-off, camera facing the object, one sector (60°) round from the start.
    assert math.hypot(goal.pose.x - OBJECT_XY[0], goal.pose.y - OBJECT_XY[1]) == pytest.approx(
        FAR_M, abs=1e-6
    )
    assert camera_faces(goal.pose, OBJECT_XY) < 1e-6
    turned = math.atan2(goal.pose.y - OBJECT_XY[1], goal.pose.x - OBJECT_XY[0]) - math.atan2(
        start.y - OBJECT_XY[1], start.x - OBJECT_XY[0]
    )
    assert abs(math.remainder(turned, 2 * math.pi)) == pytest.approx(math.radians(60.0), abs=0.05)
    # Nav2's feedback followed the drive: the base's pose, the distance remaining shrinking towards the goal.
    assert len(goal.distances) >= 2 and goal.distances[0] > goal.distances[-1], goal.distances
    assert goal.distances[0] <= start.distance_to(goal.pose) + 1e-6
    # The frame the move returns was taken with the base standing at the goal.
    assert stamp_to_nanoseconds(result.frame_stamp) >= probe.first_odometry_at(goal.pose)
    wait_until(lambda: probe.pose().within(goal.pose, 1e-6, 1e-6), "odometry at the goal")
    stand_in.assert_running()
    adapter.assert_running()


def test_goals_nav2_rejects_make_the_sector_unreachable_and_the_robot_stays(
    ros_executor, node_process, start_nav2
) -> None:
    probe, nav2 = _probe(ros_executor), start_nav2()
    nav2.active = False  # a navigator whose lifecycle is not active rejects every goal
    stand_in, adapter = _start(node_process)
    start = probe.wait_for_robot([stand_in, adapter])

    result = probe.move_once_posed(FREE)
    assert result.outcome == MoveToSector.Result.OUTCOME_UNREACHABLE, result.message
    warning = result.visibility_warning
    assert warning.count("Nav2 rejected the goal") == 2, warning  # the far and the near stand-off
    assert f"far view ({FAR_M:g} m)" in warning and f"near view ({NEAR_M:g} m)" in warning, warning
    assert nav2.rejected == 2 and nav2.goals == []
    _still_at(probe, start)
    adapter.assert_running()


def test_nav2_aborts_name_their_error_code_and_make_the_sector_unreachable(
    ros_executor, node_process, start_nav2
) -> None:
    probe, nav2 = _probe(ros_executor), start_nav2()
    nav2.abort_next.append((9002, "Transform data too old"))  # TF_ERROR from the navigator itself, far view
    stand_in, adapter = _start(node_process)
    start = probe.wait_for_robot([stand_in, adapter])

    result = probe.move_once_posed(BLOCKED)  # the near view lies outside the room: the planner fails
    assert result.outcome == MoveToSector.Result.OUTCOME_UNREACHABLE, result.message
    warning = result.visibility_warning
    assert (
        f"far view ({FAR_M:g} m): navigation refused or failed (Nav2 aborted the goal: error code 9002 "
        "(TF_ERROR): Transform data too old)"
    ) in warning, warning
    assert (
        f"near view ({NEAR_M:g} m): navigation refused or failed (Nav2 aborted the goal: error code "
        f"{GOAL_OUTSIDE_MAP}: the goal is outside the room)"
    ) in warning, warning
    assert [(goal.ending, goal.error_code) for goal in nav2.goals] == [
        ("aborted", 9002),
        ("aborted", GOAL_OUTSIDE_MAP),
    ]
    assert nav2.goals[1].robot_answers == ["refused: the goal is outside the room"]
    _still_at(probe, start)
    adapter.assert_running()


def test_without_a_nav2_server_the_move_fails_after_answer_timeout_and_the_adapter_keeps_serving(
    ros_executor, node_process, start_nav2
) -> None:
    probe = _probe(ros_executor)
    # An action name no other test serves: an earlier test's destroyed server can linger in the adapter's view
    # of the graph on a loaded machine, and a goal sent to it goes unanswered instead of finding no server.
    action = "navigate_to_pose_late"
    stand_in, adapter = _start(node_process, answer_timeout_s=0.5, navigate_action=action)
    start = probe.wait_for_robot([stand_in, adapter])

    began = time.monotonic()
    result = probe.move_once_posed(FREE)
    assert time.monotonic() - began >= 0.5
    assert result.outcome == MoveToSector.Result.OUTCOME_REJECTED, result.visibility_warning
    assert (
        f"navigation did not take the goal: no NavigateToPose server on '/{action}' within 0.5 s "
        "(answer_timeout_s)"
    ) in result.message, result.message
    _still_at(probe, start)
    adapter.assert_running()

    nav2 = start_nav2(action)  # Nav2 comes up: once the adapter discovered it, moves go through
    results: list[tuple[int, MoveToSector.Result]] = []

    def through() -> bool:
        results.append(probe.move(FREE))
        return "navigation did not take the goal" not in results[-1][1].message

    wait_until(through, "a move once the adapter discovered the Nav2 server")
    status, again = results[-1]
    assert status == GoalStatus.STATUS_SUCCEEDED, again.message
    assert again.outcome == MoveToSector.Result.OUTCOME_MOVED, (again.message, again.visibility_warning)
    # (a goal whose acceptance the adapter never heard, right after discovery, was preempted by the next one)
    assert nav2.goals[-1].ending == "succeeded"
    wait_until(lambda: probe.pose().within(nav2.goals[-1].pose, 1e-6, 1e-6), "odometry at the goal")


def test_cancelling_a_move_cancels_the_nav2_goal_and_the_robot_stops(
    ros_executor, node_process, start_nav2
) -> None:
    probe, nav2 = _probe(ros_executor), start_nav2()
    stand_in, adapter = _start(node_process, time_scale=1.0)  # a 1.6 m drive takes about 3 s
    start = probe.wait_for_robot([stand_in, adapter])
    probe.until_posed()

    sent = probe.send(FREE)
    wait_until(
        lambda: len(nav2.goals) == 3 and probe.pose().distance_to(start) > 0.1,
        "the base to drive off for Nav2",
    )
    goal = nav2.goals[-1]
    sent.cancel()
    response = sent.result(30.0, lambda: True, "the cancelled move")
    assert response is not None and response.status == GoalStatus.STATUS_CANCELED
    assert response.result.outcome == MoveToSector.Result.OUTCOME_REJECTED
    assert "cancelled" in response.result.message, response.result.message
    wait_until(lambda: goal.ending == "canceled", "Nav2's goal to end canceled")
    assert goal.cancel_requested  # the server saw the adapter's cancel request
    wait_until(lambda: "cancelled" in probe.statuses, "the stand-in to stop")

    def standing() -> bool:
        with probe.lock:
            twist = probe.odometry[-1].twist.twist
        return twist.linear.x == 0.0 and twist.linear.y == 0.0 and twist.angular.z == 0.0

    wait_until(standing, "odometry of a base standing still")
    assert probe.pose().distance_to(goal.pose) > 0.3  # stopped short of the viewing pose
    adapter.assert_running()


def test_topic_navigation_takes_the_robot_pose_from_odometry_by_default(ros_executor, node_process) -> None:
    probe = _probe(ros_executor)
    stand_in, adapter = _start(node_process, navigation="topic", pose_source="auto")
    probe.wait_for_robot([stand_in, adapter])
    probe.reads_odometry_only()
    wait_until(
        lambda: "robot pose from nav_msgs/Odometry on '/odom'" in adapter.output(), "the adapter's log"
    )

    probe.until_posed()  # the stand-in refuses both goals

    status, result = probe.move(FREE)
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert result.outcome == MoveToSector.Result.OUTCOME_MOVED, (result.message, result.visibility_warning)
    wait_until(lambda: probe.statuses[-2:] == ["accepted", "arrived"], "the stand-in's arrival")
    stand_in.assert_running()
    adapter.assert_running()
