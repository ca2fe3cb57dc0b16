"""Main colour: is the object as a whole the claimed colour ("a green body", "a navy blue mug")?

Yes when the claimed colour holds enough of the object, by its exact name or with its shading neighbours, and
enough of the object could be that colour under shade. Every named colour must be there ("black and white"),
each with its part of the share. No when the object is clearly another colour, by one of three rules (the
first that fires is the answer):

* nothing on the object could be a chromatic claimed colour under any shade or cast, while a good part of it
  clearly cannot be;
* the lighting-tolerant rule (``no_rule: chroma``): almost nothing could be the claimed colour and most of
  the object is impossible for it; for white and black also by lightness, and a colourless object against a
  colour with hue;
* the name rule: the claimed colour and its neighbours are nearly absent while one other colour dominates.

A metal finish (gold, rose gold, brass, gunmetal) is never contradicted: polished metal mirrors the room.
For a see-through frame (glasses) the rules that rest on which colours fill the region stay silent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aiv_common.setting_fields import setting
from aiv_verifier.core.types import Decision
from aiv_verifier.description.phrases import ColourTerm, is_metallic

from ..measure import colour as colour_mod
from ..measure.colour import ColourStats, claimed_names
from ..outcome import CheckOutcome, unsure
from ..view import Claim, ViewAnalysis

#: ``no_rule`` values: ``names`` (the name-share rule alone) or ``chroma`` (the lighting-tolerant rule too).
NO_RULES: tuple[str, ...] = ("chroma", "names")


@dataclass(frozen=True)
class MainColourSettings:
    """When a claim about the object's own colour is confirmed or contradicted (shares of the object)."""

    yes_share: float = setting(
        0.18,
        "share of the object in exactly the claimed colour for Yes (split between the colours of a "
        "several-colour claim)",
        minimum=0.0,
        maximum=1.0,
    )
    yes_support: float = setting(
        0.3,
        "the other route to Yes: the claimed colour's share plus half its shading neighbours' shares",
        minimum=0.0,
        maximum=1.0,
    )
    yes_min_exact_share: float = setting(
        0.0,
        "on that route, the least share of the exact claimed colour (0 = none needed)",
        minimum=0.0,
        maximum=1.0,
    )
    yes_min_compatible: float = setting(
        0.1,
        "either route needs at least this share of the object to be explainable as the claimed colour under "
        "shade",
        minimum=0.0,
    )
    absent_max_compatible: float = setting(
        0.005,
        "No when at most this share of the object could be a chromatic claimed colour under any shade or "
        "cast ...",
        minimum=0.0,
    )
    absent_min_contradicting: float = setting(
        0.25, "... while at least this share clearly cannot be it", minimum=0.0
    )
    no_rule: str = setting(
        "chroma",
        "which No rules apply: chroma (the lighting-tolerant rules and the name rule) or names (the name "
        "rule alone)",
        choices=NO_RULES,
    )
    no_support: float = setting(
        0.03,
        "name rule: No only when the claimed colour with its neighbours covers less than this share ...",
        minimum=0.0,
        maximum=1.0,
    )
    no_dominant: float = setting(
        0.4,
        "... one colour that is no neighbour of it covers at least this share ...",
        minimum=0.0,
        maximum=1.0,
    )
    no_max_compatible: float = setting(
        0.3,
        "... and at most this share could be the claimed colour under shade",
        minimum=0.0,
    )
    no_compatible_share: float = setting(
        0.04,
        "lighting-tolerant rule: No when at most this share of the object could be the claimed colour ...",
        minimum=0.0,
        maximum=1.0,
    )
    no_contradicting_share: float = setting(
        0.55,
        "... and at least this share cannot be it under shade or a mild colour cast",
        minimum=0.0,
        maximum=1.0,
    )
    achromatic_neutral_share: float = setting(
        0.6,
        "white and black claims are judged by lightness when at least this share of the object is neutral",
        minimum=0.0,
        maximum=1.0,
    )
    white_min_lightness: float = setting(
        45.0,
        "a neutral object whose lit side is darker than this (CIELAB L*) is not white",
        minimum=0.0,
    )
    black_max_lightness: float = setting(
        65.0,
        "a neutral object whose lit side is lighter than this (CIELAB L*) is not black",
        minimum=0.0,
    )
    colourless_neutral_share: float = setting(
        0.85,
        "an object with at least this share of neutral pixels is colourless: it contradicts a colour with "
        "hue that does not show at all ...",
        minimum=0.0,
        maximum=1.0,
    )
    colourless_min_lightness: float = setting(
        35.0,
        "... unless its lit side is darker than this (CIELAB L*): an unlit face or a screen says nothing",
        minimum=0.0,
    )

    def __post_init__(self) -> None:
        if self.no_rule not in NO_RULES:
            raise ValueError(f"main_colour.no_rule must be one of {list(NO_RULES)}, got {self.no_rule!r}")


