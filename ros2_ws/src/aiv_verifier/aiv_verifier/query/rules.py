"""Weight-free attribute decomposition: descriptions → verifiable attributes with verbatim evidence.

The parser reads every description on its own, clause by clause (clauses are cut at punctuation and at
"with", "featuring", "that", "has", "and", ... — see :mod:`.text`), and only ever reports what a clause states
with a word from the shared :mod:`aiv_verifier.lexicon`. Rules, in the order they are tried per clause:

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
from dataclasses import dataclass, field

from ..core.types import Attribute
from .categories import KEYWORD_MATCHER, keyword_matches
from .common import drop_unusable, rename_duplicates
from .text import (
    ADJECTIVE_KINDS,
    COPULAS,
    DETERMINERS,
    IGNORABLE_ADJECTIVES,
    LOGO_CUE_WORDS,
    NEGATIONS,
    PARTICIPLES,
    PLACE_PREPOSITIONS,
    POSITION_WORDS,
    PREPOSITIONS,
    PRONOUNS,
    QUANTIFIER_NOUNS,
    SIDE_QUALIFIERS,
    SPLIT_WORDS,
    TEXT_CUE_WORDS,
    VAGUE_NOUNS,
    Chunk,
    Clause,
    Token,
    chunk_tokens,
    singular,
    split_clauses,
    tokenize,
)

WEIGHT_TEXT = 3
WEIGHT_LOGO = 3
WEIGHT_BARE_LOGO = 2
WEIGHT_PATTERN = 3
WEIGHT_COLOUR = 2
WEIGHT_COUNT = 2
WEIGHT_SHAPE = 2
WEIGHT_MATERIAL = 1
WEIGHT_PART = 1
WEIGHT_ABSENCE = 1

STRONG_KEYWORD_SHARE = 0.7
"""A class word this unambiguous ("keys", not "fob") marks a noun as the object itself."""
MAX_TAIL_CHUNKS = 8
"""A location complement longer than this is not appended to a part's evidence."""
MAX_CLAUSE_EVIDENCE_CHUNKS = 16
"""Text/logo/absence evidence longer than this is cut after the cue word (or the quote)."""

_QUALIFIABLE_BASES = ("pattern", "logo", "text")
APPEARANCE_WORDS: frozenset[str] = frozenset({"clear", "transparent", "translucent", "opaque", "shiny"})
"""Kept in a colour's evidence when they come right before it ("transparent white")."""
_CONTRACTED_PRONOUN_COPULAS = frozenset({"theres", "thats", "heres", "whats"})

ING_NOUNS: frozenset[str] = frozenset(
    {
        "casing",
        "lining",
        "padding",
        "stitching",
        "clothing",
        "drawing",
        "drawings",
        "painting",
        "paintings",
        "opening",
        "earring",
        "keyring",
        "string",
        "spring",
        "sling",
        "ceiling",
        "lettering",
        "writing",
        "engraving",
        "carving",
        "binding",
        "trimming",
        "edging",
        "piping",
        "fitting",
        "coating",
        "plating",
        "marking",
        "markings",
        "frosting",
        "icing",
        "housing",
        "building",
        "filling",
        "backing",
        "packaging",
        "wrapping",
        "bearing",
        "stuffing",
        "netting",
        "webbing",
        "tubing",
        "detailing",
        "covering",
        "heading",
        "mounting",
        "setting",
        "button",
    }
)
"""Nouns that end in "-ing" and must not be read as verbs."""
_PRONOUN_CONTRACTIONS = ("it's", "it’s", "that's", "that’s", "there's", "there’s", "here's", "here’s")


@dataclass
class Mention:
    """One attribute as stated in one place of one description (before merging)."""

    name: str
    type: str
    weight: int
    description: int
    start: int
    end: int
    evidence: str
    signature: frozenset[str]
    positive: bool = True
    tokens: int = 1

    @property
    def order(self) -> tuple[int, int, int]:
        return (self.description, self.start, self.end)


@dataclass
class _Group:
    """A noun phrase: describing chunks then nouns."""

    adjectives: list[Chunk] = field(default_factory=list)
    nouns: list[Chunk] = field(default_factory=list)
    pattern_words: list[Chunk] = field(default_factory=list)  # "galaxy" in "galaxy print"
    modifiers: list[Chunk] = field(default_factory=list)  # unknown words before a value ("transparent")

    @property
    def first(self) -> Chunk | None:
        items = [*self.adjectives, *self.nouns, *self.pattern_words]
        return min(items, key=lambda chunk: chunk.start) if items else None

    @property
    def last(self) -> Chunk | None:
        items = [*self.adjectives, *self.nouns, *self.pattern_words]
        return max(items, key=lambda chunk: chunk.end) if items else None


