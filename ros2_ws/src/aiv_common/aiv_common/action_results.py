"""Whether an action's result may be believed, for the goals our nodes send (moves and verifications).

rclpy answers a goal that was aborted or cancelled with whatever result the server returned, and a goal whose
execute callback raised with the action's default result. Default results read as ordinary answers: a
VerifyInstance verdict of DECISION_NO, a MoveToSector move to sector 0. Our servers always fill in a result
that reports its own failure (DECISION_FAILED with a reason, OUTCOME_REJECTED with a message); anything else
from a goal that did not succeed is a failure of the server, never an answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from action_msgs.msg import GoalStatus
from aiv_interfaces.action import MoveToSector
from aiv_interfaces.msg import Verdict

#: How a goal that did not succeed ended, in words.
GOAL_ENDINGS = {
    GoalStatus.STATUS_ABORTED: "was aborted by the server",
    GoalStatus.STATUS_CANCELED: "was cancelled by the server",
}


def unexplained_ending(response: Any, reports_failure: Callable[[Any], bool]) -> str | None:
    """How a goal ended ("was aborted by the server") when its result must not be believed; None when it may:
    the goal succeeded, or ``reports_failure(result)`` says the result itself reports the failure."""
    status = int(response.status)
    if status == GoalStatus.STATUS_SUCCEEDED or reports_failure(response.result):
        return None
    return GOAL_ENDINGS.get(status, f"ended with goal status {status}")


def move_refused(result: MoveToSector.Result) -> bool:
    """A MoveToSector result that reports its own failure."""
    return bool(result.outcome == MoveToSector.Result.OUTCOME_REJECTED)


def verification_failed(result: Any) -> bool:
    """A VerifyInstance result whose verdict reports its own failure."""
    return bool(result.verdict.decision == Verdict.DECISION_FAILED)


def unexplained_verdict_ending(response: Any) -> str | None:
    """Why a VerifyInstance response holds no verdict to believe ("the verifier's goal was aborted by the server
    without a verdict"), None when its verdict stands."""
    ending = unexplained_ending(response, verification_failed)
    return None if ending is None else f"the verifier's goal {ending} without a verdict"


__all__ = [
    "GOAL_ENDINGS",
    "move_refused",
    "unexplained_ending",
    "unexplained_verdict_ending",
    "verification_failed",
]
