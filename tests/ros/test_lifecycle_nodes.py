"""The verifier as a managed (lifecycle) node over real DDS, driven by the real ``ros2 lifecycle`` and ``ros2 param``.

- ``autostart:=false`` leaves it unconfigured; ``ros2 lifecycle nodes | get | list | set`` take it through every
  state; while inactive a goal is refused with the reason; cleanup logs the memory it gave back; the shutdown
  transition ends the process with exit code 0;
- a configure that fails on a damaged model leaves it unconfigured and alive with one line saying why, and
  succeeds once ``ros2 param set`` names a good model; a cleanup gives the model's memory back;
- a deactivation mid-request cancels the move (the robot stand-in's base stops) and ends the request FAILED,
  saying it was deactivated; new goals are refused until it is activated again;
- the detector node likewise: a damaged model fails configure, the corrected one configures and publishes boxes
  once active, cleanup gives the model's memory back;
- ``verifier.launch.py`` takes the verifier to active through its lifecycle service (its own ``autostart``
  parameter false); ``autostart:=false`` leaves the launched verifier unconfigured for ``ros2 lifecycle``; a
  launch started with SIGINT ignored (a background job) still stops on Ctrl-C while it configures the node, and
  one whose node dies before it can be configured ends instead of waiting for it;
- SIGINT and SIGTERM end an idle verifier within 2 s and one mid-request (a move held by the move server, or a
  frame that never comes) within 5 s, with exit code 0.
"""

from __future__ import annotations

import re
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from aiv_common.action_waits import send_goal_confirmed
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.qos import VERIFY_REQUEST_QOS
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import Detection2DArray, GroundTruthView, Verdict
from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from std_msgs.msg import Empty, String
from support.offline_models import shared_model_dir
from support.robot_nodes import (
    INSTALL,
    VERIFIER,
    VERIFIER_DEFAULTS,
    start_adapter,
    start_stand_in,
    start_verifier,
)
from support.ros2_cli import require_tools, ros2, ros2_until
from support.ros_harness import ros_args, wait_until

require_tools("ros2lifecycle", "ros2param")

pytestmark = pytest.mark.ros

DETECTOR = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "detector_node"
DETECTOR_DEFAULTS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "detector.yaml"
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)
#: The issue's bounds: an idle verifier ends within 2 s of the signal, one serving a request within 5 s.
IDLE_EXIT_S = 2.0
BUSY_EXIT_S = 5.0
#: The stand-in's base at 0.5 m/s x 0.02: a sector's drive takes over a minute (test_cancel_mid_move.py).
TIME_SCALE = 0.02
DRIVE_TIMEOUT_S = 300.0
QUERY = ["an orange backpack with blue shoulder straps and a green front pocket"]


def _lifecycle(*argv: str) -> str:
    completed = ros2("lifecycle", *argv, timeout_s=60.0)
    return completed.stdout


def _state(node: str) -> str:
    """``ros2 lifecycle get`` of ``node``: e.g. ``inactive [2]``, waited for until the node is discovered."""
    return ros2_until(("lifecycle", "get", node), lambda out: "[" in out, f"the state of {node}").strip()


def _transition(node: str, transition: str) -> str:
    """``ros2 lifecycle set``'s verdict: ``Transitioning successful`` (stdout) or ``Transitioning failed``
    (stderr; the exit code is 0 either way)."""
    completed = ros2("lifecycle", "set", node, transition, timeout_s=60.0)
    return (completed.stdout + completed.stderr).strip()


def _verifier(node_process: Any, params: dict[str, object]) -> Any:
    argv = [str(VERIFIER), "--ros-args", "--params-file", str(VERIFIER_DEFAULTS), *ros_args(params)]
    return node_process(argv, name="verifier")


def _rss_mib(process: Any) -> float:
    return float(psutil.Process(process.process.pid).memory_info().rss) / (1024 * 1024)


def _released(output: str) -> list[tuple[float, float]]:
    """The (before, after) RSS of every cleanup the node logged."""
    found = re.findall(r"cleanup released memory: RSS ([\d.]+) MiB -> ([\d.]+) MiB", output)
    return [(float(before), float(after)) for before, after in found]


def _goal_client(ros_executor: Any, name: str = "goal_client") -> ActionClient:
    return ros_executor.spin_new(name, lambda node: ActionClient(node, VerifyInstance, "verify_instance"))


