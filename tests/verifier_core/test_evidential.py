"""The evidential fusion on hand-made answer sequences: opinions, one probability, YES / NO / UNDECIDED.

The reliability table here is made by hand (counts, as a calibration file holds them) so that every number
below follows from the formulas in :mod:`aiv_verifier.core.evidence`.
"""

from __future__ import annotations

import math

import pytest
from aiv_verifier.core.evidence import (
    AnswerCounts,
    Opinion,
    ReliabilityCell,
    ReliabilityTable,
    TargetModel,
    evidence_from_likelihood_ratio,
    evidence_odds,
    wilson_interval,
)
from aiv_verifier.core.evidential import (
    ClaimAnswer,
    ClaimItem,
    EvidentialPolicy,
    Thresholds,
    view_quality,
)
from aiv_verifier.core.types import Decision

Y, N, U = Decision.YES, Decision.NO, Decision.UNSURE

#: A reliable backend: 90 % of answers about claims that hold are Yes, 1 % of those about claims that fail.
RELIABLE = ReliabilityCell(AnswerCounts(900, 10, 90), AnswerCounts(10, 900, 90))
#: A coin: Yes and No as often whatever the truth.
COIN = ReliabilityCell(AnswerCounts(400, 400, 200), AnswerCounts(400, 400, 200))


def table(
    cell: ReliabilityCell = RELIABLE, kinds=("main_colour", "part_colour", "category")
) -> ReliabilityTable:
    return ReliabilityTable({(kind, "large"): cell for kind in kinds})


MODEL = TargetModel(
    target_share=1 / 3, other_category_share=0.5, indistinguishable_share=0.0, claim_fails_rate=0.2
)
ITEMS = [
    ClaimItem("body", "main_colour"),
    ClaimItem("strap", "part_colour"),
    ClaimItem("pocket", "part_colour"),
]


def policy(accept=0.95, reject=0.05, cell=RELIABLE, **kwargs) -> EvidentialPolicy:
    return EvidentialPolicy(table(cell), MODEL, Thresholds(accept, reject, **kwargs))


def view(ledger, pose, answers, quality="large", weight=1.0):
    ledger.record(
        pose, [ClaimAnswer(name, answer) for name, answer in answers.items()], quality=quality, weight=weight
    )


def test_one_answer_carries_its_likelihood_ratio_and_independent_answers_multiply() -> None:
    for ratio in (0.05, 0.5, 1.0, 3.0, 40.0):
        support, against = evidence_from_likelihood_ratio(ratio)
        opinion = Opinion.from_evidence(support, against)
        assert opinion.belief + opinion.disbelief + opinion.uncertainty == pytest.approx(1.0)
        assert evidence_odds(support, against) == pytest.approx(ratio)
        # cumulative fusion adds weights of evidence: two independent answers multiply their ratios
        assert evidence_odds(2 * support, 2 * against) == pytest.approx(ratio * ratio)
    # a Yes and an equally strong No cancel; more agreeing answers leave less uncertainty
    yes, no = evidence_from_likelihood_ratio(9.0), evidence_from_likelihood_ratio(1 / 9.0)
    assert evidence_odds(yes[0] + no[0], yes[1] + no[1]) == pytest.approx(1.0)
    assert Opinion.from_evidence(*yes).uncertainty > Opinion.from_evidence(3 * yes[0], 0.0).uncertainty
    assert Opinion.from_evidence(0.0, 0.0).uncertainty == 1.0


def test_an_answer_counts_only_as_much_as_its_interval_allows() -> None:
    ratio = RELIABLE.likelihood_ratio(Y)
    low, high = RELIABLE.likelihood_ratio_interval(Y)
    assert ratio == low and 1 < low < 90 < high  # the end nearest to 1, not the point estimate (90)
    assert COIN.likelihood_ratio(Y) == 1.0 and COIN.likelihood_ratio(N) == 1.0
    assert RELIABLE.likelihood_ratio(U) == 1.0
    sparse = ReliabilityCell(AnswerCounts(3, 0, 0), AnswerCounts(0, 3, 0))
    assert 1.0 <= sparse.likelihood_ratio(Y) < RELIABLE.likelihood_ratio(Y)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_a_claim_never_judged_keeps_full_uncertainty() -> None:
    ledger = policy().new_ledger(ITEMS)
    view(ledger, (0, "s0_far"), {"body": Y, "strap": U, "pocket": U})
    summary = ledger.summary()
    strap = next(claim for claim in summary.claims if claim.name == "strap")
    assert strap.opinion == Opinion(0.0, 0.0, 1.0) and not strap.judged
    assert summary.never_judged == ("strap", "pocket")


