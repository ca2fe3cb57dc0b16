"""A whole description (direct and merged query modes), judged by the checkable claims inside it.

The first clause names the object ("a light blue straw sun hat"), so its colours are main-colour claims;
later clauses are parts, patterns, text and logos, each judged by its own check (the single-claim table of
:mod:`aiv_checks.claim_checks`, not the registry, which lists this check). Any confident No ⇒ No; otherwise
Yes when most checkable claims are confirmed in this view; otherwise Unsure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from aiv_common.setting_fields import setting
from aiv_verifier.core.types import Decision
from aiv_verifier.description.phrases import is_main_colour_claim, split_description

from ..claim_checks import CLAIM_CHECKS
from ..outcome import CheckOutcome, unsure
from ..view import Claim, ViewAnalysis

#: Clause kinds a description is judged by (the rest, materials and shapes, say nothing without a model).
CLAUSE_KINDS: tuple[str, ...] = ("pattern", "text", "logo")


@dataclass(frozen=True)
class DescriptionSettings:
    """When a whole description is confirmed."""

    yes_fraction: float = setting(
        0.75,
        "share of the description's checkable claims that must be confirmed for Yes (a sibling differs in "
        "one or two claims, so one match says little)",
        minimum=0.0,
        maximum=1.0,
    )


def check(claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    clauses = split_description(claim.phrase)
    outcomes: list[tuple[str, CheckOutcome]] = []
    for index, clause in enumerate(clauses[:12]):
        part = Claim(clause)
        info = part.info
        if info.kind == "colour":
            kind = "main_colour" if index == 0 or is_main_colour_claim(info) else "part_colour"
        elif info.kind in CLAUSE_KINDS:
            kind = info.kind
        else:
            continue
        outcomes.append((clause, CLAIM_CHECKS[kind](part, analysis)))
    if not outcomes:
        return unsure("no colour, pattern or text claim recognised in the description")
    noes = [(c, k) for c, k in outcomes if k.answer is Decision.NO and k.certainty >= 0.45]
    yeses = [(c, k) for c, k in outcomes if k.answer is Decision.YES]
    if noes:
        clause, outcome = max(noes, key=lambda ck: ck[1].certainty)
        return CheckOutcome(Decision.NO, f'"{clause}": {outcome.reason}', outcome.certainty)
    needed = max(1, int(np.ceil(analysis.settings.description.yes_fraction * len(outcomes))))
    if len(yeses) >= needed:
        summary = "; ".join(f'"{c}" yes' for c, _ in yeses[:3])
        return CheckOutcome(
            Decision.YES,
            f"{len(yeses)} of {len(outcomes)} checkable claims match ({summary})",
            float(np.mean([k.certainty for _, k in yeses])) * len(yeses) / len(outcomes),
        )
    return unsure(f"{len(yeses)} of {len(outcomes)} checkable claims confirmed in this view; not enough")


__all__ = ["CLAUSE_KINDS", "DescriptionSettings", "check"]