def _verdict(client: ActionClient, **fields: Any) -> tuple[int, Verdict]:
    sent = send_goal_confirmed(client, VerifyInstance.Goal(**fields), timeout_s=30.0)
    assert sent is not None and sent.accepted
    response = sent.result(60.0, lambda: True, "the verdict")
    assert response is not None
    return int(response.status), response.result.verdict


def test_ros2_lifecycle_takes_the_verifier_through_every_state(node_process, ros_executor) -> None:
    verifier = _verifier(node_process, {"autostart": False, "verifier.classical.ocr_engine": "none"})
    ros2_until(("lifecycle", "nodes"), lambda out: "/verifier\n" in out, "the verifier among lifecycle nodes")
    assert _state("/verifier") == "unconfigured [1]"
    assert "configure [1]" in _lifecycle("list", "/verifier")

    # Unconfigured, the parameters may be corrected (configured, they are read-only: test_parameters.py).
    assert "successful" in ros2("param", "set", "/verifier", "frame_timeout_s", "7.5").stdout
    assert _transition("/verifier", "configure") == "Transitioning successful"
    assert _state("/verifier") == "inactive [2]"
    refused = ros2("param", "set", "/verifier", "frame_timeout_s", "5.0", check=False)
    assert "read-only" in refused.stdout + refused.stderr

    client = _goal_client(ros_executor)
    assert client.wait_for_server(timeout_sec=30.0)
    _status, verdict = _verdict(client, request_id="early", descriptions=["a mug"])
    assert verdict.decision == Verdict.DECISION_FAILED and "not active" in verdict.failure_reason, verdict

    assert _transition("/verifier", "activate") == "Transitioning successful"
    assert _state("/verifier") == "active [3]"
    assert _transition("/verifier", "deactivate") == "Transitioning successful"
    assert _transition("/verifier", "cleanup") == "Transitioning successful"
    assert _state("/verifier") == "unconfigured [1]"
    wait_until(lambda: bool(_released(verifier.output())), "the cleanup's memory line")
    verifier.assert_running()

    assert _transition("/verifier", "shutdown") == "Transitioning successful"
    verifier.process.wait(timeout=30.0)
    assert verifier.process.returncode == 0, verifier.output()


@pytest.fixture(scope="session")
def tiny_detector_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once

    return save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny"))


def test_a_configure_that_fails_on_a_damaged_model_succeeds_once_the_parameter_is_fixed(
    node_process, tiny_detector_dir: str, tmp_path: Path
) -> None:
    broken = _damaged_copy(tiny_detector_dir, tmp_path / "broken-detector")
    verifier = _verifier(
        node_process,
        {
            "autostart": False,
            "verifier.classical.ocr_engine": "none",
            "agent.bbox_mode": "detector",
            "detector.backend": "grounding_dino",
            "detector.device": "cpu",
            "detector.model_dir": str(broken),
        },
    )
    assert _state("/verifier") == "unconfigured [1]"
    assert _transition("/verifier", "configure") == "Transitioning failed"
    assert _state("/verifier") == "unconfigured [1]"
    failures = [line for line in verifier.output().splitlines() if "configure failed:" in line]
    assert len(failures) == 1 and "detector.model_dir" in failures[0] and "Traceback" not in verifier.output()
    verifier.assert_running()

    assert "successful" in ros2("param", "set", "/verifier", "detector.model_dir", tiny_detector_dir).stdout
    assert _transition("/verifier", "configure") == "Transitioning successful"
    assert _state("/verifier") == "inactive [2]"

    # Cleanup gives the model back: configured and cleaned up twice, the process holds no more than after the
    # first cleanup (a node that kept each model would grow by one model per cycle).
    loaded = _rss_mib(verifier)
    assert _transition("/verifier", "cleanup") == "Transitioning successful"
    after_first = _rss_mib(verifier)
    for _ in range(2):
        assert _transition("/verifier", "configure") == "Transitioning successful"
        assert _transition("/verifier", "cleanup") == "Transitioning successful"
    after_third = _rss_mib(verifier)
    wait_until(lambda: len(_released(verifier.output())) == 3, "three cleanups' memory lines")
    print(f"RSS loaded {loaded:.1f} MiB, after cleanups {after_first:.1f} / {after_third:.1f} MiB")
    print("cleanups (before, after) MiB:", _released(verifier.output()))
    assert after_third < after_first + 25.0, (loaded, after_first, after_third)
    verifier.assert_running()


def _damaged_copy(model_dir: str, into: Path) -> Path:
    """A copy of ``model_dir`` whose weights file is cut in half, as an interrupted copy leaves it."""
    shutil.copytree(model_dir, into)
    weights = into / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    return into


