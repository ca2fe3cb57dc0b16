"""Plain surface: is a "no pattern" claim contradicted by a clear pattern over the object?

Only for the whole object (a pattern seen elsewhere says nothing about an unlocated part), on a solid view
large enough to resolve a pattern. Not seeing one is no Yes: the print may be on another side. Off by
default (``no_score`` 0): plain objects have stripes of their own (a keyboard's rows, a book's pages).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_common.setting_fields import setting
from aiv_verifier.core.types import Decision
from aiv_verifier.description.phrases import MAIN_NOUNS, pattern_faces_every_side

from ..outcome import CheckOutcome, unsure
from ..view import Claim, ViewAnalysis


@dataclass(frozen=True)
class PlainSettings:
    """When a "no pattern" claim is contradicted (the object size and mark shapes come from ``pattern``)."""

    no_score: float = setting(
        0.0,
        'a whole-object "no pattern" claim is No when one of the object\'s main colours forms dots or '
        "stripes at least this clearly (0 = off)",
        minimum=0.0,
        maximum=1.0,
    )
    min_pieces: int = setting(5, "... in at least this many pieces", minimum=0)


def check(claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    info = claim.info
    p = analysis.settings.plain
    pattern = analysis.settings.pattern
    region = analysis.region
    if p.no_score <= 0:
        return unsure("plain-surface claims are not judged (plain_no_score is 0)")
    if info.part and info.part not in MAIN_NOUNS:
        return unsure(f"the {info.part} cannot be located; a pattern elsewhere says nothing about it")
    if not pattern_faces_every_side(info):
        return unsure("the claim is about one side only")
    if region.source_pixels < pattern.min_pixels or not analysis.solid():
        return unsure(f"object too small or edge-on (~{region.source_pixels:.0f} px) to resolve a pattern")
    # Checks are left out: JPEG's 8x8 blocks and a ball's seams tile plain surfaces with corner-touching
    # squares that score as checks (seen on plain positives under the sweep's JPEG perturbation).
    structures = [
        row
        for row in analysis.clear_structures(pattern.geometry, kinds=("dots", "stripes"))
        if row[3] >= p.min_pieces
    ]
    if structures and structures[0][1] >= p.no_score:
        kind, score, name, pieces = structures[0]
        return CheckOutcome(
            Decision.NO,
            f"object shows {name} {kind} ({pieces} pieces, score {score:.2f}): not plain",
            min(0.8, 0.3 + score / 2),
        )
    best = f"; strongest: {structures[0][2]} {structures[0][0]} {structures[0][1]:.2f}" if structures else ""
    return unsure(f"no clear pattern in this view{best}; another side may still show one")


__all__ = ["PlainSettings", "check"]
