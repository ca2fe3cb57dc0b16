"""The robot stand-in over real DDS: a camera driver's topics, odometry, goals, refusals, live renders.

The node runs in-process next to a client node. It is given no dataset at all (only preset, seed, scene and
episode), and an audit hook records every file the process opens while it runs: no pre-captured
``rgb/*.png`` (nor any PNG) is read, yet the frames at capture poses are the captures' views (same ground
truth, see tests/robot_sim for pixels) and the frames at an off-capture pose are live renders of that pose.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiv_common.image_conversion import imgmsg_to_numpy
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.msg import GroundTruthView
from aiv_robot_sim.frames import BasePose, quaternion_to_yaw, yaw_to_quaternion
from aiv_robot_sim.live_scene import LiveScene
from geometry_msgs.msg import PoseStamped, Twist
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from robot_sim.poses import off_capture_pose, refused_poses
from sensor_msgs.msg import CameraInfo, CompressedImage, Image
from std_msgs.msg import Empty, String
from support.ros_harness import wait_until

pytestmark = pytest.mark.ros

INSTALL = Path(__file__).resolve().parents[2] / "ros2_ws" / "install"
SCENE, EPISODE = "00800-Pnu8fTXhpCq", "0"  # micro, seed 42: a backpack in a room with a partition wall
OPENED: list[str] = []
_AUDITING = threading.Event()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _AUDITING.is_set() and isinstance(args[0], (str, bytes)):
        OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # hooks cannot be removed; this one records only while a test sets the flag


class Client:
    """Subscribes to everything the stand-in publishes and sends it goals."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.lock = threading.Lock()
        self.got: dict[str, list[Any]] = {}
        sensor = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)  # like a driver's subscriber
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        for topic, kind, qos in (
            ("camera/image_raw", Image, sensor),
            ("camera/image_raw/compressed", CompressedImage, sensor),
            ("camera/camera_info", CameraInfo, sensor),
            ("camera/pose", PoseStamped, sensor),
            ("sim/ground_truth_view", GroundTruthView, sensor),
            ("odom_pose", PoseStamped, 10),
            ("object_pose", PoseStamped, latched),
            ("goal_status", String, 10),
        ):
            node.create_subscription(kind, topic, self._keeper(topic), qos)
        self.goal_pub = node.create_publisher(PoseStamped, "goal_pose", 10)
        self.cancel_pub = node.create_publisher(Empty, "goal_cancel", 10)
        self.twist_pub = node.create_publisher(Twist, "cmd_vel", 10)

    def _keeper(self, topic: str) -> Callable[[Any], None]:
        def keep(message: Any) -> None:
            with self.lock:
                self.got.setdefault(topic, []).append(message)

        return keep

    def messages(self, topic: str) -> list[Any]:
        with self.lock:
            return list(self.got.get(topic, []))

    def statuses(self) -> list[str]:
        return [m.data for m in self.messages("goal_status")]

    def now_ns(self) -> int:
        return int(self.node.get_clock().now().nanoseconds)

    def send(self, pose: BasePose) -> None:
        message = PoseStamped()
        message.header.frame_id = "map"
        message.pose.position.x, message.pose.position.y = pose.x, pose.y
        o = message.pose.orientation
        o.x, o.y, o.z, o.w = yaw_to_quaternion(pose.yaw)
        self.goal_pub.publish(message)

    def drive(self, pose: BasePose, ending: str = "arrived") -> tuple[list[str], int]:
        """Send a goal; wait for its answer (and its ending when accepted); return both and the time after."""
        before = len(self.statuses())
        self.send(pose)
        wait_until(lambda: len(self.statuses()) > before, "the goal's answer")
        if self.statuses()[before] == "accepted":
            wait_until(lambda: len(self.statuses()) > before + 1, f"the goal to end ({ending})")
        return self.statuses()[before:], self.now_ns()

    def odometry(self) -> BasePose:
        message = self.messages("odom_pose")[-1]
        q = message.pose.orientation
        return BasePose(
            message.pose.position.x, message.pose.position.y, quaternion_to_yaw(q.x, q.y, q.z, q.w)
        )

    def frame_after(
        self, stamp_ns: int
    ) -> tuple[Image, GroundTruthView, CompressedImage, CameraInfo, PoseStamped]:
        """The first complete frame (image, GT, compressed, info, camera pose) stamped after ``stamp_ns``."""

        def complete() -> tuple[Any, ...] | None:
            by_topic = {
                topic: {stamp_to_nanoseconds(m.header.stamp): m for m in self.messages(topic)}
                for topic in (
                    "camera/image_raw",
                    "sim/ground_truth_view",
                    "camera/image_raw/compressed",
                    "camera/camera_info",
                    "camera/pose",
                )
            }
            stamps = sorted(s for s in by_topic["camera/image_raw"] if s > stamp_ns)
            for stamp in stamps:
                if all(stamp in found for found in by_topic.values()):
                    return tuple(found[stamp] for found in by_topic.values())
            return None

        wait_until(lambda: complete() is not None, "a complete camera frame after the stamp")
        frame = complete()
        assert frame is not None
        return frame  # type: ignore[return-value]


