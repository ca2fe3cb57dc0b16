"""What aiv-pregrasp prints and which exit code each verdict gives (aiv_robot.pregrasp), without a verifier."""

from __future__ import annotations

import pytest

pytest.importorskip("aiv_interfaces.msg", reason="needs the built workspace (source .env.sh)")

from aiv_interfaces.msg import AttributeState, StepReport, Verdict
from aiv_robot.pregrasp import EXIT_CODES, format_step, format_verdict, main


def test_each_decision_has_its_documented_exit_code() -> None:
    assert EXIT_CODES == {
        Verdict.DECISION_YES: 0,
        Verdict.DECISION_NO: 1,
        Verdict.DECISION_UNDECIDED: 3,
        Verdict.DECISION_FAILED: 4,
    }


def test_a_step_line_names_the_sector_the_belief_and_the_move_with_its_outcome() -> None:
    report = StepReport(
        step=1, sector=2, action=StepReport.ACTION_MOVE, move_direction="back", move_outcome="unreachable"
    )
    report.belief = Verdict.DECISION_NO
    report.attributes = [AttributeState(name="body_color", last_answer="Yes")]
    assert format_step(report) == "step 1: sector 2, belief NO; move back -> unreachable [body_color=Yes]"
    decided = StepReport(step=2, sector=5, action=StepReport.ACTION_DECIDE, stop_reason="converged")
    decided.belief = Verdict.DECISION_YES
    assert format_step(decided) == "step 2: sector 5, belief YES; decided (converged)"


def test_the_verdict_lines_give_the_answer_and_its_reasons() -> None:
    verdict = Verdict(decision=Verdict.DECISION_YES, confidence=0.75, steps=3, stop_reason="converged")
    verdict.visited_sectors = [0, 1]
    verdict.attributes = [
        AttributeState(
            name="body_color", evidence_phrase="blue", state=AttributeState.STATE_MATCHED, votes_matched=2.0
        )
    ]
    lines = format_verdict(verdict)
    assert lines[0].startswith("YES (confidence 0.75, 3 steps, views from sectors [0, 1]")
    assert lines[1] == "  body_color ('blue'): matches, votes 2.0 yes / 0.0 no"
    failed = format_verdict(Verdict(decision=Verdict.DECISION_FAILED, failure_reason="the camera stopped"))
    assert failed[0].startswith("FAILED") and failed[1] == "  reason: the camera stopped"


def test_an_undecided_verdict_names_what_could_not_be_verified() -> None:
    verdict = Verdict(decision=Verdict.DECISION_UNDECIDED, steps=6, stop_reason="final", probability=0.41)
    verdict.unverified_attributes = ["strap_color", "pocket_color"]
    verdict.attributes = [
        AttributeState(name="color", evidence_phrase="orange", claim_kind="main_colour", belief=0.8, disbelief=0.0,
                       uncertainty=0.2, state=AttributeState.STATE_MATCHED, votes_matched=1.0),
        AttributeState(name="strap_color", evidence_phrase="blue shoulder straps", claim_kind="part_colour",
                       belief=0.0, disbelief=0.0, uncertainty=1.0),
        AttributeState(name="pocket_color", evidence_phrase="a green front pocket", claim_kind="part_colour",
                       belief=0.0, disbelief=0.0, uncertainty=1.0),
    ]  # fmt: skip
    lines = format_verdict(verdict)
    assert lines[0].startswith("UNDECIDED (probability 0.41 that it is the described object, 6 steps")
    assert lines[1] == "  could not verify: shoulder straps, front pocket"
    assert "belief 0.80 / disbelief 0.00 / uncertainty 0.20" in lines[2]
    assert EXIT_CODES[verdict.decision] == 3


def test_a_bad_command_line_exits_2() -> None:
    assert main([]) == 2
    assert main(["a mug", "--budget", "-1"]) == 2
