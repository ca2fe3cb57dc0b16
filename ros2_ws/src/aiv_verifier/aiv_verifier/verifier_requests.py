"""How the ``verifier`` node serves one VerifyInstance goal: checks, the episode's wiring, the verdict.

Per request a :class:`~aiv_verifier.agent.verification_session.VerificationSession` is started from the goal and a
:class:`~aiv_verifier.ros_port.RosEpisodePort` (camera frames in, MoveToSector goals out, feedback per step) is
wired to it; the one episode loop (:func:`~aiv_verifier.agent.episode_loop.run_episode`) runs and its trace
becomes a Verdict. Every failure that is not the agent's answer ends the request with ``DECISION_FAILED`` and a
reason, never with a silent NO.

Why apart from the node: serving is the same whatever state machine brings the node to it. The lifecycle
transitions (``verifier_node``) only build a :class:`RequestServer` at configure and flip :class:`ServingState`:
while the node does not serve, a goal is refused with the reason and the request under way ends (its move
cancelled, so the base stops).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiv_common.action_waits import RenewableActionClient
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import Verdict
from rclpy.node import Node
from rclpy.publisher import Publisher

from .agent.episode_loop import run_episode
from .agent.factory import AgentFactory, ConfigError, GoalOverrides
from .agent.steps import ViewFrame
from .agent.trace import summarize
from .camera_model import LatestCamera
from .debug_view import compose_debug_view
from .detections_input import DetectionsInput
from .frame_cache import FrameCache
from .ros_messages import cancelled_verdict, failure_verdict, published_request, verdict_message
from .ros_port import FrameSource, MoveChannel, RosEpisodePort
from .service_stats import ServiceStats, add_stage_times
from .verifier_parameters import GoalLimits, Wiring, goal_problem

NOT_ACTIVE = "the verifier is not active (its lifecycle state is not 'active'); activate it first"


class ServingState:
    """Whether the verifier serves and whether a request is under way.

    Shared by the lifecycle transitions, which stop and resume serving, and the request server, which refuses
    goals while not serving and ends the request under way when serving stops. One request is served at a time:
    the camera is shared.
    """

    def __init__(self) -> None:
        self.busy = threading.Lock()
        #: Set while the node does not serve (unconfigured or inactive, or shutting down).
        self.inactive = threading.Event()
        self.inactive.set()
        #: Set on SIGINT / SIGTERM or the shutdown transition: an ended request says the verifier shut down.
        self.stopping = threading.Event()

    def wait_idle(self, timeout_s: float) -> bool:
        """Whether no request is being served, waiting up to ``timeout_s`` for the one under way to end."""
        if not self.busy.acquire(timeout=timeout_s):
            return False
        self.busy.release()
        return True


@dataclass(frozen=True)
class RequestSetup:
    """What configure built that every request uses."""

    factory: AgentFactory
    wiring: Wiring
    limits: GoalLimits
    height_levels: tuple[int, ...]
    need_ground_truth: bool
    need_detections: bool
    frames: FrameCache
    camera: LatestCamera
    move_client: RenewableActionClient
    verdict_pub: Publisher
    request_pub: Publisher
    step_pub: Publisher
    debug_pub: Any  # a lifecycle publisher: debug images only while active


class RequestServer:
    """The VerifyInstance execute callback of a configured verifier (see the module docstring).

    ``node`` is the verifier (its clock, its logger, the node the move client belongs to); ``detections`` gives
    the detections input of the active node (None without ``bbox_mode: detections`` or while inactive).
    """

    def __init__(
        self,
        node: Node,
        setup: RequestSetup,
        serving: ServingState,
        stats: ServiceStats,
        detections: Callable[[], DetectionsInput | None],
    ) -> None:
        self.node = node
        self.setup = setup
        self.serving = serving
        self.stats = stats
        self.detections = detections

    def execute(self, goal_handle: Any) -> VerifyInstance.Result:
        goal: VerifyInstance.Goal = goal_handle.request
        request_id = goal.request_id or uuid.uuid4().hex[:12]
        problem = goal_problem(goal, self.setup.limits)
        if problem is None and self.serving.inactive.is_set():
            problem = NOT_ACTIVE
        if problem is None and not self.serving.busy.acquire(blocking=False):
            problem = "busy: another verification request is being served"
        elif problem is None:
            try:
                return self._serve(goal_handle, goal, request_id)
            finally:
                self.serving.busy.release()
        self.node.get_logger().warning(f"request {request_id} refused: {problem}")
        return self._finish_failed(goal_handle, failure_verdict(request_id, "rejected", problem, self._now()))

    def _serve(self, goal_handle: Any, goal: VerifyInstance.Goal, request_id: str) -> VerifyInstance.Result:
        setup = self.setup
        started = time.perf_counter()
        budget = int(goal.step_budget) or setup.limits.default_step_budget
        episode_key = goal.episode_key or request_id
        overrides = GoalOverrides(query_mode=goal.query_mode, nbv=goal.nbv_strategy, fusion=goal.fusion)
        if self.serving.inactive.is_set():  # deactivated between the check and taking the lock
            return self._finish_failed(
                goal_handle, failure_verdict(request_id, "rejected", NOT_ACTIVE, self._now())
            )
        try:
            session = setup.factory.new_session(
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
            self.node.get_logger().warning(f"request {request_id}: {note}")

        setup.request_pub.publish(published_request(goal, request_id, episode_key))
        detections = self.detections()
        wiring = setup.wiring
        port = RosEpisodePort(
            FrameSource(
                setup.frames,
                wiring.frame_timeout_s,
                setup.need_ground_truth,
                setup.need_detections,
                detections_timeout_s=wiring.detections_timeout_s,
                detections_query=detections.ask(session.query.category) if detections else None,
                window_s=wiring.frame_stamp_window_s,
                camera=setup.camera,
                levels=setup.height_levels,
            ),
            MoveChannel(
                self.node,
                setup.move_client,
                wiring.move_action,
                wiring.move_server_wait_s,
                wiring.move_timeout_s,
            ),
            goal_handle,
            publish_debug=self._publish_debug,
            publish_step=setup.step_pub.publish,
            stopping=self.serving.inactive.is_set,  # shutting down or deactivated: cancel the move, end now
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

        if trace.cancelled or (trace.failed and self.serving.inactive.is_set()):
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
            self.node.get_logger().error(f"request {request_id} failed: {trace.failure_reason}")
            goal_handle.abort()
        else:
            goal_handle.succeed()
        return VerifyInstance.Result(verdict=verdict)

    def _finish_cancelled(
        self, goal_handle: Any, request_id: str, reason: str, port: RosEpisodePort, session: Any
    ) -> VerifyInstance.Result:
        """End a request its client cancelled (or that a shutdown interrupted): no answer, but the steps taken.

        The move under way, if any, was already cancelled by the port, so the base is stopping by now.
        """
        interrupted = self.serving.inactive.is_set() and not goal_handle.is_cancel_requested
        if interrupted:
            why = "shut down" if self.serving.stopping.is_set() else "was deactivated"
            reason = f"the verifier {why} during the request ({reason})"
            self.node.get_logger().warning(f"request {request_id} ended: {reason}")
        verdict = cancelled_verdict(request_id, reason, self._now(), port.reports)
        self._record(verdict, session)
        if interrupted:
            goal_handle.abort()
        else:
            goal_handle.canceled()
        return VerifyInstance.Result(verdict=verdict)

    def _finish_failed(self, goal_handle: Any, verdict: Verdict) -> VerifyInstance.Result:
        self._record(verdict, None)
        goal_handle.abort()
        return VerifyInstance.Result(verdict=verdict)

    def _record(self, verdict: Verdict, session: Any) -> None:
        self.setup.verdict_pub.publish(verdict)
        failed = verdict.decision == Verdict.DECISION_FAILED
        self.stats.request_ended(
            failed, verdict.failure_reason, session.clock if session is not None else None
        )

    def _publish_debug(self, frame: ViewFrame, step: Any) -> None:
        debug_pub = self.setup.debug_pub
        if not self.setup.wiring.publish_debug_image or debug_pub.get_subscription_count() == 0:
            return
        headline = f"step {step.step} sector {step.sector} c={step.crop.confidence:.2f} -> " + (
            step.decision.value if step.stopped else f"move {step.move.direction if step.move else ''}"
        )
        picture = compose_debug_view(frame.image, step.crop.box, step.crop.image, step.attributes, headline)
        message = numpy_to_imgmsg(picture, "rgb8")
        message.header.stamp = self._now()
        debug_pub.publish(message)

    def _now(self) -> Any:
        return self.node.get_clock().now().to_msg()
