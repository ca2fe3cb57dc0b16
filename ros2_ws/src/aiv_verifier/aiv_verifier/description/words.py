"""Word classes of the description parser beyond the shared :mod:`aiv_verifier.lexicon`: one list per concept.

The lexicon holds what both sides name (colours, patterns, materials, shapes, cues, negations, pattern nouns);
this module holds the grammar the parser needs to find those words' places (determiners, prepositions, clause
words, ...) and the part vocabulary the phrase reader uses to tell a part claim from a whole-object claim.
Words are lower case, as the tokens normalise them.
"""

from __future__ import annotations

from .. import lexicon
from .tokens import normalise_word


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- grammar: where a noun phrase starts and ends --------------------------------------------------------------

DETERMINERS = _words(
    "a an the its it's their his her my our your some this these those also just only both each every any "
    "another other"
)
"""Dropped at the start of a noun phrase."""

QUANTIFIER_NOUNS = _words("pair set bunch couple kind type sort piece ring bundle collection stack")
"""``<noun> of`` at the start of a phrase is skipped ("a pair of shoes", "a bunch of keys")."""

PRONOUNS = _words("it this that there here they these those i")
COPULAS = _words("is are was were be been looks look seems seem appears appear 's")

SPLIT_WORDS = _words(
    "with featuring features feature that which who has have having had plus and or but also including "
    "includes include while whereas where whose wearing showing shows contains containing sporting boasting"
)
"""Words that start a new clause in the query style (the word itself is not part of either clause)."""

PREPOSITIONS = _words(
    "on at in around along near across over under underneath beneath below above behind between inside "
    "outside of by for from to into onto about like as than within beside next via per towards toward "
    "throughout upon against among atop out off up down"
)
"""End a noun phrase; what follows is a location or other complement."""

PLACE_PREPOSITIONS = _words(
    "on at around along near across over under underneath beneath below above behind inside outside onto "
    "atop upon within in"
)
"""Prepositions that introduce where on the object something is ("on the lid", "around it")."""

PARTICIPLES = _words(
    "sticking hanging holding coming going attached printed written embroidered engraved located placed made "
    "painted stitched sewn covered decorated filled lying sitting standing facing looking peeking poking "
    "protruding reading saying spelling shaped used"
)
"""Verb forms that end a noun phrase ("a card sticking out", "a logo printed on the side")."""

IGNORABLE_ADJECTIVES = _words(
    "small smaller big bigger large larger tiny little huge long longer mini medium cute nice pretty old new "
    "worn cool beautiful lovely simple classic standard normal regular typical generic common fancy shiny soft "
    "hard heavy light very really quite rather slightly somewhat mostly mainly predominantly entirely fully "
    "all super kinda dull faded dirty clean usual ordinary cheap expensive fake real vintage modern retro some "
    "various several many few multiple lots clear transparent translucent opaque"
)
"""Size/quality words skipped inside a noun phrase (neither the value nor the part)."""

VAGUE_NOUNS = _words(
    "it them one ones thing things stuff something lot bit kind type sort design designs style look color "
    "colour colours shade tone item object way i me you we they he she this that there here what etc maybe "
    "probably too well yes not sure"
)
"""Nouns that never name a checkable part."""

POSITION_WORDS = _words(
    "front back top bottom side sides left right middle center centre edge edges corner corners surface "
    "inside outside interior exterior it them this that one end ends part area place spot rear face "
    "underside base upper lower outer inner both each all whole entire half itself"
)
"""A location made only of these words names no part ("on the front", "on its right side", "around it")."""

SIDE_QUALIFIERS = _words("left right both one each outer inner upper lower its their his her")
"""Dropped from the start of a location's noun phrase ("the right arm" → arm)."""

COLOUR_SUFFIXES = _words("coloured colour colours toned tone ish tinted")
"""Tokens that may close a colour phrase ("cream colored", "blue-ish")."""