def test_the_detector_configures_once_its_damaged_model_is_replaced(
    node_process, ros_executor, tiny_detector_dir: str, tmp_path: Path
) -> None:
    broken = _damaged_copy(tiny_detector_dir, tmp_path / "broken-detector")
    argv = [str(DETECTOR), "--ros-args", "--params-file", str(DETECTOR_DEFAULTS)]
    params = {"autostart": False, "detector.device": "cpu", "detector.model_dir": str(broken)}
    detector = node_process([*argv, *ros_args(params)], name="detector")
    assert _state("/detector") == "unconfigured [1]"
    assert _transition("/detector", "configure") == "Transitioning failed"
    failures = [line for line in detector.output().splitlines() if "configure failed:" in line]
    assert len(failures) == 1 and "detector.model_dir" in failures[0], detector.output()
    assert _state("/detector") == "unconfigured [1]"

    assert "successful" in ros2("param", "set", "/detector", "detector.model_dir", tiny_detector_dir).stdout
    assert _transition("/detector", "configure") == "Transitioning successful"
    boxes: list[Detection2DArray] = []
    camera = ros_executor.spin_new(
        "camera", lambda node: (node.create_publisher(Image, "camera/image_raw", LATCHED), node)
    )
    camera[1].create_subscription(Detection2DArray, "detections", boxes.append, 10)
    assert _transition("/detector", "activate") == "Transitioning successful"
    frame = numpy_to_imgmsg(np.full((48, 64, 3), 90, np.uint8), "rgb8")
    frame.header.stamp.sec = 7
    camera[0].publish(frame)
    wait_until(lambda: bool(boxes), "the active detector's boxes for a frame", timeout_s=60.0)
    assert boxes[0].header.stamp.sec == 7

    assert _transition("/detector", "deactivate") == "Transitioning successful"
    assert _transition("/detector", "cleanup") == "Transitioning successful"
    wait_until(lambda: bool(_released(detector.output())), "the cleanup's memory line")
    print("detector cleanup (before, after) MiB:", _released(detector.output()))
    assert _transition("/detector", "shutdown") == "Transitioning successful"
    detector.process.wait(timeout=30.0)
    assert detector.process.returncode == 0, detector.output()


def test_the_verifier_launch_file_takes_it_to_active_through_its_lifecycle_service(ros2_process) -> None:
    """Launch drives the transitions (the node's own autostart parameter is false there)."""
    require_tools("launch_ros", "ros2launch")
    launch = ros2_process(["launch", "aiv_verifier", "verifier.launch.py", "namespace:=driven"], "driven")
    ros2_until(
        ("lifecycle", "get", "/driven/verifier"),
        lambda out: "active [3]" in out,
        "the launched verifier active",
    )
    assert "False" in ros2("param", "get", "/driven/verifier", "autostart").stdout
    assert launch.stop() == 0, launch.output()


def test_the_verifier_launch_file_leaves_it_unconfigured_with_autostart_false(ros2_process) -> None:
    require_tools("launch_ros", "ros2launch")
    launch = ros2_process(
        ["launch", "aiv_verifier", "verifier.launch.py", "namespace:=managed", "autostart:=false"], "managed"
    )
    assert _state("/managed/verifier") == "unconfigured [1]"
    assert _transition("/managed/verifier", "configure") == "Transitioning successful"
    assert _transition("/managed/verifier", "activate") == "Transitioning successful"
    assert _state("/managed/verifier") == "active [3]"
    assert launch.stop() == 0, launch.output()


def test_a_launch_started_with_sigint_ignored_still_stops_on_ctrl_c_while_it_configures(ros2_process) -> None:
    """A script's background job (``ros2 launch ... &``) inherits SIGINT ignored. Launch then never heard the
    Ctrl-C: the verifier ended on its own SIGINT, and launch waited for the answer to its configure request
    for good (killed after the grace period). Our launch files take SIGINT back (aiv_common.launch_signals)."""
    require_tools("launch_ros", "ros2launch")
    launch = ros2_process(
        ["launch", "aiv_verifier", "verifier.launch.py", "namespace:=background"],
        "background",
        sigint_ignored=True,
    )
    launch.wait_for_output("process started")  # launch asks for configure now; the node cannot answer yet
    assert launch.stop() == 0, launch.output()
    assert "user interrupted with ctrl-c" in launch.output(), launch.output()