def test_a_repeated_view_of_the_same_pose_adds_no_evidence() -> None:
    ledger = policy().new_ledger(ITEMS)
    view(ledger, (0, "s0_far"), {"body": Y, "strap": Y, "pocket": U})
    once = ledger.summary()
    view(ledger, (0, "s0_far"), {"body": Y, "strap": Y, "pocket": U})
    assert ledger.summary() == once
    view(ledger, (2, "s2_far"), {"body": Y, "strap": Y, "pocket": U})  # another pose does add
    assert ledger.summary().probability > once.probability


def test_independent_views_fuse_cumulatively() -> None:
    ledger = policy().new_ledger(ITEMS)
    view(ledger, (0, "a"), {"body": Y, "strap": U, "pocket": U})
    view(ledger, (1, "b"), {"body": Y, "strap": U, "pocket": U})
    one_support, _ = table().evidence("main_colour", "large", Y)
    assert ledger.claim("body").support == pytest.approx(2 * one_support)


def test_an_attribute_never_seen_keeps_the_verdict_from_yes() -> None:
    """Every other claim confirmed many times over: the one never seen could still be the difference."""
    pol = policy()
    ledger = pol.new_ledger(ITEMS)
    for sector in range(5):
        view(ledger, (sector, f"s{sector}"), {"body": Y, "strap": Y, "pocket": U})
    probability = ledger.probability()
    assert probability < 0.95
    outcome = pol.decide(ledger, step_count=4, max_steps=6)
    assert outcome.decision is U
    # seen once, reliably: now the verdict may say YES
    view(ledger, (5, "s5"), {"body": Y, "strap": Y, "pocket": Y})
    outcome = pol.decide(ledger, step_count=5, max_steps=6)
    assert outcome.stop and outcome.decision is Y and outcome.reason.startswith("confident")


def test_a_reliable_contradiction_ends_in_no() -> None:
    pol = policy()
    ledger = pol.new_ledger(ITEMS)
    view(ledger, (0, "a"), {"body": Y, "strap": Y, "pocket": N})
    first = pol.decide(ledger, step_count=0, max_steps=6)
    assert first.step_prediction is N and ledger.probability() < 0.1
    view(ledger, (1, "b"), {"body": Y, "strap": U, "pocket": N})
    outcome = pol.decide(ledger, step_count=1, max_steps=6)
    assert outcome.stop and outcome.decision is N and outcome.reason == "confident"


def test_answers_about_the_whole_object_count_once_per_view_as_category_evidence() -> None:
    pol = policy()
    ledger = pol.new_ledger(ITEMS)
    ledger.record(
        (0, "a"),
        [ClaimAnswer(name, N, about_object=True) for name in ("body", "strap", "pocket")],
        quality="large",
    )
    summary = ledger.summary()
    assert all(not claim.judged for claim in summary.claims)
    _, against = table().evidence("category", "large", N)
    assert summary.category.against == pytest.approx(against)
    assert summary.probability < MODEL.probability([1.0, 1.0, 1.0])


def test_a_budget_spent_without_enough_evidence_is_undecided() -> None:
    pol = policy()
    ledger = pol.new_ledger(ITEMS)
    view(ledger, (0, "a"), {"body": Y, "strap": U, "pocket": U})
    outcome = pol.decide(ledger, step_count=5, max_steps=6)
    assert outcome.stop and outcome.decision is U and outcome.reason == "final"
    assert outcome.step_prediction in (Y, N)


def test_a_coin_flipping_backend_cannot_change_the_outcome_so_it_stops_at_once() -> None:
    pol = policy(cell=COIN)
    ledger = pol.new_ledger(ITEMS)
    view(ledger, (0, "a"), {"body": Y, "strap": N, "pocket": Y})
    outcome = pol.decide(ledger, step_count=0, max_steps=6)
    assert outcome.stop and outcome.decision is U and outcome.reason == "unresolvable"
    assert ledger.probability() == pytest.approx(MODEL.probability([1.0, 1.0, 1.0]))


def test_thresholds_at_their_extremes_always_or_never_decide() -> None:
    always = policy(accept=0.5, reject=0.5)
    ledger = always.new_ledger(ITEMS)
    view(ledger, (0, "a"), {"body": U, "strap": U, "pocket": U})
    outcome = always.decide(ledger, step_count=0, max_steps=6)
    assert outcome.stop and outcome.decision is N  # the prior, a third, is below 0.5
    view(ledger, (0, "a"), {"body": Y, "strap": Y, "pocket": Y})
    assert always.decide(ledger, step_count=0, max_steps=6).decision is Y

    never = policy(accept=1.0, reject=0.0)
    ledger = never.new_ledger(ITEMS)
    for step in range(5):
        view(ledger, (step, str(step)), {"body": Y, "strap": Y, "pocket": Y})
        outcome = never.decide(ledger, step_count=step, max_steps=6)
        assert not outcome.stop or outcome.reason == "unresolvable"
    assert ledger.probability() > 0.99
    final = never.decide(ledger, step_count=5, max_steps=6)
    assert final.stop and final.decision is U