def _is_breaker(chunks: Sequence[Chunk], index: int) -> bool:
    """Does chunks[index] end a noun phrase (preposition, participle, copula, quote, clause word)?"""
    chunk = chunks[index]
    if chunk.kind in ("quote", "punct"):
        return True
    if chunk.kind != "word":
        return False
    norm = chunk.norm
    if norm in ("inside", "outside"):
        # "a pink inside" (noun at the end) vs "inside the lid" (preposition with an object)
        return index + 1 < len(chunks) and chunks[index + 1].kind != "punct"
    if norm in PREPOSITIONS or norm in PARTICIPLES or norm in COPULAS or norm in SPLIT_WORDS:
        return True
    # An unknown "-ing" word followed by a preposition or article is a verb ("decorations referring to tea").
    if len(norm) >= 5 and norm.endswith("ing") and norm not in ING_NOUNS and index + 1 < len(chunks):
        nxt = chunks[index + 1]
        return nxt.kind == "word" and (nxt.norm in PREPOSITIONS or nxt.norm in DETERMINERS)
    return False


def _skip_determiners(chunks: Sequence[Chunk], index: int) -> int:
    while index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in DETERMINERS:
        index += 1
    return index


def _skip_quantifier(chunks: Sequence[Chunk], index: int) -> int:
    """Skip "pair of", "a set of the", ... at ``index``."""
    if (
        index + 1 < len(chunks)
        and chunks[index].kind == "word"
        and chunks[index].norm in QUANTIFIER_NOUNS
        and chunks[index + 1].kind == "word"
        and chunks[index + 1].norm == "of"
    ):
        return _skip_determiners(chunks, index + 2)
    return index


def _np_end(chunks: Sequence[Chunk], start: int) -> int:
    index = start
    while index < len(chunks) and not _is_breaker(chunks, index):
        index += 1
    return index


def _groups(chunks: Sequence[Chunk]) -> list[_Group]:
    """Split a noun-phrase region into groups: a describing chunk after a noun starts a new group."""
    groups: list[_Group] = []
    current = _Group()
    for chunk in chunks:
        if chunk.kind == "word" and chunk.norm in DETERMINERS:
            if current.nouns:  # "there's | a little panda keychain"
                groups.append(current)
                current = _Group()
            continue
        if chunk.kind == "patnoun":
            if current.nouns and chunk.norm != "printed":
                current.pattern_words.extend(current.nouns)  # "galaxy print": the nouns name the pattern
                current.nouns = []
            current.adjectives.append(chunk)
            continue
        if chunk.kind in ADJECTIVE_KINDS:
            if current.nouns and not current.adjectives and not current.pattern_words:
                # "a transparent white scarf": a lone unknown word before a value is a modifier, not a noun
                current.modifiers.extend(current.nouns)
                current.nouns = []
            elif current.nouns:
                groups.append(current)
                current = _Group()
            current.adjectives.append(chunk)
            continue
        if chunk.kind == "word" and (chunk.norm in IGNORABLE_ADJECTIVES or chunk.norm == "plain"):
            if not current.nouns:
                current.adjectives.append(chunk)
            continue
        if chunk.kind == "word":
            current.nouns.append(chunk)
    if current.adjectives or current.nouns or current.pattern_words:
        groups.append(current)
    return groups


def _part_name(nouns: Sequence[Chunk]) -> str:
    words = [
        singular(chunk.norm.replace("'", ""))
        for chunk in nouns
        if chunk.kind == "word" and chunk.norm not in IGNORABLE_ADJECTIVES
    ]
    words = [word for word in words if word and word not in VAGUE_NOUNS]
    name = "_".join(words[-2:])
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_")


def _location_part(chunks: Sequence[Chunk]) -> str:
    """Part named by the first place complement in ``chunks`` ("on the back of the lid" → "lid"), or ""."""
    index = 0
    while index < len(chunks):
        chunk = chunks[index]
        if chunk.kind == "word" and chunk.norm in PLACE_PREPOSITIONS:
            nxt = _skip_determiners(chunks, index + 1)
            if chunk.norm == "in" and (nxt == index + 1 or nxt >= len(chunks)):
                index += 1  # "in white" is a colour, "in the middle" a place
                continue
            words: list[Chunk] = []
            position = nxt
            while position < len(chunks):
                item = chunks[position]
                if item.kind == "word" and item.norm == "of":
                    words = []
                    position = _skip_determiners(chunks, position + 1)
                    continue
                if item.kind not in ("word", "material", "shape") or (
                    item.kind == "word"
                    and (item.norm in PREPOSITIONS or item.norm in PARTICIPLES or item.norm in SPLIT_WORDS)
                ):
                    break
                words.append(item)
                position += 1
            while words and words[0].kind == "word" and words[0].norm in SIDE_QUALIFIERS:
                words = words[1:]
            if words and not all(word.norm in POSITION_WORDS for word in words):
                return _part_name(words)
            return ""
        index += 1
    return ""