COLOUR_LIST_FILLERS = _words(
    "a an the its it their his her this that small large big little tiny thin thick some several on in at of "
    "around along across near over under by to one two three four five six single pair each both"
)
"""Words a clause of only colours may also hold ("and the black", "of white"): such a clause is the start of
a colour list and is read together with the next one ("black and white stripes")."""

TEXT_CUE_WORDS: frozenset[str] = frozenset(normalise_word(word) for word in lexicon.TEXT_CUES) - {"printed"}
"""Words that announce printed text. "printed" alone ("printed teapots") reads as a pattern, not text."""
LOGO_CUE_WORDS: frozenset[str] = frozenset(normalise_word(word) for word in lexicon.LOGO_CUES) | _words(
    "logos emblems badges brands symbols icons labels patches stickers"
)
"""The lexicon's logo cues and their plurals."""


# --- parts: what a colour or pattern claim is about ------------------------------------------------------------

PART_NOUNS = _words(
    "brim band bands strap straps handle handles lid lids spine sole soles lace laces shoelaces pocket "
    "pockets flap flaps dial dials lens lenses frame frames rim rims arm arms temple temples cup cups cushion "
    "cushions headband snout muzzle nose pad pads paw paws ear ears wheel wheels roof keychain fob head heads "
    "heel heels tab tabs plate plates wallpaper screen keyboard bow ribbon card cards grip inside interior "
    "trim zipper zippers zip button buttons buckle buckles collar tongue toe stitching seam seams bezel face "
    "hands cord cable lining crown visor peak tip cap bottom top side sides edge edges corner corners border "
    "chain ring eyes eye mouth tail legs leg feet foot sticker patch label hood sleeve sleeves bumper "
    "trackpad touchpad hinge keys key mesh panel panels accent accents detail details"
)
"""Nouns that name a sub-part of an object. A colour claimed for such a part can only be checked by presence
(the part is not localised), never by the object's dominant colour."""

MAIN_NOUNS = _words(
    "body base colour color colours colors fur exterior outside shell case cover upper surface fabric "
    "material metal finish main overall coat covering casing housing"
)
"""Nouns that stand for the object as a whole ("a lavender base colour", "brass metal", "light blue fur")."""

ONE_SIDED_WORDS = _words("front back rear side sides left right bottom underside inside interior")
"""Words that tie a part to one side of the object ("on the front", "the right arm", "inside"): such a part
faces away from some viewpoints, so not seeing its colour in one view says nothing."""

ONE_SIDED_PARTS = _words(
    "shoulder screen wallpaper display spine handle handles lens inside interior lining snout muzzle nose "
    "face eyes eye mouth pad pads paw paws pocket pockets plate plates buckle buckles zipper zippers zip "
    "tongue toe"
)
"""Parts that exist on one face of their object whatever the phrase says: a phone's or laptop's screen, a
camera's lens, a book's spine, a mug's handle and inside, a toy's snout, face and foot pads, a pocket, a
backpack's shoulder straps."""

SMALL_PARTS = _words(
    "bow ribbon dial dials button buttons tab tabs tip charm pin rivet arm arms temple temples rim rims lace "
    "laces shoelaces cord cords cable chain wire string"
)
"""Parts a view from 1-2 m may not resolve: small accessories (a teddy bear's bow, a watch's dial, heel tabs,
buttons) and thin ones (the arms and rims of glasses, laces, cords), a few millimetres across, so one or two
camera pixels that compression and noise wash out. Not seeing their colour is no evidence."""

SEE_THROUGH_WORDS = _words("lenses glass glasses window windows tinted transparent translucent clear")
"""Words of a part the background shows through (tinted lenses, a window): its colour mixes with whatever
lies behind it, so its absence is never evidence."""

METALLIC_WORDS = _words(
    "gold golden brass bronze copper chrome chromed silver gunmetal metallic steel aluminium aluminum"
)
"""Words of a metal finish. A polished metal mirrors its surroundings, so the pixels of "a rose gold key" show
the room's colours more than the metal's: they can confirm the colour but never rule it out."""
