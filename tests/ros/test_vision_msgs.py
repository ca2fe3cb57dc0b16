"""vision_msgs in and out (issue #30 item 5), over real DDS.

In: the verifier reads ``vision_msgs/Detection2DArray`` on its detections topic (``detections_type``), filled the
way isaac_ros_grounding_dino fills it (``results[0].hypothesis.class_id`` = the prompt phrase, ``score``, boxes
as centre + size in pixels, header stamp = the image's). A stand-in for that detector, listening to the
verifier's query like a prompt, publishes the very same boxes for every frame in both message types; verifiers
reading either type give the same verdicts and the same crops, which are those boxes; ``auto`` finds the type
from the publisher; a bad vision_msgs message is refused with one warning line and the verifier serves on.

Out: ``ros2 launch aiv_verifier detector.launch.py`` on a tiny Grounding DINO publishes the boxes of a camera
frame as aiv_interfaces and as vision_msgs detections, and both read back as the same boxes.
"""

from __future__ import annotations

import math
import threading
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_eval.run.episode_client import EpisodeRequest, RosEpisodeClient
from aiv_interfaces.msg import Detection2D, Detection2DArray, Verdict
from aiv_verifier.core.crop import NO_BOX_CONFIDENCE, padded_box
from aiv_verifier.ros_messages import BadDetections, checked_detections
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from std_msgs.msg import String
from support.offline_models import shared_model_dir
from support.ros2_cli import require_tools
from support.ros_harness import ros_args, wait_until

require_tools("vision_msgs")

from vision_msgs.msg import Detection2D as VisionDetection2D  # noqa: E402 - after the skip
from vision_msgs.msg import Detection2DArray as VisionDetection2DArray  # noqa: E402
from vision_msgs.msg import ObjectHypothesisWithPose  # noqa: E402

pytestmark = pytest.mark.ros

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
INDEX = "val/pv_index_all.jsonl"
AIV_TOPIC = "isaac_like/aiv_detections"
VISION_TOPIC = "isaac_like/detections_output"  # isaac_ros_grounding_dino's decoder output name
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)
FRAMES = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
)
#: The stand-in's boxes, picked per frame by a checksum of its pixels: (x_min, y_min, x_max, y_max) as
#: fractions of the image (numerator, denominator: integer pixels, so centre + size round-trips exactly) and a
#: score that float32 holds exactly (the aiv message's type): one box, two boxes, none.
BOX_SETS: tuple[tuple[tuple[tuple[int, int, int, int], int, float], ...], ...] = (
    (((1, 1, 3, 3), 4, 0.75),),
    (((1, 2, 3, 4), 8, 0.375), ((4, 3, 7, 6), 8, 0.625)),
    (),
)
EPISODES = 3


def _vision_detection(header: Any, xyxy: Sequence[float], score: float, class_id: str) -> VisionDetection2D:
    """One detection as isaac_ros_grounding_dino's decoder fills it (centre + size in pixels, one hypothesis)."""
    x_min, y_min, x_max, y_max = (float(v) for v in xyxy)
    detection = VisionDetection2D(header=header)
    detection.bbox.center.position.x = (x_min + x_max) / 2.0
    detection.bbox.center.position.y = (y_min + y_max) / 2.0
    detection.bbox.size_x = x_max - x_min
    detection.bbox.size_y = y_max - y_min
    hypothesis = ObjectHypothesisWithPose()
    hypothesis.hypothesis.class_id = class_id
    hypothesis.hypothesis.score = float(score)
    detection.results = [hypothesis]
    return detection


