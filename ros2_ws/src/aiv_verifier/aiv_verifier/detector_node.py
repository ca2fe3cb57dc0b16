"""The ``detector`` node: Grounding DINO boxes for camera frames, for a verifier in ``agent.bbox_mode: detections``.

Why a node and not only the in-verifier detector (``agent.bbox_mode: detector``): on a robot the model may run on
another machine (the one with the GPU), and other consumers (a grasp planner, a person watching the debug
image) want the same boxes. The verifier waits for the detections of the frame it judges (its
``detections_timeout_s``), matching them by header stamp.

Frames: a model takes far longer than a camera period (grounding-dino-tiny: ~15-20 s per frame on a CPU, well
under 1 s on a GPU), so the node works on the newest frame only. A worker thread runs the model; the camera
callback only files the message in a one-frame mailbox, and a frame that is replaced there before the worker
took it is dropped and counted in ``/diagnostics`` (with the device, the model and per-stage latency). With
``detector.max_batch`` N above 1 the mailbox keeps the newest N frames instead, and the worker, once a frame is
waiting, gives others up to ``detector.batch_window_s`` to arrive and detects all waiting frames in one forward
(:meth:`~.detection.grounding_dino.GroundingDinoDetector.detect_phrases_batch`): on a GPU a batch costs little
more than one frame, so a fast camera loses fewer frames. A failed batched forward counts each of its frames as
a failure.

Query: the ``query`` parameter (default ``object``) until a ``std_msgs/String`` arrives on ``query_topic``
(latched: a late joiner still gets the current one); the newest one wins. A new query re-runs the last frame when
no newer frame is waiting, so a simulator that publishes one frame per pose gets boxes for the new query.

A verifier in ``agent.bbox_mode: detections`` publishes each request's predicted category there (its
``detection_query_topic``, default ``detector/query``: this node's default ``query_topic``).

Output, each stamped with the frame's header: ``aiv_interfaces/Detection2DArray`` (best score first, label = the
phrase of the query the box was grounded to, ``query`` = the caption the model ran, so a consumer can tell boxes
for an earlier query from those for its own), ``vision_msgs/Detection2DArray`` too when vision_msgs is installed,
and a debug image with the boxes drawn (only while someone subscribes).

Lifecycle (a managed node, see :class:`DetectorNode`): bad configuration (a missing or damaged model directory,
an unknown parameter) fails configure with one line and leaves the node unconfigured; with ``autostart`` (the
default: ``ros2 run``, launch) it ends start-up with that line and exit code 2, as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import rclpy
from aiv_common.image_conversion import ImageConversionError, imgmsg_to_rgb, numpy_to_imgmsg
from aiv_common.managed_node import (
    EntityScope,
    ParameterGate,
    autostart,
    declare_autostart,
    released_memory,
    stop_on_signals,
)
from aiv_common.parameter_spec import ParameterError, ParameterSpec
from aiv_common.parameters import start_node
from aiv_common.qos import DETECTION_QUERY_QOS, LATCHED_FRAME, qos_parameter_specs, qos_settings_from
from aiv_common.setting_fields import setting
from aiv_common.setting_tree import dataclass_from_mapping, nested_config, setting_specs
from aiv_interfaces.msg import Detection2D, Detection2DArray
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from PIL import Image as PilImage
from PIL import ImageDraw
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import String

from .agent.factory import ConfigError, build_detector
from .compressed_image import compressed_to_rgb
from .detection.grounding_dino import (
    STAGES,
    GroundingDinoDetector,
    PhraseDetection,
    StageLatency,
    grounding_query,
)
from .model_config import DetectorParams
from .verifier_parameters import FRAME_QOS, IMAGE_TRANSPORTS

#: How long a cleanup waits for a forward under way (grounding-dino-tiny takes up to ~20 s per frame on a CPU).
WORKER_JOIN_S = 60.0
#: How long a shutdown waits for it: the model thread is a daemon, the process need not outlive the forward.
SHUTDOWN_JOIN_S = 1.0

try:  # optional: the interfaces most ROS perception stacks consume; not installed on every machine
    _vision: Any = importlib.import_module("vision_msgs.msg")
except ImportError:
    _vision = None


@dataclass(frozen=True)
class DetectorWiring:
    """The detector node's topics and its query until one arrives."""

    image_topic: str = setting("camera/image_raw", "camera images (any 8-bit colour or mono encoding)")
    image_transport: str = setting(
        "raw",
        "raw: image_topic carries sensor_msgs/Image; compressed: sensor_msgs/CompressedImage (jpeg/png)",
        choices=IMAGE_TRANSPORTS,
    )
    query: str = setting("object", "text to detect until a query arrives on query_topic")
    query_topic: str = setting(
        "detector/query", "std_msgs/String (latched) that replaces the query; '' = parameter only"
    )
    detections_topic: str = setting("detections", "aiv_interfaces/Detection2DArray per detected frame")
    vision_detections_topic: str = setting(
        "detector/vision_detections",
        "vision_msgs/Detection2DArray per detected frame, when vision_msgs is installed; '' = off",
    )
    debug_image_topic: str = setting("detector/debug_image", "the frame with its boxes drawn")
    publish_debug_image: bool = setting(True, "draw the debug image (only while someone subscribes)")


