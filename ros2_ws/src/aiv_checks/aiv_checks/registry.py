"""Which check judges which claim, and which gates judge the object as a whole.

A claim's kind is a word of the project's vocabulary (:mod:`aiv_verifier.claims`); :data:`CHECKS` maps it
to the function that judges it: the single-claim checks of :mod:`aiv_checks.claim_checks` (which the
whole-description check reads too) and the description check. Kinds without a check get the honest Unsure of
:data:`UNJUDGED`. A gate answers No for every claim at once when the object cannot be the described one;
:data:`GATES` lists them in the order the verifier runs them, each at the stage where what it needs is known.
Adding or removing a claim check is one module in :mod:`aiv_checks.checks` and one line in
:mod:`aiv_checks.claim_checks`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from aiv_verifier.claims import DESCRIPTION_KIND
from aiv_verifier.core.types import Attribute

from .checks import category, description, identity, part_colour
from .claim_checks import CLAIM_CHECKS, Check
from .outcome import CheckOutcome, unsure
from .view import Claim, Scene, ViewAnalysis

#: Claim kind -> the check that judges it.
CHECKS: MappingProxyType[str, Check] = MappingProxyType({**CLAIM_CHECKS, DESCRIPTION_KIND: description.check})

#: Claim kinds no check judges, with the reason their answer is Unsure.
UNJUDGED: MappingProxyType[str, str] = MappingProxyType(
    {
        "no_logo": "absence of a logo cannot be confirmed without seeing every side",
        "material": "material claims need a learned model; not judged here",
        "shape": "shape claims need a learned model; not judged here",
        "count": "count claims need a learned model; not judged here",
    }
)
#: The Unsure reason of a phrase nothing could be read from.
UNREADABLE = "no colour, pattern or text recognised in the phrase"

#: Stages of a view at which gates run: the box is known; the object region too; its colours too.
STAGES: tuple[str, ...] = ("box", "region", "palette")


@dataclass(frozen=True)
class Gate:
    """A judgement of the whole object: ``judge`` gives the reason it is not the described one ("" if it may
    be); the verifier then answers No with ``certainty`` for every claim."""

    stage: str
    judge: Callable[[Scene], str]
    certainty: float


GATES: tuple[Gate, ...] = (
    Gate("box", category.size_gate, 0.8),
    Gate("region", category.silhouette_gate, 0.7),
    Gate("palette", identity.gate, 0.7),
)

FollowUp = Callable[
    [list[tuple[Attribute, CheckOutcome]], ViewAnalysis], list[tuple[Attribute, CheckOutcome]]
]

#: Steps over all outcomes of one view, after every claim was judged (a part colour's Yes needs the main
#: colour's backing).
FOLLOW_UPS: tuple[FollowUp, ...] = (part_colour.corroborate,)


def judge(kind: str, claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    """The outcome of the check registered for ``kind``, or the Unsure of a kind no check judges."""
    check = CHECKS.get(kind)
    if check is None:
        return unsure(UNJUDGED.get(kind, UNREADABLE))
    return check(claim, analysis)


__all__ = [
    "CHECKS",
    "FOLLOW_UPS",
    "GATES",
    "STAGES",
    "UNJUDGED",
    "UNREADABLE",
    "Check",
    "FollowUp",
    "Gate",
    "judge",
]
