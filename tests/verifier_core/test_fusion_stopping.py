"""Fusion (spec §5.7) and the adaptive stopping rule (spec §5.8)."""

import pytest
from aiv_verifier.core.fusion import available_fusions, make_fusion
from aiv_verifier.core.stopping import DecisionMode, evaluate_stop, is_unanimous
from aiv_verifier.core.tracker import AttributeStateTracker
from aiv_verifier.core.types import AttributeState, Decision

M, C, MI = AttributeState.MATCHED, AttributeState.CONTRADICTED, AttributeState.MISSING


def make_tracker(views: list[dict[str, AttributeState]], names: list[str], confidence: float = 1.0):
    tracker = AttributeStateTracker(names)
    for view_id, states in enumerate(views):
        tracker.update(view_id, states, confidence)
    return tracker


def test_registry_knows_both_reference_fusions_and_rejects_unknown():
    assert {"attr_majority", "majority"} <= set(available_fusions())
    with pytest.raises(ValueError, match="attr_majority"):
        make_fusion("weighted_typo")


def test_fusions_disagree_on_a_lone_low_confidence_yes():
    # Raw votes see the c = 0.1 Yes as Matched; the reconciled state keeps it Missing (0.02 <= 0.3).
    tracker = make_tracker([{"color": M, "logo": MI}], ["color", "logo"], confidence=0.1)
    attr = make_fusion("attr_majority").fuse(tracker)
    legacy = make_fusion("majority").fuse(tracker)
    assert attr.decision is Decision.YES
    assert attr.debug["n_matched"] == 1 and attr.debug["n_missing"] == 1
    assert legacy.decision is Decision.NO
    assert legacy.debug["per_attribute"] == {"color": "Missing", "logo": "Missing"}


def test_fusions_disagree_on_an_equal_yes_no_split():
    # Raw tie rejects (Contradicted); reconciled needs w_C > w_M, so it stays Matched.
    tracker = AttributeStateTracker(["shape"])
    tracker.update(0, {"shape": M}, 0.5)
    tracker.update(1, {"shape": C}, 0.5)
    assert make_fusion("attr_majority").fuse(tracker).decision is Decision.NO
    assert make_fusion("majority").fuse(tracker).decision is Decision.YES


def test_attr_majority_counts_and_ties():
    names = ["a", "b", "c", "d"]
    two_two = make_tracker([{"a": M, "b": M, "c": C, "d": C}], names)
    result = make_fusion("attr_majority").fuse(two_two)
    assert result.decision is Decision.NO
    assert "tie" in result.debug["rule"]
    three_one = make_tracker([{"a": M, "b": M, "c": M, "d": C}], names)
    assert make_fusion("attr_majority").fuse(three_one).decision is Decision.YES
    one_two = make_tracker([{"a": M, "b": C, "c": C, "d": MI}], names)
    assert make_fusion("attr_majority").fuse(one_two).decision is Decision.NO


def test_all_missing_and_empty_lists_are_no():
    for names in (["a", "b"], []):
        tracker = make_tracker([], names)
        assert make_fusion("attr_majority").fuse(tracker).decision is Decision.NO
        assert make_fusion("majority").fuse(tracker).decision is Decision.NO


def test_first_view_unanimous_yes_stops_at_once():
    names = ["color", "pattern", "logo"]
    tracker = make_tracker([dict.fromkeys(names, M)], names, confidence=0.6)
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=0, max_steps=6)
    assert outcome.stop and outcome.reason == "unanimous"
    assert outcome.decision is Decision.YES and outcome.step_prediction is Decision.YES
    assert outcome.debug["converged"] is False  # lead 0.6 cannot beat r = 5
    assert outcome.debug["remaining_steps"] == 5


def test_first_view_unanimous_no_stops_with_no():
    tracker = make_tracker([{"a": C, "b": C}], ["a", "b"], confidence=0.1)
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=0, max_steps=6)
    assert (outcome.stop, outcome.reason, outcome.decision) == (True, "unanimous", Decision.NO)


def test_one_unseen_attribute_blocks_unanimity_and_the_agent_continues():
    tracker = make_tracker([{"a": M, "b": M, "c": MI}], ["a", "b", "c"])
    assert not is_unanimous(tracker)
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=0, max_steps=6)
    assert not outcome.stop and outcome.reason == "continue"
    assert outcome.decision is Decision.UNSURE
    assert outcome.step_prediction is Decision.YES  # the forced answer for first-view accuracy


def test_convergence_stops_a_split_vote_before_the_end():
    # T = 3, s = 1, r = 1: a has M = 2 (> 1), b has C = 1 (>= 1) -> converged but not unanimous; tie -> No.
    tracker = make_tracker([{"a": M, "b": C}, {"a": M}], ["a", "b"])
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=1, max_steps=3)
    assert outcome.stop and outcome.reason == "converged"
    assert outcome.decision is Decision.NO
    # One step earlier in a longer episode the same evidence is not converged (r = 2 is not < 2).
    longer = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=1, max_steps=4)
    assert not longer.stop and longer.decision is Decision.UNSURE and longer.step_prediction is Decision.NO


def test_final_step_always_decides_and_unsure_becomes_no():
    tracker = make_tracker([{"a": MI}], ["a"])
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=5, max_steps=6)
    assert outcome.stop and outcome.reason == "final"
    assert outcome.decision is Decision.NO


def test_empty_attribute_list_counts_as_converged():
    tracker = AttributeStateTracker([])
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=0, max_steps=6)
    assert outcome.stop and outcome.reason == "converged+unanimous"
    assert outcome.decision is Decision.NO


def test_other_fusions_stop_only_at_the_final_step():
    names = ["a", "b"]
    tracker = make_tracker([dict.fromkeys(names, M)], names)
    fusion = make_fusion("majority")
    early = evaluate_stop(tracker, fusion, step_count=0, max_steps=6)
    assert not early.stop and early.decision is Decision.UNSURE and early.step_prediction is Decision.YES
    last = evaluate_stop(tracker, fusion, step_count=5, max_steps=6)
    assert last.stop and last.reason == "final" and last.decision is Decision.YES


def test_early_exit_decides_immediately():
    tracker = make_tracker([{"a": M, "b": MI}], ["a", "b"])
    outcome = evaluate_stop(tracker, make_fusion("majority"), 0, 1, mode="early_exit")
    assert outcome.stop and outcome.reason == "early_exit" and outcome.decision is Decision.YES
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), 0, 6, mode=DecisionMode.EARLY_EXIT)
    assert outcome.stop and outcome.decision is Decision.YES


def test_single_view_budget_is_final_on_the_first_view():
    tracker = make_tracker([{"a": MI}], ["a"])
    outcome = evaluate_stop(tracker, make_fusion("attr_majority"), step_count=0, max_steps=1)
    assert outcome.stop and "final" in outcome.reason


def test_bad_arguments_are_refused():
    tracker = AttributeStateTracker(["a"])
    with pytest.raises(ValueError):
        evaluate_stop(tracker, make_fusion("attr_majority"), 0, 0)
    with pytest.raises(ValueError):
        evaluate_stop(tracker, make_fusion("attr_majority"), 0, 6, mode="sometimes")