def _colour_signature(chunks: Sequence[Chunk]) -> set[str]:
    return {f"c:{colour}" for chunk in chunks if chunk.kind == "colour" for colour in chunk.value}  # type: ignore[attr-defined]


class _DescriptionParser:
    """Parses one description into mentions."""

    def __init__(self, text: str, index: int) -> None:
        self.text = text
        self.index = index
        self.tokens: list[Token] = tokenize(text)
        self.chunks = chunk_tokens(self.tokens)
        self.mentions: list[Mention] = []
        self.head_classes: frozenset[str] = frozenset()
        self.head_noun = ""

    # -- emitting ------------------------------------------------------------------------------------------

    def emit(
        self,
        name: str,
        type_: str,
        weight: int,
        first: Chunk,
        last: Chunk,
        signature: set[str] | frozenset[str],
        positive: bool = True,
    ) -> None:
        start, end = first.start, max(last.end, first.end)
        evidence = self.text[start:end]
        if not name or not evidence.strip():
            return
        token_count = sum(1 for token in self.tokens[first.first : last.last + 1] if token.kind != "punct")
        self.mentions.append(
            Mention(
                name,
                type_,
                weight,
                self.index,
                start,
                end,
                evidence,
                frozenset(signature),
                positive,
                max(token_count, 1),
            )
        )

    # -- main loop -----------------------------------------------------------------------------------------

    def parse(self) -> list[Mention]:
        clauses = split_clauses(self.chunks)
        head_done = False
        negation_start: Chunk | None = None
        previous_subject: str | None = None  # None = the object itself, else a part name
        for clause in clauses:
            chunks = list(clause.chunks)
            if clause.negated:
                start_index = _skip_determiners(chunks, 0)
                if start_index < len(chunks) and chunks[start_index].norm in NEGATIONS:
                    negation_start = chunks[start_index]
                self.absence(chunks, negation_start or chunks[0])
                head_done = True
                continue
            negation_start = None
            if not head_done:
                head_done = self.head_clause(chunks)
                previous_subject = None
                continue
            previous_subject = self.clause(chunks, clause, previous_subject)
        return self.mentions

    # -- clause kinds --------------------------------------------------------------------------------------

    def head_clause(self, chunks: list[Chunk]) -> bool:
        """The first clause: find the object's own noun phrase. Returns False if the clause had no content."""
        index = _skip_determiners(chunks, 0)
        index = self._skip_pronoun_copula(chunks, index)
        index = _skip_quantifier(chunks, _skip_determiners(chunks, index))
        if index >= len(chunks):
            return False
        if _is_breaker(chunks, index) or (chunks[index].kind == "word" and chunks[index].norm in PRONOUNS):
            keyword_at = self._first_keyword_chunk(chunks)
            if keyword_at is None:
                # No noun phrase at the start and no class word: read the clause like any other.
                self.clause(chunks, None, None)
                return True
            start = keyword_at
            while (
                start > 0 and not _is_breaker(chunks, start - 1) and chunks[start - 1].norm not in DETERMINERS
            ):
                if chunks[start - 1].kind == "word" and chunks[start - 1].norm in PRONOUNS:
                    break
                start -= 1
            index = start
        end = _np_end(chunks, index)
        region = chunks[index:end]
        tail = chunks[end:]
        if any(
            chunk.kind == "word" and (chunk.norm in TEXT_CUE_WORDS or chunk.norm in LOGO_CUE_WORDS)
            for chunk in region
        ):
            # the description starts with the mark itself ("the word "NOVA" in white", "a star logo ...")
            self.clause(chunks, None, None)
            return True
        self.head_classes = self._classes_of(region)
        groups = _groups(region)
        groups = self._merge_modifier_groups(groups)
        if groups and groups[0].nouns:
            self.head_noun = singular(groups[0].nouns[-1].norm)
        if not groups:
            self.clause(chunks[end:], None, None)
            return True
        main = groups[0]
        self.describe(main, None, tail if len(groups) == 1 else [], is_main=True)
        self.brand(main)
        for group in groups[1:-1]:
            self.describe(group, _part_name(group.nouns) or None, [], is_main=False)
        if len(groups) > 1:
            last = groups[-1]
            self.describe(last, _part_name(last.nouns) or None, tail, is_main=False)
        if tail and (not self._is_complement(tail) or self._has_text_or_logo(tail)):
            self.clause(tail, None, None)
        return True

    def clause(self, chunks: list[Chunk], clause: Clause | None, previous_subject: str | None) -> str | None:
        """A later clause. Returns the subject it talked about (for an elided "that is ..." next)."""
        index = _skip_determiners(chunks, 0)
        if index >= len(chunks):
            return previous_subject
        content = chunks[index:]
        if self._has_text_or_logo(content):
            self.text_or_logo(content)
            return previous_subject
        # "is red" after "that"/"which": the subject is the previous clause's.
        if content[0].kind == "word" and content[0].norm in COPULAS:
            self.predicate(content[1:], previous_subject, subject_chunks=None)
            return previous_subject
        # "there's a chip on the rim": what follows is a new thing, read it as a clause of its own
        pronoun_skip = self._skip_pronoun_copula(content, 0)
        if pronoun_skip and self._is_existential(content[0]):
            return self.clause(content[pronoun_skip:], clause, previous_subject)
        # "it is red", "it's red"
        if pronoun_skip:
            self.predicate(content[pronoun_skip:], None, subject_chunks=None, nominal_is_main=True)
            return None
        # "the handle is white"
        copula_at = next(
            (i for i, chunk in enumerate(content) if chunk.kind == "word" and chunk.norm in COPULAS), None
        )
        if copula_at is not None and copula_at > 0:
            subject_region = content[:copula_at]
            subject_groups = _groups(subject_region)
            nouns = [noun for group in subject_groups for noun in group.nouns]
            subject = None if (not nouns or self._is_main_noun(nouns)) else (_part_name(nouns) or None)
            # values written before the copula ("the red handle is ...") still count
            for group in subject_groups:
                if group.adjectives:
                    self.describe(group, subject, [], is_main=subject is None)
            self.predicate(content[copula_at + 1 :], subject, subject_chunks=subject_region)
            return subject
        start = _skip_quantifier(content, 0)
        end = _np_end(content, start)
        region = content[start:end]
        tail = content[end:]
        groups = _groups(region)
        subject = None
        for position, group in enumerate(groups):
            is_last = position == len(groups) - 1
            group_tail = tail if is_last else []
            if group.nouns and self._is_main_noun(group.nouns):
                self.describe(group, None, group_tail, is_main=True, skip_presence=True)
                subject = None
                continue
            part = _part_name(group.nouns) if group.nouns else ""
            if not part:
                part = _location_part(group_tail)
            if not part and not group.nouns and clause is not None and clause.opener == "with":
                part = previous_subject or ""  # "a white scarf with red dots" → the scarf's pattern
            self.describe(group, part or None, group_tail, is_main=not part)
            subject = part or None
        if not groups and tail:
            # "in white" after a noun-less clause, or a bare complement: nothing to attach it to
            self.complement(tail, previous_subject, None)
        return subject

    def predicate(
        self,
        chunks: Sequence[Chunk],
        subject: str | None,
        subject_chunks: Sequence[Chunk] | None,
        nominal_is_main: bool = False,
    ) -> None:
        """Values after a copula apply to ``subject`` (None = the object)."""
        chunks = list(chunks)
        start = _skip_determiners(chunks, 0)
        end = _np_end(chunks, start)
        groups = _groups(chunks[start:end])
        tail = chunks[end:]
        anchor = None
        if subject is not None and subject_chunks:
            anchor = next(
                (chunk for chunk in subject_chunks if chunk.kind != "word" or chunk.norm not in DETERMINERS),
                None,
            )
        for position, group in enumerate(groups):
            group_tail = tail if position == len(groups) - 1 else []
            if group.nouns and (nominal_is_main or self._is_main_noun(group.nouns)) and subject is None:
                self.describe(group, None, group_tail, is_main=True, skip_presence=True)
            elif group.nouns and subject is None and position > 0:
                part = _part_name(group.nouns)
                self.describe(group, part or None, group_tail, is_main=not part)
            else:
                self.describe(
                    group, subject, group_tail, is_main=subject is None, anchor=anchor, skip_presence=True
                )
        if not groups and tail:
            self.complement(tail, subject, anchor)

    def brand(self, group: _Group) -> None:
        """A capitalised name inside the object's own noun phrase ("a black Nike backpack") is a brand mark.

        Skipped for the first word of a sentence, for class words and when the description is mostly upper
        case (then capitals say nothing).
        """
        letters = [ch for ch in self.text if ch.isalpha()]
        if not letters or sum(ch.isupper() for ch in letters) > 0.5 * len(letters):
            return
        candidates = sorted([*group.modifiers, *group.nouns[:-1]], key=lambda chunk: chunk.start)
        names: list[Chunk] = []
        for chunk in candidates:
            raw = self.text[chunk.start : chunk.end]
            token_index = chunk.first
            sentence_initial = token_index == 0 or (
                self.tokens[token_index - 1].kind == "punct" and self.tokens[token_index - 1].norm in ".!?\n"
            )
            if (
                chunk.kind == "word"
                and raw[:1].isupper()
                and not sentence_initial
                and chunk.norm not in PRONOUNS
                and not keyword_matches(self.tokens, chunk.first, chunk.last)
            ):
                if names and names[-1].last + 1 != chunk.first:
                    break  # only one contiguous name
                names.append(chunk)
        if names:
            signature = {"b:" + " ".join(chunk.norm for chunk in names)}
            self.emit("brand", "logo_text", WEIGHT_TEXT, names[0], names[-1], signature)

    def complement(self, tail: Sequence[Chunk], subject: str | None, anchor: Chunk | None) -> None:
        """ "made of leather", "in dark green" with nothing before them."""
        group = _Group()
        self._absorb_complement(group, list(tail))
        if group.adjectives:
            self.describe(group, subject, [], is_main=subject is None, anchor=anchor, skip_presence=True)

    # -- describing a noun phrase --------------------------------------------------------------------------

    def describe(
        self,
        group: _Group,
        part: str | None,
        tail: Sequence[Chunk],
        *,
        is_main: bool,
        anchor: Chunk | None = None,
        skip_presence: bool = False,
    ) -> None:
        """Emit the attributes one noun phrase states about the object (``is_main``) or a part."""
        tail = list(tail)
        has_value = any(
            chunk.kind in ADJECTIVE_KINDS or chunk.kind == "patnoun" for chunk in group.adjectives
        )
        if (not any(chunk.kind == "colour" for chunk in group.adjectives) or not has_value) and not (
            self._has_text_or_logo(tail)
        ):
            # "laces in white", "a hat in dark green", "made of leather" (but "... "NOVA" in white" is the text's)
            self._absorb_complement(group, tail)
            has_value = any(
                chunk.kind in ADJECTIVE_KINDS or chunk.kind == "patnoun" for chunk in group.adjectives
            )
        if is_main or part is None:
            part = None
        prefix = f"{part}_" if part else ""
        noun_end = group.nouns[-1] if group.nouns else None
        short_tail = tail if 0 < len(tail) <= MAX_TAIL_CHUNKS and self._is_complement(tail) else []
        end_chunk = short_tail[-1] if (part and short_tail) else None

        def span_end(value_last: Chunk) -> Chunk:
            if part is None:
                return value_last
            candidates = [value_last]
            if noun_end is not None:
                candidates.append(noun_end)
            if end_chunk is not None:
                candidates.append(end_chunk)
            return max(candidates, key=lambda chunk: chunk.end)

        def span_start(value_first: Chunk) -> Chunk:
            if part is not None and anchor is not None:
                return anchor if anchor.start < value_first.start else value_first
            return value_first

        adjectives = sorted(group.adjectives, key=lambda chunk: chunk.start)
        pattern_index = next(
            (i for i, chunk in enumerate(adjectives) if chunk.kind in ("pattern", "patnoun")), None
        )
        pattern_colours: list[Chunk] = []
        object_colours: list[Chunk] = []
        for i, chunk in enumerate(adjectives):
            if chunk.kind != "colour":
                continue
            if pattern_index is not None and i < pattern_index:
                pattern_colours.append(chunk)
            else:
                object_colours.append(chunk)

        if object_colours:
            colour = object_colours[0]
            first = colour
            # "transparent white", "shiny black": an appearance word right before the colour belongs to it
            earlier = [chunk for chunk in adjectives if chunk.last + 1 == colour.first]
            if earlier and earlier[0].kind == "word" and earlier[0].norm in APPEARANCE_WORDS:
                first = earlier[0]
            self.emit(
                f"{prefix}color",
                "color",
                WEIGHT_COLOUR,
                span_start(first),
                span_end(colour),
                _colour_signature([colour]),
            )
        if pattern_index is not None:
            pattern_chunks = [chunk for chunk in adjectives if chunk.kind in ("pattern", "patnoun")]
            first = min(
                [*pattern_colours, *pattern_chunks, *group.pattern_words], key=lambda chunk: chunk.start
            )
            last = max([*pattern_chunks, *group.pattern_words], key=lambda chunk: chunk.end)
            kinds = {f"p:{chunk.value}" for chunk in pattern_chunks if chunk.kind == "pattern"}
            if group.pattern_words:
                kinds.add("p:" + " ".join(chunk.norm for chunk in group.pattern_words))
            if any(chunk.norm == "printed" for chunk in pattern_chunks) and group.nouns:
                kinds.add("p:" + " ".join(chunk.norm for chunk in group.nouns))
                last = max(last, group.nouns[-1], key=lambda chunk: chunk.end)
                pattern_part = _location_part(tail) or None
            else:
                pattern_part = part if part else (_location_part(tail) or None)
            pattern_prefix = f"{pattern_part}_" if pattern_part else ""
            if pattern_part and not part and short_tail:
                last = max(last, short_tail[-1], key=lambda chunk: chunk.end)
            elif part:
                last = span_end(last)
            if not kinds and not pattern_colours and not group.pattern_words:
                pass  # a bare "pattern"/"print" says nothing checkable
            else:
                self.emit(
                    f"{pattern_prefix}pattern",
                    "pattern",
                    WEIGHT_PATTERN,
                    first,
                    last,
                    kinds | _colour_signature(pattern_colours),
                )
        for chunk in adjectives:
            if chunk.kind == "material":
                self.emit(
                    f"{prefix}material",
                    "material",
                    WEIGHT_MATERIAL,
                    span_start(chunk),
                    span_end(chunk),
                    {f"m:{chunk.value}"},
                )
            elif chunk.kind == "shape":
                self.emit(
                    f"{prefix}shape",
                    "shape",
                    WEIGHT_SHAPE,
                    span_start(chunk),
                    span_end(chunk),
                    {f"s:{chunk.value}"},
                )
            elif chunk.kind == "count" and group.nouns:
                noun_part = _part_name(group.nouns)
                if noun_part:
                    self.emit(
                        f"{noun_part}_count",
                        "count",
                        WEIGHT_COUNT,
                        chunk,
                        max(group.nouns[-1], end_chunk or group.nouns[-1], key=lambda c: c.end),
                        {f"n:{chunk.value}"},
                    )
            elif chunk.kind == "word" and chunk.norm == "plain":
                self.emit(
                    f"{prefix}pattern",
                    "pattern",
                    WEIGHT_ABSENCE,
                    chunk,
                    span_end(chunk),
                    set(),
                    positive=False,
                )
        if (
            not has_value
            and not skip_presence
            and part
            and group.nouns
            and not self._is_main_noun(group.nouns, loose=True)
            and not any(chunk.kind == "word" and chunk.norm == "plain" for chunk in adjectives)
        ):
            first_chunk = group.first
            if first_chunk is not None:
                self.emit(part, "part", WEIGHT_PART, first_chunk, span_end(group.nouns[-1]), set())

    def _absorb_complement(self, group: _Group, tail: list[Chunk]) -> None:
        """Move "in <colour>" / "made of|from <material>" values from the complement into ``group``."""
        for i, chunk in enumerate(tail[:-1]):
            if chunk.kind != "word":
                continue
            if chunk.norm == "in" and tail[i + 1].kind == "colour":
                group.adjectives.append(tail[i + 1])
                return
            if chunk.norm == "made" and i + 2 < len(tail) and tail[i + 1].norm in ("of", "from", "out"):
                for item in tail[i + 2 : i + 5]:
                    if item.kind in ("material", "colour"):
                        group.adjectives.append(item)
                return

    def text_or_logo(self, content: list[Chunk]) -> None:
        quotes = [chunk for chunk in content if chunk.kind == "quote"]
        cue = self._text_cue(content)
        logo = next(
            (chunk for chunk in content if chunk.kind == "word" and chunk.norm in LOGO_CUE_WORDS), None
        )
        first = content[0]
        last = content[-1]
        if len(content) > MAX_CLAUSE_EVIDENCE_CHUNKS:
            anchor = quotes[0] if quotes else (logo or cue or content[0])
            last = anchor
        colours = _colour_signature([chunk for chunk in content if chunk.start <= last.start])
        location = _location_part(content)
        if quotes or (cue is not None and (logo is None or cue.start < logo.start)):
            if quotes:
                texts = {f"t:{chunk.value}" for chunk in quotes}
            else:
                after = [
                    chunk.norm
                    for chunk in content
                    if chunk.start > cue.start and chunk.kind != "punct"  # type: ignore[union-attr]
                ][:6]
                texts = {"t:" + " ".join(after)} if after else set()
            prefix = f"{location}_" if location else ""
            self.emit(f"{prefix}text", "logo_text", WEIGHT_TEXT, first, last, texts | colours)
            return
        descriptors = {
            f"w:{chunk.norm}"
            for chunk in content
            if logo is not None
            and chunk.start < logo.start
            and chunk.kind in ("word", "shape", "pattern", "material")
            and chunk.norm not in DETERMINERS
            and chunk.norm not in IGNORABLE_ADJECTIVES
            and chunk.norm not in LOGO_CUE_WORDS
        }
        signature = colours | descriptors
        weight = WEIGHT_LOGO if signature else WEIGHT_BARE_LOGO
        prefix = f"{location}_" if location else ""
        self.emit(f"{prefix}logo", "logo_text", weight, first, last, signature)

    def absence(self, chunks: list[Chunk], start_chunk: Chunk) -> None:
        index = _skip_determiners(chunks, 0)
        while index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in NEGATIONS:
            index += 1
        content = chunks[_skip_determiners(chunks, index) :]
        if not content:
            return
        last = content[-1]
        logo = next(
            (chunk for chunk in content if chunk.kind == "word" and chunk.norm in LOGO_CUE_WORDS), None
        )
        text_cue = self._text_cue(content) or next(
            (chunk for chunk in content if chunk.kind == "quote"), None
        )
        pattern = next((chunk for chunk in content if chunk.kind in ("pattern", "patnoun")), None)
        cue = logo or text_cue or pattern
        if len(content) > MAX_CLAUSE_EVIDENCE_CHUNKS:
            last = cue or content[min(len(content), MAX_CLAUSE_EVIDENCE_CHUNKS) - 1]
        location = _location_part(content)
        prefix = f"{location}_" if location else ""
        if logo is not None or text_cue is not None:
            base = "logo" if logo is not None else "text"
            self.emit(
                f"{prefix}{base}", "logo_text", WEIGHT_ABSENCE, start_chunk, last, set(), positive=False
            )
            return
        if pattern is not None:
            self.emit(f"{prefix}pattern", "pattern", WEIGHT_ABSENCE, start_chunk, last, set(), positive=False)
            return
        end = _np_end(content, 0)
        groups = _groups(content[:end])
        nouns = [noun for group in groups for noun in group.nouns]
        if not nouns or self._is_main_noun(nouns, loose=True):
            return
        part = _part_name(nouns)
        if part:
            self.emit(part, "part", WEIGHT_ABSENCE, start_chunk, last, set(), positive=False)

    # -- helpers -------------------------------------------------------------------------------------------

    def _text_cue(self, chunks: Sequence[Chunk]) -> Chunk | None:
        for i, chunk in enumerate(chunks):
            if chunk.kind != "word":
                continue
            if chunk.norm in TEXT_CUE_WORDS:
                return chunk
            if chunk.norm in ("number", "numbers", "digit", "digits") and i + 1 < len(chunks):
                nxt = chunks[i + 1]
                if nxt.kind in ("quote", "count") or nxt.norm.isdigit():
                    return chunk
        return None

    def _has_text_or_logo(self, chunks: Sequence[Chunk]) -> bool:
        return (
            any(chunk.kind == "quote" for chunk in chunks)
            or any(chunk.kind == "word" and chunk.norm in LOGO_CUE_WORDS for chunk in chunks)
            or self._text_cue(chunks) is not None
        )

    def _is_complement(self, tail: Sequence[Chunk]) -> bool:
        first = tail[0]
        return first.kind == "word" and (first.norm in PREPOSITIONS or first.norm in PARTICIPLES)

    def _is_existential(self, chunk: Chunk) -> bool:
        return chunk.kind == "word" and chunk.norm in ("there", "here", "theres", "heres")

    def _skip_pronoun_copula(self, chunks: Sequence[Chunk], index: int) -> int:
        """Index after "it is", "it's", "this is", "there are", ...; ``index`` itself if none."""
        if index >= len(chunks) or chunks[index].kind != "word":
            return index
        chunk = chunks[index]
        raw = self.text[chunk.start : chunk.end].lower()
        if chunk.norm in _CONTRACTED_PRONOUN_COPULAS:
            return _skip_determiners(chunks, index + 1)
        if chunk.norm in PRONOUNS:
            if raw in _PRONOUN_CONTRACTIONS:
                return _skip_determiners(chunks, index + 1)
            if (
                index + 1 < len(chunks)
                and chunks[index + 1].kind == "word"
                and chunks[index + 1].norm in COPULAS
            ):
                return _skip_determiners(chunks, index + 2)
        return index

    def _first_keyword_chunk(self, chunks: Sequence[Chunk]) -> int | None:
        if not chunks:
            return None
        first, last = chunks[0].first, chunks[-1].last
        matches = keyword_matches(self.tokens, first, last)
        if not matches:
            return None
        token_index = matches[0].first_token
        for i, chunk in enumerate(chunks):
            if chunk.first <= token_index <= chunk.last:
                return i
        return None

    def _classes_of(self, chunks: Sequence[Chunk]) -> frozenset[str]:
        if not chunks:
            return frozenset()
        matches = keyword_matches(self.tokens, chunks[0].first, chunks[-1].last)
        return frozenset(
            category
            for match in matches
            for category, share in match.spread.items()
            if share >= STRONG_KEYWORD_SHARE
        )

    def _merge_modifier_groups(self, groups: list[_Group]) -> list[_Group]:
        """In the object's own noun phrase, nouns before the class word are modifiers ("a thermal yellow
        backpack"): fold every group up to the first one that names a class into one."""
        for position, group in enumerate(groups):
            if not group.nouns:
                continue
            matches = keyword_matches(self.tokens, group.nouns[0].first, group.nouns[-1].last)
            if matches:
                if position == 0:
                    return groups
                merged = _Group()
                for item in groups[: position + 1]:
                    merged.adjectives.extend(item.adjectives)
                    merged.pattern_words.extend(item.pattern_words)
                    merged.modifiers.extend(item.modifiers)
                    if item is not group:
                        merged.modifiers.extend(item.nouns)
                merged.nouns = list(group.nouns)
                return [merged, *groups[position + 1 :]]
        return groups

    def _is_main_noun(self, nouns: Sequence[Chunk], *, loose: bool = False) -> bool:
        """Do these nouns name the object itself rather than a part?

        Strict (values): the phrase's last noun is the head noun of the description's first noun phrase
        ("The mug is red"). Loose (part presence): any strong class word of the object's class ("with keys").
        """
        if not nouns:
            return False
        last = singular(nouns[-1].norm)
        if self.head_noun and last == self.head_noun:
            return True
        if not self.head_noun:
            # The first clause named no object ("a red and very shiny mug"): the first class word is it.
            length, spread = KEYWORD_MATCHER.match(self.tokens, nouns[-1].first, singularise=True)
            if length == 1 and isinstance(spread, dict):
                strong = frozenset(c for c, share in spread.items() if share >= STRONG_KEYWORD_SHARE)
                if strong:
                    self.head_noun, self.head_classes = last, strong
                    return True
        if not loose or not self.head_classes:
            return False
        for noun in nouns:
            length, spread = KEYWORD_MATCHER.match(self.tokens, noun.first, singularise=True)
            if (
                length
                and isinstance(spread, dict)
                and any(
                    share >= STRONG_KEYWORD_SHARE and c in self.head_classes for c, share in spread.items()
                )
            ):
                return True
        return False


