"""What one check concludes about one claim in one view, before it becomes an ``AttributeAnswer``.

Every check returns a :class:`CheckOutcome`; the verifier turns it into the answer the agent sees. Keeping the
outcome apart from the answer lets a later step (the part-colour corroboration) withdraw a Yes without the
check knowing about it.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_verifier.claims import OBJECT_CLAIM_KEY, OBJECT_CLAIM_VALUE
from aiv_verifier.core.types import Decision


@dataclass(frozen=True)
class CheckOutcome:
    """One check's answer, the reason a person can check against the image, and how sure it is."""

    answer: Decision
    reason: str
    certainty: float
    presence_only: bool = False  # a Yes that only found the colour somewhere on the object


def unsure(reason: str) -> CheckOutcome:
    """An Unsure with its reason (certainty 0)."""
    return CheckOutcome(Decision.UNSURE, reason, 0.0)


#: ``AttributeAnswer.debug`` of a No about the object as a whole (another category, another palette), given to
#: every attribute alike: it says "not the described object", not "this attribute differs", and an audit judges
#: it as such (a distractor sharing the attribute is still not the described object).
OBJECT_CLAIM: dict[str, object] = {OBJECT_CLAIM_KEY: OBJECT_CLAIM_VALUE}

__all__ = ["OBJECT_CLAIM", "CheckOutcome", "unsure"]
