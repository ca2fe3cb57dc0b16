"""A verification that ends while the base drives stops the base: cancelled by its client, or its verifier shut down.

Robot stand-in + robot adapter + verifier as real processes over DDS, the stand-in's drives made long (about a
minute of travel per sector). The test watches the stand-in's goal topics the way the base would see them:
``goal_pose`` (a drive starts), ``goal_cancel`` (the adapter stops the base) and ``goal_status`` (``accepted``,
``arrived``, ``cancelled``). It checks that

- a VerifyInstance goal cancelled mid-drive is answered within a second, the base receives the stop before the
  drive would have ended and never reports ``arrived``, and the verdict's transcript holds the step taken;
- the next request is served;
- a verifier stopped with SIGTERM mid-drive cancels its move first (the base stops) and ends the request as
  failed, with the reason.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest
from aiv_common.action_waits import send_goal_confirmed
from aiv_common.qos import LATCHED_CURRENT
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import Verdict
from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionClient
from std_msgs.msg import Empty, String
from support.ros_harness import ros_args, wait_until

pytestmark = pytest.mark.ros

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
ADAPTER = INSTALL / "aiv_robot" / "lib" / "aiv_robot" / "robot_adapter"
ADAPTER_DEFAULTS = INSTALL / "aiv_robot" / "share" / "aiv_robot" / "config" / "robot_adapter.yaml"
VERIFIER = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_DEFAULTS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
ROBOT_SIM = INSTALL / "aiv_robot_sim" / "lib" / "aiv_robot_sim" / "robot_sim"
STANDIN_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "robot_verify_standin.yaml"

#: The stand-in's base at 0.5 m/s x 0.02: a sector's drive (about 1.5 m) takes over a minute of wall time.
TIME_SCALE = 0.02
DRIVE_TIMEOUT_S = 300.0
#: How long the stop may take to reach the base: well under a drive (over a minute), so a base that got it did
#: not finish its drive, yet loose enough for two busy cores (5 s was exceeded once in a full CI run).
STOP_WAIT_S = 30.0
#: Descriptions the first view cannot settle (the stand-in's backpack, its straps and pocket described wrongly).
QUERY = ["an orange backpack with blue shoulder straps and a green front pocket"]


class Base:
    """What the base sees of the adapter: drive goals, stop requests and its own status reports."""

    def __init__(self, node) -> None:
        self.node = node
        self.lock = threading.Lock()
        self.goals: list[float] = []  # time.monotonic() of each drive goal
        self.stops: list[float] = []
        self.status: list[str] = []
        node.create_subscription(PoseStamped, "goal_pose", lambda _m: self._add(self.goals), 10)
        node.create_subscription(Empty, "goal_cancel", lambda _m: self._add(self.stops), 10)
        node.create_subscription(String, "goal_status", self._on_status, 10)
        self.object_seen = False
        node.create_subscription(PoseStamped, "object_pose", self._on_object, LATCHED_CURRENT.to_profile())

    def _on_object(self, _message: PoseStamped) -> None:
        with self.lock:
            self.object_seen = True

    def _add(self, events: list[float]) -> None:
        with self.lock:
            events.append(time.monotonic())

    def _on_status(self, message: String) -> None:
        with self.lock:
            self.status.append(message.data)

    def driving(self) -> bool:
        """A drive goal was accepted and has not ended (the stand-in answers every goal, in order)."""
        with self.lock:
            return bool(self.status) and self.status[-1] == "accepted"

    def connected(self) -> bool:
        """The stand-in and the adapter publish on every topic watched here (else the first goals may be missed),
        and the stand-in's latched object pose is out with the adapter reading it: a move the verifier asks
        for before the adapter has it is refused ("no object pose yet"), seen once in 30 runs under load."""
        with self.lock:
            object_seen = self.object_seen
        return (
            object_seen
            and self.node.count_subscribers("object_pose") >= 2  # the adapter's reader and this one
            and all(
                self.node.count_publishers(topic) > 0 for topic in ("goal_pose", "goal_cancel", "goal_status")
            )
        )

    def stopped_since(self, stops_before: int) -> bool:
        """The base was told to stop: the adapter's stop seen here, or the stand-in's own report that it stopped
        (the base's view; this watcher's reader may be discovered by the adapter later than the stand-in's)."""
        with self.lock:
            return len(self.stops) > stops_before or "cancelled" in self.status

    def snapshot(self) -> tuple[int, int, list[str]]:
        with self.lock:
            return len(self.goals), len(self.stops), list(self.status)


@pytest.fixture
def robot(node_process):
    """The slow stand-in and the adapter; the verifier is started by each test."""
    node_process(
        [
            str(ROBOT_SIM),
            "--ros-args",
            "--params-file",
            str(STANDIN_PARAMS),
            *ros_args({"time_scale": TIME_SCALE}),
        ],
        name="robot_sim",
    )
    node_process(
        [str(ADAPTER), "--ros-args", "--params-file", str(ADAPTER_DEFAULTS), "--params-file", str(STANDIN_PARAMS),
         # A slow pose on two busy cores must not end the drive before the test does.
         *ros_args({"navigation_timeout_s": DRIVE_TIMEOUT_S, "pose_timeout_s": 10.0})],
        name="robot_adapter",
    )  # fmt: skip


def _start_verifier(node_process):
    return node_process(
        [str(VERIFIER), "--ros-args", "--params-file", str(VERIFIER_DEFAULTS), "--params-file", str(STANDIN_PARAMS),
         *ros_args({"move_timeout_s": 3 * DRIVE_TIMEOUT_S + 10.0})],
        name="verifier",
    )  # fmt: skip


def _send(client: ActionClient, request_id: str, descriptions: list[str], **overrides: str):
    goal = VerifyInstance.Goal(request_id=request_id, descriptions=descriptions, step_budget=6, **overrides)
    sent = send_goal_confirmed(client, goal, timeout_s=60.0)
    assert sent is not None and sent.accepted, f"the verifier refused {request_id}"
    return sent


def _drive_under_way(node_process, ros_executor, request_id: str):
    """Start a verifier, send it QUERY and return once the base drives to the first sector."""
    verifier = _start_verifier(node_process)
    base = ros_executor.spin_new("base_watch", Base)
    client = ros_executor.spin_new(
        "client", lambda node: ActionClient(node, VerifyInstance, "verify_instance")
    )
    assert client.wait_for_server(timeout_sec=60.0)
    wait_until(base.connected, "the base topics and the object pose", timeout_s=60.0)
    # The reference's vote fusion with angular FPS drives until its budget or its votes settle; the robot
    # default (evidential) may rightly stop UNDECIDED before any drive when no view could settle the query,
    # which is not what these tests are about.
    sent = _send(client, request_id, QUERY, fusion="attr_majority", nbv_strategy="farthest")
    wait_until(base.driving, "the base driving to the first sector", timeout_s=120.0)
    return verifier, base, client, sent


def test_a_cancel_mid_drive_stops_the_base_at_once_and_the_next_request_is_served(
    robot, node_process, ros_executor
) -> None:
    verifier, base, client, sent = _drive_under_way(node_process, ros_executor, "cancel-me")
    goals_before, stops_before, _ = base.snapshot()

    asked = time.monotonic()
    cancel = sent._handle().cancel_goal_async()
    ros_executor.run(cancel, "the answer to the cancel", timeout_s=5.0)
    response = sent.result(5.0, lambda: True, "the cancelled verification")
    answered_s = time.monotonic() - asked
    assert response is not None, verifier.output()
    assert answered_s < 1.0, f"the cancel took {answered_s:.2f} s to answer"

    wait_until(lambda: base.stopped_since(stops_before), "the stop reaching the base", timeout_s=STOP_WAIT_S)
    assert time.monotonic() - asked < STOP_WAIT_S  # the drive would take over a minute
    wait_until(lambda: "cancelled" in base.snapshot()[2], "the base reporting the drive cancelled")
    assert "arrived" not in base.snapshot()[2], base.snapshot()
    assert base.snapshot()[0] == goals_before  # no further drive was started

    verdict: Verdict = response.result.verdict
    assert verdict.decision == Verdict.DECISION_FAILED and verdict.stop_reason == "canceled"
    assert verdict.steps >= 1 and len(verdict.transcript) == verdict.steps, verdict
    assert verdict.transcript[-1].move_outcome == "rejected"
    assert "canceled" in verdict.failure_reason

    # The verifier serves the next request (one the first view settles: no drive needed).
    again = _send(client, "next", ["a backpack"])
    answered = again.result(120.0, lambda: True, "the next verification")
    assert answered is not None and answered.result.verdict.decision != Verdict.DECISION_FAILED, answered
    verifier.assert_running()


def test_a_verifier_stopped_mid_drive_cancels_its_move_first(robot, node_process, ros_executor) -> None:
    verifier, base, _client, sent = _drive_under_way(node_process, ros_executor, "interrupted")
    _, stops_before, _ = base.snapshot()
    sent.result_future = sent._handle().get_result_async()  # asked before the verifier goes
    verifier.process.send_signal(signal.SIGTERM)
    wait_until(lambda: base.stopped_since(stops_before), "the stop reaching the base", timeout_s=STOP_WAIT_S)
    response = sent.result(10.0, lambda: True, "the interrupted verification")
    assert response is not None
    verdict: Verdict = response.result.verdict
    assert verdict.decision == Verdict.DECISION_FAILED and "shut down" in verdict.failure_reason, verdict
    assert verifier.process.wait(timeout=10.0) == 0, verifier.output()
    assert "arrived" not in base.snapshot()[2]
