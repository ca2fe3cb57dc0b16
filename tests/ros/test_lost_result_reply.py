"""What a client of a long action needs to notice a lost verdict: the result asked for again, the server watched.

- a goal's result that never reaches the client is asked for again once the server says the goal ended;
- a watch on the server made before the server was listed in the graph still notices the server leaving.

Both happen right after a verifier was restarted. A server that has just started can answer before it has
matched the client's result reader, and the reply is then dropped ("client will not receive response");
without asking again the client waits out its whole result timeout (the evaluator: ``episode_timeout_s``,
300 s by default) for a verdict the server has long sent. Here the first result request's reply is made to go
missing (its future is replaced by one nothing completes, over real DDS otherwise), and the result must still
come, long before the timeout. And a client can match a server a moment before the graph lists it: a watch made
then saw nobody, and, before, stayed true for good, so a crash of that server was never noticed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from aiv_common.action_waits import RESULT_REASK_S, action_server_watch, send_goal_confirmed
from aiv_interfaces.action import MoveToSector
from rclpy.action import ActionClient, ActionServer
from rclpy.task import Future
from support.ros_harness import SpinningExecutor, ros_context, wait_until

pytestmark = pytest.mark.ros

RESULT_TIMEOUT_S = 120.0  # what the client would otherwise wait; the result must come far sooner


@pytest.fixture
def server_executor() -> Iterator[SpinningExecutor]:
    """The server's own context: a DDS participant apart from the client's, as on a robot."""
    with ros_context() as context:
        executor = SpinningExecutor(context)
        try:
            yield executor
        finally:
            executor.shutdown()


def test_a_result_whose_reply_was_lost_is_asked_for_again_and_arrives(
    ros_executor: SpinningExecutor, server_executor: SpinningExecutor
) -> None:
    action = f"lost_result_{uuid.uuid4().hex[:8]}"
    executions: list[str] = []

    def execute(goal_handle: Any) -> Any:
        executions.append(goal_handle.request.direction)
        goal_handle.succeed()
        return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_MOVED, sector=5, message="arrived")

    server_executor.spin_new(
        "lost_result_server", lambda node: ActionServer(node, MoveToSector, action, execute)
    )
    node, client = ros_executor.spin_new(
        "lost_result_client", lambda made: (made, ActionClient(made, MoveToSector, action))
    )
    assert client.wait_for_server(timeout_sec=20.0)
    alive = action_server_watch(node, action)
    sent = send_goal_confirmed(client, MoveToSector.Goal(direction="left"), timeout_s=20.0, alive=alive)
    assert sent is not None and sent.accepted
    sent.result_future = Future()  # the first result request's reply never arrives

    started = time.monotonic()
    response = sent.result(RESULT_TIMEOUT_S, alive, "the lost-result server")
    waited = time.monotonic() - started

    assert response is not None
    assert (response.result.sector, response.result.message) == (5, "arrived")
    assert executions == ["left"]  # asked again, never executed again
    assert waited < 4 * RESULT_REASK_S, f"the result came after {waited:.1f} s"


def test_a_watch_made_before_its_server_was_listed_notices_the_server_leaving(
    ros_executor: SpinningExecutor,
) -> None:
    action = f"late_server_{uuid.uuid4().hex[:8]}"
    node = ros_executor.create_node("late_server_watcher")
    alive = action_server_watch(node, action)  # nobody serves the action yet
    assert alive()
    with ros_context() as context:
        executor = SpinningExecutor(context)
        try:
            server = executor.spin_new(
                "late_server", lambda made: ActionServer(made, MoveToSector, action, _never_run)
            )
            topic = f"/{action}/_action/status"
            wait_until(lambda: node.count_publishers(topic) > 0, "the server in the graph", timeout_s=30.0)
            assert alive()  # the server that appeared is the one watched from now on
            server.destroy()  # it leaves (a crashed one leaves when its participant's lease runs out)
            wait_until(lambda: not alive(), "the watch noticing the server gone", timeout_s=30.0)
        finally:
            executor.shutdown()


def _never_run(goal_handle: Any) -> Any:
    goal_handle.abort()
    return MoveToSector.Result()