# --- merging ---------------------------------------------------------------------------------------------------


def _compatible(a: frozenset[str], b: frozenset[str]) -> bool:
    return a <= b or b <= a


def merge_mentions(mentions: Sequence[Mention]) -> list[Mention]:
    """Merge repeated mentions (see module docstring) and return one representative per attribute."""
    richness: dict[int, int] = {}
    for mention in mentions:
        richness[mention.description] = richness.get(mention.description, 0) + 1

    def specificity(mention: Mention) -> tuple[int, int, int, int, int]:
        return (
            -len(mention.signature),
            -richness.get(mention.description, 0),
            -mention.tokens,
            mention.description,
            mention.start,
        )

    groups: dict[tuple[str, bool], list[list[Mention]]] = {}
    for mention in sorted(mentions, key=specificity):
        bucket = groups.setdefault((mention.name, mention.positive), [])
        for group in bucket:
            if _compatible(group[0].signature, mention.signature):
                group.append(mention)
                break
        else:
            bucket.append([mention])

    # An unqualified pattern/logo/text merges into the one part-qualified attribute it agrees with.
    for base in _QUALIFIABLE_BASES:
        for positive in (True, False):
            plain = groups.get((base, positive))
            if not plain:
                continue
            qualified = [
                group
                for (name, pos), bucket in groups.items()
                if pos == positive and name.endswith(f"_{base}")
                for group in bucket
            ]
            remaining = []
            for group in plain:
                targets = [
                    target for target in qualified if _compatible(target[0].signature, group[0].signature)
                ]
                if len(targets) == 1:
                    targets[0].extend(group)
                    targets[0].sort(key=specificity)
                    if targets[0][0].name != targets[0][-1].name or targets[0][0].name == base:
                        # keep the part-qualified name with the most specific qualified evidence
                        qualified_members = [m for m in targets[0] if m.name != base]
                        best = qualified_members[0]
                        targets[0].remove(best)
                        targets[0].insert(0, best)
                else:
                    remaining.append(group)
            groups[(base, positive)] = remaining

    merged: list[tuple[tuple[int, int, int], Mention]] = []
    for bucket in groups.values():
        for group in bucket:
            representative = group[0]
            first_seen = min(member.order for member in group)
            merged.append((first_seen, representative))
    merged.sort(key=lambda item: item[0])
    return [mention for _, mention in merged]


class RuleBasedDecomposer:
    """Turn descriptions into attributes without any model (see the module docstring for the rules)."""

    def mentions(self, descriptions: Sequence[str]) -> list[Mention]:
        found: list[Mention] = []
        for index, description in enumerate(descriptions):
            if isinstance(description, str) and description.strip():
                found.extend(_DescriptionParser(description, index).parse())
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
