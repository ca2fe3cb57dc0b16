"""The ``verifier`` node: serves VerifyInstance by driving a MoveToSector server and judging camera frames.

A thin shell around the one episode loop (:func:`~aiv_verifier.agent.episode_loop.run_episode`): per request it
starts a :class:`~aiv_verifier.agent.verification_session.VerificationSession` from the goal and a
:class:`~aiv_verifier.ros_port.RosEpisodePort` (camera frames in, MoveToSector goals out, feedback per step),
runs the loop and turns its trace into a Verdict. Backends are built at configure from parameters
(``config/verifier.yaml``). During a request every failure that is not the agent's answer — a goal that makes no sense, a
move or frame that never comes, an undecodable image, a backend exception — ends the request with
``DECISION_FAILED`` and a reason, never with a silent NO, and the node keeps serving.

Lifecycle: a managed node (``ros2 lifecycle``). Unconfigured it only holds its parameters, which may be
corrected (``ros2 param set``); configure checks them and builds the backends (a failure leaves it unconfigured
with one logged line saying why); activate subscribes to the camera topics and serves goals; deactivate ends a
request under way (its move is cancelled, so the base stops; the request fails saying it was deactivated) and
refuses new ones; cleanup drops the backends and logs the memory it gave back. ``autostart`` (default true)
configures and activates the node as it starts, so ``ros2 run`` and the evaluator need no lifecycle manager; a
configure failure then ends start-up with exit code 2 and one line, as before the node was managed.

Threads (see :func:`main`): VerifyInstance goals are served by a companion node, ``verifier_goals``, on an
executor of its own (two threads: one runs the goal, one takes cancel requests). A running episode blocks its
thread while it waits for frames and move results, on events and never by sleeping; this node delivers them
(camera topics, MoveToSector client) on a single-threaded executor in the main thread. One request is served at
a time; the camera is shared, so a second concurrent goal is refused with a reason.

Frames: a goal without a start stamp starts from the image that arrived last (see
:class:`~aiv_verifier.frame_cache.FrameCache`); an image stamped more than ``max_stamp_ahead_s`` ahead of this
node's clock (ROS time, so ``use_sim_time`` with a bag's ``/clock`` works) is never taken for it, is counted in
the diagnostics and is warned about at most once per period (:mod:`~aiv_verifier.service_stats`).

External detections (``agent.bbox_mode: detections``), their message types and the detector query each
request publishes: :mod:`~aiv_verifier.detections_input`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import rclpy
from aiv_common.action_waits import RenewableActionClient
from aiv_common.image_conversion import ImageConversionError, imgmsg_to_rgb, numpy_to_imgmsg
from aiv_common.managed_node import (
    EntityScope,
    ParameterGate,
    autostart,
    declare_autostart,
    released_memory,
    stop_on_signals,
)
from aiv_common.parameter_spec import ParameterError
from aiv_common.parameters import start_node
from aiv_common.qos import VERIFY_REQUEST_QOS
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import GroundTruthView, StepReport, Verdict
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import Executor, ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from .agent.episode_loop import run_episode
from .agent.factory import AgentFactory, ConfigError, GoalOverrides
from .agent.steps import ViewFrame
from .agent.trace import summarize
from .camera_model import LatestCamera, camera_from_info
from .compressed_image import compressed_to_rgb
from .debug_view import compose_debug_view
from .detection.base import BoxMode
from .detections_input import DetectionsInput
from .frame_cache import NANOS_PER_SECOND, FrameCache, StampAhead
from .ros_messages import (
    cancelled_verdict,
    failure_verdict,
    published_request,
    verdict_message,
)
from .ros_port import FrameSource, MoveChannel, RosEpisodePort
from .service_stats import ServiceStats, add_stage_times
from .verification.base import VerifierError
from .verifier_parameters import (
    FRAME_QOS,
    goal_problem,
    node_settings,
    parse_height_levels,
    verifier_parameters,
)

#: A frame's stamp-to-arrival time above this is not a transport time (a bag's or a simulated clock's stamp).
ARRIVAL_PLAUSIBLE_S = 60.0


class VerifierNode(LifecycleNode):
    """See the module docstring. ``goal_executor``, when given, spins the goal node while the node is configured
    (``main`` passes one running on a thread of its own); without it the goal node is left to the caller."""

    factory: AgentFactory | None

    def __init__(self, goal_executor: MultiThreadedExecutor | None = None, **kwargs: Any) -> None:
        super().__init__("verifier", **kwargs)
        self._goal_executor = goal_executor
        #: Why the last transition failed: one line (autostart raises it, ``ros2 lifecycle`` users read the log).
        self.transition_problem = ""
        self._autostarting = False
        start = declare_autostart(self)
        self.parameters = ParameterGate(self, verifier_parameters())
        self._busy = threading.Lock()
        # Set on SIGINT / SIGTERM: a request under way cancels its move (the base stops) and ends at once.
        self._stopping = threading.Event()
        # Set while the node does not serve (unconfigured or inactive): a request under way ends as above, and
        # new goals are refused with the reason.
        self._inactive = threading.Event()
        self._inactive.set()
        #: Set by the shutdown transition (``ros2 lifecycle set verifier shutdown`` included): ``main`` then ends.
        self.finalized = threading.Event()
        self.stats = ServiceStats()
        self.factory = None
        self.detections: DetectionsInput | None = None
        self.frames = FrameCache(1)
        self.camera = LatestCamera()
        self._camera_problem = ""  # the last CameraInfo's problem, warned about once until it changes
        self._configured: EntityScope | None = None
        self._activated: EntityScope | None = None
        self.goal_node: Node | None = None
        if start:
            self._autostarting = True  # a failure is raised (exit code 2, one line), not logged
            try:
                autostart(self)
            finally:
                self._autostarting = False

    # -- lifecycle ------------------------------------------------------------------------------------------

    @property
    def goal_executor(self) -> MultiThreadedExecutor:
        """The executor that spins the goal node (given at construction; ``main`` always gives one)."""
        assert self._goal_executor is not None
        return self._goal_executor

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Check every parameter and build the backends, publishers, move client and goal server."""
        scope = EntityScope(self)
        try:
            self._configure()
        except (ParameterError, ConfigError, VerifierError) as error:
            return self._refuse_transition(scope, "configure", str(error))
        except (
            Exception
        ) as error:  # a backend that fails its own way (a model library's error): still one line
            self.get_logger().debug(f"configure failed: {error!r}")
            return self._refuse_transition(scope, "configure", f"{type(error).__name__}: {error}")
        self._configured = scope
        self.parameters.set_read_only(True)
        self.transition_problem = ""
        self.get_logger().info(
            f"verifier configured: backend={self.factory.verifier_backend if self.factory else '?'}, "
            f"settings={self.factory.settings.to_dict() if self.factory else {}}, "
            f"ground-truth channel={'on' if self.need_ground_truth else 'off'}"
        )
        return TransitionCallbackReturn.SUCCESS

    def _configure(self) -> None:
        settings = node_settings(self.parameters.values())
        wiring = self.wiring = settings.wiring
        self.height_levels = parse_height_levels(wiring.height_levels)
        self.limits = settings.limits
        self.frame_qos = settings.frame_qos.to_profile(where=FRAME_QOS)
        self.factory = AgentFactory.from_config(settings.factory_config)
        self.need_ground_truth = self.factory.needs_privileged_view
        self.need_detections = self.factory.settings.bbox_mode is BoxMode.DETECTIONS
        self.frames = FrameCache(
            wiring.frame_cache_size,
            clock_ns=self._clock_ns,
            max_ahead_ns=max(1, round(self.wiring.max_stamp_ahead_s * NANOS_PER_SECOND)),
        )
        self.frames.interrupt("the verifier is not active")
        self.camera = LatestCamera()
        # Plain publishers for what a request publishes (its steps, its verdict): the verdict of a request that a
        # deactivation ends is published after the node left the active state, and a recorder must get it. The
        # debug image only serves a person watching an active node: a lifecycle publisher.
        self.verdict_pub = self.create_publisher(Verdict, wiring.verdict_topic, 10)
        # What a session recorder needs besides the camera: the request (latched, so a recorder that joins
        # late still gets the one being served) and every step with its move and outcome.
        self.request_pub = self.create_publisher(
            VerifyInstance.Goal, wiring.request_topic, VERIFY_REQUEST_QOS.to_profile()
        )
        self.step_pub = self.create_publisher(StepReport, wiring.step_topic, 50)
        self.debug_pub = self.create_lifecycle_publisher(Image, wiring.debug_image_topic, 1)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.move_client = RenewableActionClient(self, MoveToSector, wiring.move_action)
        self.create_timer(1.0, self.publish_diagnostics)
        # Goals are served by a second node on an executor of its own. An episode blocks its thread (it waits
        # for moves and frames), so everything it waits for -- frames, move results -- is handled by this node
        # on a single-threaded executor. (With one MultiThreadedExecutor for all of it, rclpy hands a ready
        # message to a new pool task on every wake-up until one of them takes it; that loop held the GIL and
        # made oracle episodes over ROS 20x slower than in-process.) It takes no command-line remappings and
        # serves no parameters, so `verifier` stays the one node with this name and these parameters.
        goal_node = Node(
            f"{self.get_name()}_goals",
            namespace=self.get_namespace(),
            context=self.context,
            use_global_arguments=False,
            start_parameter_services=False,
        )
        self.server = ActionServer(
            goal_node,
            VerifyInstance,
            wiring.verify_action,
            execute_callback=self.execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup(),  # a cancel request is handled while the goal runs
        )
        self.goal_node = goal_node
        if self._goal_executor is not None:  # added once complete: an executor must never see it half-built
            self._goal_executor.add_node(goal_node)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Subscribe to the camera (and its side channels) and serve goals."""
        scope = EntityScope(self)
        wiring = self.wiring
        try:
            if wiring.image_transport == "compressed":
                self.create_subscription(
                    CompressedImage, wiring.image_topic, self.on_compressed_image, self.frame_qos
                )
            else:
                self.create_subscription(Image, wiring.image_topic, self.on_image, self.frame_qos)
            if wiring.camera_info_topic:
                self.create_subscription(
                    CameraInfo, wiring.camera_info_topic, self.on_camera_info, self.frame_qos
                )
            if self.need_ground_truth:
                self.create_subscription(
                    GroundTruthView, wiring.ground_truth_topic, self.on_ground_truth, self.frame_qos
                )
            self.detections = (
                DetectionsInput(self, wiring, self.frames, self.camera, self._note_bad_message)
                if self.need_detections
                else None
            )
        except ParameterError as error:
            return self._refuse_transition(scope, "activate", str(error))
        self._activated = scope
        self.frames.resume()
        self._inactive.clear()
        self.transition_problem = ""
        self.get_logger().info(f"verifier active: serving {wiring.verify_action}")
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop serving: a request under way cancels its move (the base stops) and ends FAILED; new goals are
        refused. Returns at once: the request ends on its own thread within moments (it needs this node's
        executor, which a transition callback occupies, for nothing but an optional last frame)."""
        self._stop_serving("the verifier was deactivated")
        busy = not self.wait_idle(0.0)
        self.get_logger().info(
            "verifier deactivated"
            + ("; the request under way is cancelling its move and ends" if busy else "")
        )
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Drop the backends, the goal server and every entity configure made; log the memory given back."""
        if not self.wait_idle(0.0):
            self.transition_problem = "a request deactivated a moment ago is still ending; clean up again"
            self.get_logger().error(f"cleanup refused: {self.transition_problem}")
            return TransitionCallbackReturn.FAILURE
        with released_memory(self.get_logger().info):
            self._release()
        self.parameters.set_read_only(False)
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """From any state: stop serving (a request under way ends as on deactivate) and drop everything."""
        self._stopping.set()
        self._stop_serving("the verifier shut down")
        if self.wait_idle(0.0):
            self._release()
        self.finalized.set()
        return TransitionCallbackReturn.SUCCESS

    def _stop_serving(self, reason: str) -> None:
        self._inactive.set()
        self.frames.interrupt(reason)
        if self._activated is not None:
            self._activated.close()
            self._activated = None
        self.detections = None

    def _release(self) -> None:
        if self.goal_node is not None:
            if self._goal_executor is not None:
                self._goal_executor.remove_node(self.goal_node)
            self.server.destroy()
            self.goal_node.destroy_node()
            self.goal_node = None
        if self._configured is not None:
            self._configured.close()
            self._configured = None
        self.factory = None
        self.frames = FrameCache(1)
        self.frames.interrupt("the verifier is not configured")

    def _refuse_transition(
        self, scope: EntityScope, transition: str, problem: str
    ) -> TransitionCallbackReturn:
        """Undo a failed transition's entities; say why in one line (raised by autostart, else logged)."""
        scope.close()
        self.transition_problem = problem
        if transition == "configure":
            self.factory = None
        if not self._autostarting:
            self.get_logger().error(f"{transition} failed: {problem}")
        return TransitionCallbackReturn.FAILURE

    # -- topics ---------------------------------------------------------------------------------------------

    def on_image(self, message: Image) -> None:
        self._put_frame(message, imgmsg_to_rgb)

    def on_compressed_image(self, message: CompressedImage) -> None:
        self._put_frame(message, lambda compressed: compressed_to_rgb(compressed.format, compressed.data))

    def _put_frame(self, message: Image | CompressedImage, decode: Callable[[Any], Any]) -> None:
        """Decode a camera message once and file it by stamp (an undecodable one is filed with its error).

        The decode time and how long the message took from its stamp to here (on the wall clock, the one the
        simulator stamps with; 0 when the stamp is not from it, e.g. a bag's) go with the frame into the
        request's ``ros.*`` timings, so the cost of the ROS path is measured where it is paid."""
        reached = time.time_ns()
        stamp = stamp_to_nanoseconds(message.header.stamp)
        arrival_s = (reached - stamp) / 1e9
        if not 0.0 <= arrival_s < ARRIVAL_PLAUSIBLE_S:
            arrival_s = 0.0
        try:
            started = time.perf_counter()
            image = decode(message)
            ahead = self.frames.put_image(
                stamp, image, decode_s=time.perf_counter() - started, arrival_s=arrival_s
            )
        except (ImageConversionError, ValueError) as error:
            self._note_bad_message(f"image at {stamp} ns: {error}")
            ahead = self.frames.put_image(stamp, None, error=str(error))
        if ahead is not None:
            self._note_stamp_ahead(ahead)

    def _clock_ns(self) -> int | None:
        """This node's ROS time; None before a simulated clock (use_sim_time) has ticked."""
        now = self.get_clock().now().nanoseconds
        return now if now > 0 else None

    def _note_stamp_ahead(self, ahead: StampAhead) -> None:
        """Count an image stamped too far ahead of the clock; warn at most once per period, with the count."""
        count = self.stats.stamp_ahead()
        if count is not None:
            self.get_logger().warning(
                f"image stamped {ahead.stamp_ns} ns is {ahead.ahead_s:.3f} s ahead of this node's clock "
                f"(max_stamp_ahead_s = {self.wiring.max_stamp_ahead_s:g}; {count} such image(s) since the last "
                "warning): it is kept for a request that names its stamp but never taken as the newest frame; "
                "check the camera's clock, or use_sim_time when replaying a bag"
            )

    def on_camera_info(self, message: CameraInfo) -> None:
        """Keep the newest usable calibration; a bad one is counted and warned about, the previous one stays."""
        try:
            camera = camera_from_info(
                message.width,
                message.height,
                list(message.k),
                message.binning_x,
                message.binning_y,
                message.roi.width,
                message.roi.height,
            )
        except ValueError as error:
            # A driver without calibration sends the same bad CameraInfo with every frame: each one is counted,
            # the warning is logged once per different problem.
            text = f"camera_info at {stamp_to_nanoseconds(message.header.stamp)} ns: {error}"
            self._note_bad_message(text, warn=str(error) != self._camera_problem)
            self._camera_problem = str(error)
            return
        self._camera_problem = ""
        if camera != self.camera.get():
            self.get_logger().info(f"camera calibration: {camera.describe()}")
        self.camera.put(camera)

    def on_ground_truth(self, message: GroundTruthView) -> None:
        self.frames.put_ground_truth(stamp_to_nanoseconds(message.header.stamp), message)

    def _note_bad_message(self, text: str, warn: bool = True) -> None:
        self.stats.bad_message(text)
        if warn:
            self.get_logger().warning(text)

    # -- VerifyInstance -------------------------------------------------------------------------------------

    def execute(self, goal_handle) -> VerifyInstance.Result:
        goal: VerifyInstance.Goal = goal_handle.request
        request_id = goal.request_id or uuid.uuid4().hex[:12]
        problem = goal_problem(goal, self.limits)
        if problem is None and self._inactive.is_set():
            problem = "the verifier is not active (its lifecycle state is not 'active'); activate it first"
        if problem is None and not self._busy.acquire(blocking=False):
            problem = "busy: another verification request is being served"
        elif problem is None:
            try:
                return self._serve(goal_handle, goal, request_id)
            finally:
                self._busy.release()
        self.get_logger().warning(f"request {request_id} refused: {problem}")
        return self._finish_failed(goal_handle, failure_verdict(request_id, "rejected", problem, self._now()))

    def _serve(self, goal_handle, goal: VerifyInstance.Goal, request_id: str) -> VerifyInstance.Result:
        started = time.perf_counter()
        budget = int(goal.step_budget) or self.limits.default_step_budget
        episode_key = goal.episode_key or request_id
        overrides = GoalOverrides(query_mode=goal.query_mode, nbv=goal.nbv_strategy, fusion=goal.fusion)
        factory = self.factory
        if factory is None or self._inactive.is_set():  # deactivated between the check and taking the lock
            reason = "the verifier is not active (its lifecycle state is not 'active'); activate it first"
            return self._finish_failed(
                goal_handle, failure_verdict(request_id, "rejected", reason, self._now())
            )
        try:
            session = factory.new_session(
                tuple(goal.descriptions),
                episode_key=episode_key,
                max_steps=budget,
                category_hint=goal.category_hint,
                overrides=overrides,
            )
        except (ValueError, ConfigError) as error:
            return self._finish_failed(
                goal_handle, failure_verdict(request_id, "rejected", str(error), self._now())
            )
        for note in session.query.notes:  # served as asked, but said (also in the Verdict's notes)
            self.get_logger().warning(f"request {request_id}: {note}")

        self.request_pub.publish(published_request(goal, request_id, episode_key))
        port = RosEpisodePort(
            FrameSource(
                self.frames,
                self.wiring.frame_timeout_s,
                self.need_ground_truth,
                self.need_detections,
                detections_timeout_s=self.wiring.detections_timeout_s,
                detections_query=self.detections.ask(session.query.category) if self.detections else None,
                window_s=self.wiring.frame_stamp_window_s,
                camera=self.camera,
                levels=self.height_levels,
            ),
            MoveChannel(
                self,
                self.move_client,
                self.wiring.move_action,
                self.wiring.move_server_wait_s,
                self.wiring.move_timeout_s,
            ),
            goal_handle,
            publish_debug=self._publish_debug,
            publish_step=self.step_pub.publish,
            stopping=self._inactive.is_set,  # shutting down or deactivated: cancel the move, end now
        )
        trace = run_episode(
            session,
            port,
            episode_key=episode_key,
            budget=budget,
            start_stamp=stamp_to_nanoseconds(goal.start_stamp) or None,
            start_sector=int(goal.start_sector) if goal.start_sector >= 0 else 0,
            on_step=port.report_step,
        )

        if trace.cancelled or (trace.failed and self._inactive.is_set()):
            # A wait the deactivation or shutdown interrupted fails the episode, as a cancel does.
            return self._finish_cancelled(goal_handle, request_id, trace.failure_reason, port, session)
        # The ROS path's own stages travel in the Verdict's timings beside the agent's.
        add_stage_times(session.clock, port.clock)
        summary = summarize(session, trace)
        last_rows = session.steps[-1].attributes if session.steps else ()
        verdict = verdict_message(
            summary,
            request_id=request_id,
            query_mode=session.query.mode.value,
            category=session.query.category,
            attributes=last_rows,
            elapsed_s=time.perf_counter() - started,
            clock=session.clock,
            transcript=port.reports,
            stamp=self._now(),
            notes=session.query.notes,
        )
        self._record(verdict, session)
        if trace.failed:
            self.get_logger().error(f"request {request_id} failed: {trace.failure_reason}")
            goal_handle.abort()
        else:
            goal_handle.succeed()
        return VerifyInstance.Result(verdict=verdict)

    def _finish_cancelled(
        self, goal_handle, request_id: str, reason: str, port: RosEpisodePort, session
    ) -> VerifyInstance.Result:
        """End a request its client cancelled (or that a shutdown interrupted): no answer, but the steps taken.

        The move under way, if any, was already cancelled by the port, so the base is stopping by now.
        """
        interrupted = self._inactive.is_set() and not goal_handle.is_cancel_requested
        if interrupted:
            why = "shut down" if self._stopping.is_set() else "was deactivated"
            reason = f"the verifier {why} during the request ({reason})"
            self.get_logger().warning(f"request {request_id} ended: {reason}")
        verdict = cancelled_verdict(request_id, reason, self._now(), port.reports)
        self._record(verdict, session)
        if interrupted:
            goal_handle.abort()
        else:
            goal_handle.canceled()
        return VerifyInstance.Result(verdict=verdict)

    def begin_shutdown(self) -> None:
        """Stop serving: a request under way cancels its move and ends now (called on SIGINT / SIGTERM)."""
        self._stopping.set()
        self._stop_serving("the verifier shut down")

    def wait_idle(self, timeout_s: float) -> bool:
        """Whether no request is being served, waiting up to ``timeout_s`` for the one under way to end."""
        if not self._busy.acquire(timeout=timeout_s):
            return False
        self._busy.release()
        return True

    def _finish_failed(self, goal_handle, verdict: Verdict) -> VerifyInstance.Result:
        self._record(verdict, None)
        goal_handle.abort()
        return VerifyInstance.Result(verdict=verdict)

    def _record(self, verdict: Verdict, session) -> None:
        self.verdict_pub.publish(verdict)
        failed = verdict.decision == Verdict.DECISION_FAILED
        self.stats.request_ended(
            failed, verdict.failure_reason, session.clock if session is not None else None
        )

    def _publish_debug(self, frame: ViewFrame, step) -> None:
        if not self.wiring.publish_debug_image or self.debug_pub.get_subscription_count() == 0:
            return
        headline = f"step {step.step} sector {step.sector} c={step.crop.confidence:.2f} -> " + (
            step.decision.value if step.stopped else f"move {step.move.direction if step.move else ''}"
        )
        picture = compose_debug_view(frame.image, step.crop.box, step.crop.image, step.attributes, headline)
        message = numpy_to_imgmsg(picture, "rgb8")
        message.header.stamp = self._now()
        self.debug_pub.publish(message)

    def _now(self):
        return self.get_clock().now().to_msg()

    # -- diagnostics ----------------------------------------------------------------------------------------

    def publish_diagnostics(self) -> None:
        if self.factory is None:
            return
        troubles, summary, counted = self.stats.diagnostics()
        camera = self.camera.get()
        values = [
            ("lifecycle_state", "inactive" if self._inactive.is_set() else "active"),
            *self.factory.diagnostic_values(),
            *counted,
            # Where pixels become metres (the classical size cue): the camera's calibration, else the parameter.
            ("camera", camera.describe() if camera else "no camera_info"),
            # Moves whose goal the move server never answered and that went on with a fresh client.
            ("move_client_renewals", str(self.move_client.renewals)),
        ]
        if self.detections is not None:
            values += self.detections.diagnostic_values()
        status = DiagnosticStatus(
            level=DiagnosticStatus.WARN if troubles else DiagnosticStatus.OK,
            name="verifier: agent",
            message=summary,
            hardware_id="verifier",
            values=[KeyValue(key=key, value=value) for key, value in values],
        )
        array = DiagnosticArray(status=[status])
        array.header.stamp = self._now()
        self.diagnostics_pub.publish(array)


