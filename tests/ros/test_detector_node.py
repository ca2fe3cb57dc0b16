"""The Grounding DINO detector node over real DDS, alone and feeding a verifier in ``agent.bbox_mode: detections``.

The model is a tiny random Grounding DINO loaded from a directory the tests build (docs/models.md).
Random weights give random boxes, so the node under test gets a detector whose forward output is replaced,
through a forward hook, by known boxes and scores that change from frame to frame (one box, two boxes, none):
the processor, transformers' post-processing, the node, DDS, the verifier's stamp matching and its crop rule
all run for real, and every step of every episode must show exactly the box and confidence that the detector
published for the frame that step judged, computed for that request's predicted category (the verifier
publishes it as the detector's query; boxes for the previous request's query never reach a crop).
"""

from __future__ import annotations

import math
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiv_common.action_waits import send_goal_confirmed
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_eval.run.episode_client import EpisodeRequest, RosEpisodeClient
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import Detection2DArray, Verdict
from aiv_verifier.core.crop import NO_BOX_CONFIDENCE, padded_box
from aiv_verifier.detection.grounding_dino import GroundingDinoDetector, grounding_query
from aiv_verifier.detector_node import DetectorNode
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from std_msgs.msg import String
from support.offline_models import limit_torch_threads, shared_model_dir
from support.ros_harness import ros_args, wait_until

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
DETECTOR_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "detector_node"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
DETECTOR_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "detector.yaml"
INDEX = "val/pv_index_all.jsonl"
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)
#: The test's camera: latched like the simulator's frames, deep enough for a burst.
FRAMES = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
)
#: Token ids Grounding DINO treats as separators: never part of a phrase.
SEPARATOR_IDS = {0, 101, 102, 1012, 1029}
#: What the forced forward returns, frame after frame: (normalised cx, cy, w, h, score) per box.
FORCED_OUTPUTS: tuple[tuple[tuple[float, float, float, float, float], ...], ...] = (
    ((0.40, 0.50, 0.30, 0.40, 0.81),),
    ((0.25, 0.30, 0.20, 0.20, 0.42), (0.70, 0.60, 0.25, 0.30, 0.66)),
    ((0.50, 0.50, 0.50, 0.50, 0.05),),  # below the box threshold: nothing detected
)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once

    return save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny"))


class ForcedDetector:
    """A real GroundingDinoDetector whose model's forward output is replaced by FORCED_OUTPUTS in turn.

    ``gate`` (optional) holds every forward until it is set, which makes the model as slow as a test needs.
    """

    def __init__(self, model_dir: str, gate: threading.Event | None = None) -> None:
        limit_torch_threads()
        self.detector = GroundingDinoDetector.load(model_dir, device="cpu")
        self.gate = gate
        self.entered = threading.Event()
        self.calls = 0
        self.detector.model.register_forward_hook(self._replace, with_kwargs=True)

    def _replace(self, _module: Any, _args: Any, kwargs: dict[str, Any], output: Any) -> Any:
        from transformers.models.grounding_dino.modeling_grounding_dino import (
            GroundingDinoObjectDetectionOutput,
        )

        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(60.0), "the test never released the model"
        boxes = FORCED_OUTPUTS[self.calls % len(FORCED_OUTPUTS)]
        self.calls += 1
        input_ids = kwargs["input_ids"]
        logits = torch.full_like(output.logits, -math.inf)
        logits[:, :, : input_ids.shape[1]] = -30.0
        words = [i for i, token in enumerate(input_ids[0].tolist()) if token not in SEPARATOR_IDS]
        pred_boxes = torch.full_like(output.pred_boxes, 0.5)
        for query, (*box, score) in enumerate(boxes):
            logits[0, query, words] = math.log(score / (1.0 - score))
            pred_boxes[0, query] = torch.tensor(box)
        return GroundingDinoObjectDetectionOutput(logits=logits, pred_boxes=pred_boxes, input_ids=input_ids)