class IsaacLikeDetector:
    """Stands in for isaac_ros_grounding_dino: its prompt is the verifier's query (latched on detector/query, as
    a relay to its ``set_prompt`` service would make it), and for every camera frame it publishes the boxes of
    ``BOX_SETS`` (picked by the frame's pixels, so the same frame gets the same boxes in every run) as
    vision_msgs/Detection2DArray on VISION_TOPIC and the same boxes as aiv_interfaces/Detection2DArray on
    AIV_TOPIC (query "": like vision_msgs, it does not say), both stamped with the frame's header."""

    def __init__(self, executor: Any) -> None:
        self.lock = threading.Lock()
        self.prompt = "object"
        self.prompts: list[str] = []
        self.boxes: dict[int, list[tuple[tuple[float, float, float, float], float]]] = {}
        self.sizes: dict[int, tuple[int, int]] = {}  # stamp -> (height, width)
        self.diagnostics: list[dict[str, str]] = []
        self.node = executor.create_node("isaac_like_detector")
        self.vision_pub = self.node.create_publisher(VisionDetection2DArray, VISION_TOPIC, 10)
        self.aiv_pub = self.node.create_publisher(Detection2DArray, AIV_TOPIC, 10)
        self.node.create_subscription(String, "detector/query", self._on_query, LATCHED)
        self.node.create_subscription(Image, "camera/image_raw", self._on_image, LATCHED)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)

    def _on_query(self, message: String) -> None:
        with self.lock:
            self.prompt = message.data
            self.prompts.append(message.data)

    def _on_image(self, message: Image) -> None:
        height, width = message.height, message.width
        chosen = BOX_SETS[zlib.crc32(bytes(message.data)) % len(BOX_SETS)]
        boxes = [
            ((width * x1 // den, height * y1 // den, width * x2 // den, height * y2 // den), score)
            for (x1, y1, x2, y2), den, score in chosen
        ]
        with self.lock:
            class_id = self.prompt.strip().rstrip(".") or "object"  # the prompt phrase (one-phrase prompt)
            stamp = stamp_to_nanoseconds(message.header.stamp)
            self.boxes[stamp] = [
                ((float(x1), float(y1), float(x2), float(y2)), s) for (x1, y1, x2, y2), s in boxes
            ]
            self.sizes[stamp] = (height, width)
        vision = VisionDetection2DArray(header=message.header)
        vision.detections = [_vision_detection(message.header, box, score, class_id) for box, score in boxes]
        ours = Detection2DArray(header=message.header, query="")
        ours.detections = [
            Detection2D(
                x_min=float(box[0]), y_min=float(box[1]), x_max=float(box[2]), y_max=float(box[3]),
                score=score, label=class_id,
            )
            for box, score in boxes
        ]  # fmt: skip
        self.vision_pub.publish(vision)
        self.aiv_pub.publish(ours)

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        with self.lock:
            self.diagnostics += [
                {item.key: item.value for item in status.values}
                for status in message.status
                if status.name == "verifier: agent"
            ]

    def verifier_status(self) -> dict[str, str]:
        with self.lock:
            return self.diagnostics[-1] if self.diagnostics else {}


def _start_verifier(node_process: Callable[..., Any], name: str, params: dict[str, object]) -> Any:
    base: dict[str, object] = {"agent.bbox_mode": "detections", "detections_timeout_s": 30.0}
    argv = [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(VERIFIER_PARAMS)]
    return node_process([*argv, *ros_args({**base, **params})], name=name)


def _client(ros_executor: Any, name: str) -> RosEpisodeClient:
    client = ros_executor.spin_new(name, RosEpisodeClient)
    client.wait_for_servers(timeout_s=30.0)
    return client


def _start_sim(node_process: Callable[..., Any], micro_root: Path) -> Any:
    argv = [str(SIM_EXECUTABLE), "--ros-args", *ros_args({"dataset_root": micro_root, "index_file": INDEX})]
    return node_process(argv, name="sim")


def _crops(detector: IsaacLikeDetector, verdict: Verdict) -> list[tuple[Any, float]]:
    """Each step's crop box and confidence, checked against what the stand-in published for its frame (spec
    §5.4: the best box padded, c = its score; none: the full image, c = 0.1)."""
    assert verdict.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), verdict.failure_reason
    crops = []
    for report in verdict.transcript:
        stamp = stamp_to_nanoseconds(report.image_stamp)
        with detector.lock:
            published, (height, width) = detector.boxes[stamp], detector.sizes[stamp]
        if published:
            best_box, best_score = max(published, key=lambda item: item[1])
            expected = (padded_box(best_box, width, height), best_score)
        else:
            expected = (None, NO_BOX_CONFIDENCE)
        crop = report.crop_box
        got = (crop.x_min, crop.y_min, crop.x_max, crop.y_max) if report.has_crop_box else None
        assert got == (tuple(float(v) for v in expected[0]) if expected[0] else None), (stamp, published)
        assert report.detection_confidence == pytest.approx(expected[1], abs=1e-6)
        crops.append((got, float(report.detection_confidence)))
    return crops


def _summary(verdict: Verdict) -> tuple[Any, ...]:
    return (
        verdict.category,
        verdict.decision,
        round(verdict.confidence, 9),
        None if math.isnan(verdict.probability) else round(verdict.probability, 9),
        list(verdict.visited_sectors),
        [(row.name, row.reconciled_state) for row in verdict.attributes],
    )


def test_isaac_like_vision_msgs_give_the_verdicts_and_crops_of_aiv_messages_and_auto_finds_the_type(
    ros_executor: Any, node_process: Any, micro_root: Path
) -> None:
    detector = IsaacLikeDetector(ros_executor)
    _start_sim(node_process, micro_root)
    runs: dict[str, list[Verdict]] = {}
    for kind, topic, publisher in (
        ("aiv_interfaces", AIV_TOPIC, detector.aiv_pub),
        ("vision_msgs", VISION_TOPIC, detector.vision_pub),
    ):
        verifier = _start_verifier(node_process, f"verifier_{kind}", {"detections_topic": topic})  # auto
        # auto subscribes with the type the publisher offers: only then does the publisher match it.
        wait_until(lambda p=publisher: p.get_subscription_count() >= 1, f"the verifier reading {kind}")
        wait_until(
            lambda v=verifier, k=kind: (
                f"as {k}/msg/Detection2DArray, the type its publisher offers" in v.output()
            ),
            f"the verifier's log of the {kind} type it found",
        )
        client = _client(ros_executor, f"client_{kind}")
        runs[kind] = [client.run(EpisodeRequest(index=index)).verdict for index in range(EPISODES)]
        wait_until(
            lambda k=kind: detector.verifier_status().get("detections_type") == f"{k}/msg/Detection2DArray",
            "the verifier's diagnostics naming the type it reads",
        )
        verifier.assert_running()
        assert verifier.stop() == 0, verifier.output()

    ours, theirs = runs["aiv_interfaces"], runs["vision_msgs"]
    assert [verdict.category for verdict in theirs] == ["backpack", "mug", "mug"]
    assert [_summary(verdict) for verdict in theirs] == [_summary(verdict) for verdict in ours]
    crops = [[_crops(detector, verdict) for verdict in run] for run in (ours, theirs)]
    assert crops[0] == crops[1]
    # One box, the best of two and none all reached a crop (StepReport carries the confidence as float32).
    seen = {round(confidence, 6) for episode in crops[1] for _box, confidence in episode}
    assert {0.75, 0.625, NO_BOX_CONFIDENCE} <= seen, seen
    assert "backpack." in detector.prompts and detector.prompts[-1] == "mug."  # the query reached the prompt


def _bad(header: Any, case: str, width: int, height: int) -> VisionDetection2DArray:
    message = VisionDetection2DArray(header=header)
    good = _vision_detection(header, (10.0, 10.0, 50.0, 40.0), 0.5, "mug")
    bad = _vision_detection(header, (10.0, 10.0, 50.0, 40.0), 0.5, "mug")
    if case == "non-finite":
        bad.bbox.center.position.x = math.nan
    elif case == "negative size":
        bad.bbox.size_x = -20.0
    elif case == "outside":
        bad.bbox.center.position.x = width + 500.0
    elif case == "no hypothesis":
        bad.results = []
    message.detections = [good, bad]
    return message


BAD_CASES = {
    "non-finite": "detection 1: box [nan, 10, nan, 40] (xyxy) score 0.5 has a non-finite value",
    "negative size": "detection 1: box [40, 10, 20, 40] (xyxy) score 0.5 has a negative size (-20 x 30)",
    "outside": "detection 1: box [{x0:g}, 10, {x1:g}, 40] (xyxy) score 0.5 lies outside the {w}x{h} image",
    "no hypothesis": "detection 1 has no hypothesis (results is empty): no score",
}


def test_a_bad_vision_msgs_message_is_refused_with_one_line_and_the_verifier_serves_on(
    ros_executor: Any, node_process: Any, micro_root: Path
) -> None:
    detector = IsaacLikeDetector(ros_executor)
    _start_sim(node_process, micro_root)
    verifier = _start_verifier(
        node_process, "verifier", {"detections_topic": VISION_TOPIC, "detections_type": "vision_msgs"}
    )
    wait_until(lambda: detector.vision_pub.get_subscription_count() >= 1, "the verifier reading vision_msgs")
    client = _client(ros_executor, "client")
    first = client.run(EpisodeRequest(index=0)).verdict
    _crops(detector, first)

    judged = first.transcript[-1].image_stamp  # a frame the verifier holds: its size bounds the boxes
    stamp = stamp_to_nanoseconds(judged)
    height, width = detector.sizes[stamp]
    header = VisionDetection2DArray().header
    header.stamp = judged
    prefix = f"detections stamped {stamp} ns (vision_msgs/msg/Detection2DArray) refused: "
    for number, (case, reason) in enumerate(BAD_CASES.items(), start=1):
        detector.vision_pub.publish(_bad(header, case, width, height))
        wait_until(
            lambda n=number: verifier.output().count(prefix) == n, f"the verifier's line refusing {case}"
        )
        (line,) = [line for line in verifier.output().splitlines() if prefix in line][-1:]
        expected = reason.format(x0=width + 480.0, x1=width + 520.0, w=width, h=height)
        assert line.endswith(prefix + expected) and "[WARN]" in line, line
    assert "Traceback" not in verifier.output()
    wait_until(
        lambda: detector.verifier_status().get("bad_messages") == str(len(BAD_CASES)),
        "the refused messages counted in the verifier's diagnostics",
    )

    second = client.run(EpisodeRequest(index=1)).verdict  # the refused messages replaced no frame's boxes
    _crops(detector, second)
    verifier.assert_running()


def test_both_message_types_become_the_same_boxes_through_the_one_converter() -> None:
    header = Detection2DArray().header
    header.stamp.sec = 3
    boxes = [((12.0, 20.0, 100.0, 84.0), 0.625), ((0.0, 1.5, 7.0, 9.5), 0.25)]
    vision = VisionDetection2DArray(header=header)
    vision.detections = [_vision_detection(header, box, score, "mug") for box, score in boxes]
    ours = Detection2DArray(header=header, query="mug.")
    ours.detections = [
        Detection2D(x_min=b[0], y_min=b[1], x_max=b[2], y_max=b[3], score=s, label="mug") for b, s in boxes
    ]
    from_vision, vision_query = checked_detections(vision, (640, 360))
    from_ours, our_query = checked_detections(ours, (640, 360))
    assert from_vision == from_ours and [(d.box_xyxy, d.score) for d in from_ours] == boxes
    assert (vision_query, our_query) == ("", "mug.")  # vision_msgs does not say its query
    # A box that overhangs the border is kept (the crop clamps it); one wholly outside refuses the message.
    overhang = _vision_detection(header, (-4.0, -2.0, 30.0, 30.0), 0.5, "mug")
    vision.detections = [overhang]
    assert checked_detections(vision, (640, 360))[0][0].box_xyxy == (-4.0, -2.0, 30.0, 30.0)
    ours.detections = [Detection2D(x_min=700.0, y_min=1.0, x_max=710.0, y_max=9.0, score=0.5)]
    with pytest.raises(BadDetections, match=r"^detection 0: .* lies outside the 640x360 image$"):
        checked_detections(ours, (640, 360))
    ours.detections = [Detection2D(x_min=1.0, y_min=1.0, x_max=9.0, y_max=9.0, score=1.5)]
    with pytest.raises(BadDetections, match=r"score outside \[0, 1\]"):
        checked_detections(ours)


# -- out: the detector launch file --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once

    return save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny"))


def test_detector_launch_publishes_aiv_and_vision_msgs_detections_of_a_frame(
    ros_executor: Any, ros2_process: Any, tiny_dir: str
) -> None:
    require_tools("launch_ros", "ros2launch")
    stamp_ns = 5_000_000_042
    received: dict[str, Any] = {}
    lock = threading.Lock()

    def keep(key: str) -> Callable[[Any], None]:
        def on_message(message: Any) -> None:
            if stamp_to_nanoseconds(message.header.stamp) == stamp_ns:
                with lock:
                    received[key] = message

        return on_message

    node = ros_executor.create_node("detector_launch_listener")
    node.create_subscription(Detection2DArray, "detections", keep("aiv"), 10)
    node.create_subscription(VisionDetection2DArray, "detector/vision_detections", keep("vision"), 10)
    camera = node.create_publisher(Image, "camera/image_raw", FRAMES)
    launch = ros2_process(
        ["launch", "aiv_verifier", "detector.launch.py", f"model_dir:={tiny_dir}", "device:=cpu",
         "query:=red mug"],
        "detector_launch",
    )  # fmt: skip
    wait_until(lambda: camera.get_subscription_count() >= 1, "the launched detector's camera", timeout_s=60.0)
    image = numpy_to_imgmsg(np.full((120, 160, 3), 90, np.uint8), "rgb8")
    image.header.stamp.sec, image.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    image.header.frame_id = "camera_optical"
    camera.publish(image)
    wait_until(lambda: {"aiv", "vision"} <= set(received), "both detections of the frame", timeout_s=60.0)

    ours, vision = received["aiv"], received["vision"]
    assert ours.header.frame_id == vision.header.frame_id == "camera_optical"
    assert ours.query == "red mug."
    from_ours, _ = checked_detections(ours, (160, 120))
    from_vision, _ = checked_detections(vision, (160, 120))
    assert from_ours and len(from_ours) == len(from_vision)  # the tiny random model finds boxes on any frame
    for a, b in zip(from_ours, from_vision, strict=True):
        assert a.box_xyxy == pytest.approx(b.box_xyxy, abs=1e-3) and a.score == pytest.approx(
            b.score, abs=1e-6
        )
    assert [d.results[0].hypothesis.class_id for d in vision.detections] == [d.label for d in ours.detections]
    assert launch.stop() == 0, launch.output()
