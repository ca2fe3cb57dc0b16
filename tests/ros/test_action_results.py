"""Which action results our clients believe: a goal that did not succeed counts only when its result reports
the failure itself, so rclpy's default result of an aborted goal (a verdict of NO, a move to sector 0) is never
taken for an answer."""

from __future__ import annotations

import pytest
from action_msgs.msg import GoalStatus
from aiv_common.action_results import (
    move_refused,
    unexplained_ending,
    unexplained_verdict_ending,
    verification_failed,
)
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import Verdict


def _verify_response(status: int, decision: int) -> VerifyInstance.Impl.GetResultService.Response:
    response = VerifyInstance.Impl.GetResultService.Response(status=status)
    response.result.verdict = Verdict(decision=decision)
    return response


@pytest.mark.parametrize("decision", [Verdict.DECISION_NO, Verdict.DECISION_YES, Verdict.DECISION_FAILED])
def test_a_verdict_of_a_goal_that_succeeded_stands(decision: int) -> None:
    assert unexplained_verdict_ending(_verify_response(GoalStatus.STATUS_SUCCEEDED, decision)) is None


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (GoalStatus.STATUS_ABORTED, "was aborted by the server"),
        (GoalStatus.STATUS_CANCELED, "was cancelled by the server"),
        (GoalStatus.STATUS_UNKNOWN, "ended with goal status 0"),
    ],
)
def test_a_default_verdict_of_a_goal_that_did_not_succeed_is_no_answer(status: int, words: str) -> None:
    response = VerifyInstance.Impl.GetResultService.Response(status=status)  # rclpy's default: decision NO
    assert response.result.verdict.decision == Verdict.DECISION_NO
    assert unexplained_verdict_ending(response) == f"the verifier's goal {words} without a verdict"


def test_a_failed_verdict_of_an_aborted_goal_stands_with_its_reason() -> None:
    response = _verify_response(GoalStatus.STATUS_ABORTED, Verdict.DECISION_FAILED)
    assert unexplained_verdict_ending(response) is None
    assert verification_failed(response.result)


def test_a_move_is_believed_from_a_goal_that_succeeded_or_one_that_says_it_refused() -> None:
    refused = MoveToSector.Impl.GetResultService.Response(status=GoalStatus.STATUS_ABORTED)
    refused.result.outcome = MoveToSector.Result.OUTCOME_REJECTED
    moved = MoveToSector.Impl.GetResultService.Response(status=GoalStatus.STATUS_SUCCEEDED)
    default = MoveToSector.Impl.GetResultService.Response(status=GoalStatus.STATUS_ABORTED)
    assert unexplained_ending(refused, move_refused) is None
    assert unexplained_ending(moved, move_refused) is None
    assert unexplained_ending(default, move_refused) == "was aborted by the server"
