"""The vocabulary of claim kinds: what an attribute asserts, as one word shared by every part of the project.

A per-view answer is only as reliable as the kind of claim it answers (a body colour is judged on the whole
object, a part colour must be found somewhere on it, printed text needs a legible view), and a claim is only
as visible as the place it sits on (a logo "on the back" shows from one side). The evidential fusion
(:mod:`aiv_verifier.core.evidence`), the calibration and visibility tables and the research tools all key their
numbers by these words, so they live here, outside any verifier backend.

Kinds:

``main_colour`` ... ``count``  an attribute item (attribute query mode), read from its evidence phrase;
``description``                a whole description (direct / merged query modes);
``category``                   an answer about the object as a whole ("this is a visor, not a cap"), which a
                               backend marks with ``debug["claim"] == "object"``; it is evidence about the
                               category once per view, not about each attribute it was filed under;
``unknown``                    a phrase nothing could be read from.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

# Only for annotations: importing aiv_verifier.core at run time would close a cycle (core -> claims -> core).
if TYPE_CHECKING:
    from .core.types import Attribute

#: Claim kinds of attribute items (colour claims split: a body colour is checked on the whole object, a
#: part's colour only found or not found somewhere on it).
CLAIM_KINDS: tuple[str, ...] = (
    "main_colour",
    "part_colour",
    "pattern",
    "no_pattern",
    "text",
    "logo",
    "no_logo",
    "material",
    "shape",
    "count",
    "unknown",
)
DESCRIPTION_KIND = "description"
CATEGORY_KIND = "category"
#: Every kind an answer can be filed under, in table order.
EVIDENCE_KINDS: tuple[str, ...] = (*CLAIM_KINDS, DESCRIPTION_KIND, CATEGORY_KIND)

#: ``AttributeAnswer.debug`` marker of an answer about the whole object rather than the attribute asked.
OBJECT_CLAIM_KEY = "claim"
OBJECT_CLAIM_VALUE = "object"

#: Words that put a claim on one side of an object ("a logo on the back", "a front pocket").
_VIEW_HINT = re.compile(
    r"\b(front|back|rear|behind|side|sides|left|right|top|bottom|underside|underneath|inside)\b",
    re.IGNORECASE,
)
SIDED = "sided"
ALL_ROUND = "all_round"
VIEW_HINTS: tuple[str, ...] = (SIDED, ALL_ROUND)


def claim_kind(phrase: object, attribute_name: str = "") -> str:
    """The :data:`CLAIM_KINDS` entry of an attribute's evidence phrase ("unknown" for no readable phrase)."""
    if not isinstance(phrase, str) or not phrase.strip():
        return "unknown"
    # Imported here, not at the top: the description package's parser imports the lexicon, which is cheap,
    # but this vocabulary is imported by aiv_verifier.core and must stay free of import cycles.
    from .description.phrases import analyse_phrase, is_main_colour_claim

    info = analyse_phrase(phrase)
    if info.kind == "colour":
        return "main_colour" if is_main_colour_claim(info, attribute_name) else "part_colour"
    return info.kind


def attribute_claim_kind(attribute: Attribute) -> str:
    """The kind of a query item: ``description`` for a whole description, else its phrase's claim kind."""
    if attribute.type == "other":
        return DESCRIPTION_KIND
    return claim_kind(attribute.evidence_phrase, attribute.name)


def view_hint(phrase: object) -> str:
    """``sided`` when the phrase places the claim on one side of the object, else ``all_round``."""
    return SIDED if isinstance(phrase, str) and _VIEW_HINT.search(phrase) else ALL_ROUND


def is_object_claim(debug: object) -> bool:
    """Whether an answer's debug marks it as a judgement of the whole object (see :data:`CATEGORY_KIND`)."""
    return isinstance(debug, dict) and debug.get(OBJECT_CLAIM_KEY) == OBJECT_CLAIM_VALUE


__all__ = [
    "ALL_ROUND",
    "CATEGORY_KIND",
    "CLAIM_KINDS",
    "DESCRIPTION_KIND",
    "EVIDENCE_KINDS",
    "OBJECT_CLAIM_KEY",
    "OBJECT_CLAIM_VALUE",
    "SIDED",
    "VIEW_HINTS",
    "attribute_claim_kind",
    "claim_kind",
    "is_object_claim",
    "view_hint",
]
