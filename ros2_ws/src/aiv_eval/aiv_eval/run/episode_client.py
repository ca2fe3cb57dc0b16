"""Client side of one offline episode over ROS: StartEpisode on the simulator, then VerifyInstance.

Used by the evaluator node and by integration tests. It never sees labels (the simulator does not send them);
it hands the verifier the start frame's stamp and sector so the verifier judges exactly the view the simulator
just published, whatever else is in flight.

Every wait is bounded; a missing server or a lost reply becomes :class:`EpisodeInfrastructureError` with a
message naming the step, which the evaluator records as an infrastructure failure (and may retry).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from aiv_common.action_results import unexplained_verdict_ending
from aiv_common.action_waits import (
    RenewableActionClient,
    ServerLostError,
    action_server_watch,
    call_idempotent,
    fresh_service_client,
)
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import StepReport, Verdict
from aiv_interfaces.srv import StartEpisode
from rclpy.action import ActionClient
from rclpy.client import Client
from rclpy.node import Node


class EpisodeInfrastructureError(RuntimeError):
    """The episode could not be run for reasons that say nothing about the agent's answer."""


@contextlib.contextmanager
def _lost_server_is_infrastructure() -> Iterator[None]:
    """A server that left the graph mid-request is an infrastructure failure of the episode."""
    try:
        yield
    except ServerLostError as error:
        raise EpisodeInfrastructureError(str(error)) from error


class ServersUnavailableError(EpisodeInfrastructureError):
    """The simulator or the verifier is not there at all (not started, or crashed and not back in time)."""


class EpisodeStartRefusedError(EpisodeInfrastructureError):
    """The simulator answered StartEpisode with a refusal; ``message`` is its reason, word for word, so the
    evaluator can record it exactly as the in-process mode records the same refusal."""

    def __init__(self, request_index: int, message: str) -> None:
        super().__init__(f"StartEpisode({request_index}) failed: {message}")
        self.message = message


@dataclass(frozen=True)
class EpisodeRequest:
    index: int = -1
    episode_key: str = ""
    slice_start: int = 0  # first index of the evaluated slice (seed_policy seed_plus_slice_index)
    query_mode: str = ""
    nbv_strategy: str = ""
    fusion: str = ""
    step_budget: int = 0
    category_hint: str = ""  # the goal's category_hint ("" = the verifier predicts the category)


@dataclass
class EpisodeRun:
    start: StartEpisode.Response
    verdict: Verdict
    feedback: list[StepReport] = field(default_factory=list)
    #: Wall seconds of the client's round trips (``start_episode``, ``verify_goal``: goal sent -> accepted,
    #: ``verify_result``: accepted -> result), for ``aiv-eval bench``'s breakdown of the ROS path.
    seconds: dict[str, float] = field(default_factory=dict)


