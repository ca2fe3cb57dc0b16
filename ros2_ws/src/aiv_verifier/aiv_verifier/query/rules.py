"""Weight-free attribute decomposition: descriptions → verifiable attributes with verbatim evidence.

The parser reads every description on its own, clause by clause (the one description parser,
:mod:`aiv_verifier.description`, cuts clauses at punctuation and at "with", "featuring", "that", "has", "and",
...), and only ever reports what a clause states with a word from the shared :mod:`aiv_verifier.lexicon`. The
work is split by job: :mod:`.clause_reader` walks the clauses, :mod:`.values` writes the mentions,
:mod:`.noun_phrases` groups a clause's chunks, :mod:`.mentions` merges mentions across descriptions. Rules, in
the order they are tried per clause:

1. **Absence claims** — a clause that starts with "no"/"without"/"not" ("no logo on the front", "no pattern",
   "without a handle", "no a sticker with logo on the lid", and "or" continuations: "without a handle or lid")
   becomes a checkable claim that something is *absent*: type ``logo_text`` (logo/text words), ``pattern``
   (pattern words) or ``part`` (anything else that names a noun), weight 1, evidence from the negation word to
   the end of the claim. "plain" in a noun phrase is an absence of pattern (name ``pattern``, evidence
   "plain"). These are kept because a verifier can look for *any* logo/pattern; they are weak (a logo may sit
   on an unseen side), hence weight 1.
2. **Text** — a quoted string (straight, curly or single quotes) or a text word ("word", "letters", "says",
   "written", the number 5, ...) makes one ``logo_text`` attribute named ``text`` (``<part>_text`` when the
   clause says where: ``on the lid`` → ``lid_text``), evidence = the whole clause without its article
   (`the word "NOVA" in white` → `word "NOVA" in white`), weight 3. Colours inside the clause belong to the
   text, never to the object.
3. **Logos** — a logo word ("logo", "emblem", "badge", "sticker", ...) makes ``logo`` / ``<part>_logo``
   (``logo_text``), evidence = the clause without its article ("yellow star logo", "blue heart logo on the
   fob"), weight 3 (2 for a bare "logo" with no describing word).
4. **Noun phrases** — everything else is read as noun phrases: describing chunks (colour phrase, pattern,
   material, shape, count) followed by nouns. In the first clause of a description the first noun phrase is
   the object itself (its colour is ``color``, its material ``material``, its shape ``shape``, its pattern
   ``pattern``); any other noun phrase names a part, and its values get part-qualified names from its last
   one or two nouns, singular (``a brown brim`` → ``brim_color``, ``yellow shoulder straps`` →
   ``shoulder_strap_color``, ``rectangular rims`` → ``rim_shape``, ``two buckles`` → ``buckle_count``).
   Colours right before a pattern word belong to the pattern ("purple polka dots", "a white flower print"),
   and a pattern "on the bow" is ``bow_pattern``. A noun phrase without colour, pattern, material, shape or
   count in a later clause ("a zipper", "a front pocket") is a part-presence claim (type ``part``, weight 1).
   "X is/are Y" and "in <colour>" ("laces in white") attach the value to X; "it is Y" / "it's a Y mug" attach
   it to the object; "there's a chip on the rim" introduces a part. A value clause without a noun right after a
   part ("a white scarf with red dots") belongs to that part (``scarf_pattern``). Nouns that are the object's
   own class word ("... with keys" in a description of keys) are not parts; unknown words before the class
   word are modifiers ("a thermal yellow backpack" → ``color`` yellow). An appearance word right before a
   colour stays in its evidence ("transparent white scarf").
5. **Brands** — a capitalised word inside the object's own noun phrase that is not the first word of a
   sentence and not a class word ("a black Nike backpack", "a Louis Vuitton bag") is ``brand``
   (``logo_text``, weight 3), unless the description is mostly upper case.

Evidence is always ``description[start:end]`` of one description, i.e. a verbatim substring with the original
casing. For the object's own colour/material/shape the evidence is just the value ("light blue"); for a
part it is value + part noun, plus a short location complement when the clause ends with one ("brown brim",
"gunmetal plate on the right arm", "teal band around it"), so that the phrase can be checked on its own.

**Merging across descriptions**: mentions with the same name and polarity whose value signatures are equal or
one contains the other (canonical colours, pattern kind, quoted text, material, shape, count — so "sky blue"
≡ "light blue", "chocolate" ≡ "brown", and "purple polka dots" refines "polka dots") become one attribute whose
evidence comes from the most specific mention (largest signature, then the description with most mentions,
then the longest phrase, then the earlier description). An unqualified ``pattern``/``logo``/``text`` merges into the single
part-qualified one it is compatible with. Genuinely different values keep the reference's duplicate naming:
``color_1, color_2`` (numbering in order of first appearance). Modifiers without a compound entry in the
lexicon ("pale green") do not split a colour from its base ("green"), but distinct canonical colours do
("light blue" vs "blue").

**Weights** (3 = most discriminative between instances of the same class): text, logos with a describing
word, brands and patterns 3; colours (object and parts), counts and shapes 2; bare logos 2; materials, part
presence and absence claims 1.

Limits: no part-of-speech model, so unknown words are taken for nouns unless they sit before a value or
the class word ("spiral bound" becomes a part), lower-case brands ("a glovo backpack") and brands at the
start of a sentence ("Nike shoes") are missed, colour words must be spelled as in the lexicon (typos such
as "purpel" are not recognised), relations between objects ("next to a chair") are not extracted,
and a description with no recognisable word yields no attribute at all (zero attributes is a valid result;
the agent then relies on the category).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.types import Attribute
from .clause_reader import DescriptionReader
from .common import drop_unusable, rename_duplicates
from .mentions import Mention, merge_mentions


class RuleBasedDecomposer:
    """Turn descriptions into attributes without any model (see the module docstring for the rules)."""

    def mentions(self, descriptions: Sequence[str]) -> list[Mention]:
        found: list[Mention] = []
        for index, description in enumerate(descriptions):
            if isinstance(description, str) and description.strip():
                found.extend(DescriptionReader(description, index).parse())
        return found

    def decompose(self, descriptions: Sequence[str]) -> tuple[Attribute, ...]:
        merged = merge_mentions(self.mentions(descriptions))
        attributes = [
            Attribute(
                name=mention.name, type=mention.type, weight=mention.weight, evidence_phrase=mention.evidence
            )
            for mention in merged
        ]
        return rename_duplicates(drop_unusable(attributes))