def detector_node_parameters() -> tuple[ParameterSpec, ...]:
    """The node's whole table: the verifier's ``detector.*`` knobs (backend fixed to grounding_dino), the
    wiring above and the camera QoS (the verifier's defaults, so both match the same camera)."""
    model = tuple(
        spec for spec in setting_specs(DetectorParams(), "detector") if spec.name != "detector.backend"
    )
    backend = ParameterSpec(
        "detector.backend", "grounding_dino", "the detector model family", choices=("grounding_dino",)
    )
    return (backend, *model, *setting_specs(DetectorWiring()), *qos_parameter_specs(FRAME_QOS, LATCHED_FRAME))


class NewestOnly:
    """A mailbox between the camera callback and the model thread holding the newest ``capacity`` items: a newer
    item pushes out the oldest waiting one (which is then dropped and counted), so the model always works on the
    newest frames. Capacity 1 is a one-frame mailbox."""

    def __init__(self, capacity: int = 1) -> None:
        if capacity < 1:
            raise ValueError(f"mailbox capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self._condition = threading.Condition()
        self._items: list[Any] = []
        self._closed = False
        self.dropped = 0

    def put(self, item: Any) -> None:
        with self._condition:
            self._items.append(item)
            while len(self._items) > self.capacity:
                self._items.pop(0)
                self.dropped += 1
            self._condition.notify_all()

    def put_if_empty(self, item: Any) -> None:
        with self._condition:
            if not self._items:
                self._items.append(item)
                self._condition.notify_all()

    def take(self) -> Any:
        """The oldest waiting item, blocking until there is one; None once closed."""
        items = self.take_all(1, 0.0)
        return items[0] if items else None

    def take_all(self, most: int, window_s: float) -> list[Any]:
        """Up to ``most`` waiting items, oldest first: block until one waits, then give others up to
        ``window_s`` to arrive; empty once closed."""
        with self._condition:
            while not self._items and not self._closed:
                self._condition.wait()
            deadline = time.monotonic() + window_s
            while (
                not self._closed
                and len(self._items) < most
                and (remaining := deadline - time.monotonic()) > 0
            ):
                self._condition.wait(remaining)
            if self._closed:
                return []
            taken, self._items = self._items[:most], self._items[most:]
            return taken

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def clear(self) -> None:
        """Drop every waiting item (not counted as dropped: nobody will ask for them)."""
        with self._condition:
            self._items.clear()


@dataclass
class DetectorStats:
    received: int = 0
    detected: int = 0
    bad_messages: int = 0
    failures: int = 0
    last_error: str = ""
    last_count: int = 0
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    last_stage_seconds: dict[str, float] = field(default_factory=dict)


def detections_message(header: Any, found: list[PhraseDetection], query: str) -> Detection2DArray:
    """The project's Detection2DArray for one frame (its header), best score first, naming the caption run."""
    message = Detection2DArray(header=header, query=grounding_query(query))
    message.detections = [
        Detection2D(
            x_min=float(item.detection.box_xyxy[0]),
            y_min=float(item.detection.box_xyxy[1]),
            x_max=float(item.detection.box_xyxy[2]),
            y_max=float(item.detection.box_xyxy[3]),
            score=float(item.detection.score),
            label=item.phrase or query,
        )
        for item in found
    ]
    return message


def vision_detections_message(header: Any, found: list[PhraseDetection], query: str) -> Any:
    """The same boxes as vision_msgs/Detection2DArray (center + size, one hypothesis each)."""
    assert _vision is not None
    message = _vision.Detection2DArray(header=header)
    for item in found:
        x1, y1, x2, y2 = item.detection.box_xyxy
        detection = _vision.Detection2D(header=header)
        detection.bbox.center.position.x = (x1 + x2) / 2.0
        detection.bbox.center.position.y = (y1 + y2) / 2.0
        detection.bbox.size_x = float(x2 - x1)
        detection.bbox.size_y = float(y2 - y1)
        hypothesis = _vision.ObjectHypothesisWithPose()
        hypothesis.hypothesis.class_id = item.phrase or query
        hypothesis.hypothesis.score = float(item.detection.score)
        detection.results = [hypothesis]
        message.detections.append(detection)
    return message


def draw_detections(image: np.ndarray, found: list[PhraseDetection], query: str) -> np.ndarray:
    """The frame with every box (best in yellow, others in cyan) and its phrase and score."""
    picture = PilImage.fromarray(image).convert("RGB")
    draw = ImageDraw.Draw(picture)
    draw.text((6, 4), f"query: {query}  boxes: {len(found)}", fill=(255, 255, 255))
    for rank, item in enumerate(found):
        colour = (255, 220, 0) if rank == 0 else (0, 200, 255)
        box = tuple(float(v) for v in item.detection.box_xyxy)
        draw.rectangle(box, outline=colour, width=3 if rank == 0 else 1)
        draw.text((box[0] + 3, box[1] + 3), f"{item.phrase or query} {item.detection.score:.2f}", fill=colour)
    return np.asarray(picture)


class DetectorNode(LifecycleNode):
    """See the module docstring. ``detector`` replaces the one the parameters describe (tests inject one).

    Lifecycle: configure checks the parameters and loads the model (a failure: one logged line, the node stays
    unconfigured and a corrected parameter may be configured again); activate subscribes to the camera and the
    query and publishes boxes; deactivate unsubscribes and drops waiting frames (a forward under way finishes,
    its boxes are not published); cleanup stops the model thread and gives the model's memory back (logged).
    ``autostart`` (default true) configures and activates the node as it starts (``ros2 run``, launch).
    """

    def __init__(self, detector: GroundingDinoDetector | None = None, **kwargs: Any) -> None:
        super().__init__("detector", **kwargs)
        self._injected = detector
        #: Why the last transition failed (one line): autostart raises it, a lifecycle manager reads the log.
        self.transition_problem = ""
        self._autostarting = False
        start = declare_autostart(self)
        self.parameters = ParameterGate(self, detector_node_parameters())
        self.detector: GroundingDinoDetector | None = None
        self.query = ""
        self.stats = DetectorStats()
        self._lock = threading.Lock()
        self._last_frame: Any = None
        self._active = threading.Event()
        self.mailbox = NewestOnly(1)
        self._worker: threading.Thread | None = None
        self._configured: EntityScope | None = None
        self._activated: EntityScope | None = None
        #: Set by the shutdown transition (``ros2 lifecycle set detector shutdown`` included): ``main`` then ends.
        self.finalized = threading.Event()
        if start:
            self._autostarting = True  # a failure is raised (exit code 2, one line), not logged
            try:
                autostart(self)
            finally:
                self._autostarting = False

    # -- lifecycle ------------------------------------------------------------------------------------------

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        scope = EntityScope(self)
        try:
            self._configure()
        except (ParameterError, ConfigError) as error:
            return self._refuse(scope, str(error))
        except Exception as error:  # a model library's own error: still one line
            self.get_logger().debug(f"configure failed: {error!r}")
            return self._refuse(scope, f"{type(error).__name__}: {error}")
        self._configured = scope
        self.parameters.set_read_only(True)
        self.transition_problem = ""
        assert self.detector is not None
        described = ", ".join(f"{k}={v}" for k, v in self.detector.describe().items())
        self.get_logger().info(f"detector configured: {described}, query={self.query!r}")
        return TransitionCallbackReturn.SUCCESS

    def _configure(self) -> None:
        values = self.parameters.values()
        fields = [field.name for field in dataclasses.fields(DetectorWiring)]
        self.wiring = wiring = dataclass_from_mapping(
            DetectorWiring, {name: values[name] for name in fields}, ""
        )
        self.frame_qos = qos_settings_from(values, FRAME_QOS).to_profile(where=FRAME_QOS)
        detector = self._injected
        if detector is None:
            config = nested_config({k: v for k, v in values.items() if k.startswith("detector.")})
            built = build_detector(config)
            assert isinstance(built, GroundingDinoDetector)
            detector = built
        self.detector = detector
        self.query = wiring.query
        self.publish_debug = wiring.publish_debug_image
        self.max_batch = int(values["detector.max_batch"])
        self.batch_window_s = float(values["detector.batch_window_s"])
        self.mailbox = NewestOnly(self.max_batch)
        # Lifecycle publishers: an inactive detector publishes no boxes (the worker checks first, so a forward that
        # ends after a deactivation is not published; diagnostics go on while configured).
        self.detections_pub = self.create_lifecycle_publisher(Detection2DArray, wiring.detections_topic, 10)
        self.vision_pub = None
        vision_topic = wiring.vision_detections_topic
        if vision_topic and _vision is not None:
            self.vision_pub = self.create_lifecycle_publisher(_vision.Detection2DArray, vision_topic, 10)
        elif vision_topic:
            self.get_logger().info("vision_msgs is not installed: publishing aiv_interfaces detections only")
        self.debug_pub = self.create_lifecycle_publisher(Image, wiring.debug_image_topic, 1)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_timer(1.0, self.publish_diagnostics)
        self._worker = threading.Thread(target=self._work, name="detector-model", daemon=True)
        self._worker.start()

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        scope = EntityScope(self)
        wiring = self.wiring
        if wiring.image_transport == "compressed":
            self.create_subscription(CompressedImage, wiring.image_topic, self.on_frame, self.frame_qos)
        else:
            self.create_subscription(Image, wiring.image_topic, self.on_frame, self.frame_qos)
        if wiring.query_topic:
            self.create_subscription(
                String, wiring.query_topic, self.on_query, DETECTION_QUERY_QOS.to_profile()
            )
        self._activated = scope
        self._active.set()
        self.get_logger().info(f"detector active: {wiring.image_topic} -> {wiring.detections_topic}")
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop_serving()
        self.get_logger().info("detector deactivated")
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        with released_memory(self.get_logger().info):
            self._release(WORKER_JOIN_S)
        self.parameters.set_read_only(False)
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """From any state, promptly: a forward under way is not waited for long (its thread is a daemon)."""
        self._stop_serving()
        self._release(SHUTDOWN_JOIN_S)
        self.finalized.set()
        return TransitionCallbackReturn.SUCCESS

    def _stop_serving(self) -> None:
        self._active.clear()
        if self._activated is not None:
            self._activated.close()
            self._activated = None
        self.mailbox.clear()
        with self._lock:
            self._last_frame = None

    def _release(self, join_s: float) -> None:
        self._stop_worker(join_s)
        if self._configured is not None:
            self._configured.close()
            self._configured = None
        self.detector = None

    def _refuse(self, scope: EntityScope, problem: str) -> TransitionCallbackReturn:
        scope.close()
        self._stop_worker(SHUTDOWN_JOIN_S)
        self.detector = None
        self.transition_problem = problem
        if not self._autostarting:
            self.get_logger().error(f"configure failed: {problem}")
        return TransitionCallbackReturn.FAILURE

    def _stop_worker(self, join_s: float) -> None:
        self.mailbox.close()
        if self._worker is not None:
            self._worker.join(timeout=join_s)
            self._worker = None

    # -- topics ---------------------------------------------------------------------------------------------

    def on_frame(self, message: Image | CompressedImage) -> None:
        if not self._active.is_set():
            return
        with self._lock:
            self.stats.received += 1
        self.mailbox.put(message)

    def on_query(self, message: String) -> None:
        text = message.data.strip()
        with self._lock:
            changed, self.query = grounding_query(text) != grounding_query(self.query), text
            last = self._last_frame
        if changed and last is not None:
            self.mailbox.put_if_empty(last)  # boxes for the new query even if the camera sends no new frame
        self.get_logger().info(f"query: {text!r}")

    # -- the model thread -----------------------------------------------------------------------------------

    def _work(self) -> None:
        mailbox = self.mailbox  # this thread's: a reconfigured node has a new mailbox and a new thread
        while messages := mailbox.take_all(self.max_batch, self.batch_window_s):
            with self._lock:
                self._last_frame, query = messages[-1], self.query
            self._detect(messages, query)

    def _detect(self, messages: list[Image | CompressedImage], query: str) -> None:
        """Detect the waiting frames (one forward per batch); publish each frame's boxes under its header."""
        frames: list[tuple[Any, np.ndarray]] = []
        for message in messages:
            decode: Callable[[Any], np.ndarray] = (
                (lambda m: compressed_to_rgb(m.format, m.data))
                if isinstance(message, CompressedImage)
                else imgmsg_to_rgb
            )
            try:
                frames.append((message, decode(message)))
            except (ImageConversionError, ValueError) as error:
                self._note_error(
                    "bad_messages",
                    f"frame at {message.header.stamp.sec}.{message.header.stamp.nanosec:09d}: {error}",
                )
        if not frames:
            return
        try:
            detector = self.detector
            if detector is None:
                return
            results = detector.detect_phrases_batch([image for _, image in frames], query)
        except Exception as error:  # a model failure (e.g. out of GPU memory) must not end the node: counted
            for _ in frames:  # every frame of a failed forward is a failed detection
                self._note_error("failures", f"detection failed: {type(error).__name__}: {error}")
            return
        for (message, image), (found, latency) in zip(frames, results, strict=True):
            self._record(found, latency)
            if not self._active.is_set():  # deactivated during the forward: counted, not published
                continue
            self.detections_pub.publish(detections_message(message.header, found, query))
            if self.vision_pub is not None:
                self.vision_pub.publish(vision_detections_message(message.header, found, query))
            if self.publish_debug and self.debug_pub.get_subscription_count() > 0:
                self.debug_pub.publish(
                    numpy_to_imgmsg(draw_detections(image, found, query), "rgb8", message.header)
                )

    def _record(self, found: list[PhraseDetection], latency: StageLatency) -> None:
        with self._lock:
            self.stats.detected += 1
            self.stats.last_count = len(found)
            self.stats.last_stage_seconds = latency.as_dict()
            for stage, seconds in self.stats.last_stage_seconds.items():
                self.stats.stage_seconds[stage] += seconds

    def _note_error(self, counter: str, text: str) -> None:
        with self._lock:
            setattr(self.stats, counter, getattr(self.stats, counter) + 1)
            self.stats.last_error = text
        self.get_logger().warning(text)

    def close(self) -> None:
        """Stop the model thread (a forward in progress finishes first)."""
        self._stop_worker(WORKER_JOIN_S)

    # -- diagnostics ----------------------------------------------------------------------------------------

    def publish_diagnostics(self) -> None:
        detector = self.detector
        if detector is None:
            return
        with self._lock:
            stats = DetectorStats(**{**vars(self.stats), "stage_seconds": dict(self.stats.stage_seconds)})
            query = self.query
        dropped = self.mailbox.dropped
        troubles = stats.bad_messages or stats.failures or dropped
        status = DiagnosticStatus(
            level=DiagnosticStatus.WARN if troubles else DiagnosticStatus.OK,
            name="detector: grounding_dino",
            message=(
                f"{stats.detected} frames detected, {dropped} dropped (model slower than the camera), "
                f"{stats.bad_messages} bad messages, {stats.failures} failures"
            ),
            hardware_id=str(detector.device),
        )
        values = {
            "lifecycle_state": "active" if self._active.is_set() else "inactive",
            **detector.describe(),
            "query": query,
            "frames_received": str(stats.received),
            "frames_detected": str(stats.detected),
            "frames_dropped": str(dropped),
            "bad_messages": str(stats.bad_messages),
            "failures": str(stats.failures),
            "last_box_count": str(stats.last_count),
            "last_error": stats.last_error,
        }
        for stage in STAGES:
            mean = stats.stage_seconds[stage] / max(1, stats.detected)
            values[f"latency_ms.{stage}"] = f"{mean * 1000.0:.2f}"
            values[f"last_latency_ms.{stage}"] = f"{stats.last_stage_seconds.get(stage, 0.0) * 1000.0:.2f}"
        status.values = [KeyValue(key=key, value=value) for key, value in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.diagnostics_pub.publish(array)


def main(args: list[str] | None = None) -> int:
    """Run the detector until SIGINT / SIGTERM or its shutdown transition; exit code 0, or 2 when ``autostart``
    finds bad configuration (one line). The signals are handled here, not by rclpy, so the shutdown transition
    runs in a live context; a forward under way is not waited for beyond ``SHUTDOWN_JOIN_S``."""
    stop = threading.Event()
    stop_on_signals(stop)
    node = start_node("detector_node", DetectorNode, args, signal_handler_options=SignalHandlerOptions.NO)
    if node is None:
        return 2
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        while not stop.is_set() and not node.finalized.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.2)  # short, so a signal is seen within 0.2 s
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    with contextlib.suppress(Exception):  # from any state; a context already shut down has no state machine
        node.trigger_shutdown()
    executor.shutdown(timeout_sec=1.0)
    node.destroy_node()
    node.get_logger().info("detector shut down")
    with contextlib.suppress(Exception):
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
