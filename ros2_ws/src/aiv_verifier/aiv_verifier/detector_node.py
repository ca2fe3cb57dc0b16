"""The ``detector`` node: Grounding DINO boxes for camera frames, for a verifier in ``agent.bbox_mode: detections``.

Why a node and not only the in-verifier detector (``agent.bbox_mode: detector``): on a robot the model may run on
another machine (the one with the GPU), and other consumers (a grasp planner, a person watching the debug
image) want the same boxes. The verifier waits for the detections of the frame it judges (its
``detections_timeout_s``), matching them by header stamp.

Frames: a model takes far longer than a camera period, so the node works on the newest frames only, on a model
thread of its own (:mod:`~aiv_verifier.detector_worker`: the mailbox, batching, what is dropped); frames dropped
are counted in ``/diagnostics`` (with the device, the model and per-stage latency). The parameter table is
:mod:`~aiv_verifier.detector_parameters`, the published messages :mod:`~aiv_verifier.detection_messages`.

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
import sys
import threading
from typing import Any

import numpy as np
import rclpy
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.managed_node import (
    EntityScope,
    ParameterGate,
    autostart,
    declare_autostart,
    released_memory,
)
from aiv_common.parameter_spec import ParameterError
from aiv_common.parameters import start_node
from aiv_common.qos import DETECTION_QUERY_QOS, qos_settings_from
from aiv_common.setting_tree import dataclass_from_mapping, nested_config
from aiv_common.stop_signals import install_stop_handlers
from aiv_interfaces.msg import Detection2DArray
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import String

from .agent.factory import ConfigError, build_detector
from .detection.grounding_dino import STAGES, GroundingDinoDetector, PhraseDetection
from .detection_messages import detections_message, draw_detections, vision_detections_message, vision_msgs
from .detector_parameters import DetectorWiring, detector_node_parameters
from .detector_worker import DetectionWorker
from .verifier_parameters import FRAME_QOS

#: How long a cleanup waits for a forward under way (grounding-dino-tiny takes up to ~20 s per frame on a CPU).
WORKER_JOIN_S = 60.0
#: How long a shutdown waits for it: the model thread is a daemon, the process need not outlive the forward.
SHUTDOWN_JOIN_S = 1.0


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
        self.worker = DetectionWorker(self._publish_boxes, lambda text: self.get_logger().warning(text))
        self._active = threading.Event()
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

    @property
    def detector(self) -> GroundingDinoDetector | None:
        """The model while the node is configured (the worker's)."""
        return self.worker.detector

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
        self.get_logger().info(f"detector configured: {described}, query={self.worker.query!r}")
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
        self.publish_debug = wiring.publish_debug_image
        # Lifecycle publishers: an inactive detector publishes no boxes (checked before publishing too, so a forward
        # that ends after a deactivation is not published; diagnostics go on while configured).
        self.detections_pub = self.create_lifecycle_publisher(Detection2DArray, wiring.detections_topic, 10)
        self.vision_pub = None
        vision_topic = wiring.vision_detections_topic
        if vision_topic and vision_msgs is not None:
            self.vision_pub = self.create_lifecycle_publisher(vision_msgs.Detection2DArray, vision_topic, 10)
        elif vision_topic:
            self.get_logger().info("vision_msgs is not installed: publishing aiv_interfaces detections only")
        self.debug_pub = self.create_lifecycle_publisher(Image, wiring.debug_image_topic, 1)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_timer(1.0, self.publish_diagnostics)
        self.worker.start(
            detector,
            wiring.query,
            int(values["detector.max_batch"]),
            float(values["detector.batch_window_s"]),
        )

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
        self.worker.clear()

    def _release(self, join_s: float) -> None:
        self.worker.stop(join_s)
        if self._configured is not None:
            self._configured.close()
            self._configured = None
        self.worker.detector = None

    def _refuse(self, scope: EntityScope, problem: str) -> TransitionCallbackReturn:
        scope.close()
        self.worker.stop(SHUTDOWN_JOIN_S)
        self.worker.detector = None
        self.transition_problem = problem
        if not self._autostarting:
            self.get_logger().error(f"configure failed: {problem}")
        return TransitionCallbackReturn.FAILURE

    def close(self) -> None:
        """Stop the model thread (a forward in progress finishes first)."""
        self.worker.stop(WORKER_JOIN_S)

    # -- topics ---------------------------------------------------------------------------------------------

    def on_frame(self, message: Image | CompressedImage) -> None:
        if self._active.is_set():
            self.worker.offer(message)

    def on_query(self, message: String) -> None:
        text = message.data.strip()
        self.worker.set_query(text)
        self.get_logger().info(f"query: {text!r}")

    def _publish_boxes(
        self, message: Any, image: np.ndarray, found: list[PhraseDetection], query: str
    ) -> None:
        """One frame's boxes from the model thread: published under the frame's header while active."""
        if not self._active.is_set():  # deactivated during the forward: counted, not published
            return
        self.detections_pub.publish(detections_message(message.header, found, query))
        if self.vision_pub is not None:
            self.vision_pub.publish(vision_detections_message(message.header, found, query))
        if self.publish_debug and self.debug_pub.get_subscription_count() > 0:
            self.debug_pub.publish(
                numpy_to_imgmsg(draw_detections(image, found, query), "rgb8", message.header)
            )

    # -- diagnostics ----------------------------------------------------------------------------------------

    def publish_diagnostics(self) -> None:
        detector = self.detector
        if detector is None:
            return
        stats, query = self.worker.snapshot()
        dropped = self.worker.mailbox.dropped
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
    finds bad configuration (one line). The signals are a request to stop (:mod:`aiv_common.stop_signals`), not
    rclpy's, so the shutdown transition runs in a live context; a forward under way is not waited for beyond
    ``SHUTDOWN_JOIN_S``."""
    stop = install_stop_handlers()
    node = start_node("detector_node", DetectorNode, args, signal_handler_options=SignalHandlerOptions.NO)
    if node is None:
        return 2
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        while not stop.requested and not node.finalized.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.2)  # short, so a stop request is seen within 0.2 s
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
