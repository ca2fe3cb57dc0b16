"""The ``evidential`` fusion: per-claim opinions from calibrated evidence, one probability, YES / NO / UNDECIDED.

An episode keeps an :class:`EvidenceLedger`: what each pose said about each claim, as evidence weighted by how
reliable such an answer is (:class:`~.evidence.ReliabilityTable`: backend × claim kind × view quality) and by
the detection confidence of the view. A pose seen again replaces its own contribution instead of adding to
it, so looking twice at the same thing is not twice the evidence. Answers about the object as a whole (a
category check's "this is a visor, not a cap", filed under every claim alike) count once per view, as
evidence about the category.

:class:`EvidentialPolicy` turns the ledger into a decision with abstention: YES once the probability that
this is the described object reaches ``accept``, NO once it falls to ``reject``, otherwise look further;
UNDECIDED when the budget is spent, or earlier when no remaining view could still carry the probability
across a threshold. Everything a robot needs to act on the answer is in :meth:`EvidenceLedger.summary`.

The reference fusions (:mod:`.fusion`) are untouched and stay the benchmark default; this one is chosen by
name (``agent.fusion: evidential``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..claims import CATEGORY_KIND
from .crop import PixelBox
from .evidence import VACUOUS, Opinion, ReliabilityTable, TargetModel, evidence_odds
from .stopping import StopOutcome
from .types import Decision

#: View qualities an answer's reliability is measured per: no box (the whole image was judged), or the side
#: of the object's box in image pixels, sqrt(width × height), below 48, below 96, or larger.
FULL_IMAGE = "full_image"
VIEW_QUALITIES: tuple[str, ...] = (FULL_IMAGE, "small", "medium", "large")
_QUALITY_EDGES_PX: tuple[tuple[float, str], ...] = ((48.0, "small"), (96.0, "medium"))

#: Stop reasons of the evidential policy (joined to ``final`` like the reference's when both hold).
STOP_CONFIDENT = "confident"
STOP_UNRESOLVABLE = "unresolvable"
FORCED_YES_PROBABILITY = 0.5
"""The forced answer of a step (first-view accuracy, flips) is Yes when the probability is at least this."""


def view_weight(box: PixelBox | None, detection_confidence: float) -> float:
    """How much a view's evidence is weighted: a boxed view by its detection confidence; a view judged whole
    (no box) by its quality bin's own calibration alone, so 1 (the reference's c = 0.1 would count it twice)."""
    return float(detection_confidence) if box is not None else 1.0


def view_quality(box: PixelBox | None) -> str:
    """The quality bin of a view from what a robot has: the box the crop was cut from, or none."""
    if box is None:
        return FULL_IMAGE
    x0, y0, x1, y1 = box
    side = max(0.0, float(x1 - x0) * float(y1 - y0)) ** 0.5
    for edge, name in _QUALITY_EDGES_PX:
        if side < edge:
            return name
    return "large"


@dataclass(frozen=True)
class ClaimItem:
    """One claim the evidence is kept for: the query item's name, its claim kind, view hint and vertical hint
    (``top`` / ``bottom`` / ``none``: :func:`~.visibility.vertical_hint`, read only with height levels)."""

    name: str
    kind: str
    hint: str = "all_round"
    vertical: str = "none"


@dataclass(frozen=True)
class ClaimAnswer:
    """One view's answer about one claim; ``about_object``: it judged the whole object, not the claim."""

    name: str
    answer: Decision
    about_object: bool = False


@dataclass(frozen=True)
class ClaimEvidence:
    """A claim's fused evidence and what it means."""

    name: str
    kind: str
    support: float
    against: float
    judged: bool  # some view answered it Yes or No (Unsure answers leave it unjudged)

    @property
    def opinion(self) -> Opinion:
        return Opinion.from_evidence(self.support, self.against) if self.judged else VACUOUS

    @property
    def odds(self) -> float:
        return evidence_odds(self.support, self.against)

    def to_dict(self) -> dict[str, Any]:
        opinion = self.opinion
        return {
            "name": self.name,
            "kind": self.kind,
            "belief": opinion.belief,
            "disbelief": opinion.disbelief,
            "uncertainty": opinion.uncertainty,
            "judged": self.judged,
        }


CATEGORY_CLAIM = "__category__"