class Recorder:
    """Everything the test listens to, filed by header stamp."""

    def __init__(self, executor: Any) -> None:
        self.detections: dict[int, Detection2DArray] = {}  # the newest message per stamp
        self.by_query: dict[tuple[int, str], Detection2DArray] = {}  # per (stamp, query it was computed for)
        self.queries: list[str] = []  # what the verifier asked the detector for, in order
        self.sizes: dict[int, tuple[int, int]] = {}
        self.diagnostics: list[DiagnosticArray] = []
        self.lock = threading.Lock()
        self.node = executor.create_node("detector_test_recorder")
        self.node.create_subscription(Detection2DArray, "detections", self._on_detections, 50)
        self.node.create_subscription(Image, "camera/image_raw", self._on_image, LATCHED)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.node.create_subscription(String, "detector/query", self._on_query, LATCHED)
        self.image_pub = self.node.create_publisher(Image, "camera/image_raw", FRAMES)

    def _on_detections(self, message: Detection2DArray) -> None:
        with self.lock:
            stamp = stamp_to_nanoseconds(message.header.stamp)
            self.detections[stamp] = message
            self.by_query[(stamp, message.query)] = message

    def _on_query(self, message: String) -> None:
        with self.lock:
            self.queries.append(message.data)

    def _on_image(self, message: Image) -> None:
        with self.lock:
            self.sizes[stamp_to_nanoseconds(message.header.stamp)] = (message.height, message.width)

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        with self.lock:
            self.diagnostics.append(message)

    def detector_status(self) -> dict[str, str] | None:
        with self.lock:
            for array in reversed(self.diagnostics):
                for status in array.status:
                    if status.name.startswith("detector"):
                        return {item.key: item.value for item in status.values}
        return None


@pytest.fixture
def detector_node(ros_executor: Any, tiny_dir: str) -> Iterator[Callable[..., DetectorNode]]:
    """Start the detector node in this process on ``ros_executor`` with a forced detector."""
    started: list[DetectorNode] = []

    def start(forced: ForcedDetector, parameters: dict[str, Any]) -> DetectorNode:
        overrides = [Parameter(name, value=value) for name, value in parameters.items()]
        node = DetectorNode(
            detector=forced.detector, context=ros_executor.context, parameter_overrides=overrides
        )
        started.append(node)
        ros_executor.add(node)
        return node

    yield start
    for node in started:
        node.close()  # the model thread first: the executor's teardown destroys the node


def _image(stamp_ns: int, size: tuple[int, int] = (360, 640)) -> Image:
    message = numpy_to_imgmsg(np.full((*size, 3), 90, np.uint8), "rgb8")
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    message.header.frame_id = "camera_optical"
    return message


def _expected_crop(message: Detection2DArray, size: tuple[int, int]) -> tuple[Sequence[int] | None, float]:
    """What the verifier must crop for these detections (spec §5.4): best box padded, c = its score."""
    if not message.detections:
        return None, NO_BOX_CONFIDENCE
    best = max(message.detections, key=lambda item: item.score)
    height, width = size
    return padded_box((best.x_min, best.y_min, best.x_max, best.y_max), width, height), float(best.score)


def _serve_episodes(
    ros_executor: Any,
    node_process: Any,
    micro_root: Path,
    verifier_params: dict[str, object],
    server_wait_s: float = 30.0,
) -> tuple[Any, RosEpisodeClient]:
    """Start the simulator on the micro dataset and a verifier with ``verifier_params`` as processes; return the
    verifier's process and an episode client whose servers are up."""
    node_process(
        [str(SIM_EXECUTABLE), "--ros-args", *ros_args({"dataset_root": micro_root, "index_file": INDEX})],
        name="sim",
    )
    verifier = node_process(
        [
            str(VERIFIER_EXECUTABLE),
            "--ros-args",
            "--params-file",
            str(VERIFIER_PARAMS),
            *ros_args(verifier_params),
        ],
        name="verifier",
    )
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=server_wait_s)
    return verifier, client


def test_detector_node_boxes_reach_the_verifiers_crops_through_whole_episodes(
    ros_executor: Any, node_process: Any, micro_root: Path, detector_node: Any, tiny_dir: str
) -> None:
    recorder = Recorder(ros_executor)
    forced = ForcedDetector(tiny_dir)
    node = detector_node(forced, {"query": "mug"})
    verifier, client = _serve_episodes(
        ros_executor,
        node_process,
        micro_root,
        {"agent.bbox_mode": "detections", "detections_timeout_s": 60.0},
    )

    cases: set[str] = set()
    categories = []
    for index in range(3):
        verdict = client.run(EpisodeRequest(index=index)).verdict
        assert verdict.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), verdict.failure_reason
        categories.append(verdict.category)
        cases |= _assert_crops_use_the_requests_query(recorder, verdict)
    assert categories == ["backpack", "mug", "mug"]  # the micro preset's first three queries
    assert cases == {"1 boxes", "2 boxes", "0 boxes"}, cases  # every forced output reached a crop
    assert recorder.queries[-1] == "mug." and "backpack." in recorder.queries
    wait_until(
        lambda: (recorder.detector_status() or {}).get("frames_detected") == str(forced.calls), "diagnostics"
    )
    status = recorder.detector_status()
    assert status is not None and status["device"] == "cpu" and status["model_type"] == "grounding-dino"
    assert float(status["latency_ms.forward"]) > 0.0 and status["query"] == "mug."
    assert node.worker.mailbox.dropped == int(status["frames_dropped"])
    verifier.assert_running()


