"""One action goal at a time, its status read by the mover: what the adapter's Nav2 navigator and its height
driver (FollowJointTrajectory, PointHead) share.

A goal is sent with :func:`aiv_common.action_waits.send_goal_confirmed` (its acceptance is never lost): a
server that is missing or does not answer within ``answer_timeout_s`` is a fault (the returned words); a
rejected goal, or one that ends aborted or cancelled by someone else, fails with the server's words (its
result's error code, the code's name and message). Each send starts a new generation, so a late answer to an
earlier goal changes nothing. :meth:`GoalTracker.stop` cancels the goal being pursued.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from aiv_common.action_waits import SentGoal, ServerLostError, action_server_watch, send_goal_confirmed
from rclpy.node import Node

from .mover import NavStatus


def result_error_names(result_type: Any) -> dict[int, str]:
    """Names of the error codes an action's Result defines, by value (e.g. -1: INVALID_GOAL)."""
    return {
        value: name
        for name, value in vars(result_type).items()
        if name.isupper() and isinstance(value, int) and not isinstance(value, bool)
    }


class GoalTracker:
    """The status of the newest goal sent to one of a node's action clients: (status, words), and a cancel.

    ``message_field`` is the name of the result's message (``error_msg`` for Nav2, ``error_string`` for
    control_msgs); ``notify`` is called after every status change."""

    def __init__(
        self,
        node: Node,
        result_type: Any,
        message_field: str,
        answer_timeout_s: float,
        notify: Callable[[], None],
    ) -> None:
        from action_msgs.msg import GoalStatus

        self.goal_status = GoalStatus
        self.node = node
        self.message_field = message_field
        self.answer_timeout_s = answer_timeout_s
        self.notify = notify
        self.error_names = result_error_names(result_type)
        self._lock = threading.Lock()
        self._status: tuple[NavStatus, str] = (NavStatus.PENDING, "")
        self._goal: SentGoal | None = None  # the accepted goal being pursued (until its result or a stop)
        self._generation = 0

    def send(
        self, client: Any, name: str, make_goal: Callable[[], Any], *, server: str, speaker: str
    ) -> str | None:
        """Send the goal ``make_goal()`` builds (once the server is there) to ``client`` (action ``name``, of
        type ``server``); None once it is accepted or rejected (see :meth:`status`), else why it was not sent.
        ``speaker`` names the server in the status words ("Nav2 rejected the goal")."""
        resolved = self.node.resolve_topic_name(name)
        where = f"the {server} server {resolved!r}"
        if not client.wait_for_server(timeout_sec=self.answer_timeout_s):
            return f"no {server} server on {resolved!r} within {self.answer_timeout_s:g} s (answer_timeout_s)"
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._status, self._goal = (NavStatus.PENDING, ""), None
        goal = make_goal()
        # Blocks until the server accepted or rejected the goal (its reply may be lost right after discovery:
        # the request is then repeated with the same goal id), so a goal is never accepted behind our back.
        try:
            sent = send_goal_confirmed(
                client,
                goal,
                timeout_s=self.answer_timeout_s,
                alive=action_server_watch(self.node, name),
                what=where,
                resend_after_s=min(1.0, self.answer_timeout_s / 2.0),
            )
        except ServerLostError as error:
            return str(error)
        if sent is None:
            return f"{where} did not answer the goal within {self.answer_timeout_s:g} s (answer_timeout_s)"
        if not sent.accepted:
            self._set(generation, NavStatus.FAILED, f"{speaker} rejected the goal")
            return None
        with self._lock:
            if generation == self._generation:
                self._goal = sent
        self._set(generation, NavStatus.ACTIVE, f"accepted by {speaker}")
        result = sent.result_future if sent.result_future is not None else sent._handle().get_result_async()
        result.add_done_callback(lambda done: self._on_result(done, generation, speaker))
        return None

    def ending_words(self, speaker: str, status: int, result: Any) -> str:
        """What the server's final status and result say, e.g. "Nav2 aborted the goal: error code 9003
        (TIMEOUT): ..." or "FollowJointTrajectory aborted the goal: error code -1 (INVALID_GOAL): point 0:
        torso_lift_joint = 1.5 lies outside its limits"."""
        if status == self.goal_status.STATUS_SUCCEEDED:
            return f"{speaker} succeeded"
        if status == self.goal_status.STATUS_CANCELED:
            words = f"{speaker} canceled the goal"
        elif status == self.goal_status.STATUS_ABORTED:
            words = f"{speaker} aborted the goal"
        else:
            words = f"{speaker} ended the goal with status {status}"
        details: list[str] = []
        code = int(getattr(result, "error_code", 0) or 0)  # nav2_msgs before Jazzy has no error codes
        if code:
            name = self.error_names.get(code)
            details.append(f"error code {code}" + (f" ({name})" if name else ""))
        message = str(getattr(result, self.message_field, "") or "")
        if message:
            details.append(message)
        return ": ".join([words, *details])

    def _on_result(self, future: Any, generation: int, speaker: str) -> None:
        response = future.result()
        status = int(response.status) if response is not None else self.goal_status.STATUS_UNKNOWN
        with self._lock:
            if generation == self._generation:
                self._goal = None  # ended: nothing left to cancel
        ended = NavStatus.SUCCEEDED if status == self.goal_status.STATUS_SUCCEEDED else NavStatus.FAILED
        self._set(
            generation,
            ended,
            self.ending_words(speaker, status, None if response is None else response.result),
        )

    def _set(self, generation: int, status: NavStatus, words: str) -> None:
        with self._lock:
            if generation == self._generation:
                self._status = (status, words)
        self.notify()

    def status(self) -> tuple[NavStatus, str]:
        with self._lock:
            return self._status

    def stop(self) -> None:
        """Cancel the goal being pursued (if any); a late answer to it changes nothing."""
        with self._lock:
            goal, self._goal = self._goal, None
            self._generation += 1
        if goal is not None:
            goal.cancel()