def check(claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    """The main-colour check, except that a metal finish is never contradicted: polished metal mirrors the
    room around it (a rose gold key reads navy and silver in a blue room)."""
    info = claim.info
    outcome = colours_outcome(info.colours, analysis)
    if outcome.answer is Decision.NO and is_metallic(info):
        return unsure(
            f"a metal finish mirrors its surroundings, so its colour is not ruled out ({outcome.reason})"
        )
    return outcome


def _modifier_problem(term: ColourTerm, names: tuple[str, ...], stats: ColourStats) -> str:
    """Reason a light/dark modifier is contradicted by the claimed pixels' lightness ("" if fine)."""
    if not term.modifier or term.modifier not in ("light", "pale", "pastel", "dark", "deep"):
        return ""
    if len(names) > 1:  # the modifier already selected a lighter/darker canonical colour
        return ""
    index = colour_mod.colour_index(term.name)
    if stats.shares[index] <= 0:
        return ""
    observed = float(stats.mean_lightness[index])
    reference = colour_mod.prototype_lightness(term.name)
    if term.modifier in ("light", "pale", "pastel") and observed < reference - 12:
        return f"the {term.name} pixels are not light (L* {observed:.0f} vs typical {reference:.0f})"
    if term.modifier in ("dark", "deep") and observed > reference + 12:
        return f"the {term.name} pixels are not dark (L* {observed:.0f} vs typical {reference:.0f})"
    return ""


def colours_outcome(terms: Sequence[ColourTerm], analysis: ViewAnalysis) -> CheckOutcome:
    """Yes, No or Unsure for "the object is (all of) these colours", without the metal exception."""
    p = analysis.settings.main_colour
    tolerance = analysis.settings.colour.absent_hue_tolerance_deg
    stats = analysis.stats
    seen = stats.summary(3)
    results = []
    for term in terms:
        exact, support, names = analysis.claim_shares(term)
        results.append((term, exact, support, names))
    # Every named colour must be there ("black and white"); each may hold a smaller share.
    per_colour_yes = p.yes_share / max(1, len(results))
    evidence = {t: analysis.evidence(names) for t, _, _, names in results}
    if all(
        (
            exact >= per_colour_yes
            or (support >= p.yes_support / len(results) and exact >= p.yes_min_exact_share)
        )
        and evidence[term].compatible >= p.yes_min_compatible / len(results)
        for term, exact, support, _ in results
    ):
        problems = [_modifier_problem(t, n, stats) for t, _, _, n in results]
        problems = [x for x in problems if x]
        claimed = " and ".join(t.describe() for t, *_ in results)
        if problems:
            return unsure(f"{claimed} present, but {problems[0]}")
        share = min(exact for _, exact, _, _ in results)
        return CheckOutcome(
            Decision.YES, f"object is mainly {seen}; {claimed} matches", min(0.95, 0.5 + share)
        )
    if analysis.region.method == "ellipse":
        return unsure(f"object outline unclear; colours in the centre: {seen}")
    for term, _, _, names in results:
        if p.no_rule != "chroma" or set(names) & colour_mod.ACHROMATIC:
            continue
        loose = analysis.evidence(names, tolerance)
        if (
            loose.compatible <= p.absent_max_compatible
            and evidence[term].contradicting >= p.absent_min_contradicting
        ):
            return CheckOutcome(
                Decision.NO,
                f"object is mainly {seen}: no part of it could be {term.describe()} under any shade or "
                f"cast ({loose.compatible:.1%} could, {evidence[term].contradicting:.0%} cannot)",
                0.7,
            )
    if p.no_rule == "chroma" and analysis.solid() and not analysis.open_frame:
        outcome = _lighting_tolerant_no(terms, analysis)
        if outcome.answer is Decision.NO:
            return outcome
    claimed_all = set().union(*(colour_mod.confusable(n) for *_, names in results for n in names))
    ranked = stats.ranked(1)
    top_name, top_share = ranked[0] if ranked else ("", 0.0)
    missing = [
        (t, compatible)
        for t, _, support, names in results
        if support < p.no_support
        and (compatible := analysis.evidence(names).compatible) <= p.no_max_compatible
    ]
    if missing and top_name not in claimed_all and top_share >= p.no_dominant and not analysis.open_frame:
        term, compatible = missing[0]
        return CheckOutcome(
            Decision.NO,
            f"object is mainly {seen}; no {term.describe()} ({compatible:.1%} could be under shade)",
            min(0.9, 0.4 + top_share - max(s for *_, s, _ in results)),
        )
    claimed = " and ".join(t.describe() for t, *_ in results)
    return unsure(f"{claimed} only weakly present (object: {seen})")


def _lighting_tolerant_no(terms: Sequence[ColourTerm], analysis: ViewAnalysis) -> CheckOutcome:
    """No when some claimed colour is clearly not the object's colour under any shade or mild cast."""
    p = analysis.settings.main_colour
    seen = analysis.stats.summary(3)
    claimed = " and ".join(t.describe() for t in terms)
    for term in terms:
        names = claimed_names(term.name, term.modifier)
        evidence = analysis.evidence(names)
        what = term.describe()
        if (
            evidence.compatible <= p.no_compatible_share
            and evidence.contradicting >= p.no_contradicting_share
        ):
            return CheckOutcome(
                Decision.NO,
                f"object is mainly {seen}: {evidence.contradicting:.0%} of it cannot be {what} "
                f"under any shade, {evidence.compatible:.0%} could be",
                min(0.9, 0.3 + evidence.contradicting),
            )
        achromatic = set(names) <= colour_mod.ACHROMATIC
        if achromatic and evidence.neutral_share >= p.achromatic_neutral_share:
            lightness = evidence.neutral_lightness
            if "white" in names and lightness < p.white_min_lightness:
                return CheckOutcome(
                    Decision.NO,
                    f"object is neutral but its lit side is only L* {lightness:.0f}: grey or dark, not {what}",
                    0.7,
                )
            if names == ("black",) and lightness > p.black_max_lightness:
                return CheckOutcome(
                    Decision.NO, f"object is neutral and light (L* {lightness:.0f}), not {what}", 0.7
                )
        if (
            not set(names) & colour_mod.ACHROMATIC
            and evidence.neutral_share >= p.colourless_neutral_share
            and evidence.neutral_lightness >= p.colourless_min_lightness
            and evidence.compatible <= p.no_compatible_share
        ):
            return CheckOutcome(
                Decision.NO,
                f"object is colourless ({evidence.neutral_share:.0%} neutral: {seen}); no {what} on it",
                0.7,
            )
    return unsure(f"{claimed} only weakly present (object: {seen})")


__all__ = ["NO_RULES", "MainColourSettings", "check", "colours_outcome"]
