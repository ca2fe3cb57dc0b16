"""Tracker rules of spec §5.6, checked on hand-computed histories."""

import json

import pytest
from aiv_verifier.core.tracker import AttributeStateTracker, reconciled_weight, votes_converged
from aiv_verifier.core.types import AttributeState, Decision, ViewJudgement, decision_from_answer_text

M, C, MI = AttributeState.MATCHED, AttributeState.CONTRADICTED, AttributeState.MISSING


def tracker_with(*entries: tuple[AttributeState, float]) -> AttributeStateTracker:
    """One attribute "a" observed once per entry, one view each."""
    tracker = AttributeStateTracker(["a"])
    for view_id, (state, confidence) in enumerate(entries):
        tracker.update(view_id, {"a": state}, confidence)
    return tracker


def test_reconciled_weight_downweights_below_tau():
    assert reconciled_weight(0.3) == 0.3
    assert reconciled_weight(0.29) == pytest.approx(0.058)
    assert reconciled_weight(0.1) == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("entries", "reconciled", "final"),
    [
        # Spec's own examples: a lone c = 0.1 No still contradicts; a lone c = 0.1 Yes stays Missing.
        ([(C, 0.1)], C, C),
        ([(M, 0.1)], MI, M),
        # A match must exceed 0.3: exactly 0.3 is not enough, 0.31 is.
        ([(M, 0.3)], MI, M),
        ([(M, 0.31)], M, M),
        # Equal Yes/No: reconciled Matched (C must beat M), raw tie rejects.
        ([(M, 0.5), (C, 0.5)], M, C),
        # A No outweighed by Unsure is not Contradictory (and no match) -> Missing; raw still rejects.
        ([(C, 0.5), (MI, 0.6)], MI, C),
        # Low-confidence No is down-weighted to 0.05 against a 0.9 Yes.
        ([(M, 0.9), (C, 0.25)], M, M),
        # Two trap-view Nos (0.02 each) beat a down-weighted Yes (0.028) in both accumulators.
        ([(C, 0.1), (C, 0.1), (M, 0.14)], C, C),
        # Only Unsure answers: no votes at all.
        ([(MI, 1.0), (MI, 0.4)], MI, MI),
        ([], MI, MI),
    ],
)
def test_reconciled_state_and_final_decision(entries, reconciled, final):
    tracker = tracker_with(*entries)
    assert tracker.reconciled_state("a") is reconciled
    assert tracker.final_decision("a") is final


def test_vote_sums_ignore_missing_and_do_not_downweight():
    tracker = tracker_with((M, 0.1), (C, 0.25), (MI, 0.9), (M, 0.6))
    matched, contradicted = tracker.vote_sums("a")
    assert matched == pytest.approx(0.7)
    assert contradicted == pytest.approx(0.25)
    weights = tracker.reconciled_weights("a")
    assert weights[M] == pytest.approx(0.02 + 0.6)
    assert weights[C] == pytest.approx(0.05)
    assert weights[MI] == pytest.approx(0.9)


@pytest.mark.parametrize(
    ("matched", "contradicted", "remaining", "converged"),
    [
        (0.0, 0.0, 0, False),  # no votes never converge, even at the last step
        (2.0, 0.0, 1, True),  # lead 2 > r = 1
        (2.0, 0.0, 2, False),  # r = 2 contradicting views could tie, and ties reject
        (1.0, 0.0, 0, True),
        (1.0, 0.0, 5, False),  # first view, T = 6
        (0.0, 2.0, 2, True),  # r matching views can at most tie, a tie still rejects
        (0.0, 2.0, 3, False),
        (1.0, 1.0, 0, True),  # tie with nothing left
        (1.0, 1.0, 1, False),
        (1.5, 0.5, 0, True),
        (1.5, 0.5, 1, False),  # lead exactly 1.0 is not strictly larger than r = 1
        (0.5, 1.5, 1, True),  # deficit exactly 1.0 covers r = 1
        (0.0, 0.1, 0, True),
        (0.0, 0.1, 1, False),
    ],
)
def test_convergence_arithmetic(matched, contradicted, remaining, converged):
    assert votes_converged(matched, contradicted, remaining) is converged


def test_is_converged_uses_the_tracked_sums():
    tracker = tracker_with((M, 1.0), (M, 1.0))
    assert tracker.is_converged("a", 1)
    assert not tracker.is_converged("a", 2)
    assert tracker.all_converged(1)


def test_empty_attribute_list_is_converged_and_snapshot_empty():
    tracker = AttributeStateTracker([])
    assert tracker.all_converged(5)
    assert tracker.snapshot(5) == []


def test_update_from_judgements_uses_each_confidence_and_answer():
    tracker = AttributeStateTracker(["color", "logo"])
    tracker.update_from_judgements(
        0,
        [
            ViewJudgement("color", Decision.YES, "blue body", 0.8),
            ViewJudgement("logo", Decision.UNSURE, "back side", 0.8),
        ],
    )
    tracker.update_from_judgements(1, [ViewJudgement("logo", Decision.NO, "no logo", 0.4)])
    assert tracker.vote_sums("color") == (0.8, 0.0)
    assert tracker.vote_sums("logo") == (0.0, 0.4)
    assert [entry.state for entry in tracker.history("logo")] == [MI, C]
    assert tracker.next_view_id == 2


def test_snapshot_records_are_complete_and_json_serialisable():
    tracker = AttributeStateTracker(["color", "strap"])
    tracker.update(0, {"color": M, "strap": C}, 0.1)
    tracker.update(1, {"color": M}, 0.9)
    color, strap = tracker.snapshot(remaining_steps=0)
    assert (color.name, color.reconciled_state, color.final_decision) == ("color", M, M)
    assert color.matched_votes == pytest.approx(1.0)
    assert color.weights[M] == pytest.approx(0.92)
    assert [(o.view_id, o.state, o.confidence) for o in color.history] == [(0, M, 0.1), (1, M, 0.9)]
    assert color.converged is True  # lead 1.0 > r = 0
    assert strap.reconciled_state is C and strap.final_decision is C and strap.converged is True
    payload = json.loads(json.dumps([record.to_dict() for record in tracker.snapshot()]))
    assert payload[1]["reconciled_state"] == "Contradictory"
    assert payload[1]["weights"] == {"Matched": 0.0, "Contradictory": pytest.approx(0.02), "Missing": 0.0}
    assert payload[0]["converged"] is None


def test_invalid_updates_are_refused():
    tracker = AttributeStateTracker(["a"])
    with pytest.raises(KeyError):
        tracker.update(0, {"b": M}, 0.5)
    with pytest.raises(ValueError):
        tracker.update(0, {"a": M}, 1.5)
    with pytest.raises(ValueError):
        tracker.update(-1, {"a": M}, 0.5)
    with pytest.raises(ValueError):
        AttributeStateTracker(["a", "a"])


@pytest.mark.parametrize(
    ("text", "decision"),
    [
        ("Yes", Decision.YES),
        ("yes, it matches", Decision.YES),
        ("No", Decision.NO),
        ("none visible", Decision.NO),  # prefix rule, as in the reference
        ("Unsure", Decision.UNSURE),
        ("", Decision.UNSURE),
        (None, Decision.UNSURE),
        ("(No) the logo differs", Decision.UNSURE),
    ],
)
def test_answer_text_prefix_rule(text, decision):
    assert decision_from_answer_text(text) is decision
