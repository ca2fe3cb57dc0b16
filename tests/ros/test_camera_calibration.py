"""The verifier node reads the camera's calibration (sensor_msgs/CameraInfo) for the classical size cue.

A robot's camera is not the benchmark's: the same mug fills a different number of pixels through another lens,
and a size cue that assumes the benchmark's 42-degree field of view then rules true objects out. The node takes
the focal length from ``camera_info_topic`` when a calibration comes, keeps the last good one when a driver
sends an uncalibrated (all-zero) one, counts that as a bad message, and says in its diagnostics which camera it
uses. Real DDS, the installed node, the classical backend on a hand-made frame and a ground-truth box.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from aiv_common.action_waits import send_goal_confirmed
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.stamps import nanoseconds_to_stamp
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import Detection2D, GroundTruthView, Verdict
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from support.ros_harness import wait_until
from verifier_classical.scenes import BOX, FRAME_HW, paint_object, solid

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
BENCHMARK_FX = 468.9  # 360 px wide at a 42-degree field of view
LONG_LENS_FX = 2500.0


class CalibratedCamera:
    """Publishes a frame (image + ground-truth view with the box) and calibrations; reads the diagnostics."""

    def __init__(self, executor) -> None:
        self.node = executor.create_node("calibrated_camera")
        self.image_pub = self.node.create_publisher(Image, "camera/image_raw", LATCHED)
        self.gt_pub = self.node.create_publisher(GroundTruthView, "sim/ground_truth_view", LATCHED)
        self.info_pub = self.node.create_publisher(CameraInfo, "camera/camera_info", LATCHED)
        self._lock = threading.Lock()
        self.diagnostics: dict[str, str] = {}
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)

    def _on_diagnostics(self, array: DiagnosticArray) -> None:
        for status in array.status:
            if status.name == "verifier: agent":
                with self._lock:
                    self.diagnostics = {value.key: value.value for value in status.values}

    def diagnostic(self, key: str) -> str:
        with self._lock:
            return self.diagnostics.get(key, "")

    def calibrate(self, fx: float) -> None:
        height, width = FRAME_HW
        info = CameraInfo(
            width=width, height=height, k=[fx, 0.0, width / 2, 0.0, fx, height / 2, 0.0, 0.0, 1.0]
        )
        self.info_pub.publish(info)

    def frame(self, seconds: int):
        message = numpy_to_imgmsg(paint_object(solid((40, 90, 205))), "rgb8")
        message.header.stamp = nanoseconds_to_stamp(seconds * SECOND)
        x1, y1, x2, y2 = BOX
        gt = GroundTruthView(
            capture_tag="s0_far",
            sector=0,
            has_box=True,
            box=Detection2D(x_min=float(x1), y_min=float(y1), x_max=float(x2), y_max=float(y2), score=1.0),
            episode_path="none",
            target_object_id="none",
        )
        gt.header.stamp = message.header.stamp
        self.gt_pub.publish(gt)
        self.image_pub.publish(message)
        return message.header.stamp


def _ask(executor, request_id: str, stamp) -> Verdict:
    """ "Is this a blue mug?" on one frame, with a budget of one step."""
    client: ActionClient[Any, Any, Any] = executor.spin_new(
        f"goal_sender_{request_id}", lambda node: ActionClient(node, VerifyInstance, "verify_instance")
    )
    assert client.wait_for_server(timeout_sec=30.0)
    goal = VerifyInstance.Goal(
        request_id=request_id, descriptions=["a blue mug"], step_budget=1, start_stamp=stamp
    )
    sent = send_goal_confirmed(client, goal, timeout_s=30.0)
    assert sent is not None and sent.accepted
    verdict = sent.result(60.0, lambda: True, "verdict").result.verdict
    assert verdict.decision != Verdict.DECISION_FAILED, verdict.failure_reason
    return verdict


def test_the_size_cue_follows_the_cameras_calibration(ros_executor, node_process) -> None:
    camera = CalibratedCamera(ros_executor)
    verifier = node_process(
        [
            str(VERIFIER_EXECUTABLE),
            "--ros-args",
            "--params-file",
            str(VERIFIER_PARAMS),
            *("-p", "verifier.classical.ocr_engine:=none", "-p", "frame_timeout_s:=10.0"),
        ],
        name="verifier",
    )
    wait_until(
        lambda: not verifier.running or camera.info_pub.get_subscription_count() > 0,
        "the verifier's camera_info subscription",
        timeout_s=60.0,
    )
    verifier.assert_running()
    assert camera.diagnostic("camera") in ("", "no camera_info")

    # Through the benchmark's lens a 200 px box at the robot's stand-off spans at least 34 cm: no mug.
    camera.calibrate(BENCHMARK_FX)
    wait_until(lambda: "fx 468.9 px for 360x640" in camera.diagnostic("camera"), "the first calibration")
    benchmark = _ask(ros_executor, "benchmark_lens", camera.frame(10))
    assert benchmark.decision == Verdict.DECISION_NO
    assert "not a mug" in benchmark.transcript[0].attributes[0].last_reason

    # Through a long lens the same box spans at most 15 cm: the colour decides, and it is the mug's.
    camera.calibrate(LONG_LENS_FX)
    wait_until(lambda: "fx 2500.0 px" in camera.diagnostic("camera"), "the second calibration")
    long_lens = _ask(ros_executor, "long_lens", camera.frame(20))
    attributes = {a.evidence_phrase: a for a in long_lens.transcript[0].attributes}
    assert all("not a mug" not in a.last_reason for a in attributes.values())
    assert [a.last_answer for a in attributes.values()] == ["Yes"]

    # An uncalibrated driver sends zeros: counted and warned about, and the last good calibration stays.
    camera.calibrate(0.0)
    wait_until(lambda: "not calibrated" in camera.diagnostic("last_error"), "the bad calibration's report")
    assert "fx 2500.0 px" in camera.diagnostic("camera")
    again = _ask(ros_executor, "after_zeros", camera.frame(30))
    assert [a.last_answer for a in again.transcript[0].attributes] == ["Yes"]
    assert "camera_info at 0 ns: camera_info K[0] (fx) is 0" in verifier.output()
    # A driver without calibration repeats it with every frame: counted each time, warned about once.
    bad_before = int(camera.diagnostic("bad_messages") or 0)
    camera.calibrate(0.0)
    wait_until(
        lambda: int(camera.diagnostic("bad_messages") or 0) > bad_before, "the repeated bad calibration"
    )
    assert verifier.output().count("K[0] (fx) is 0") == 1
    verifier.assert_running()