@dataclass(frozen=True)
class EvidenceSummary:
    """The state of an episode's evidence: the probability, each claim's opinion, what was never judged."""

    probability: float
    claims: tuple[ClaimEvidence, ...]
    category: ClaimEvidence

    @property
    def never_judged(self) -> tuple[str, ...]:
        return tuple(claim.name for claim in self.claims if not claim.judged)


class EvidenceLedger:
    """The evidence of one episode, one contribution per (pose, claim)."""

    def __init__(self, items: Sequence[ClaimItem], table: ReliabilityTable, model: TargetModel) -> None:
        names = [item.name for item in items]
        if len(set(names)) != len(names):
            raise ValueError(f"claim names must be unique, got {names}")
        self.items = tuple(items)
        self.table = table
        self.model = model
        self._kinds = {item.name: item.kind for item in items}
        # pose -> claim name -> (support, against, decisive)
        self._by_pose: dict[Hashable, dict[str, tuple[float, float, bool]]] = {}

    def record(
        self, pose: Hashable, answers: Sequence[ClaimAnswer], *, quality: str, weight: float = 1.0
    ) -> None:
        """File one view's answers under ``pose``, replacing what that pose said before."""
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"view weight must lie in [0, 1], got {weight}")
        entry: dict[str, tuple[float, float, bool]] = {}

        for answer in answers:
            if answer.about_object:
                continue
            if answer.name not in self._kinds:
                raise KeyError(f"unknown claim {answer.name!r}; tracked: {list(self._kinds)}")
            support, against = self.table.evidence(self._kinds[answer.name], quality, answer.answer, weight)
            entry[answer.name] = (support, against, answer.answer is not Decision.UNSURE)
        if any(answer.about_object for answer in answers):
            verdict = object_verdict(answers)
            support, against = self.table.evidence(CATEGORY_KIND, quality, verdict, weight)
            entry[CATEGORY_CLAIM] = (support, against, verdict is not Decision.UNSURE)
        self._by_pose[pose] = entry

    def unsettled_poses(self, name: str) -> tuple[Hashable, ...]:
        """Poses whose view answered ``name`` without a Yes or No (it was probably not visible there)."""
        return tuple(pose for pose, entry in self._by_pose.items() if name in entry and not entry[name][2])

    def settled_anywhere(self, name: str) -> bool:
        return any(name in entry and entry[name][2] for entry in self._by_pose.values())

    def _totals(self, name: str) -> tuple[float, float, bool]:
        support = against = 0.0
        judged = False
        for entry in self._by_pose.values():
            if name in entry:
                r, s, decisive = entry[name]
                support, against, judged = support + r, against + s, judged or decisive
        return support, against, judged

    def claim(self, name: str) -> ClaimEvidence:
        support, against, judged = self._totals(name)
        return ClaimEvidence(name, self._kinds.get(name, CATEGORY_KIND), support, against, judged)

    def summary(self, extra: Mapping[str, tuple[float, float]] | None = None) -> EvidenceSummary:
        """The current evidence; ``extra`` adds hypothetical (support, against) per claim (what-if)."""
        more = extra or {}
        claims = tuple(_plus(self.claim(item.name), more.get(item.name)) for item in self.items)
        category = _plus(self.claim(CATEGORY_CLAIM), more.get(CATEGORY_CLAIM))
        probability = self.model.probability(
            [claim.odds for claim in claims], category.odds, [claim.kind for claim in claims]
        )
        return EvidenceSummary(probability, claims, category)

    def probability(self) -> float:
        return self.summary().probability


def _plus(claim: ClaimEvidence, more: tuple[float, float] | None) -> ClaimEvidence:
    if more is None:
        return claim
    support, against = more
    judged = claim.judged or support + against > 0
    return ClaimEvidence(claim.name, claim.kind, claim.support + support, claim.against + against, judged)


def object_verdict(answers: Sequence[ClaimAnswer]) -> Decision:
    """A view's one answer about the object as a whole, from its answers marked ``about_object``: No if any
    says No (another category), else Yes if any says Yes, else Unsure (the view made no such judgement)."""
    decisions = {answer.answer for answer in answers if answer.about_object}
    if Decision.NO in decisions:
        return Decision.NO
    return Decision.YES if Decision.YES in decisions else Decision.UNSURE


