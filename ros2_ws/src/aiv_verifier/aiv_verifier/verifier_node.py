"""The ``verifier`` node: serves VerifyInstance by driving a MoveToSector server and judging camera frames.

A thin shell around the one episode loop: this module holds the node's lifecycle transitions and its process
(:func:`main`); serving a request is :mod:`~aiv_verifier.verifier_requests`, reading the camera
:mod:`~aiv_verifier.camera_inputs`, the diagnostics :mod:`~aiv_verifier.verifier_diagnostics`. Backends are built
at configure from parameters (``config/verifier.yaml``). During a request every failure that is not the agent's
answer — a goal that makes no sense, a move or frame that never comes, an undecodable image, a backend
exception — ends the request with ``DECISION_FAILED`` and a reason, never with a silent NO, and the node keeps
serving.

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
from collections.abc import Callable
from typing import Any

import rclpy
from aiv_common.action_waits import RenewableActionClient
from aiv_common.managed_node import (
    EntityScope,
    ParameterGate,
    autostart,
    declare_autostart,
    released_memory,
)
from aiv_common.parameter_spec import ParameterError
from aiv_common.parameters import start_node
from aiv_common.qos import VERIFY_REQUEST_QOS
from aiv_common.stop_signals import install_stop_handlers
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import StepReport, Verdict
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import Executor, ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import Image

from .agent.factory import AgentFactory, ConfigError
from .camera_inputs import CameraInputs
from .camera_model import LatestCamera
from .detection.base import BoxMode
from .detections_input import DetectionsInput
from .frame_cache import NANOS_PER_SECOND, FrameCache
from .service_stats import ServiceStats
from .verification.base import VerifierError
from .verifier_diagnostics import verifier_diagnostics
from .verifier_parameters import FRAME_QOS, node_settings, parse_height_levels, verifier_parameters
from .verifier_requests import RequestServer, RequestSetup, ServingState


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
        #: Whether the node serves and whether a request is under way (the transitions flip it).
        self.serving = ServingState()
        #: Set by the shutdown transition (``ros2 lifecycle set verifier shutdown`` included): ``main`` then ends.
        self.finalized = threading.Event()
        self.stats = ServiceStats()
        self.factory = None
        self.detections: DetectionsInput | None = None
        self.frames = FrameCache(1)
        self.camera = LatestCamera()
        self._configured: EntityScope | None = None
        self._activated: EntityScope | None = None
        self.goal_node: Node | None = None
        if start:
            self._autostarting = True  # a failure is raised (exit code 2, one line), not logged
            try:
                autostart(self)
            finally:
                self._autostarting = False

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
        self.frame_qos = settings.frame_qos.to_profile(where=FRAME_QOS)
        factory = self.factory = AgentFactory.from_config(settings.factory_config)
        self.need_ground_truth = factory.needs_privileged_view
        self.need_detections = factory.settings.bbox_mode is BoxMode.DETECTIONS
        self.frames = FrameCache(
            wiring.frame_cache_size,
            clock_ns=self._clock_ns,
            max_ahead_ns=max(1, round(wiring.max_stamp_ahead_s * NANOS_PER_SECOND)),
        )
        self.frames.interrupt("the verifier is not active")
        self.camera = LatestCamera()
        self.inputs = CameraInputs(
            self.frames, self.camera, self.stats, self.get_logger(), wiring.max_stamp_ahead_s
        )
        # Plain publishers for what a request publishes (its steps, its verdict): the verdict of a request that a
        # deactivation ends is published after the node left the active state, and a recorder must get it. The
        # debug image only serves a person watching an active node: a lifecycle publisher.
        verdict_pub = self.create_publisher(Verdict, wiring.verdict_topic, 10)
        # What a session recorder needs besides the camera: the request (latched, so a recorder that joins
        # late still gets the one being served) and every step with its move and outcome.
        request_pub = self.create_publisher(
            VerifyInstance.Goal, wiring.request_topic, VERIFY_REQUEST_QOS.to_profile()
        )
        step_pub = self.create_publisher(StepReport, wiring.step_topic, 50)
        debug_pub = self.create_lifecycle_publisher(Image, wiring.debug_image_topic, 1)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.move_client = RenewableActionClient(self, MoveToSector, wiring.move_action)
        self.create_timer(1.0, self.publish_diagnostics)
        self.requests = RequestServer(
            self,
            RequestSetup(
                factory=factory,
                wiring=wiring,
                limits=settings.limits,
                height_levels=parse_height_levels(wiring.height_levels),
                need_ground_truth=self.need_ground_truth,
                need_detections=self.need_detections,
                frames=self.frames,
                camera=self.camera,
                move_client=self.move_client,
                verdict_pub=verdict_pub,
                request_pub=request_pub,
                step_pub=step_pub,
                debug_pub=debug_pub,
            ),
            self.serving,
            self.stats,
            lambda: self.detections,
        )
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
            execute_callback=self.requests.execute,
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
            self.inputs.subscribe(self, wiring, self.frame_qos, self.need_ground_truth)
            self.detections = (
                DetectionsInput(self, wiring, self.frames, self.camera, self.inputs.note_bad_message)
                if self.need_detections
                else None
            )
        except ParameterError as error:
            return self._refuse_transition(scope, "activate", str(error))
        self._activated = scope
        self.frames.resume()
        self.serving.inactive.clear()
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
        self.serving.stopping.set()
        self._stop_serving("the verifier shut down")
        if self.wait_idle(0.0):
            self._release()
        self.finalized.set()
        return TransitionCallbackReturn.SUCCESS

    def begin_shutdown(self) -> None:
        """Stop serving: a request under way cancels its move and ends now (called on SIGINT / SIGTERM)."""
        self.serving.stopping.set()
        self._stop_serving("the verifier shut down")

    def wait_idle(self, timeout_s: float) -> bool:
        """Whether no request is being served, waiting up to ``timeout_s`` for the one under way to end."""
        return self.serving.wait_idle(timeout_s)

    def _stop_serving(self, reason: str) -> None:
        self.serving.inactive.set()
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

    def _clock_ns(self) -> int | None:
        """This node's ROS time; None before a simulated clock (use_sim_time) has ticked."""
        now = self.get_clock().now().nanoseconds
        return now if now > 0 else None

    def publish_diagnostics(self) -> None:
        if self.factory is None:
            return
        self.diagnostics_pub.publish(
            verifier_diagnostics(
                active=not self.serving.inactive.is_set(),
                factory=self.factory,
                stats=self.stats,
                camera=self.camera.get(),
                move_client_renewals=self.move_client.renewals,
                detections=self.detections,
                stamp=self.get_clock().now().to_msg(),
            )
        )