def test_thresholds_are_checked() -> None:
    with pytest.raises(ValueError, match="must not exceed"):
        Thresholds(accept=0.4, reject=0.6)
    with pytest.raises(ValueError, match="accept probability"):
        Thresholds(accept=0.0)
    with pytest.raises(ValueError, match="reject probability"):
        Thresholds(reject=1.0)


def test_the_target_model_reads_the_hypotheses_right() -> None:
    assert MODEL.probability([]) == pytest.approx(1 / 3)  # nothing claimed: the prior
    assert MODEL.probability([1.0, 1.0]) == pytest.approx(1 / 3)  # nothing judged: the prior
    confirmed = MODEL.probability([1e6, 1e6, 1e6])
    assert confirmed > 0.999
    # a look-alike no claim of the query tells apart bounds the probability however much is confirmed
    blurred = TargetModel(1 / 3, 0.5, 0.1, 0.2)
    assert blurred.probability([1e9, 1e9]) == pytest.approx((1 / 3) / (1 / 3 + (2 / 3) * 0.5 * 0.1), rel=1e-3)
    # rho -> 0: exactly one claim differs, uniformly chosen
    single = TargetModel(1 / 3, 0.0, 0.0, 1e-12)
    assert single.same_category_ratio([1e6, 1.0]) == pytest.approx(0.5, rel=1e-4)
    assert math.isclose(MODEL.with_target_share(0.9).target_share, 0.9)
    with pytest.raises(ValueError, match="target_share"):
        TargetModel(target_share=1.0)


def test_view_quality_is_the_box_side_in_pixels() -> None:
    assert view_quality(None) == "full_image"
    assert view_quality((0, 0, 40, 40)) == "small"
    assert view_quality((0, 0, 60, 80)) == "medium"
    assert view_quality((10, 10, 210, 110)) == "large"


def test_detection_confidence_scales_the_evidence() -> None:
    full = table().evidence("main_colour", "large", Y, 1.0)
    half = table().evidence("main_colour", "large", Y, 0.5)
    assert half[0] == pytest.approx(full[0] / 2) and half[1] == 0.0
    # a kind the table has no data for borrows the backend's pooled cell
    assert table().evidence("text", "small", Y) == pytest.approx(
        evidence_from_likelihood_ratio((RELIABLE + RELIABLE + RELIABLE).likelihood_ratio(Y))
    )


def test_abstentions_do_not_lend_a_yes_the_evidence_of_a_hidden_part() -> None:
    # A symmetric verifier (right 80 % of its decisive answers either way) about claims that, when they fail,
    # mostly sit on parts it cannot see: half of the failing claims get Unsure, a tenth of the holding ones.
    cell = ReliabilityCell(AnswerCounts(720, 180, 100), AnswerCounts(100, 400, 500))
    # Among all answers a Yes looks worth 0.72 / 0.10 = 7.2 and a No 0.18 / 0.40 = 0.45 (a Yes worth two Nos);
    # among decisive ones 4 and 1/4. The Yes counts as the smaller, the No as the stronger of the two readings.
    low_yes, high_yes = cell.likelihood_ratio_interval(Decision.YES, decisive_only=True)
    low_no, high_no = cell.likelihood_ratio_interval(Decision.NO, decisive_only=True)
    assert low_yes < 4.0 < high_yes and low_no < 0.25 < high_no
    assert cell.likelihood_ratio(Decision.YES) == low_yes and cell.likelihood_ratio(Decision.NO) == high_no
    assert cell.likelihood_ratio_interval(Decision.YES)[0] > high_yes  # the reading that was not used


def test_a_check_that_only_ever_contradicts_keeps_the_weight_of_its_no() -> None:
    # A category check: about the right category it never answers (Unsure), about the wrong one it says No.
    cell = ReliabilityCell(AnswerCounts(0, 0, 500), AnswerCounts(0, 480, 20))
    assert (
        cell.likelihood_ratio_interval(Decision.NO, decisive_only=True)[0] == 0.0
    )  # no decisive holds: no measure
    assert (
        cell.likelihood_ratio(Decision.NO) < 0.01
    )  # among all answers a No is all but impossible if it holds
    assert cell.likelihood_ratio(Decision.YES) == 1.0