@dataclass(frozen=True)
class Thresholds:
    """When to commit. ``accept``: YES once P ≥ accept (1.0 = never); ``reject``: NO once P ≤ reject (0.0 =
    never); accept == reject: always decide at once. With a calibrated probability, accept = 0.95 means about
    5 % of YES answers go to the wrong object (the false-accept rate targeted), reject = 0.05 that about 5 % of
    NO answers turn the right object away."""

    accept: float = 0.95
    reject: float = 0.05
    keep_looking_for_no: bool = False

    def __post_init__(self) -> None:
        if not 0.0 < self.accept <= 1.0:
            raise ValueError(f"accept probability must lie in (0, 1], got {self.accept}")
        if not 0.0 <= self.reject < 1.0:
            raise ValueError(f"reject probability must lie in [0, 1), got {self.reject}")
        if self.reject > self.accept:
            raise ValueError(
                f"reject probability {self.reject} must not exceed accept probability {self.accept}"
            )

    def decision(self, probability: float) -> Decision:
        """YES / NO when ``probability`` crosses a threshold, else Unsure (look further)."""
        if self.accept == self.reject:
            return Decision.YES if probability >= self.accept else Decision.NO
        if self.accept < 1.0 and probability >= self.accept:
            return Decision.YES
        if self.reject > 0.0 and probability <= self.reject:
            return Decision.NO
        return Decision.UNSURE


@dataclass
class EvidentialPolicy:
    """Fusion and stopping of the evidential mode for one backend's calibration; shared by all sessions."""

    name: ClassVar[str] = "evidential"

    table: ReliabilityTable
    model: TargetModel
    thresholds: Thresholds = field(default_factory=Thresholds)

    def new_ledger(self, items: Sequence[ClaimItem]) -> EvidenceLedger:
        return EvidenceLedger(items, self.table, self.model)

    def decide(self, ledger: EvidenceLedger, step_count: int, max_steps: int) -> StopOutcome:
        """Stop with YES / NO at a threshold; UNDECIDED (Unsure) at the budget or when no view can help."""
        summary = ledger.summary()
        probability = summary.probability
        forced = Decision.YES if probability >= FORCED_YES_PROBABILITY else Decision.NO
        remaining = max_steps - step_count - 1
        debug: dict[str, Any] = {
            "fusion": self.name,
            "probability": probability,
            "accept": self.thresholds.accept,
            "reject": self.thresholds.reject,
            "remaining_steps": remaining,
            "never_judged": list(summary.never_judged),
        }
        decision = self.thresholds.decision(probability)
        if decision is not Decision.UNSURE:
            reason = STOP_CONFIDENT + ("+final" if remaining <= 0 else "")
            return StopOutcome(True, reason, decision, forced, debug)
        if remaining <= 0:
            return StopOutcome(True, "final", Decision.UNSURE, forced, debug)
        best, worst = self.reachable(ledger, remaining)
        debug["reachable"] = [worst, best]
        can_accept = self.thresholds.accept < 1.0 and best >= self.thresholds.accept
        can_reject = self.thresholds.reject > 0.0 and worst <= self.thresholds.reject
        if not can_accept and (not can_reject or not self.thresholds.keep_looking_for_no):
            return StopOutcome(True, STOP_UNRESOLVABLE, Decision.UNSURE, forced, debug)
        return StopOutcome(False, "continue", Decision.UNSURE, forced, debug)

    def reachable(self, ledger: EvidenceLedger, views: int) -> tuple[float, float]:
        """The highest and lowest probability ``views`` more views could bring, each answering every claim
        with the strongest Yes (or No) its kind can carry."""
        yes: dict[str, tuple[float, float]] = {}
        no: dict[str, tuple[float, float]] = {}
        for item in ledger.items:
            support, _ = self.table.strongest(item.kind, Decision.YES)
            _, against = self.table.strongest(item.kind, Decision.NO)
            yes[item.name] = (support * views, 0.0)
            no[item.name] = (0.0, against * views)
        _, category_no = self.table.strongest(CATEGORY_KIND, Decision.NO)
        no[CATEGORY_CLAIM] = (0.0, category_no * views)
        return ledger.summary(yes).probability, ledger.summary(no).probability


__all__ = [
    "CATEGORY_CLAIM",
    "FORCED_YES_PROBABILITY",
    "FULL_IMAGE",
    "STOP_CONFIDENT",
    "STOP_UNRESOLVABLE",
    "VIEW_QUALITIES",
    "ClaimAnswer",
    "ClaimEvidence",
    "ClaimItem",
    "EvidenceLedger",
    "EvidenceSummary",
    "EvidentialPolicy",
    "Thresholds",
    "object_verdict",
    "view_quality",
    "view_weight",
]
