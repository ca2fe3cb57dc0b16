"""Named stop rules (issue 18): the reference rule stays the default; the others only add reasons to stop.

With the classical verifier some attributes (materials, a logo on the far side) are never decided, so the
reference rule's unanimity never holds and every episode walks the whole budget. ``contradiction`` stops once
the decision is No and backed by a contradicted attribute; ``seen_unanimous`` is the paper's "all seen
attributes agree" (at least half of them decided) plus ``contradiction``.
"""

from __future__ import annotations

import pytest
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.core.fusion import make_fusion
from aiv_verifier.core.stopping import available_stop_rules, evaluate_stop
from aiv_verifier.core.tracker import AttributeStateTracker
from aiv_verifier.core.types import AttributeState, Decision

M, C, MI = AttributeState.MATCHED, AttributeState.CONTRADICTED, AttributeState.MISSING
NAMES = ["color", "material", "logo", "pattern"]


def _tracker(*views: dict[str, AttributeState]) -> AttributeStateTracker:
    tracker = AttributeStateTracker(NAMES)
    for view_id, states in enumerate(views):
        tracker.update(view_id, {name: states.get(name, MI) for name in NAMES}, 1.0)
    return tracker


def test_reference_is_the_default_and_unknown_names_are_refused() -> None:
    assert available_stop_rules()[0] == "reference"
    assert AgentSettings().stop_rule == "reference"
    with pytest.raises(ValueError, match="stop_rule"):
        AgentSettings(stop_rule="whenever")
    with pytest.raises(ValueError, match="stop rule"):
        evaluate_stop(_tracker(), make_fusion("veto"), 0, 6, stop_rule="whenever")


def test_reference_walks_on_when_an_attribute_is_never_decided() -> None:
    tracker = _tracker({"color": C, "pattern": M})
    outcome = evaluate_stop(tracker, make_fusion("veto"), 0, 6)
    assert not outcome.stop and outcome.step_prediction is Decision.NO


@pytest.mark.parametrize("fusion", ["veto", "attr_majority"])
def test_contradiction_stops_on_a_backed_no(fusion: str) -> None:
    tracker = _tracker({"color": C, "logo": C, "pattern": M})
    outcome = evaluate_stop(tracker, make_fusion(fusion), 0, 6, stop_rule="contradiction")
    assert outcome.stop and outcome.decision is Decision.NO
    assert outcome.reason == "contradiction"


def test_contradiction_does_not_stop_on_a_yes_or_on_nothing() -> None:
    matched = _tracker({"color": M, "pattern": M})
    assert not evaluate_stop(matched, make_fusion("veto"), 0, 6, stop_rule="contradiction").stop
    # attr_majority says Yes here (2 matched vs 1 contradicted): nothing to stop on.
    mixed = _tracker({"color": M, "pattern": M, "logo": C})
    assert not evaluate_stop(mixed, make_fusion("attr_majority"), 0, 6, stop_rule="contradiction").stop
    nothing = _tracker({})
    assert not evaluate_stop(nothing, make_fusion("veto"), 0, 6, stop_rule="contradiction").stop


def test_seen_unanimous_needs_half_of_the_attributes_decided() -> None:
    one = _tracker({"color": M})
    assert not evaluate_stop(one, make_fusion("veto"), 0, 6, stop_rule="seen_unanimous").stop
    two = _tracker({"color": M, "pattern": M})
    outcome = evaluate_stop(two, make_fusion("veto"), 0, 6, stop_rule="seen_unanimous")
    assert outcome.stop and outcome.decision is Decision.YES and outcome.reason == "seen_unanimous"


def test_the_final_step_decides_under_every_rule() -> None:
    for rule in available_stop_rules():
        outcome = evaluate_stop(_tracker({}), make_fusion("veto"), 5, 6, stop_rule=rule)
        assert outcome.stop and outcome.reason == "final"