#: How long a shutdown lets the request under way cancel its move and end (within the 5 s a supervisor allows).
SHUTDOWN_GRACE_S = 3.5
#: How long, after that request ended, its result is given to reach the client.
RESULT_SETTLE_S = 0.5


def main(args: list[str] | None = None) -> int:
    """Run the verifier until SIGINT / SIGTERM; exit code 0, or 2 when ``autostart`` finds bad configuration.

    SIGINT and SIGTERM are handled here, not by rclpy (which would shut the context down at once): a request
    under way must first cancel its move so that the base stops, and that needs a live context. The shutdown
    never blocks on the goal thread: rclpy's ``MultiThreadedExecutor.shutdown(timeout_sec)`` does not honour
    its timeout (it joins its thread pool, i.e. waits for the running goal, however long), and while this
    thread waited there nobody delivered the move and frame results that goal waited for, so it ran on to its
    own timeouts and a supervisor's SIGKILL. Instead every wait of a request is interrupted (moves cancelled,
    frame waits ended), this thread keeps spinning until the request has ended, and the pool is let go.
    """
    stop = threading.Event()
    stop_on_signals(stop)  # before the node exists: a signal while it is built is honoured, not fatal

    def make_node() -> VerifierNode:
        return VerifierNode(
            goal_executor=MultiThreadedExecutor(num_threads=2)
        )  # one runs a goal, one cancels

    node = start_node("verifier", make_node, args, signal_handler_options=SignalHandlerOptions.NO)
    if node is None:
        return 2
    goal_executor = node.goal_executor
    io_executor = SingleThreadedExecutor()
    io_executor.add_node(node)
    goal_thread = threading.Thread(target=_spin, args=(goal_executor,), name="verifier-goals", daemon=True)
    goal_thread.start()
    ended = True
    try:
        # Short waits so the signal handler (which runs between Python instructions) is seen within 0.2 s.
        while not stop.is_set() and not node.finalized.is_set() and rclpy.ok():
            io_executor.spin_once(timeout_sec=0.2)
        busy = not node.wait_idle(0.0)
        node.begin_shutdown()
        ended = _spin_until(io_executor, lambda: node.wait_idle(0.0), SHUTDOWN_GRACE_S)
        if ended and busy:
            # The action server sends the ended request's result from the goal thread just after the request
            # returns; give it a moment so the client learns why its request ended.
            _spin_until(io_executor, lambda: False, RESULT_SETTLE_S)
    except (KeyboardInterrupt, ExternalShutdownException):
        ended = node.wait_idle(0.0)
    if not ended:
        # A backend call that no interruption reaches (a model forward, a chat request) still runs: its thread
        # cannot be joined in time, and the interpreter would wait for it at exit. Leave now, saying so.
        node.get_logger().error(
            f"the request under way did not end within {SHUTDOWN_GRACE_S:g} s of the shutdown; exiting without it"
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    with contextlib.suppress(Exception):  # from any state; a context already shut down has no state machine
        node.trigger_shutdown()
    goal_executor.shutdown(timeout_sec=0.0, wait_for_threads=False)  # idle: its pool threads end at exit
    goal_thread.join(timeout=1.0)
    io_executor.shutdown(timeout_sec=1.0)
    node.destroy_node()
    node.get_logger().info("verifier shut down")
    rclpy.try_shutdown()
    return 0


def _spin_until(executor: SingleThreadedExecutor, done: Callable[[], bool], limit_s: float) -> bool:
    """Spin ``executor`` until ``done()`` (True) or ``limit_s`` passed (False)."""
    deadline = time.monotonic() + limit_s
    while not done():
        if time.monotonic() >= deadline or not rclpy.ok():
            return done()
        executor.spin_once(timeout_sec=0.05)
    return True


def _spin(executor: Executor) -> None:
    with contextlib.suppress(ExternalShutdownException):
        executor.spin()


if __name__ == "__main__":
    sys.exit(main())
