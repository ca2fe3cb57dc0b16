"""Next-best-view by expected change of the verdict: look where what is still uncertain can be settled.

For every unvisited sector k and every claim a, the strategy estimates

    gain(a, k) = P(a visible from k) · P(a decisive answer | the backend, a's kind)
                 · [P(a holds) · |P_T(after a Yes) − P_T| + P(a fails) · |P_T(after a No) − P_T|]

where P_T is the probability that the object is the described one (:mod:`.evidence`), the Yes / No evidence
is what an answer of a's kind carries for this backend (:class:`~.evidence.ReliabilityTable`), P(a holds) is
a's own posterior, and P(a visible from k) comes from the visibility model (:mod:`.visibility`): a's claim
kind and view hint ("on the back"), the view type of k, and the angular distance from k to the nearest view
that answered a without a Yes or No (all views when a was settled somewhere). Claims that cannot move P_T
(settled, or already outweighed) contribute nothing, so the choice follows what can still change the
decision. The sector with the largest Σ_a gain(a, k) is asked for; ties, and an episode without evidence,
fall back to angular farthest-point sampling (:class:`~.nbv.FarthestNbv`), whose order also breaks ties.
Whether any move can still change the outcome at all is the stopping rule's question
(:meth:`~.evidential.EvidentialPolicy.reachable`), not this strategy's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aiv_dataset.vocabulary import SECTOR_COUNT, relative_direction

from .evidential import EvidenceLedger
from .nbv import DEFAULT_BASE_SEED, FarthestNbv, NbvChoice, NbvRequest
from .types import Decision
from .visibility import VisibilityModel, distance_bin

#: Degrees between neighbouring virtual sectors.
SECTOR_SPACING_DEG = 360.0 / SECTOR_COUNT
#: Gains below this are no reason to prefer one sector over another.
MIN_GAIN = 1e-9


def sector_distance_deg(a: int, b: int) -> float:
    steps = abs(a - b) % SECTOR_COUNT
    return SECTOR_SPACING_DEG * min(steps, SECTOR_COUNT - steps)


class UncertaintyNbv:
    """Pick the sector whose view is expected to move the verdict's probability most."""

    name: ClassVar[str] = "uncertainty"

    def __init__(self, visibility: VisibilityModel, base_seed: int = DEFAULT_BASE_SEED) -> None:
        self.visibility = visibility
        self.fallback = FarthestNbv(base_seed)

    def choose(self, request: NbvRequest) -> NbvChoice:
        fallback = self.fallback.choose(request)
        ledger = request.evidence
        candidates = [k for k in range(SECTOR_COUNT) if k not in request.visited and k not in request.failed]
        if ledger is None or not candidates:
            return _annotated(fallback, "uncertainty: no evidence to weigh; " + fallback.reason)
        claims = _claim_stakes(ledger)
        gains = {k: self._gain(claims, k, _view_type(request, k)) for k in candidates}
        best = max(gains.values())
        if best < MIN_GAIN:
            return _annotated(
                fallback, "uncertainty: no view is expected to change the verdict; " + fallback.reason, gains
            )
        order = _fps_order(fallback, candidates)
        target = min((k for k in candidates if gains[k] >= best - MIN_GAIN), key=order.index)
        direction = relative_direction(request.current_sector, target)
        return NbvChoice(
            direction,
            target,
            f"uncertainty: {direction} (sector {target}) is expected to move the verdict's probability most "
            f"({gains[target]:.3f})",
            {"gains": {k: round(v, 6) for k, v in gains.items()}},
        )

    def _gain(self, claims: list[_ClaimStake], sector: int, view_type: str) -> float:
        total = 0.0
        for claim in claims:
            nearest = min(
                (sector_distance_deg(sector, other) for other in claim.unsettled_sectors), default=None
            )
            visible = self.visibility.probability(claim.kind, claim.hint, view_type, distance_bin(nearest))
            total += visible * claim.stake
        return total


@dataclass(frozen=True)
class _ClaimStake:
    """What settling one claim is worth, before asking where it can be seen."""

    kind: str
    hint: str
    stake: float  # P(decisive answer) · expected |change of the verdict's probability|
    unsettled_sectors: tuple[
        int, ...
    ]  # sectors that answered it without a Yes or No (empty: settled somewhere)


def _claim_stakes(ledger: EvidenceLedger) -> list[_ClaimStake]:
    summary = ledger.summary()
    base = summary.probability
    stakes = []
    for item, claim in zip(ledger.items, summary.claims, strict=True):
        holds_prior = ledger.model.claim_base_rate(item.kind)
        cell = ledger.table.cell(item.kind, "")
        decisive = cell.holds.yes + cell.holds.no + cell.fails.yes + cell.fails.no
        decisive_rate = decisive / cell.total if cell.total else 0.0
        odds = claim.odds
        holds = odds * holds_prior / (odds * holds_prior + (1.0 - holds_prior))
        after_yes = ledger.summary(
            {item.name: ledger.table.evidence(item.kind, "", Decision.YES)}
        ).probability
        after_no = ledger.summary({item.name: ledger.table.evidence(item.kind, "", Decision.NO)}).probability
        change = holds * abs(after_yes - base) + (1.0 - holds) * abs(after_no - base)
        unsettled: tuple[int, ...] = ()
        if not ledger.settled_anywhere(item.name):
            unsettled = tuple(
                int(pose[0]) for pose in ledger.unsettled_poses(item.name) if isinstance(pose, tuple) and pose
            )
        stakes.append(_ClaimStake(item.kind, item.hint, decisive_rate * change, unsettled))
    return stakes


def _view_type(request: NbvRequest, sector: int) -> str:
    """The view type the sector's first listed capture has (its served view), "any" when unknown."""
    if request.geometry is None:
        return "any"
    for capture in request.geometry.captures:
        if capture.virtual_sector == sector:
            return capture.view_type if capture.view_type in ("far", "near") else "any"
    return "any"


def _fps_order(fallback: NbvChoice, candidates: list[int]) -> list[int]:
    """Candidates in farthest-point preference (largest gap first, then lowest index)."""
    scores = fallback.debug.get("scores_deg")
    if not isinstance(scores, dict):
        return [fallback.target_index, *[k for k in candidates if k != fallback.target_index]]
    return sorted(candidates, key=lambda k: (-float(scores.get(k, 0.0)), k))


def _annotated(choice: NbvChoice, reason: str, gains: dict[int, float] | None = None) -> NbvChoice:
    debug = dict(choice.debug)
    if gains is not None:
        debug["gains"] = {k: round(v, 6) for k, v in gains.items()}
    return NbvChoice(choice.direction, choice.target_index, reason, debug)


__all__ = ["UncertaintyNbv", "sector_distance_deg"]