def _assert_crops_use_the_requests_query(recorder: Recorder, verdict: Verdict) -> set[str]:
    """Every step of ``verdict`` cropped exactly the boxes the detector published for its frame and for the
    request's category (the query the verifier published); returns the box counts seen."""
    query = grounding_query(verdict.category)
    keys = [(stamp_to_nanoseconds(report.image_stamp), query) for report in verdict.transcript]
    wait_until(
        lambda: all(key in recorder.by_query and key[0] in recorder.sizes for key in keys),
        f"the frames of every step and their detections for {query!r}",
    )
    cases: set[str] = set()
    for report, key in zip(verdict.transcript, keys, strict=True):
        published = recorder.by_query[key]
        # The phrase grounded to (the tiny vocabulary has no "backpack": then the query text itself).
        assert all(item.label.rstrip(".") == verdict.category for item in published.detections), key
        box, confidence = _expected_crop(published, recorder.sizes[key[0]])
        assert report.detection_confidence == pytest.approx(confidence, abs=1e-6), (query, report.step)
        assert report.has_crop_box == (box is not None), (query, report.step)
        if box is not None:
            crop = report.crop_box
            assert (crop.x_min, crop.y_min, crop.x_max, crop.y_max) == tuple(float(v) for v in box)
        cases.add(f"{len(published.detections)} boxes")
    return cases


def test_boxes_for_the_previous_requests_query_never_reach_the_next_requests_crops(
    ros_executor: Any, node_process: Any, micro_root: Path, detector_node: Any, tiny_dir: str
) -> None:
    """Two requests with different categories; the second's first frame is the race: the detector is still
    running it with the first request's query when the verifier publishes the second's, so it publishes boxes
    for the old query after the new query was published, then re-runs that frame for the new one."""
    gate = threading.Event()
    gate.set()
    recorder = Recorder(ros_executor)
    forced = ForcedDetector(tiny_dir, gate=gate)
    node = detector_node(forced, {})  # query parameter left at "object": only the verifier sets it
    verifier, client = _serve_episodes(
        ros_executor,
        node_process,
        micro_root,
        {"agent.bbox_mode": "detections", "detections_timeout_s": 60.0},
    )

    first = client.run(EpisodeRequest(index=0)).verdict  # a backpack
    assert first.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), first.failure_reason
    assert first.category == "backpack" and node.worker.query == "backpack."
    _assert_crops_use_the_requests_query(recorder, first)

    # Request 2 (a mug): its start frame reaches the detector, which starts on it with "backpack." and is held.
    gate.clear()
    forced.entered.clear()
    start = client.start(EpisodeRequest(index=1))
    start_ns = stamp_to_nanoseconds(start.frame_stamp)

    def running_start_frame() -> bool:
        last = node.worker.last_frame
        return (
            forced.entered.is_set()
            and last is not None
            and stamp_to_nanoseconds(last.header.stamp) == start_ns
        )

    wait_until(running_start_frame, "the detector running the start frame with the old query", timeout_s=30.0)
    goal = VerifyInstance.Goal(
        request_id=start.episode_key,
        episode_key=start.episode_key,
        descriptions=list(start.descriptions),
        step_budget=int(start.max_steps),
        start_stamp=start.frame_stamp,
        start_sector=int(start.start_sector),
    )
    sent = send_goal_confirmed(client.verify_client, goal, timeout_s=30.0, what="the verifier")
    assert sent is not None and sent.accepted
    wait_until(
        lambda: node.worker.query == "mug.", "the verifier's new query at the detector (forward in flight)"
    )
    gate.set()
    response = sent.result(300.0, lambda: True, "the verifier")
    assert response is not None
    second = response.result.verdict
    assert second.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), second.failure_reason
    assert second.category == "mug"
    _assert_crops_use_the_requests_query(recorder, second)

    stale, fresh = recorder.by_query[(start_ns, "backpack.")], recorder.by_query[(start_ns, "mug.")]
    assert _expected_crop(stale, recorder.sizes[start_ns]) != _expected_crop(fresh, recorder.sizes[start_ns])
    assert all(item.label.rstrip(".") == "backpack" for item in stale.detections)
    assert stamp_to_nanoseconds(second.transcript[0].image_stamp) == start_ns  # the raced frame was judged
    assert recorder.queries == ["backpack.", "mug."]  # latched, newest wins: one per request
    verifier.assert_running()


