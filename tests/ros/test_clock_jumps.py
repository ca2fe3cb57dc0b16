"""The verifier node when frame stamps jump: one image stamped far in the future must not become the newest frame.

A goal without a start stamp is served with the image that arrived last among those whose stamp is not further
ahead of the node's clock than ``max_stamp_ahead_s``. The node's clock is ROS time, so with ``use_sim_time``
the bound is measured against ``/clock`` (a replayed bag): there an image stamped with the wall clock is the
one from the future, and a clock that starts over (a bag loop) still serves the frames that follow.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
from aiv_common.action_waits import send_goal_confirmed
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.stamps import nanoseconds_to_stamp, stamp_to_nanoseconds
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import GroundTruthView, Verdict
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Image
from support.ros_harness import wait_until

INSTALL = Path(__file__).resolve().parents[2] / "ros2_ws" / "install"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)
SECOND = 1_000_000_000
HOUR = 3600 * SECOND
#: The classical backend on ground-truth boxes needs no dataset; one step judges the first frame and stops.
VERIFIER_ARGS = ["-p", "verifier.classical.ocr_engine:=none", "-p", "frame_timeout_s:=10.0"]


class FakeCamera:
    """Publishes frames (image + ground-truth view with one stamp) and watches the verifier's diagnostics."""

    def __init__(self, executor) -> None:
        self.node = executor.create_node("fake_camera")
        self.image_pub = self.node.create_publisher(Image, "camera/image_raw", LATCHED)
        self.gt_pub = self.node.create_publisher(GroundTruthView, "sim/ground_truth_view", LATCHED)
        self.diagnostics: dict[str, str] = {}
        self.diagnostics_stamp_ns = 0
        self._lock = threading.Lock()
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)

    def _on_diagnostics(self, array: DiagnosticArray) -> None:
        for status in array.status:
            if status.name == "verifier: agent":
                with self._lock:
                    self.diagnostics = {value.key: value.value for value in status.values}
                    self.diagnostics_stamp_ns = stamp_to_nanoseconds(array.header.stamp)

    def stamps_ahead(self) -> int:
        with self._lock:
            return int(self.diagnostics.get("stamps_ahead", "0"))

    def wait_for_verifier(self, verifier) -> None:
        wait_until(
            lambda: (
                not verifier.running
                or (self.image_pub.get_subscription_count() > 0 and self.gt_pub.get_subscription_count() > 0)
            ),
            "the verifier's frame subscriptions",
            timeout_s=60.0,
        )
        verifier.assert_running()

    def publish(self, stamp_ns: int, value: int, *, with_ground_truth: bool = True) -> Time:
        message = numpy_to_imgmsg(np.full((64, 36, 3), value, np.uint8), "rgb8")
        message.header.stamp = nanoseconds_to_stamp(stamp_ns)
        if with_ground_truth:
            gt = GroundTruthView(
                capture_tag=f"frame_{value}",
                sector=0,
                has_box=False,
                episode_path="none",
                target_object_id="none",
            )
            gt.header.stamp = message.header.stamp
            self.gt_pub.publish(gt)
        self.image_pub.publish(message)
        return message.header.stamp


def _start_verifier(node_process, *extra: str):
    argv = [
        str(VERIFIER_EXECUTABLE),
        "--ros-args",
        "--params-file",
        str(VERIFIER_PARAMS),
        *VERIFIER_ARGS,
        *extra,
    ]
    return node_process(argv, name="verifier")


def _serve_without_stamp(executor, request_id: str) -> Verdict:
    """One VerifyInstance goal with no start stamp and a budget of one step; its verdict."""
    client: ActionClient[Any, Any, Any] = executor.spin_new(
        f"goal_sender_{request_id}", lambda node: ActionClient(node, VerifyInstance, "verify_instance")
    )
    assert client.wait_for_server(timeout_sec=30.0)
    goal = VerifyInstance.Goal(request_id=request_id, descriptions=["a grey box"], step_budget=1)
    sent = send_goal_confirmed(client, goal, timeout_s=30.0)
    assert sent is not None and sent.accepted
    return sent.result(60.0, lambda: True, "verdict").result.verdict


def _judged_stamp(verdict: Verdict) -> int:
    assert verdict.decision != Verdict.DECISION_FAILED, verdict.failure_reason
    assert len(verdict.transcript) == 1
    return stamp_to_nanoseconds(verdict.transcript[0].image_stamp)


def test_a_frame_from_the_future_does_not_stop_goals_without_a_start_stamp(
    ros_executor, node_process
) -> None:
    camera = FakeCamera(ros_executor)
    verifier = _start_verifier(node_process)
    camera.wait_for_verifier(verifier)
    now = camera.node.get_clock().now().nanoseconds

    camera.publish(now + 10 * 365 * 24 * HOUR, 250)  # the camera's clock jumped ten years ahead, once
    wait_until(lambda: camera.stamps_ahead() == 1, "the verifier to count the frame from the future")
    normal = [now + SECOND // 10, now + 2 * SECOND // 10]
    for index, stamp in enumerate(normal):
        camera.publish(stamp, 100 + index)

    assert _judged_stamp(_serve_without_stamp(ros_executor, "after_jump")) in normal
    wait_until(lambda: "ahead of this node's clock" in verifier.output(), "the verifier's warning")
    verifier.assert_running()


def test_with_sim_time_the_bound_follows_clock_and_a_restarted_clock_still_serves_frames(
    ros_executor, node_process
) -> None:
    camera = FakeCamera(ros_executor)
    sim_now = {"ns": 1000 * SECOND}
    clock_pub = camera.node.create_publisher(Clock, "/clock", 10)

    def tick() -> None:  # a bag player's /clock, at the recording's pace; the test may set it back
        sim_now["ns"] += SECOND // 20
        clock_pub.publish(Clock(clock=nanoseconds_to_stamp(sim_now["ns"])))

    camera.node.create_timer(0.05, tick)
    verifier = _start_verifier(node_process, "-p", "use_sim_time:=true")
    camera.wait_for_verifier(verifier)

    def verifier_clock_in(low: int, high: int) -> bool:  # the diagnostics' header carries the node's clock
        with camera._lock:
            return low <= camera.diagnostics_stamp_ns < high

    wait_until(
        lambda: verifier_clock_in(1000 * SECOND, 1000 * SECOND + HOUR),
        "the verifier's clock to follow /clock",
    )
    wall = camera.node.get_clock().now().nanoseconds  # decades ahead of the bag's time
    camera.publish(wall, 250)
    wait_until(lambda: camera.stamps_ahead() == 1, "the verifier to count the wall-clock frame")
    bag_frame = sim_now["ns"]
    camera.publish(bag_frame, 100)
    assert _judged_stamp(_serve_without_stamp(ros_executor, "sim_time")) == bag_frame

    sim_now["ns"] = 20 * SECOND  # the bag starts over: the clock and the stamps go back
    # Below the old timeline's frame, not just past 20 s: until the clock has gone back, that frame is not
    # ahead of it and is still the newest one a request may take.
    wait_until(lambda: verifier_clock_in(20 * SECOND, bag_frame), "the verifier's clock to go back")
    looped = sim_now["ns"]
    camera.publish(looped, 120)
    assert _judged_stamp(_serve_without_stamp(ros_executor, "looped")) == looped
    verifier.assert_running()
