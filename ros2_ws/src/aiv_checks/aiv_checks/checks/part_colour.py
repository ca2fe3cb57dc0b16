"""Part colour: does the object show the colour a part is claimed to have ("a brown brim", "white laces")?

Parts are not located, so a part colour is judged by *presence* on the object: present ⇒ Yes (withdrawn by
:func:`corroborate` when the query's main colour is not on the object either). Missing ⇒ No only when it says
something:

* the part shows from every side (a brim, laces; not a screen, a handle or anything "on the front"), is not
  metal, and nothing on the object could be that colour under shade or a cast; or
* the object shows a clear hue that no description names: the part is most likely there in another colour
  (a same-category distractor whose strap or trim differs).

Otherwise Unsure: the part may face away.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aiv_common.setting_fields import setting
from aiv_verifier.claims import claim_kind
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.description.phrases import (
    ColourTerm,
    PhraseInfo,
    analyse_phrase,
    is_metallic,
    part_faces_every_side,
)

from ..measure.colour import claimed_names
from ..outcome import CheckOutcome, unsure
from ..view import Claim, ViewAnalysis

#: What must back a part colour found somewhere on the object (see :func:`corroborate`).
CORROBORATIONS: tuple[str, ...] = ("none", "main_found", "main_match")


@dataclass(frozen=True)
class PartColourSettings:
    """When a claimed part colour is confirmed, withdrawn or contradicted."""

    yes_corroboration: str = setting(
        "main_found",
        "what must back a part colour found somewhere on the object: none; main_found (the query's main "
        "colour is on the object too); main_match (the main-colour claim answered Yes)",
        choices=CORROBORATIONS,
    )
    absent_is_no: bool = setting(
        True,
        "a part colour missing from the whole view answers No, for a part that every side of the object shows",
    )
    absent_min_pixels: float = setting(
        150.0, "that No needs an object of at least this many camera pixels", minimum=0.0
    )
    unnamed_hue_share: float = setting(
        0.01,
        "a missing part colour is No when at least this share of the object is in clear hues no description "
        "names (the part in another colour); 0 = off",
        minimum=0.0,
        maximum=1.0,
    )
    unnamed_min_chroma: float = setting(
        30.0, "... counting only pixels at least this colourful (CIELAB chroma)", minimum=0.0
    )

    def __post_init__(self) -> None:
        if self.yes_corroboration not in CORROBORATIONS:
            raise ValueError(
                f"part_colour.yes_corroboration must be one of {list(CORROBORATIONS)}, "
                f"got {self.yes_corroboration!r}"
            )


def check(claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    info = claim.info
    p = analysis.settings.part_colour
    part = info.part or "part"
    found: list[tuple[ColourTerm, float]] = []
    missing: list[tuple[ColourTerm, float]] = []
    for term in info.colours:
        present, exact = analysis.colour_found(term)
        (found if present else missing).append((term, exact))
    claimed = " and ".join(t.describe() for t in info.colours)
    if not missing:
        share = min(s for _, s in found)
        return CheckOutcome(
            Decision.YES,
            f"{claimed} present on the object ({share:.0%}); taken as the {part}",
            min(0.8, 0.4 + 2 * share),
            presence_only=True,
        )
    absent = None
    if p.absent_is_no and part_faces_every_side(info) and not is_metallic(info):
        absent = analysis.absent_colour(info, missing, p.absent_min_pixels)
    if absent is not None:
        return CheckOutcome(
            Decision.NO,
            f"no {absent.describe()} anywhere on the object, and every side shows the {part}",
            0.6,
        )
    recoloured = _recoloured_part(info, missing, analysis)
    if recoloured is not None:
        return recoloured
    term, exact = missing[0]
    evidence = analysis.evidence(claimed_names(term.name, term.modifier))
    return unsure(
        f"no {term.describe()} found ({exact:.1%} named, {evidence.compatible:.1%} could be under "
        f"shade, {analysis.unexplained_share(p.unnamed_min_chroma):.1%} in unnamed hues); the {part} may "
        "be hidden in this view"
    )


def _recoloured_part(
    info: PhraseInfo, missing: Sequence[tuple[ColourTerm, float]], analysis: ViewAnalysis
) -> CheckOutcome | None:
    """No for a part colour that is missing while the object shows a hue no description names.

    A part the view does not show leaves its colour missing too, so absence alone says nothing about a
    one-sided part (a snout, a handle, a front pocket); but the described object has no colours its
    descriptions never name, so clearly coloured pixels of such a hue are most likely the part in another
    colour. Judged only on a view that can show absence and when the claimed colour is not named on the object
    at all; not for metal parts nor for a see-through object such as glasses (both show their surroundings).
    """
    p = analysis.settings.part_colour
    if (
        p.unnamed_hue_share <= 0
        or is_metallic(info)
        or analysis.open_frame
        or not analysis.can_show_absence(info, p.absent_min_pixels)
    ):
        return None
    unnamed = analysis.unexplained_share(p.unnamed_min_chroma)
    absent = analysis.unnamed_hued(missing)
    if unnamed < p.unnamed_hue_share or not absent:
        return None
    return CheckOutcome(
        Decision.NO,
        f"no {absent[0].describe()} on the object, which shows {unnamed:.1%} in hues no description "
        f"names: the {info.part or 'part'} looks another colour",
        0.6,
    )


def _is_main_colour_attribute(attribute: Attribute) -> bool:
    return (
        attribute.type == "color" and claim_kind(attribute.evidence_phrase, attribute.name) == "main_colour"
    )


def corroborate(
    outcomes: list[tuple[Attribute, CheckOutcome]], analysis: ViewAnalysis
) -> list[tuple[Attribute, CheckOutcome]]:
    """Withdraw presence-only part-colour Yes answers that the main colour does not back up in this view.

    A part that cannot be located is only a colour found somewhere on the object, and another object's
    colours match a part claim by chance (a blue patch on a shoe is not "a blue lens"); the body colour
    named in the same query is the cheap corroboration that this is the described object at all. A query
    without a main-colour claim has nothing to corroborate with and keeps its answers.
    """
    mode = analysis.settings.part_colour.yes_corroboration
    if mode == "none" or not any(outcome.presence_only for _, outcome in outcomes):
        return outcomes
    main = [(attribute, outcome) for attribute, outcome in outcomes if _is_main_colour_attribute(attribute)]
    if not main:
        return outcomes
    if mode == "main_match":
        backed = any(outcome.answer is Decision.YES for _, outcome in main)
    else:
        backed = any(
            outcome.answer is Decision.YES
            or all(
                analysis.colour_found(term)[0] for term in analyse_phrase(attribute.evidence_phrase).colours
            )
            for attribute, outcome in main
        )
    if backed:
        return outcomes
    word = "confirmed" if mode == "main_match" else "found"
    return [
        (
            attribute,
            unsure(f"{outcome.reason}, but the main colour is not {word} in this view")
            if outcome.presence_only
            else outcome,
        )
        for attribute, outcome in outcomes
    ]


__all__ = ["CORROBORATIONS", "PartColourSettings", "check", "corroborate"]