def _close(a: BasePose, b: BasePose, tolerance: float = 1e-6) -> bool:
    turn = math.remainder(a.yaw - b.yaw, 2.0 * math.pi)
    return math.hypot(a.x - b.x, a.y - b.y) < tolerance and abs(turn) < tolerance


@pytest.fixture
def stand_in(ros_executor):
    from aiv_robot_sim.node import RobotSimNode

    _AUDITING.set()
    OPENED.clear()
    node = RobotSimNode(
        context=ros_executor.context,
        parameter_overrides=[
            Parameter("scene", value=SCENE),
            Parameter("episode", value=EPISODE),
            Parameter("camera_rate_hz", value=4.0),
            Parameter("time_scale", value=5.0),
        ],
    )
    ros_executor.add(node)
    client = ros_executor.spin_new("robot_sim_test_client", Client)
    wait_until(
        lambda: (
            client.goal_pub.get_subscription_count() > 0 and client.cancel_pub.get_subscription_count() > 0
        ),
        "the stand-in's goal and cancel subscriptions",
    )
    try:
        yield node, client
    finally:
        _AUDITING.clear()


def test_publishes_a_camera_driver_s_topics_odometry_and_the_object(stand_in) -> None:
    node, client = stand_in
    scene: LiveScene = node.scene
    image, truth, compressed, info, camera = client.frame_after(0)
    rgb = imgmsg_to_numpy(image)
    assert image.encoding == "rgb8" and rgb.shape == (640, 360, 3)
    assert info.header == image.header and (info.width, info.height) == (360, 640)
    assert math.isclose(info.k[0], scene.intr.fx) and math.isclose(info.k[5], scene.intr.cy)
    import cv2

    decoded = cv2.imdecode(np.frombuffer(bytes(compressed.data), np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
    assert compressed.format.startswith("rgb8; jpeg") and decoded.shape == rgb.shape
    assert np.abs(decoded.astype(np.int16) - rgb).mean() < 4.0
    start = scene.captures()[0]
    assert truth.capture_tag == start.tag and truth.mask_area_px == start.mask_area_px
    assert truth.target_object_id == scene.object_id and truth.episode_path == scene.episode_path
    assert truth.has_box and truth.box.label == scene.category and truth.mask_threshold_px == scene.threshold
    assert camera.header.frame_id == "map" and math.isclose(camera.pose.position.z, 1.31)
    wait_until(lambda: client.messages("odom_pose") and client.messages("object_pose"), "odometry and object")
    assert _close(client.odometry(), start.base_pose)
    obj = client.messages("object_pose")[-1]
    gx, gy, gz = scene.goal
    assert (obj.pose.position.x, obj.pose.position.y, obj.pose.position.z) == pytest.approx((-gz, -gx, gy))


def test_drives_to_goals_refuses_unreachable_ones_and_renders_off_capture_poses_live(stand_in) -> None:
    node, client = stand_in
    scene: LiveScene = node.scene
    wait_until(lambda: client.messages("odom_pose"), "odometry")

    # A capture pose on the other side: accepted, odometry moves through intermediate poses, then arrived.
    target = next(v for v in scene.captures()[2:] if v.mask_area_px > 0)
    statuses, arrived_at = client.drive(target.base_pose)
    assert statuses == ["accepted", "arrived"]
    assert _close(client.odometry(), target.base_pose)
    _, truth, *_ = client.frame_after(arrived_at)
    assert truth.capture_tag == target.tag and truth.mask_area_px == target.mask_area_px

    # Unreachable goals are refused and the base stays where it is.
    for reason, pose in refused_poses(scene).items():
        statuses, _ = client.drive(pose)
        assert len(statuses) == 1 and statuses[0].startswith("refused: ") and reason in statuses[0], statuses
    wrong_frame = len(client.statuses())
    message = PoseStamped()
    message.header.frame_id = "odom"
    message.pose.orientation.w = 1.0
    client.goal_pub.publish(message)
    wait_until(lambda: len(client.statuses()) > wrong_frame, "the answer to a goal in another frame")
    assert "frame 'odom'" in client.statuses()[-1]
    assert _close(client.odometry(), target.base_pose)

    # An off-capture pose (+-7 deg round the object, +-0.1 m): a live render of exactly that pose.
    near_view, off_pose = off_capture_pose(scene)
    statuses, arrived_at = client.drive(off_pose)
    assert statuses == ["accepted", "arrived"]
    image, truth, *_ = client.frame_after(arrived_at)
    expected = scene.render(off_pose)
    assert truth.capture_tag == "live" and truth.mask_area_px == expected.mask_area_px > 0
    assert truth.mask_area_px != near_view.mask_area_px
    np.testing.assert_array_equal(imgmsg_to_numpy(image), expected.rgb)

    opened_images = [path for path in OPENED if path.endswith(".png") or "/rgb/" in path]
    assert opened_images == []


def test_a_new_goal_preempts_and_a_cancel_stops_where_the_base_is(stand_in) -> None:
    node, client = stand_in
    scene: LiveScene = node.scene
    wait_until(lambda: client.messages("odom_pose"), "odometry")
    captures = scene.captures()
    start = captures[0].base_pose
    far_away = max(captures, key=lambda v: math.hypot(v.base_pose.x - start.x, v.base_pose.y - start.y))
    client.send(far_away.base_pose)
    client.send(captures[1].base_pose)
    wait_until(lambda: "arrived" in client.statuses(), "arrival at the second goal")
    assert client.statuses() == ["accepted", "preempted", "accepted", "arrived"]
    assert _close(client.odometry(), captures[1].base_pose)

    target = _stop_while_moving(client, captures, lambda: client.cancel_pub.publish(Empty()))
    seen = len(client.messages("odom_pose"))
    wait_until(lambda: len(client.messages("odom_pose")) > seen + 2, "odometry after the cancel")
    stopped = client.odometry()
    wait_until(lambda: len(client.messages("odom_pose")) > seen + 4, "more odometry after the cancel")
    assert _close(client.odometry(), stopped)  # it stays where it stopped
    assert not _close(stopped, target, 1e-3)
    assert not _close(stopped, captures[1].base_pose, 1e-3)

    # A zero twist on cmd_vel (what a robot adapter sends to stop any base) stops it too.
    _stop_while_moving(client, captures, lambda: client.twist_pub.publish(Twist()))


def _stop_while_moving(client, captures, stop) -> BasePose:
    """Send the base to the capture pose farthest from where it is, call ``stop`` once the goal is accepted,
    and return the goal it was stopped on the way to.

    The move takes about a second at the test's time scale; on a loaded machine the stop can reach the node
    after the base has arrived (seen once in CI), or in the tick where it reaches the goal, before it reports
    the arrival: "cancelled" at the goal (seen once in CI). Both are lost races, not failures to stop, so it is
    tried again from the new place, up to three times; every try must end either way, and one must be a stop
    short of the goal.
    """
    for _ in range(3):
        here = client.odometry()
        target = max(
            (v.base_pose for v in captures), key=lambda pose: math.hypot(pose.x - here.x, pose.y - here.y)
        )
        client.send(target)
        wait_until(lambda: client.statuses()[-1] == "accepted", "the goal to be accepted")
        stop()
        wait_until(lambda: client.statuses()[-1] in ("cancelled", "arrived"), "the stop or the arrival")
        if client.statuses()[-1] == "cancelled":
            seen = len(client.messages("odom_pose"))
            wait_until(lambda n=seen: len(client.messages("odom_pose")) > n + 1, "odometry after the stop")
            if not _close(client.odometry(), target, 1e-3):
                return target
    raise AssertionError(f"the base never stopped on the way in three tries: {client.statuses()}")


@pytest.mark.parametrize(
    ("argument", "line"),
    [
        (
            "start_view:=s3_far",
            "robot_sim: parameter 'start_view' = 's3_far'; this episode's captures are s0_far, s0_near, s6_far, "
            "s6_near, s8_far, s8_near, s10_far, s10_near (or 'pose')",
        ),
        ("episode:=7", "robot_sim: scene: scene '00800-Pnu8fTXhpCq' has no episode '7'; it has 0, 1"),
        ("goal_topic:=goal pose", None),
    ],
)
def test_the_executable_refuses_bad_parameters_with_one_line(argument: str, line: str | None) -> None:
    executable = INSTALL / "aiv_robot_sim" / "lib" / "aiv_robot_sim" / "robot_sim"
    completed = subprocess.run(
        [str(executable), "--ros-args", "-p", f"scene:={SCENE}", "-p", argument],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and (line is None or lines == [line]), lines