def test_slow_model_works_on_the_newest_frame_and_counts_the_dropped_ones(
    ros_executor: Any, detector_node: Any, tiny_dir: str
) -> None:
    gate = threading.Event()
    forced = ForcedDetector(tiny_dir, gate=gate)
    recorder = Recorder(ros_executor)
    node = detector_node(forced, {"frame_qos.depth": 10})  # keep a burst: the mailbox decides what to drop
    wait_until(lambda: recorder.image_pub.get_subscription_count() >= 2, "the detector's camera subscription")
    recorder.image_pub.publish(_image(1_000))
    assert forced.entered.wait(30.0), "the model never started on the first frame"
    for stamp in (2_000, 3_000, 4_000):  # arrive while the model is busy with the first frame
        recorder.image_pub.publish(_image(stamp))
    wait_until(lambda: node.worker.stats.received == 4, "all four frames at the detector")
    gate.set()
    wait_until(lambda: {1_000, 4_000} <= set(recorder.detections), "detections of the first and newest frame")
    assert set(recorder.detections) == {1_000, 4_000} and node.worker.mailbox.dropped == 2
    newest = recorder.detections[4_000]
    assert newest.header.frame_id == "camera_optical" and len(newest.detections) == 2
    assert [round(item.score, 3) for item in newest.detections] == [0.66, 0.42]  # best first
    x_min, y_min = newest.detections[0].x_min, newest.detections[0].y_min
    assert (x_min, y_min) == pytest.approx(((0.70 - 0.125) * 640, (0.60 - 0.15) * 360), abs=0.5)
    wait_until(
        lambda: (recorder.detector_status() or {}).get("frames_dropped") == "2",
        "the drop count in /diagnostics",
    )


