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
fall back to angular farthest-point sampling (:class:`~.nbv_geometric.FarthestNbv`), whose order also breaks ties.
Whether any move can still change the outcome at all is the stopping rule's question
(:meth:`~.evidential.EvidentialPolicy.reachable`), not this strategy's.

With camera height levels the candidates are the unused views one move away (:mod:`.view_sphere`), and
P(a visible from a view) comes from the visibility model's rows by level (:meth:`~.visibility.VisibilityModel.
level_probability`): a's kind and vertical hint (a lid shows from above, a sole from below), the view's level
and view type, and the distance to the nearest view that answered a without a Yes or No (``same`` when that is
the same sector at another level). Ties and an episode without evidence go to farthest-point sampling on the
view sphere. A one-level episode takes exactly the ring code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aiv_dataset.vocabulary import SECTOR_COUNT, relative_direction

from .evidential import EvidenceLedger
from .nbv_geometric import FarthestNbv
from .nbv_types import DEFAULT_BASE_SEED, NbvChoice, NbvRequest
from .types import Decision
from .view_sphere import View, move_to
from .visibility import VisibilityModel, distance_bin, level_distance_bin

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
        if request.multi_level:
            return self._choose_view(request)
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

    def _choose_view(self, request: NbvRequest) -> NbvChoice:
        fallback = self.fallback.choose(request)
        ledger = request.evidence
        candidates = request.candidate_views()
        if ledger is None or not candidates:
            return _annotated(fallback, "uncertainty: no evidence to weigh; " + fallback.reason)
        claims = _claim_stakes(ledger)
        gains = {view: self._view_gain(claims, view, _view_type_at(request, view)) for view in candidates}
        shown = {f"{view[0]}/{view[1]}": round(value, 6) for view, value in gains.items()}
        best = max(gains.values())
        if best < MIN_GAIN:
            debug = {**fallback.debug, "gains": shown}
            return NbvChoice(
                fallback.direction,
                fallback.target_index,
                "uncertainty: no view is expected to change the verdict; " + fallback.reason,
                debug,
                fallback.target_level,
            )
        order = _fps_view_order(fallback, candidates)
        target = min((view for view in candidates if gains[view] >= best - MIN_GAIN), key=order.index)
        direction = move_to(request.current_view, target)
        return NbvChoice(
            direction,
            target[0],
            f"uncertainty: {direction} (sector {target[0]}, level {target[1]}) is expected to move the verdict's "
            f"probability most ({gains[target]:.3f})",
            {"gains": shown},
            target[1],
        )

    def _view_gain(self, claims: list[_ClaimStake], view: View, view_type: str) -> float:
        sector, level = view
        total = 0.0
        for claim in claims:
            others = claim.unsettled_views
            nearest_view = min(
                others,
                key=lambda other: (sector_distance_deg(sector, other[0]), other[0] != sector),
                default=None,
            )
            if nearest_view is None:
                distance, eye_distance = "any", "any"
            else:
                degrees = sector_distance_deg(sector, nearest_view[0])
                same = nearest_view[0] == sector
                distance, eye_distance = level_distance_bin(degrees, same), distance_bin(degrees)
            visible = self.visibility.level_probability(
                claim.kind, claim.hint, claim.vertical, level, view_type, distance, eye_distance
            )
            total += visible * claim.stake
        return total

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
    vertical: str = "none"
    unsettled_views: tuple[View, ...] = ()  # the same as (sector, level) views


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
        views: tuple[View, ...] = ()
        if not ledger.settled_anywhere(item.name):
            poses = [pose for pose in ledger.unsettled_poses(item.name) if isinstance(pose, tuple) and pose]
            unsettled = tuple(int(pose[0]) for pose in poses)
            views = tuple((int(pose[0]), pose_level(pose)) for pose in poses)
        stakes.append(
            _ClaimStake(item.kind, item.hint, decisive_rate * change, unsettled, item.vertical, views)
        )
    return stakes


def pose_level(pose: tuple[object, ...]) -> int:
    """The height level of an evidence pose: ``(sector, capture tag)`` is eye level, ``(sector, capture tag,
    level)`` names its level (the session files views of other levels so)."""
    if len(pose) >= 3 and isinstance(pose[2], int) and not isinstance(pose[2], bool):
        return pose[2]
    return 0


def _view_type_at(request: NbvRequest, view: View) -> str:
    """The view type of the view's first listed capture at its level, "any" when unknown."""
    if request.geometry is None:
        return "any"
    for capture in request.geometry.captures:
        if (capture.virtual_sector, capture.level) == view:
            return capture.view_type if capture.view_type in ("far", "near") else "any"
    return "any"


def _fps_view_order(fallback: NbvChoice, candidates: list[View]) -> list[View]:
    """Candidate views in farthest-point preference on the view sphere (largest gap first, then list order)."""
    scores = fallback.debug.get("scores_deg")
    if not isinstance(scores, dict):
        first = fallback.target_view
        return [first, *[view for view in candidates if view != first]] if first in candidates else candidates
    return sorted(
        candidates, key=lambda view: (-float(scores.get(f"{view[0]}/{view[1]}", 0.0)), candidates.index(view))
    )


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


__all__ = ["UncertaintyNbv", "pose_level", "sector_distance_deg"]