class RosEpisodeClient:
    """Runs episodes through a simulator and a verifier reachable from ``node`` (which someone spins)."""

    def __init__(
        self,
        node: Node,
        *,
        start_service: str = "start_episode",
        verify_action: str = "verify_instance",
        server_wait_s: float = 10.0,
        start_timeout_s: float = 15.0,
        verdict_timeout_s: float = 300.0,
    ) -> None:
        self.node = node
        self.start_client: Client[Any, Any] = node.create_client(StartEpisode, start_service)
        self.verify_action = verify_action
        self.verify = RenewableActionClient(node, VerifyInstance, verify_action)
        self.server_wait_s = server_wait_s
        self.start_timeout_s = start_timeout_s
        self.start_attempts = 3
        self.verdict_timeout_s = verdict_timeout_s

    @property
    def verify_client(self) -> ActionClient[Any, Any, Any]:
        """The current VerifyInstance client (replaced when the verifier's replies stop reaching it)."""
        return self.verify.client

    def _renew_start_client(self) -> Client[Any, Any]:
        self.start_client = fresh_service_client(self.node, self.start_client)
        return self.start_client

    def wait_for_servers(self, timeout_s: float | None = None) -> None:
        timeout = self.server_wait_s if timeout_s is None else timeout_s
        if not self.start_client.wait_for_service(timeout_sec=timeout):
            raise ServersUnavailableError(
                f"simulator service {self.start_client.srv_name!r} not available after {timeout:.0f} s"
            )
        if not self.verify_client.wait_for_server(timeout_sec=timeout):
            raise ServersUnavailableError(f"verifier action server not available after {timeout:.0f} s")

    def start(self, request: EpisodeRequest) -> StartEpisode.Response:
        """Load an episode on the simulator (its start view gets published) without verifying it."""
        with _lost_server_is_infrastructure():
            return self._start(request)

    def run(self, request: EpisodeRequest, cancel_when: Callable[[], bool] | None = None) -> EpisodeRun:
        """StartEpisode, then VerifyInstance until the verdict. ``cancel_when`` is watched while the verdict is
        awaited: once true, the goal is cancelled and :class:`~aiv_common.action_waits.GoalCancelled` raised."""
        with _lost_server_is_infrastructure():
            return self._run(request, cancel_when)

    def servers_ready(self) -> bool:
        """Whether the simulator's service and the verifier's action server are there now (no waiting)."""
        return bool(self.start_client.service_is_ready() and self.verify_client.server_is_ready())

    def _start(self, request: EpisodeRequest) -> StartEpisode.Response:
        self.wait_for_servers()
        # StartEpisode is idempotent, so a reply lost right after discovery is asked for again.
        start = call_idempotent(
            self.start_client,
            StartEpisode.Request(
                index=int(request.index),
                episode_key=request.episode_key,
                slice_start=int(request.slice_start),
            ),
            timeout_s=self.start_timeout_s,
            attempts=self.start_attempts,
            what="the simulator",
            renew=self._renew_start_client,
        )
        if start is None:
            raise EpisodeInfrastructureError(
                f"StartEpisode({request.index}) got no reply in {self.start_attempts} tries "
                f"over {self.start_timeout_s} s"
            )
        if not start.success:
            raise EpisodeStartRefusedError(request.index, start.message)
        return start

    def _run(self, request: EpisodeRequest, cancel_when: Callable[[], bool] | None = None) -> EpisodeRun:
        started = time.perf_counter()
        start = self._start(request)
        seconds = {"start_episode": time.perf_counter() - started}
        feedback: list[StepReport] = []
        goal = VerifyInstance.Goal(
            request_id=start.episode_key,
            episode_key=start.episode_key,
            descriptions=list(start.descriptions),
            category_hint=request.category_hint,
            step_budget=int(request.step_budget or start.max_steps),
            query_mode=request.query_mode,
            nbv_strategy=request.nbv_strategy,
            fusion=request.fusion,
            start_stamp=start.frame_stamp,
            start_sector=int(start.start_sector),
        )
        started = time.perf_counter()
        server_alive = action_server_watch(self.node, self.verify_action)
        sent = self.verify.send_goal_confirmed(
            goal,
            timeout_s=self.start_timeout_s,
            alive=server_alive,
            what="the verifier",
            feedback_callback=lambda msg: feedback.append(msg.feedback.step),
        )
        if sent is None:
            raise EpisodeInfrastructureError("the verifier did not acknowledge the goal")
        if not sent.accepted:
            raise EpisodeInfrastructureError("the verifier refused the goal")
        seconds["verify_goal"] = time.perf_counter() - started
        started = time.perf_counter()
        response = sent.result(self.verdict_timeout_s, server_alive, "the verifier", cancel_when=cancel_when)
        if response is None:
            raise EpisodeInfrastructureError(f"no verdict within {self.verdict_timeout_s} s")
        seconds["verify_result"] = time.perf_counter() - started
        unbelievable = unexplained_verdict_ending(response)
        if unbelievable is not None:
            raise EpisodeInfrastructureError(unbelievable)
        return EpisodeRun(start=start, verdict=response.result.verdict, feedback=feedback, seconds=seconds)