#: How long a shutdown lets the request under way cancel its move and end (within the 5 s a supervisor allows).
SHUTDOWN_GRACE_S = 3.5
#: How long, after that request ended, its result is given to reach the client.
RESULT_SETTLE_S = 0.5


def main(args: list[str] | None = None) -> int:
    """Run the verifier until SIGINT / SIGTERM; exit code 0, or 2 when ``autostart`` finds bad configuration.

    SIGINT and SIGTERM are a request to stop (:mod:`aiv_common.stop_signals`; later signals are ignored), not
    rclpy's (which would shut the context down at once): a request under way must first cancel its move so that
    the base stops, and that needs a live context. This loop is the node's own rather than
    :func:`~aiv_common.stop_signals.spin_until_stopped` because it serves two executors. The shutdown
    never blocks on the goal thread: rclpy's ``MultiThreadedExecutor.shutdown(timeout_sec)`` does not honour
    its timeout (it joins its thread pool, i.e. waits for the running goal, however long), and while this
    thread waited there nobody delivered the move and frame results that goal waited for, so it ran on to its
    own timeouts and a supervisor's SIGKILL. Instead every wait of a request is interrupted (moves cancelled,
    frame waits ended), this thread keeps spinning until the request has ended, and the pool is let go.
    """
    stop = (
        install_stop_handlers()
    )  # before the node exists: a signal while it is built is honoured, not fatal

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
        # Short waits, so a stop request (set by the signal handler or its relay thread) is seen within 0.2 s.
        while not stop.requested and not node.finalized.is_set() and rclpy.ok():
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
