"""The calibration fit on hand-made survey rows: what is counted where, and the target model's shares."""

from __future__ import annotations

import pytest
from aiv_eval.evidence.calibration import fit_target_model, object_verdict, reliability_cells
from aiv_eval.evidence.survey import SurveyAnswer, SurveyPair, SurveyView, pair_from_json, pair_to_json
from aiv_eval.evidence.visibility_fit import visibility_rows
from aiv_verifier.core.types import Decision

Y, N, U = Decision.YES, Decision.NO, Decision.UNSURE
CLAIMS = (("body", "main_colour", "all_round"), ("logo", "logo", "sided"))


def view(sector: int, answers: list[tuple[str, Decision, bool, bool | None, bool]]) -> SurveyView:
    kinds = {name: (kind, hint) for name, kind, hint in CLAIMS}
    return SurveyView(
        sector,
        "far",
        "large",
        1.0,
        tuple(SurveyAnswer(n, *kinds[n], a, obj, holds, vis) for n, a, obj, holds, vis in answers),
    )


def pair(index: int, pair_type: str, views: list[SurveyView]) -> SurveyPair:
    return SurveyPair(index, pair_type, int(pair_type == "positive"), CLAIMS, tuple(views))


PAIRS = [
    pair(0, "positive", [view(0, [("body", Y, False, True, True), ("logo", U, False, True, False)]),
                         view(3, [("body", Y, False, True, True), ("logo", Y, False, True, True)])]),
    pair(1, "neg_same", [view(0, [("body", Y, False, True, True), ("logo", N, False, False, True)])]),
    pair(2, "neg_same", [view(0, [("body", N, False, False, True), ("logo", U, False, True, False)])]),
    pair(3, "neg_diff", [view(0, [("body", N, True, False, True), ("logo", N, True, False, True)])]),
]  # fmt: skip


def test_answers_are_counted_by_truth_and_category_checks_once_per_view() -> None:
    cells = reliability_cells(PAIRS)
    body = cells[("main_colour", "large")]
    assert (body.holds.yes, body.holds.no, body.fails.no) == (
        3,
        0,
        1,
    )  # the neg_diff answers are category checks
    logo = cells[("logo", "large")]
    assert (logo.holds.yes, logo.holds.unsure, logo.fails.no) == (1, 2, 1)
    category = cells[("category", "large")]
    assert category.holds.unsure == 4 and category.fails.no == 1 and category.total == 5
    assert object_verdict(PAIRS[3].views[0]) is N and object_verdict(PAIRS[0].views[0]) is U


def test_the_target_model_counts_shares_and_fits_claim_fail_rates() -> None:
    model = fit_target_model(PAIRS)
    assert model.target_share == pytest.approx(0.25)
    assert model.other_category_share == pytest.approx(1 / 3)
    assert model.indistinguishable_share == 0.0  # each look-alike fails some claim
    assert 0.0 < model.claim_fails_rate < 1.0
    with pytest.raises(ValueError, match="no surveyed pairs"):
        fit_target_model([])


def test_kinds_without_a_rate_of_their_own_fall_back_to_the_pooled_rate() -> None:
    """With enough look-alikes every kind gets its own rate; the fallback for other kinds is still the rate
    pooled over all claims (a joint fit of the fallback on no claims at all came out at the grid's edge)."""
    body_fails = [("body", N, False, False, True), ("logo", Y, False, True, True)]
    both_fail = [("body", N, False, False, True), ("logo", N, False, False, True)]
    logo_fails = [("body", Y, False, True, True), ("logo", N, False, False, True)]
    answers = [body_fails] * 20 + [both_fail] * 10 + [logo_fails] * 10
    model = fit_target_model([pair(10 + i, "neg_same", [view(0, a)]) for i, a in enumerate(answers)])
    assert set(model.kind_fails_rates) == {"main_colour", "logo"}  # 40 claims of each kind
    assert model.kind_fails_rates["main_colour"] > model.kind_fails_rates["logo"]
    assert 0.1 < model.claim_fails_rate < 0.9, model.claim_fails_rate


def test_visibility_rows_count_where_a_claim_missed_from_one_side_shows() -> None:
    rows = visibility_rows(PAIRS)
    assert (
        rows[("logo", "sided", "far", "any")].views == 4
        and rows[("logo", "sided", "far", "any")].visible == 2
    )
    seen_from_the_back = rows[("logo", "sided", "far", "180")]  # pair 0: missed at sector 0, seen at 3
    assert (seen_from_the_back.visible, seen_from_the_back.views) == (1, 1)
    assert not any(key[0] == "category" for key in rows)


def test_a_survey_round_trips_through_its_json() -> None:
    for item in PAIRS:
        assert pair_from_json(pair_to_json(item)) == item
