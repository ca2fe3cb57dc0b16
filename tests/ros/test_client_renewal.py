"""A request nobody answers goes on from a fresh client, and is still served exactly once.

The servers here hold every request until the client has been replaced, which is what a client sees when a
server drops all replies to its reply reader (see ``aiv_common.action_waits``). Without the replacement the
hold outlasts the request's timeout, so each test fails on code that never renews.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from aiv_common.action_waits import (
    RenewableActionClient,
    call_idempotent,
    fresh_service_client,
    send_goal_confirmed,
)
from aiv_interfaces.action import MoveToSector
from aiv_interfaces.srv import StartEpisode
from rclpy.action import ActionServer, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from support.ros_harness import SpinningExecutor, ros_context

HOLD_S = 30.0  # longer than any request's timeout below: only a renewal releases a held request


def _unique(name: str) -> str:
    """A name no earlier test in this process used. rmw_fastrtps calls a server available only when the
    graph lists as many reply writers as request readers for its name, and a server of an earlier test (a
    repeated run) can stay half-listed there for a while after its context shut down."""
    return f"{name}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def server_executor() -> Iterator[SpinningExecutor]:
    """The servers' own context (a DDS participant apart from the client's) and a roomy thread pool: every
    held request occupies a thread until it is released."""
    with ros_context() as context:
        executor = SpinningExecutor(context, num_threads=8)
        try:
            yield executor
        finally:
            executor.shutdown()


def test_an_unanswered_goal_is_sent_again_from_a_fresh_client_and_runs_once(
    ros_executor: SpinningExecutor, server_executor: SpinningExecutor
) -> None:
    renewed = threading.Event()
    executions: list[str] = []
    action = _unique("renewal_move")

    def hold_until_renewed(_goal: Any) -> GoalResponse:
        renewed.wait(HOLD_S)
        return GoalResponse.ACCEPT

    def execute(goal_handle: Any) -> Any:
        executions.append(goal_handle.request.direction)
        goal_handle.succeed()
        return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_MOVED, sector=4)

    server_executor.spin_new(
        "renewal_move_server",
        lambda node: ActionServer(
            node,
            MoveToSector,
            action,
            execute_callback=execute,
            goal_callback=hold_until_renewed,
            callback_group=ReentrantCallbackGroup(),
        ),
    )
    node = ros_executor.create_node("renewal_move_client")
    clients = RenewableActionClient(node, MoveToSector, action)  # made while the node spins
    first = clients.client
    assert first.wait_for_server(timeout_sec=20.0)

    def renew() -> Any:
        fresh = clients.renew()
        renewed.set()
        return fresh

    sent = send_goal_confirmed(
        first,
        MoveToSector.Goal(direction="back"),
        timeout_s=20.0,
        renew=renew,
        renew_after_s=1.0,
        resend_after_s=0.2,
    )

    assert sent is not None, "no answer even from the fresh client"
    assert sent.accepted
    assert clients.renewals == 1
    assert sent.client is clients.client and clients.client is not first
    assert first not in list(node.waitables)  # the old client is gone from the node
    response = sent.result(20.0, lambda: True, "the move server")
    assert response is not None
    assert response.result.sector == 4
    assert executions == ["back"]  # repeats of the same goal id, from either client, ran once
    assert ros_executor.spinning, "the client's executor died: a replaced client was freed under it"


def test_an_unanswered_idempotent_call_is_asked_again_from_a_fresh_client(
    ros_executor: SpinningExecutor, server_executor: SpinningExecutor
) -> None:
    renewed = threading.Event()
    served: list[int] = []
    service = _unique("renewal_start")

    def hold_until_renewed(request: Any, response: Any) -> Any:
        renewed.wait(HOLD_S)
        served.append(int(request.index))
        response.success = True
        return response

    server_executor.spin_new(
        "renewal_start_server",
        lambda node: node.create_service(
            StartEpisode, service, hold_until_renewed, callback_group=ReentrantCallbackGroup()
        ),
    )
    node = ros_executor.create_node("renewal_start_client")
    holder = {"client": node.create_client(StartEpisode, service)}
    first = holder["client"]
    assert first.wait_for_service(timeout_sec=20.0)

    def renew() -> Any:
        holder["client"] = fresh_service_client(node, holder["client"])
        renewed.set()
        return holder["client"]

    response = call_idempotent(first, StartEpisode.Request(index=7), timeout_s=4.0, attempts=4, renew=renew)

    assert response is not None, "no reply even from the fresh client"
    assert response.success
    assert holder["client"] is not first
    assert first not in list(node.clients)
    assert 7 in served
