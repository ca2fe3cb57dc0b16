"""Bounded waits on rclpy futures while another thread spins, a watch on an action server's liveness, sending
an action goal so that its acceptance is never lost, calling an idempotent service so that its reply is never
lost, and replacing a client whose replies stopped arriving.

Shared by every node that is a client of a long-running action (the verifier's moves, the evaluator's
verifications): a crashed peer never answers, so each wait is bounded and notices a server that left the graph.

Why replace a client: a server matches each client's reply reader on its own, and FastDDS drops a reply to a
reader the server has not matched ("client will not receive response"). Right after discovery that lasts
under a second or two; once, on a loaded CI machine, a server took a client's requests for two minutes while
every reply to it was dropped. A new client has new endpoints, which the server matches afresh, so a send
that got no answer at all for a while goes on with a fresh client (``renew``).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.node import Node
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID


class ServerLostError(RuntimeError):
    """A server disappeared from the graph while it was working on our request."""


class GoalCancelled(RuntimeError):
    """We asked the server to cancel a goal because whoever waited for its result gave up."""


#: How often a wait for a goal's result checks whether its caller gave up (a cancel is answered within it).
CANCEL_CHECK_S = 0.1
#: How long a result may be missing after the server reported the goal ended before it is asked for again
#: (rmw waits up to 2 s, the "service" writer's max_blocking_time, before it drops a reply it cannot send).
RESULT_REASK_S = 3.0
#: How many times a missing result is asked for again.
RESULT_REASKS = 3
#: Goal states after which the server holds the goal's result.
TERMINAL_STATES = frozenset(
    (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED)
)


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


def call_idempotent(
    client: Any,
    request: Any,
    *,
    timeout_s: float,
    attempts: int = 4,
    alive: Callable[[], bool] | None = None,
    what: str = "the server",
    renew: Callable[[], Any] | None = None,
) -> Any:
    """The response of an idempotent service call, or None when no reply came in ``timeout_s`` (all tries).

    Right after discovery a server can take a request before it has matched our reply reader; rmw then drops
    the reply ("failed to send response ... client will not receive response") although the request was
    served. Asking again is safe only for a service whose repeat has the same effect (StartEpisode restarts the
    same episode), so the time is split over ``attempts`` tries. ``alive`` (default: the service is still in
    the graph) turns a server that left into :class:`ServerLostError` at once. ``renew``, when given, is
    called once, after half the tries went unanswered, and returns the client to ask with from then on (see
    the module docstring; :func:`fresh_service_client` makes one).
    """
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts}")
    renew_before = max(1, attempts // 2) if renew is not None and attempts > 1 else None
    for attempt in range(attempts):
        if attempt == renew_before and renew is not None:
            client = renew()
            client.wait_for_service(timeout_sec=timeout_s / attempts)
        still_there = alive if alive is not None else client.service_is_ready
        future = client.call_async(request)
        if wait_for_future_while(future, timeout_s / attempts, still_there, what):
            return future.result()
    return None


def fresh_service_client(node: Node, client: Any) -> Any:
    """A new client of ``client``'s service on ``node`` (same type, name, QoS and callback group); the old
    one is destroyed. A service client is complete before its node lists it, so this is safe while another
    thread spins the node."""
    fresh: Any = node.create_client(
        client.srv_type, client.srv_name, qos_profile=client.qos_profile, callback_group=client.callback_group
    )
    node.destroy_client(client)
    return fresh


class _CompleteWhenListed(ActionClient):
    """An ActionClient that is complete when its node starts listing it.

    rclpy's ActionClient adds itself to its node before it creates its lock and logger, so an executor
    spinning the node in another thread can poll it half-built (AttributeError on ``_lock`` in the spin
    thread). A client created at start-up, before spinning, is safe; one created to replace another is not,
    so those two attributes are set first (the base class then sets them again, before any goal is sent).
    """

    def __init__(self, node: Node, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.Lock()
        self._logger = node.get_logger().get_child("action_client")
        super().__init__(node, *args, **kwargs)


class RenewableActionClient:
    """Owns the client a node uses for one action, and replaces it with a fresh one on request. It may be
    created while another thread spins the node.

    ``client`` is the current client; :meth:`send_goal_confirmed` sends from it and renews it when a goal got
    no answer at all for a while (see the module docstring). ``renewals`` counts the replacements, for
    diagnostics. One caller at a time: a renewal retires the client another caller may be waiting on.
    """

    def __init__(self, node: Node, action_type: Any, action_name: str, **client_options: Any) -> None:
        self.node = node
        self.action_type = action_type
        self.action_name = action_name
        self._options = client_options
        self.client: ActionClient = _CompleteWhenListed(node, action_type, action_name, **client_options)
        self.renewals = 0

    def renew(self) -> ActionClient:
        """Replace the current client with a new one (safe while another thread spins the node)."""
        old = self.client
        self.client = _CompleteWhenListed(self.node, self.action_type, self.action_name, **self._options)
        self._unlist(old)
        self.renewals += 1
        return self.client

    def wait_for_server(self, timeout_s: float) -> bool:
        return bool(self.client.wait_for_server(timeout_sec=timeout_s))

    def send_goal_confirmed(self, goal: Any, **options: Any) -> SentGoal | None:
        """:func:`send_goal_confirmed` from the current client, renewing it when the goal goes unanswered."""
        return send_goal_confirmed(self.client, goal, renew=self.renew, **options)

    def release(self) -> None:
        """Take the current client off its node, for good (safe while another thread spins the node)."""
        self._unlist(self.client)

    def _unlist(self, client: ActionClient) -> None:
        """Take ``client`` off the node without destroying it: its handle is freed with the last reference.

        ``ActionClient.destroy`` frees the handle at once, but an executor that listed the client in its
        last wait may take data from it afterwards, and its spin thread then dies on the freed handle
        ("action client pointer is invalid"; rclpy checks for that with subscriptions and service clients,
        not with action clients). A renewal makes that likely: the server answers the old client's held
        requests just as it is replaced. An unlisted client is never listed again, and Python frees it once
        such an executor (or a caller still holding a sent goal) lets go.
        """
        with contextlib.suppress(ValueError):  # already unlisted
            self.node.remove_waitable(client)


def action_server_watch(node: Node, action_name: str) -> Callable[[], bool]:
    """A predicate that stays true while one of the action servers present *now* is still in the graph.

    Servers are told apart by the endpoint GIDs of their goal-status publishers, so a server that crashed and
    was restarted under the same name counts as gone (the new instance knows nothing of our goal) once the
    dead one's participant lease runs out.

    With no server in the graph yet, the first ones that appear are watched from then on; until then the
    predicate is true and the caller's timeout decides. (A client can match a server a moment before the
    graph lists the server's status publisher: right after a restart, a watch made then saw nobody, stayed
    true for good, and a verdict lost with the next crash was waited for until the episode timeout.)
    """
    topic = f"{node.resolve_topic_name(action_name)}/_action/status"

    def gids() -> frozenset[bytes]:
        return frozenset(bytes(info.endpoint_gid) for info in node.get_publishers_info_by_topic(topic))

    present = gids()

    def alive() -> bool:
        nonlocal present
        if not present:
            present = gids()
            return True
        return bool(present & gids())

    return alive


@dataclass
class SentGoal:
    """A goal whose answer from the server is known: accepted (and followed by its id) or refused."""

    client: ActionClient
    goal_id: UUID
    accepted: bool
    handle: ClientGoalHandle | None = None
    result_future: Future | None = None  # a result request already in flight, if any

    def result(
        self,
        timeout_s: float,
        alive: Callable[[], bool],
        what: str,
        cancel_when: Callable[[], bool] | None = None,
    ) -> Any | None:
        """The result response of the accepted goal; None on timeout (the goal is then asked to cancel).

        ``cancel_when`` is checked every :data:`CANCEL_CHECK_S` while the result is awaited: once it is true the
        goal is asked to cancel and :class:`GoalCancelled` is raised at once, without waiting for the server to
        confirm, so whoever gave up (a cancelled request, a node shutting down) is answered promptly and the
        server still stops the work it started.

        The server's ``alive`` is checked every :data:`LIVENESS_CHECK_S`: a server that left the graph raises
        :class:`ServerLostError`. A result reply can be lost like any reply right after discovery (a server that
        has just been restarted has not always matched our result reader when it answers): once the goal
        status topic (a topic, which is not lost that way) has said the goal ended and the result is still
        missing :data:`RESULT_REASK_S` later, the result is asked for again, up to :data:`RESULT_REASKS` times;
        the server keeps it for its ``result_timeout``, so a repeat is answered at once. (The status reaches
        the handle rclpy made from the goal's acceptance; a goal whose acceptance was lost and then confirmed
        by a probe has no such handle and is not asked again.)
        """
        if not self.accepted:
            raise ValueError("the goal was refused; it has no result")
        handle = self._handle()
        arrived = threading.Event()
        futures: list[Future] = []

        def ask(future: Future | None = None) -> None:
            future = future if future is not None else handle.get_result_async()
            future.add_done_callback(lambda _future: arrived.set())
            futures.append(future)

        ask(self.result_future)
        self.result_future = futures[0]
        deadline = time.monotonic() + timeout_s
        next_liveness_check = time.monotonic() + LIVENESS_CHECK_S
        ended_seen: float | None = None
        while True:
            remaining = deadline - time.monotonic()
            step = LIVENESS_CHECK_S if cancel_when is None else CANCEL_CHECK_S
            if arrived.wait(max(0.0, min(step, remaining))):
                done = next(future for future in futures if future.done())
                self.result_future = done
                return done.result()
            if cancel_when is not None and cancel_when():
                self.cancel()
                raise GoalCancelled(f"{what}'s goal was cancelled: its caller gave up")
            now = time.monotonic()
            if now >= deadline:
                self.cancel()
                return None
            if now < next_liveness_check:
                continue
            next_liveness_check = now + LIVENESS_CHECK_S
            if not alive() and not arrived.is_set():
                raise ServerLostError(f"{what} disappeared from the ROS graph while we waited for it")
            if handle.status in TERMINAL_STATES:
                ended_seen = now if ended_seen is None else ended_seen
                if now - ended_seen >= RESULT_REASK_S * len(futures) and len(futures) <= RESULT_REASKS:
                    ask()

    def cancel(self) -> None:
        if self.accepted:
            self._handle().cancel_goal_async()

    def _handle(self) -> ClientGoalHandle:
        if self.handle is None:
            response = self.client._action_type.Impl.SendGoalService.Response(accepted=True)
            self.handle = ClientGoalHandle(self.client, self.goal_id, response)
        return self.handle


def _new_goal_id() -> UUID:
    """A fresh random goal id (what rclpy would draw), kept by callers that may send the same goal again."""
    return UUID(uuid=list(uuid.uuid4().bytes))


def send_goal_request(
    client: ActionClient,
    goal: Any,
    goal_id: UUID | None = None,
    feedback_callback: Callable[[Any], None] | None = None,
) -> Future:
    """Send one goal request; the returned future completes with the server's goal handle.

    Use this, not ``ActionClient.send_goal_async``: in rclpy 9.1.2 (the pinned Kilted wheel) that method
    registers the reply future twice, the second time after releasing the client's lock. A reply taken by
    another executor thread in between then either completes the first, forgotten future (the caller waits for
    an answer that already came) or completes the second before its done-callback is attached, and attaching
    it raises ``ValueError: list.remove(x)`` in the caller (seen once in CI: a verifier move failed and its
    episode was aborted). Here the request is sent and its one future fully registered under the client's
    lock, which is also what the executor takes replies under, so no reply can be handled half-way.
    """
    request = client._action_type.Impl.SendGoalService.Request()
    request.goal_id = _new_goal_id() if goal_id is None else goal_id
    request.goal = goal
    if feedback_callback is not None:
        # Registered before sending: a fast server's first feedback may be taken before the reply is.
        client._feedback_callbacks[bytes(request.goal_id.uuid)] = feedback_callback
    future: Future = Future()
    with client._lock:
        sequence_number = client._client_handle.send_goal_request(request)
        if sequence_number in client._pending_goal_requests:
            raise RuntimeError(f"goal request {sequence_number} collides with one still pending")
        client._pending_goal_requests[sequence_number] = future
        client._goal_sequence_number_to_goal_id[sequence_number] = request.goal_id
        future.add_done_callback(client._remove_pending_goal_request)
        client.add_future(future)
    return future


def send_goal_confirmed(
    client: ActionClient,
    goal: Any,
    *,
    timeout_s: float,
    alive: Callable[[], bool] = lambda: True,
    what: str = "the action server",
    feedback_callback: Callable[[Any], None] | None = None,
    resend_after_s: float = 1.0,
    renew: Callable[[], ActionClient] | None = None,
    renew_after_s: float = 5.0,
) -> SentGoal | None:
    """Send ``goal``; return once the server's answer is known, or None if no answer came in ``timeout_s``.

    Why not ``send_goal_async`` alone:

    - Right after discovery a server can take our request before it has matched our reply reader, and FastDDS
      then drops the reply ("client will not receive response") although the server accepted the goal and is
      executing it; the caller would wait for an acceptance that never comes. So the request is repeated every
      ``resend_after_s`` with the SAME goal id. A server that never saw it answers normally; one that did
      refuses the repeated id (rclpy refuses ids it already holds). A refused repeat is then told apart from
      a goal the server really refused by asking for the result: for a goal it does not hold the server
      answers at once with status UNKNOWN; for one it holds the answer is the result, later. Nothing is ever
      executed twice.
    - Each request goes through :func:`send_goal_request`, which registers the feedback callback before the
      request leaves (rclpy does so after, when a fast server's first feedback may already be taken) and
      avoids rclpy 9.1.2's half-registered reply future.
    - ``renew``, when given, is called once when nothing at all was answered for ``renew_after_s``; the
      same goal id is then sent from the client it returns (see the module docstring), so a server that
      took the goal from the old client refuses the repeat and the result request above tells.
    """
    goal_id = _new_goal_id()
    started = time.monotonic()
    deadline = started + timeout_s
    repeated = False
    renewed = renew is None
    while (remaining := deadline - time.monotonic()) > 0:
        if not renewed and renew is not None and time.monotonic() - started >= renew_after_s:
            renewed = True
            client = renew()
            client.wait_for_server(timeout_sec=max(0.0, deadline - time.monotonic()))
            continue
        future = send_goal_request(client, goal, goal_id, feedback_callback)
        if not wait_for_future_while(future, min(resend_after_s, remaining), alive, what):
            repeated = True
            continue
        handle = future.result()
        if handle is None:
            return None
        if handle.accepted:
            return SentGoal(client, goal_id, True, handle)
        if not repeated:
            return _refused(client, goal_id)
        # A repeat was refused: either the first request was accepted and only its reply lost, or the
        # server refuses this goal. Ask for the result: an unknown goal is answered at once.
        probe = SentGoal(client, goal_id, True)
        probe.result_future = probe._handle().get_result_async()
        if wait_for_future_while(probe.result_future, min(resend_after_s, max(0.1, remaining)), alive, what):
            response = probe.result_future.result()
            if response is None or int(response.status) == GoalStatus.STATUS_UNKNOWN:
                return _refused(client, goal_id)
        return probe
    return None


def _refused(client: ActionClient, goal_id: UUID) -> SentGoal:
    client._feedback_callbacks.pop(bytes(goal_id.uuid), None)
    return SentGoal(client, goal_id, False)
