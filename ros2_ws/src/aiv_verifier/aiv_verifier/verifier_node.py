"""The ``verifier`` node: serves VerifyInstance by driving a MoveToSector server and judging camera frames.

A thin shell around :class:`~aiv_verifier.agent.session.VerificationSession`: it turns messages into
``ViewFrame`` values, the session's steps into feedback, moves and a Verdict. Backends are built once at
start-up from parameters (``config/verifier.yaml``); a missing model or dataset ends start-up with exit code 2
and a message. During a request every failure that is not the agent's answer — a goal that makes no sense, a
move or frame that never comes, an undecodable image, a backend exception — ends the request with
``DECISION_FAILED`` and a reason, never with a silent NO, and the node keeps serving.

Threads: a multi-threaded executor runs topic callbacks next to the long-running action callback, which waits
for move results and frames on events (never by sleeping). One request is served at a time; the camera is
shared, so a second concurrent goal is refused with a reason.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import rclpy
from aiv_common.action_waits import ServerLostError, action_server_watch, wait_for_future_while
from aiv_common.image_conversion import ImageConversionError, imgmsg_to_rgb, numpy_to_imgmsg
from aiv_common.qos import LATCHED_FRAME, declare_qos_parameters
from aiv_common.stamps import nanoseconds_to_stamp, stamp_to_nanoseconds
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import Detection2DArray, GroundTruthView, Verdict
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import Image

from .agent.factory import AgentFactory, ConfigError, GoalOverrides
from .agent.session import ViewFrame
from .agent.trace import EpisodeTrace, MoveResult, summarize
from .config_schema import config_parameter_defaults, nested_config
from .debug_view import compose_debug_view
from .detection.base import BoxMode
from .frame_cache import FrameCache, FrameTimeout
from .ros_messages import (
    detections_from_message,
    failure_verdict,
    geometry_from_ground_truth,
    gt_box_from_ground_truth,
    privileged_from_ground_truth,
    step_report,
    verdict_message,
)
from .verification.base import VerifierError

_MOVE_RESULTS = {
    MoveToSector.Result.OUTCOME_MOVED: MoveResult.MOVED,
    MoveToSector.Result.OUTCOME_STAYED: MoveResult.STAYED,
    MoveToSector.Result.OUTCOME_UNREACHABLE: MoveResult.UNREACHABLE,
    MoveToSector.Result.OUTCOME_ALREADY_VISITED: MoveResult.ALREADY_VISITED,
    MoveToSector.Result.OUTCOME_REJECTED: MoveResult.REJECTED,
}


class ParameterError(ValueError):
    """A node parameter is invalid; the message names it."""


@dataclass(frozen=True)
class GoalLimits:
    default_step_budget: int
    max_step_budget: int
    max_descriptions: int
    max_description_chars: int


def goal_problem(goal: VerifyInstance.Goal, limits: GoalLimits) -> str | None:
    """Why a goal cannot be served, or None. Checked before any work so a bad goal costs nothing."""
    texts = [text for text in goal.descriptions if text.strip()]
    if not texts:
        return "no descriptions: give at least one non-empty description of the object"
    if len(goal.descriptions) > limits.max_descriptions:
        return f"{len(goal.descriptions)} descriptions; at most {limits.max_descriptions} are accepted"
    longest = max(len(text) for text in goal.descriptions)
    if longest > limits.max_description_chars:
        return f"a description has {longest} characters; at most {limits.max_description_chars} are accepted"
    if goal.step_budget > limits.max_step_budget:
        return f"step_budget {goal.step_budget} is absurd; this node allows at most {limits.max_step_budget}"
    if not -1 <= goal.start_sector <= 5:
        return f"start_sector {goal.start_sector} is outside -1..5"
    return None


class VerifierNode(Node):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__("verifier", **kwargs)
        flat = {
            name: self.declare_parameter(name, default).value
            for name, default in config_parameter_defaults().items()
        }
        image_topic = self.declare_parameter("image_topic", "camera/image_raw").value
        gt_topic = self.declare_parameter("ground_truth_topic", "sim/ground_truth_view").value
        detections_topic = self.declare_parameter("detections_topic", "detections").value
        verdict_topic = self.declare_parameter("verdict_topic", "verifier/verdict").value
        debug_topic = self.declare_parameter("debug_image_topic", "verifier/debug_image").value
        move_action = self.move_action = str(self.declare_parameter("move_action", "move_to_sector").value)
        verify_action = self.declare_parameter("verify_action", "verify_instance").value
        self.move_timeout_s = float(self.declare_parameter("move_timeout_s", 10.0).value)
        self.move_server_wait_s = float(self.declare_parameter("move_server_wait_s", 5.0).value)
        self.frame_timeout_s = float(self.declare_parameter("frame_timeout_s", 5.0).value)
        self.publish_debug = bool(self.declare_parameter("publish_debug_image", True).value)
        cache_size = int(self.declare_parameter("frame_cache_size", 16).value)
        self.limits = GoalLimits(
            default_step_budget=int(self.declare_parameter("default_step_budget", 6).value),
            max_step_budget=int(self.declare_parameter("max_step_budget", 24).value),
            max_descriptions=int(self.declare_parameter("max_descriptions", 10).value),
            max_description_chars=int(self.declare_parameter("max_description_chars", 20000).value),
        )
        frame_qos = declare_qos_parameters(self, "frame_qos", LATCHED_FRAME)
        for name, value in (
            ("move_timeout_s", self.move_timeout_s),
            ("frame_timeout_s", self.frame_timeout_s),
        ):
            if not value > 0:
                raise ParameterError(f"parameter {name!r} must be > 0, got {value}")
        if not 1 <= self.limits.default_step_budget <= self.limits.max_step_budget:
            raise ParameterError("parameter 'default_step_budget' must lie in 1..max_step_budget")

        config = nested_config(flat)
        try:
            self.factory = AgentFactory.from_config(config)
        except (ConfigError, VerifierError) as error:
            raise ParameterError(str(error)) from error
        self.need_ground_truth = self.factory.needs_privileged_view
        self.need_detections = self.factory.settings.bbox_mode is BoxMode.DETECTIONS

        self.frames = FrameCache(cache_size)
        self.create_subscription(Image, image_topic, self.on_image, frame_qos)
        if self.need_ground_truth:
            self.create_subscription(GroundTruthView, gt_topic, self.on_ground_truth, frame_qos)
        if self.need_detections:
            self.create_subscription(Detection2DArray, detections_topic, self.on_detections, 10)
        self.verdict_pub = self.create_publisher(Verdict, verdict_topic, 10)
        self.debug_pub = self.create_publisher(Image, debug_topic, 1)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.move_client = ActionClient(self, MoveToSector, move_action)
        # Goals are served by a second node on an executor of its own. An episode blocks its thread (it waits
        # for moves and frames), so everything it waits for -- frames, move results -- is handled by this node
        # on a single-threaded executor. (With one MultiThreadedExecutor for all of it, rclpy hands a ready
        # message to a new pool task on every wake-up until one of them takes it; that loop held the GIL and
        # made oracle episodes over ROS 20x slower than in-process.) It takes no command-line remappings and
        # serves no parameters, so `verifier` stays the one node with this name and these parameters.
        self.goal_node = Node(
            f"{self.get_name()}_goals",
            namespace=self.get_namespace(),
            context=self.context,
            use_global_arguments=False,
            start_parameter_services=False,
        )
        self.server = ActionServer(
            self.goal_node,
            VerifyInstance,
            verify_action,
            execute_callback=self.execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup(),  # a cancel request is handled while the goal runs
        )
        self._busy = threading.Lock()
        self._stats_lock = threading.Lock()
        self.stats: dict[str, Any] = {
            "served": 0,
            "answered": 0,
            "failed": 0,
            "bad_messages": 0,
            "last_error": "",
        }
        self.stage_seconds: dict[str, float] = {}
        self.stage_calls: dict[str, int] = {}
        self.create_timer(1.0, self.publish_diagnostics)
        self.get_logger().info(
            f"verifier ready: backend={self.factory.verifier_backend}, settings={self.factory.settings.to_dict()}, "
            f"ground-truth channel={'on' if self.need_ground_truth else 'off'}"
        )

    # -- topics ---------------------------------------------------------------------------------------------

    def on_image(self, message: Image) -> None:
        stamp = stamp_to_nanoseconds(message.header.stamp)
        try:
            self.frames.put_image(stamp, imgmsg_to_rgb(message))
        except (ImageConversionError, ValueError) as error:
            self._note_bad_message(f"image at {stamp} ns: {error}")
            self.frames.put_image(stamp, None, error=str(error))

    def on_ground_truth(self, message: GroundTruthView) -> None:
        self.frames.put_ground_truth(stamp_to_nanoseconds(message.header.stamp), message)

    def on_detections(self, message: Detection2DArray) -> None:
        detections, notes = detections_from_message(message)
        for note in notes:
            self._note_bad_message(f"detections: {note}")
        self.frames.put_detections(stamp_to_nanoseconds(message.header.stamp), detections)

    def _note_bad_message(self, text: str) -> None:
        with self._stats_lock:
            self.stats["bad_messages"] += 1
            self.stats["last_error"] = text
        self.get_logger().warning(text)

    # -- VerifyInstance -------------------------------------------------------------------------------------

    def execute(self, goal_handle) -> VerifyInstance.Result:
        goal: VerifyInstance.Goal = goal_handle.request
        request_id = goal.request_id or uuid.uuid4().hex[:12]
        problem = goal_problem(goal, self.limits)
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
        try:
            session = self.factory.new_session(
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

        trace = EpisodeTrace(episode_key)
        stamps: list[Any] = []
        reports = []
        stamp_ns = stamp_to_nanoseconds(goal.start_stamp) or None
        sector = int(goal.start_sector) if goal.start_sector >= 0 else 0
        navigation_failed = False
        canceled = False
        for step_count in range(budget):
            if goal_handle.is_cancel_requested:
                canceled = True
                break
            try:
                entry = self.frames.wait(
                    stamp_ns,
                    self.frame_timeout_s,
                    need_ground_truth=self.need_ground_truth,
                    need_detections=self.need_detections,
                )
            except FrameTimeout as error:
                trace.failure_reason = f"frame timeout at step {step_count}: {error}"
                break
            if entry.image is None:
                trace.failure_reason = f"step {step_count}: the frame cannot be used: {entry.image_error}"
                break
            frame = self._frame(entry, step_count, sector, navigation_failed)
            try:
                step = session.observe(frame)
            except Exception as error:  # a backend bug must not take the node down
                self.get_logger().error(f"request {request_id}: agent failed at step {step_count}: {error!r}")
                trace.failure_reason = f"agent error at step {step_count}: {error!r}"
                break
            image_stamp = nanoseconds_to_stamp(entry.stamp_ns)
            stamps.append(image_stamp)
            self._publish_debug(frame, step)
            if step.stopped:
                trace.add(step, MoveResult.DECIDED)
                reports.append(step_report(step, image_stamp, MoveResult.DECIDED, False))
                goal_handle.publish_feedback(VerifyInstance.Feedback(step=reports[-1]))
                break
            assert step.move is not None
            result, error_text = self._move(step.move.direction)
            if result is None:
                trace.failure_reason = f"step {step_count}: move {step.move.direction!r} failed: {error_text}"
                break
            outcome = _MOVE_RESULTS.get(int(result.outcome), MoveResult.REJECTED)
            trace.add(step, outcome, bool(result.trap_view))
            reports.append(step_report(step, image_stamp, outcome, bool(result.trap_view)))
            goal_handle.publish_feedback(VerifyInstance.Feedback(step=reports[-1]))
            if outcome is MoveResult.REJECTED:
                trace.failure_reason = f"step {step_count}: the move server refused: {result.message}"
                break
            navigation_failed = outcome.navigation_failed
            stamp_ns = stamp_to_nanoseconds(result.frame_stamp) or stamp_ns
            if result.sector >= 0:
                sector = int(result.sector)
        else:
            trace.failure_reason = f"the step budget of {budget} ran out without a decision"

        if canceled:
            verdict = failure_verdict(request_id, "canceled", "the request was canceled", self._now())
            self._record(verdict, session)
            goal_handle.canceled()
            return VerifyInstance.Result(verdict=verdict)
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
            transcript=reports,
            stamp=self._now(),
        )
        self._record(verdict, session)
        if trace.failed:
            self.get_logger().error(f"request {request_id} failed: {trace.failure_reason}")
            goal_handle.abort()
        else:
            goal_handle.succeed()
        return VerifyInstance.Result(verdict=verdict)

    def _frame(self, entry, step_count: int, sector: int, navigation_failed: bool) -> ViewFrame:
        ground_truth = entry.ground_truth
        if ground_truth is None:
            return ViewFrame(
                image=entry.image,
                step_count=step_count,
                current_sector=sector,
                navigation_failed=navigation_failed,
                image_key=entry.stamp_ns,
                detections=tuple(entry.detections or ()),
            )
        return ViewFrame(
            image=entry.image,
            step_count=step_count,
            current_sector=int(ground_truth.sector),
            navigation_failed=navigation_failed,
            image_key=ground_truth.capture_tag,
            capture_tag=ground_truth.capture_tag,
            gt_box=gt_box_from_ground_truth(ground_truth),
            detections=tuple(entry.detections or ()),
            target_visible=bool(ground_truth.mask_meets_threshold),
            privileged=privileged_from_ground_truth(ground_truth),
            geometry=geometry_from_ground_truth(ground_truth),
        )

    def _move(self, direction: str) -> tuple[MoveToSector.Result | None, str]:
        if not self.move_client.wait_for_server(timeout_sec=self.move_server_wait_s):
            return None, f"no MoveToSector server within {self.move_server_wait_s:.1f} s"
        server_alive = action_server_watch(self, self.move_action)
        goal_future = self.move_client.send_goal_async(MoveToSector.Goal(direction=direction))
        try:
            if not wait_for_future_while(goal_future, self.move_timeout_s, server_alive, "the move server"):
                return None, f"the move goal was not acknowledged within {self.move_timeout_s:.1f} s"
            handle = goal_future.result()
            if handle is None or not handle.accepted:
                return None, "the move goal was rejected by the server"
            result_future = handle.get_result_async()
            if not wait_for_future_while(result_future, self.move_timeout_s, server_alive, "the move server"):
                handle.cancel_goal_async()
                return None, f"no move result within {self.move_timeout_s:.1f} s"
        except ServerLostError as error:
            return None, str(error)
        response = result_future.result()
        if response is None:
            return None, "the move server returned no result"
        return response.result, ""

    def _finish_failed(self, goal_handle, verdict: Verdict) -> VerifyInstance.Result:
        self._record(verdict, None)
        goal_handle.abort()
        return VerifyInstance.Result(verdict=verdict)

    def _record(self, verdict: Verdict, session) -> None:
        self.verdict_pub.publish(verdict)
        with self._stats_lock:
            self.stats["served"] += 1
            key = "failed" if verdict.decision == Verdict.DECISION_FAILED else "answered"
            self.stats[key] += 1
            if verdict.failure_reason:
                self.stats["last_error"] = verdict.failure_reason
            if session is not None:
                for stage, seconds in session.clock.seconds.items():
                    self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds
                    self.stage_calls[stage] = self.stage_calls.get(stage, 0) + session.clock.calls.get(
                        stage, 0
                    )

    def _publish_debug(self, frame: ViewFrame, step) -> None:
        if not self.publish_debug or self.debug_pub.get_subscription_count() == 0:
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
        with self._stats_lock:
            stats = dict(self.stats)
            stages = {
                stage: self.stage_seconds[stage] / max(1, self.stage_calls.get(stage, 0))
                for stage in self.stage_seconds
            }
        level = DiagnosticStatus.WARN if stats["bad_messages"] or stats["failed"] else DiagnosticStatus.OK
        status = DiagnosticStatus(
            level=level,
            name="verifier: agent",
            message=f"{stats['answered']} answered, {stats['failed']} failed, {stats['bad_messages']} bad messages",
            hardware_id="verifier",
        )
        status.values = [
            KeyValue(key="verifier_backend", value=self.factory.verifier_backend),
            KeyValue(key="device", value="cpu"),
            KeyValue(key="settings", value=str(self.factory.settings.to_dict())),
            KeyValue(key="last_error", value=str(stats["last_error"])),
        ] + [
            KeyValue(key=f"latency_ms.{stage}", value=f"{seconds * 1000.0:.2f}")
            for stage, seconds in sorted(stages.items())
        ]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self._now()
        self.diagnostics_pub.publish(array)


def main(args: list[str] | None = None) -> int:
    rclpy.init(args=args)
    try:
        node = VerifierNode()
    except ParameterError as error:
        print(f"verifier: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    io_executor = SingleThreadedExecutor()
    io_executor.add_node(node)
    goal_executor = MultiThreadedExecutor(num_threads=2)  # one thread runs a goal, one takes cancels
    goal_executor.add_node(node.goal_node)
    goal_thread = threading.Thread(target=_spin, args=(goal_executor,), name="verifier-goals", daemon=True)
    goal_thread.start()
    try:
        io_executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        goal_executor.shutdown(timeout_sec=5.0)
        io_executor.shutdown(timeout_sec=5.0)
        goal_thread.join(timeout=5.0)
        node.goal_node.destroy_node()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def _spin(executor) -> None:
    with contextlib.suppress(ExternalShutdownException):
        executor.spin()


if __name__ == "__main__":
    sys.exit(main())