def test_a_launch_whose_managed_node_dies_while_starting_ends_instead_of_waiting_for_it(ros2_process) -> None:
    """launch_ros waits for a transition's service until launch shuts down, and that pending request kept an
    otherwise finished launch running for ever; CleanStopLifecycleNode gives it up when the process ends."""
    require_tools("launch_ros", "ros2launch")
    launch = ros2_process(["launch", "aiv_verifier", "verifier.launch.py", "namespace:=crashes"], "crashes")
    launch.wait_for_output("process started")
    started = re.search(r"process started with pid \[(\d+)\]", launch.output())
    assert started is not None, launch.output()
    psutil.Process(int(started.group(1))).kill()  # before its change_state service is up
    launch.wait(timeout_s=30.0)
    assert "not asked for any more: its process ended (exit code -9)" in launch.output(), launch.output()


class Base:
    """What the stand-in's base sees: drive goals, stop requests and its status reports."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.lock = threading.Lock()
        self.stops = 0
        self.status: list[str] = []
        self.object_seen = False
        node.create_subscription(Empty, "goal_cancel", self._on_stop, 10)
        node.create_subscription(String, "goal_status", self._on_status, 10)
        node.create_subscription(PoseStamped, "object_pose", self._on_object, LATCHED)

    def _on_stop(self, _message: Empty) -> None:
        with self.lock:
            self.stops += 1

    def _on_status(self, message: String) -> None:
        with self.lock:
            self.status.append(message.data)

    def _on_object(self, _message: PoseStamped) -> None:
        with self.lock:
            self.object_seen = True

    def connected(self) -> bool:
        with self.lock:
            seen = self.object_seen
        return (
            seen
            and self.node.count_subscribers("object_pose") >= 2
            and self.node.count_publishers("goal_status")
        )

    def driving(self) -> bool:
        with self.lock:
            return bool(self.status) and self.status[-1] == "accepted"

    def stopped(self) -> bool:
        with self.lock:
            return self.stops > 0 or "cancelled" in self.status


def test_a_deactivation_mid_drive_stops_the_base_and_fails_the_request(node_process, ros_executor) -> None:
    start_stand_in(node_process, {"time_scale": TIME_SCALE})
    start_adapter(node_process, {"navigation_timeout_s": DRIVE_TIMEOUT_S, "pose_timeout_s": 10.0})
    verifier = start_verifier(node_process, {"move_timeout_s": 3 * DRIVE_TIMEOUT_S + 10.0})
    base = ros_executor.spin_new("base_watch", Base)
    client = _goal_client(ros_executor)
    assert client.wait_for_server(timeout_sec=60.0)
    wait_until(base.connected, "the base topics and the object pose", timeout_s=60.0)
    goal = VerifyInstance.Goal(request_id="drive", descriptions=QUERY, step_budget=6)
    goal.fusion, goal.nbv_strategy = "attr_majority", "farthest"  # drives until its votes settle
    sent = send_goal_confirmed(client, goal, timeout_s=60.0)
    assert sent is not None and sent.accepted
    wait_until(base.driving, "the base driving to the first sector", timeout_s=120.0)

    asked = time.monotonic()
    assert _transition("/verifier", "deactivate") == "Transitioning successful"
    response = sent.result(30.0, lambda: True, "the deactivated request")
    assert response is not None, verifier.output()
    wait_until(base.stopped, "the stop reaching the base", timeout_s=30.0)
    print(f"request ended and base stopped {time.monotonic() - asked:.2f} s after the deactivate was asked")
    verdict: Verdict = response.result.verdict
    assert verdict.decision == Verdict.DECISION_FAILED and "deactivated" in verdict.failure_reason, verdict
    assert "arrived" not in base.status[-1:]

    _status, refused = _verdict(client, request_id="while-inactive", descriptions=["a backpack"])
    assert refused.decision == Verdict.DECISION_FAILED and "not active" in refused.failure_reason, refused

    assert _transition("/verifier", "activate") == "Transitioning successful"
    _status, served = _verdict(client, request_id="again", descriptions=["a backpack"])
    assert served.decision != Verdict.DECISION_FAILED, served
    verifier.assert_running()


def _publish_unsure_start_view(image_pub: Any, gt_pub: Any) -> Any:
    """A start view the oracle knows nothing about (it answers Unsure and asks to move); returns its stamp."""
    image = numpy_to_imgmsg(np.full((64, 36, 3), 90, np.uint8), "rgb8")
    image.header.stamp.sec = 100
    gt = GroundTruthView(capture_tag="s0_far", sector=0, episode_path="none", target_object_id="none")
    gt.header.stamp = image.header.stamp
    gt_pub.publish(gt)
    image_pub.publish(image)
    return image.header.stamp


def _stop_and_time(process: Any, signum: int, limit_s: float) -> float:
    started = time.monotonic()
    process.process.send_signal(signum)
    try:
        process.process.wait(timeout=limit_s + 20.0)  # measured; the bound is asserted by the caller
    except Exception as error:
        raise AssertionError(
            f"still running {limit_s + 20.0:.0f} s after the signal:\n{process.output()}"
        ) from error
    return time.monotonic() - started


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_an_idle_verifier_within_two_seconds(node_process, ros_executor, signum: int) -> None:
    verifier = _verifier(node_process, {"verifier.classical.ocr_engine": "none"})
    assert _goal_client(ros_executor).wait_for_server(timeout_sec=60.0)
    elapsed = _stop_and_time(verifier, signum, IDLE_EXIT_S)
    print(f"idle verifier ended {elapsed:.2f} s after {signal.Signals(signum).name}")
    assert verifier.process.returncode == 0, verifier.output()
    assert elapsed < IDLE_EXIT_S, f"{elapsed:.2f} s"
    assert "verifier shut down" in verifier.output()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("waiting_for", ["move", "frame"])
def test_a_signal_ends_a_verifier_mid_request_within_five_seconds(
    node_process, ros_executor, micro_root, signum: int, waiting_for: str
) -> None:
    """Mid-request: the move server holds the move until it is cancelled, or no frame ever comes (a camera that
    died). Either wait is longer than the bound (move_timeout_s / frame_timeout_s 60 s)."""
    node = ros_executor.create_node("held_robot")
    image_pub = node.create_publisher(Image, "camera/image_raw", LATCHED)
    gt_pub = node.create_publisher(GroundTruthView, "sim/ground_truth_view", LATCHED)
    moves: list[str] = []
    move_cancelled = threading.Event()
    release = threading.Event()  # ends a held move at the end, should the verifier never cancel it
    requests: list[Any] = []
    node.create_subscription(
        VerifyInstance.Goal, "verifier/requests", requests.append, VERIFY_REQUEST_QOS.to_profile()
    )

    def held_move(goal_handle: Any) -> Any:
        moves.append(goal_handle.request.direction)
        while not goal_handle.is_cancel_requested and not release.wait(0.02):
            pass
        if goal_handle.is_cancel_requested:
            move_cancelled.set()
        goal_handle.canceled()
        return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_REJECTED, sector=-1)

    ActionServer(
        node,
        MoveToSector,
        "move_to_sector",
        execute_callback=held_move,
        cancel_callback=lambda _goal: CancelResponse.ACCEPT,
        callback_group=ReentrantCallbackGroup(),
    )
    verifier = _verifier(
        node_process,
        {
            "verifier.backend": "oracle",
            "verifier.dataset_root": micro_root,
            "move_timeout_s": 60.0,
            "frame_timeout_s": 60.0,
        },
    )
    client = _goal_client(ros_executor)
    assert client.wait_for_server(timeout_sec=60.0)
    goal = VerifyInstance.Goal(request_id="held", descriptions=["a teal ceramic vase"])
    if waiting_for == "move":
        goal.start_stamp = _publish_unsure_start_view(image_pub, gt_pub)
    sent = send_goal_confirmed(client, goal, timeout_s=30.0)
    assert sent is not None and sent.accepted
    result = sent._handle().get_result_async()  # asked before the verifier goes
    if waiting_for == "move":
        wait_until(lambda: bool(moves), "the verifier asking to move")
    else:
        wait_until(lambda: bool(requests), "the request under way (published as it starts)")

    elapsed = _stop_and_time(verifier, signum, BUSY_EXIT_S)
    print(f"verifier waiting for a {waiting_for} ended {elapsed:.2f} s after {signal.Signals(signum).name}")
    release.set()
    assert verifier.process.returncode == 0, verifier.output()
    assert elapsed < BUSY_EXIT_S, f"{elapsed:.2f} s"
    if waiting_for == "move":
        assert moves and move_cancelled.is_set(), "the held move was not cancelled"
    wait_until(result.done, "the interrupted request's result", timeout_s=10.0)
    verdict = result.result().result.verdict
    assert verdict.decision == Verdict.DECISION_FAILED and "shut down" in verdict.failure_reason, verdict
