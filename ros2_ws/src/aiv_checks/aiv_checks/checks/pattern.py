"""Pattern: does the object show the claimed print ("blue and white stripes", "polka dots")?

Yes when the claimed colours (each, then all together; the object's main colours when none is named) form the
claimed structure clearly enough, unless a claimed colour is missing or a neighbouring shade forms the same
pattern more strongly. No when a print that every side shows is contradicted: another clear pattern in other
colours while the claimed colours are absent, or one of its colours clearly missing from the view.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from aiv_common.setting_fields import section, setting
from aiv_verifier.core.types import Decision
from aiv_verifier.description.phrases import MAIN_NOUNS, pattern_faces_every_side

from ..measure import colour as colour_mod
from ..measure.colour import claimed_names
from ..measure.structures import COMPATIBLE_KINDS, StructureSettings, find_structures
from ..outcome import CheckOutcome, unsure
from ..view import Claim, ViewAnalysis


@dataclass(frozen=True)
class PatternSettings:
    """When a claimed pattern is confirmed or contradicted."""

    min_pixels: float = setting(
        300.0,
        "patterns (and plain-surface claims) need an object of at least this many camera pixels, room for "
        "several repeats",
        minimum=0.0,
    )
    yes_score: float = setting(
        0.3, "structure score (0-1) of the claimed pattern for Yes", minimum=0.0, maximum=1.0
    )
    no_score: float = setting(
        0.6,
        "structure score of a different pattern in other colours (each covering a tenth of the object) for "
        "No, given only for a whole-object print whose colours are absent",
        minimum=0.0,
        maximum=1.0,
    )
    absent_is_no: bool = setting(
        True,
        "a print over the whole object, or over a part every side shows, is No when one of its (not pale) "
        "colours is missing from the view",
    )
    geometry: StructureSettings = section(StructureSettings, "the shapes of the marks that make a pattern")


def check(claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    info = claim.info
    p = analysis.settings.pattern
    region = analysis.region
    if region.source_pixels < p.min_pixels:
        return unsure(f"object too small (~{region.source_pixels:.0f} px) to resolve a pattern")
    labels, mask = region.labels, region.interior
    claimed_kind = info.pattern
    compatible = COMPATIBLE_KINDS.get(claimed_kind, frozenset({claimed_kind}))
    claimed_sets = [claimed_names(t.name, t.modifier) for t in info.colours]
    claimed_flat = {n for names in claimed_sets for n in names}
    claimed_desc = " and ".join(t.describe() for t in info.colours)
    label = f"{claimed_desc} {claimed_kind}".strip()

    def colour_mask(names: set[str]) -> np.ndarray:
        return np.isin(labels, [colour_mod.colour_index(n) for n in names])

    best_claimed = None
    if claimed_sets:
        # Each claimed colour, then all of them together ("blue and white stripes").
        candidates = [set(names) for names in claimed_sets]
        if len(candidates) > 1:
            candidates.append(claimed_flat)

        for names in candidates:
            finding = find_structures(colour_mask(names), mask, p.geometry)
            score = max((finding.scores[k] for k in compatible), default=0.0)
            if best_claimed is None or score > best_claimed[0]:
                best_claimed = (score, finding, names)
    else:
        # "striped" with no colour: look at the object's three main colours.
        for name, _ in analysis.stats.ranked(3):
            finding = find_structures(colour_mask({name}), mask, p.geometry)
            score = max((finding.scores[k] for k in compatible), default=0.0)
            if best_claimed is None or score > best_claimed[0]:
                best_claimed = (score, finding, {name})
    if best_claimed is not None and best_claimed[0] >= p.yes_score:
        score, finding, names = best_claimed
        # "Blue and white stripes" are stripes of both colours: white bands alone (a mug's rim in a real
        # photo) are no such print when there is no blue on the object at all.
        uncoloured = [t for t in info.colours if len(info.colours) > 1 and not analysis.colour_found(t)[0]]
        if uncoloured:
            return unsure(
                f"{label.strip()}: the {claimed_kind} are there, but no {uncoloured[0].describe()} is on the object"
            )
        # Siblings often differ only in a neighbouring shade (blue vs light-blue stripes): when a
        # neighbour colour forms the same pattern more strongly and covers much more of the object,
        # the pattern is that neighbour's, not the claimed colour's.
        for neighbour in sorted(set().union(*(colour_mod.NEIGHBOURS[n] for n in names)) - claimed_flat):
            rival = find_structures(colour_mask({neighbour}), mask, p.geometry)
            rival_score = max((rival.scores[k] for k in compatible), default=0.0)
            if rival_score > score and rival.colour_share > 2.0 * finding.colour_share:
                return unsure(
                    f"the {claimed_kind} look {neighbour} ({rival.colour_share:.0%}) rather than "
                    f"{claimed_desc} ({finding.colour_share:.0%})"
                )
        return CheckOutcome(
            Decision.YES,
            f"{label} found ({finding.pieces} pieces, {finding.colour_share:.0%} of the object)",
            min(0.9, 0.4 + score / 2),
        )
    # Is there a clear pattern of another kind, in colours other than the claimed ones?
    other = next(
        (
            (kind, score, name)
            for kind, score, name, _ in analysis.clear_structures(p.geometry, claimed_flat)
            if score >= p.no_score and kind not in compatible
        ),
        None,
    )
    claimed_support = sum(
        analysis.stats.share(n) for n in set().union(*(colour_mod.NEIGHBOURS[n] | {n} for n in claimed_flat))
    )
    # A different pattern contradicts only a claim about the object as a whole that every side shows
    # (a print on the front cover faces away from half the views, where pages or a spine show other
    # stripes), and only when the claimed colours (and their shading neighbours) are absent: a
    # patterned part may be out of view.
    irregular = claimed_kind in ("floral", "camouflage", "plaid")  # may look like anything locally
    if (
        other is not None
        and info.is_main
        and pattern_faces_every_side(info)
        and not irregular
        and (not claimed_flat or claimed_support < 0.01)
    ):
        kind, score, name = other
        return CheckOutcome(
            Decision.NO,
            f"object shows {name} {kind} instead" + (f"; no {claimed_desc} on it" if claimed_desc else ""),
            min(0.8, 0.3 + score / 2),
        )
    absent = None
    if p.absent_is_no and pattern_faces_every_side(info):
        # Pale pattern colours (cream checks, light blue dots) blend into the ground at a distance:
        # their absence from a view is no evidence.
        vivid = [
            (t, analysis.claim_shares(t)[0])
            for t in info.colours
            if not set(claimed_names(t.name, t.modifier)) & colour_mod.PALE
        ]
        absent = analysis.absent_colour(info, vivid, p.min_pixels)
    if absent is not None:
        where = f"the {info.part}" if info.part and info.part not in MAIN_NOUNS else "the whole object"
        return CheckOutcome(
            Decision.NO,
            f"no {absent.describe()} anywhere on the object, and {claimed_kind} over {where} would show "
            "from every side",
            0.6,
        )
    claimed_share = sum(analysis.stats.share(n) for n in claimed_flat)
    if claimed_flat and claimed_share < 0.01:
        return unsure(f"no {claimed_desc} visible; the patterned part may be hidden")
    return unsure(f"no clear {label} in this view")


__all__ = ["PatternSettings", "check"]