def test_detector_node_process_publishes_stamped_detections(
    ros_executor: Any, node_process: Any, tiny_dir: str
) -> None:
    """The installed entry point with the params file users take, on the tiny model (random boxes)."""
    recorder = Recorder(ros_executor)
    process = node_process(
        [
            str(DETECTOR_EXECUTABLE),
            "--ros-args",
            "--params-file",
            str(DETECTOR_PARAMS),
            *ros_args({"detector.model_dir": tiny_dir, "detector.device": "cpu", "query": "red mug"}),
        ],
        name="detector",
    )
    wait_until(lambda: recorder.image_pub.get_subscription_count() >= 2, "the detector node", timeout_s=60.0)
    recorder.image_pub.publish(_image(7_000_000_123))
    wait_until(
        lambda: 7_000_000_123 in recorder.detections, "detections of the published frame", timeout_s=60.0
    )
    message = recorder.detections[7_000_000_123]
    assert message.header.frame_id == "camera_optical"
    scores = [item.score for item in message.detections]
    assert scores == sorted(scores, reverse=True) and all(0.25 < score <= 1.0 for score in scores)
    wait_until(lambda: (recorder.detector_status() or {}).get("frames_detected") == "1", "diagnostics")
    process.assert_running()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"detector.model_dir": "/nonexistent/grounding-dino"}, "'/nonexistent/grounding-dino'"),
        ({"detector.model_dir": "/tmp", "detector.threshold": 0.3}, "unknown parameter 'detector.threshold'"),
        ({}, "needs a local model directory"),
    ],
    ids=["missing-dir", "unknown-key", "no-dir"],
)
def test_bad_configuration_ends_start_up_with_one_line_and_exit_code_2(
    extra: dict[str, object], expected: str
) -> None:
    completed = subprocess.run(
        [str(DETECTOR_EXECUTABLE), "--ros-args", "--params-file", str(DETECTOR_PARAMS), *ros_args(extra)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in completed.stderr


def test_verifier_waits_for_the_judged_frames_detections_or_a_newer_frames() -> None:
    """FrameCache.wait_detections: the named frame's boxes, or the next frame a newest-only detector did."""
    from aiv_verifier.frame_cache import FrameCache, FrameTimeout

    cache = FrameCache(8)
    for stamp in (10, 20, 30):
        cache.put_image(stamp, np.zeros((4, 4, 3), np.uint8))
    waiter_result: list[int] = []
    waiter = threading.Thread(target=lambda: waiter_result.append(cache.wait_detections(10, 30.0).stamp_ns))
    waiter.start()
    cache.put_detections(30, ())  # the detector skipped 10 and 20
    waiter.join(30.0)
    assert waiter_result == [30]
    cache.put_detections(10, ())
    assert cache.wait_detections(10, 1.0).stamp_ns == 10  # its own boxes win once they are in
    with pytest.raises(FrameTimeout, match="detections_timeout_s"):
        cache.wait_detections(40, 0.01)


def test_the_verifier_accepts_only_detections_computed_for_its_query() -> None:
    """FrameCache.wait_detections(query=...): boxes for another query never count, not even for the same frame
    or when they arrive later; a detector that does not say its query ("") is accepted as before."""
    from aiv_verifier.core.crop import Detection
    from aiv_verifier.frame_cache import FrameCache, FrameTimeout

    old_box, new_box = (Detection((1.0, 1.0, 2.0, 2.0), 0.9),), (Detection((0.0, 0.0, 3.0, 3.0), 0.5),)
    cache = FrameCache(8)
    cache.put_image(10, np.zeros((4, 4, 3), np.uint8))
    cache.put_detections(10, old_box, "backpack.")
    with pytest.raises(FrameTimeout, match=r"'mug\.'.*came for 'backpack\.' only.*detection_query_topic"):
        cache.wait_detections(10, 0.01, query="mug.")
    waiter_result: list[Any] = []
    waiter = threading.Thread(
        target=lambda: waiter_result.append(cache.wait_detections(10, 30.0, query="mug."))
    )
    waiter.start()
    cache.put_detections(10, new_box, "mug.")
    waiter.join(30.0)
    assert [entry.detections for entry in waiter_result] == [new_box]
    cache.put_detections(10, old_box, "backpack.")  # stale boxes arriving late replace nothing
    assert cache.wait_detections(10, 0.01, query="mug.").detections == new_box
    assert cache.wait_detections(10, 0.01).detections == old_box  # no query: the newest, as before
    cache.put_image(20, np.zeros((4, 4, 3), np.uint8))
    cache.put_detections(20, (), "")  # an external detector that does not say
    assert cache.wait_detections(20, 0.01, query="mug.").detections == ()


def test_verifier_without_a_detector_fails_the_request_naming_detections_timeout_s(
    ros_executor: Any, node_process: Any, micro_root: Path
) -> None:
    verifier, client = _serve_episodes(
        ros_executor, node_process, micro_root, {"agent.bbox_mode": "detections", "detections_timeout_s": 0.5}
    )
    verdict = client.run(EpisodeRequest(index=0)).verdict
    assert verdict.decision == Verdict.DECISION_FAILED
    assert "no detections" in verdict.failure_reason and "detections_timeout_s" in verdict.failure_reason
    verifier.assert_running()


def test_verifier_with_the_detector_inside_runs_episodes_and_reports_it(
    ros_executor: Any, node_process: Any, micro_root: Path, tiny_dir: str
) -> None:
    """``agent.bbox_mode: detector`` over ROS: Grounding DINO loads in the verifier and every step is detected."""
    recorder = Recorder(ros_executor)
    detector_params: dict[str, object] = {
        "agent.bbox_mode": "detector",
        "detector.backend": "grounding_dino",
        "detector.model_dir": tiny_dir,
        "detector.device": "cpu",
    }
    verifier, client = _serve_episodes(ros_executor, node_process, micro_root, detector_params, 60.0)
    verdict = client.run(EpisodeRequest(index=0)).verdict
    assert verdict.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), verdict.failure_reason
    calls = {timing.stage: timing.calls for timing in verdict.timings}
    assert calls["detect"] == verdict.steps and calls["calls:detector"] == verdict.steps

    def verifier_status() -> dict[str, str]:
        with recorder.lock:
            for array in reversed(recorder.diagnostics):
                for status in array.status:
                    if status.name == "verifier: agent":
                        return {item.key: item.value for item in status.values}
        return {}

    wait_until(
        lambda: verifier_status().get("detector.model_calls") == str(verdict.steps), "verifier diagnostics"
    )
    status = verifier_status()
    assert status["device"] == "detector: cpu" and status["detector.model_type"] == "grounding-dino"
    assert float(status["detector.mean_ms.forward"]) > 0.0
    verifier.assert_running()


def test_verifier_refuses_a_bad_detector_directory_with_one_line_and_exit_code_2(tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            str(VERIFIER_EXECUTABLE),
            "--ros-args",
            "--params-file",
            str(VERIFIER_PARAMS),
            *ros_args(
                {
                    "agent.bbox_mode": "detector",
                    "detector.backend": "grounding_dino",
                    "detector.model_dir": tmp_path,
                }
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and str(tmp_path) in lines[0] and "config.json" in lines[0], completed.stderr
