"""Bounded waits on rclpy futures while another thread spins, and a watch on an action server's liveness.

Shared by every node that is a client of a long-running action (the verifier's moves, the evaluator's
verifications): a crashed peer never answers, so each wait is bounded and notices a server that left the graph.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rclpy.node import Node


class ServerLostError(RuntimeError):
    """A server disappeared from the graph while it was working on our request."""


def wait_for_future(future, timeout_s: float) -> bool:
    """Block until an rclpy future completes (someone else spins) or the timeout passes; True if done."""
    done = threading.Event()
    future.add_done_callback(lambda _future: done.set())
    return done.wait(timeout_s)


#: How often a long wait checks that its server is still in the graph.
LIVENESS_CHECK_S = 0.5


def wait_for_future_while(future, timeout_s: float, alive: Callable[[], bool], what: str) -> bool:
    """Like :func:`wait_for_future`, but raise :class:`ServerLostError` once ``alive()`` turns false.

    A crashed peer never answers; without this a caller would sit out its whole timeout (minutes for a verdict)
    before learning what DDS already knows once the peer's participant lease runs out.
    """
    done = threading.Event()
    future.add_done_callback(lambda _future: done.set())
    deadline = time.monotonic() + timeout_s
    while not done.wait(min(LIVENESS_CHECK_S, max(0.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            return False
        if not alive() and not done.is_set():
            raise ServerLostError(f"{what} disappeared from the ROS graph while we waited for it")
    return True


def action_server_watch(node: Node, action_name: str) -> Callable[[], bool]:
    """A predicate that stays true while one of the action servers present *now* is still in the graph.

    Servers are told apart by the endpoint GIDs of their goal-status publishers, so a server that crashed and
    was restarted under the same name counts as gone (the new instance knows nothing of our goal) once the
    dead one's participant lease runs out. With no server visible yet the predicate is always true and the
    caller's timeout decides.
    """
    topic = f"{node.resolve_topic_name(action_name)}/_action/status"

    def gids() -> frozenset[bytes]:
        return frozenset(bytes(info.endpoint_gid) for info in node.get_publishers_info_by_topic(topic))

    present = gids()
    return lambda: not present or bool(present & gids())
