"""The uncertainty next-best-view and its visibility model, on hand-made evidence and counts."""

from __future__ import annotations

import pytest
from aiv_verifier.core.evidence import AnswerCounts, ReliabilityCell, ReliabilityTable, TargetModel
from aiv_verifier.core.evidential import ClaimAnswer, ClaimItem, EvidenceLedger
from aiv_verifier.core.nbv import NbvRequest, make_nbv
from aiv_verifier.core.nbv_uncertainty import UncertaintyNbv, sector_distance_deg
from aiv_verifier.core.types import Decision
from aiv_verifier.core.visibility import VisibilityCount, VisibilityModel, distance_bin

Y, N, U = Decision.YES, Decision.NO, Decision.UNSURE
RELIABLE = ReliabilityCell(AnswerCounts(900, 10, 90), AnswerCounts(10, 900, 90))
TABLE = ReliabilityTable({(kind, "large"): RELIABLE for kind in ("main_colour", "logo", "category")})
MODEL = TargetModel(1 / 3, 0.5, 0.0, 0.2)


def visibility(rates: dict[tuple[str, str, str, str], tuple[int, int]]) -> VisibilityModel:
    return VisibilityModel({key: VisibilityCount(*value) for key, value in rates.items()})


#: A logo "on the back" shows from the far side of a view that missed it, hardly from next door; a body
#: colour shows from everywhere.
SIDED_LOGO = visibility(
    {
        ("logo", "sided", "far", "any"): (40, 100),
        ("logo", "sided", "far", "60"): (5, 100),
        ("logo", "sided", "far", "120"): (30, 100),
        ("logo", "sided", "far", "180"): (90, 100),
        ("main_colour", "all_round", "far", "any"): (95, 100),
        ("main_colour", "all_round", "far", "60"): (95, 100),
        ("main_colour", "all_round", "far", "120"): (95, 100),
        ("main_colour", "all_round", "far", "180"): (95, 100),
    }
)


def ledger() -> EvidenceLedger:
    items = [ClaimItem("body", "main_colour"), ClaimItem("logo", "logo", "sided")]
    return EvidenceLedger(items, TABLE, MODEL)


def request(
    evidence: EvidenceLedger, current: int = 0, visited: frozenset[int] = frozenset({0})
) -> NbvRequest:
    return NbvRequest(episode_key="ep", step=0, current_sector=current, visited=visited, evidence=evidence)


def test_a_sided_claim_missed_from_here_is_looked_for_on_the_far_side() -> None:
    evidence = ledger()
    evidence.record((0, ""), [ClaimAnswer("body", Y), ClaimAnswer("logo", U)], quality="large")
    choice = UncertaintyNbv(SIDED_LOGO).choose(request(evidence))
    assert choice.target_index == 3 and choice.direction == "back"
    gains = choice.debug["gains"]
    assert gains[3] > gains[2] > gains[1] and gains[3] > gains[4] > gains[5]


def test_without_anything_left_to_settle_it_falls_back_to_farthest_point_sampling() -> None:
    evidence = ledger()
    for sector in (0, 1):
        evidence.record((sector, ""), [ClaimAnswer("body", N), ClaimAnswer("logo", N)], quality="large")
    evidence.record((2, ""), [ClaimAnswer("body", N), ClaimAnswer("logo", N)], quality="large", weight=1.0)
    strategy = UncertaintyNbv(SIDED_LOGO)
    visited = frozenset({0, 1, 2})
    choice = strategy.choose(request(evidence, current=2, visited=visited))
    fps = make_nbv("farthest").choose(request(evidence, current=2, visited=visited))
    assert evidence.probability() < 1e-3
    assert choice.target_index == fps.target_index


def test_no_evidence_at_all_is_farthest_point_sampling() -> None:
    choice = UncertaintyNbv(SIDED_LOGO).choose(NbvRequest(episode_key="ep", step=0, current_sector=0,
                                                          visited=frozenset({0})))  # fmt: skip
    assert choice.reason.startswith("uncertainty: no evidence to weigh")


def test_the_visibility_model_falls_back_to_coarser_rows_and_smooths() -> None:
    model = SIDED_LOGO
    assert model.probability("logo", "sided", "far", "180") == pytest.approx(91 / 102)
    # too few views of near ones: the view type is pooled (only far counts exist)
    assert model.probability("logo", "sided", "near", "180") == pytest.approx(91 / 102)
    # an unknown kind: every kind of that hint and distance
    assert model.probability("text", "sided", "far", "180") == pytest.approx(91 / 102)
    empty = VisibilityModel({})
    assert empty.probability("logo", "sided", "far", "60") == 0.5
    with pytest.raises(ValueError):
        VisibilityCount(5, 3)


def test_distances_bin_to_the_nearest_sector_step() -> None:
    assert [distance_bin(d) for d in (None, 30.0, 60.0, 100.0, 120.0, 179.0, 200.0, 300.0)] == [
        "any", "60", "60", "120", "120", "180", "180", "60"
    ]  # fmt: skip
    assert [sector_distance_deg(0, k) for k in range(6)] == [0.0, 60.0, 120.0, 180.0, 120.0, 60.0]
