"""Evidence phrase → what the pixels should show: the verifier's reader of the description parser.

The verifier receives quoted text such as ``"a brown brim"``, ``"purple polka dots"`` or ``the word "NOVA" in
white``, never structured values, so the first step of every check is to read the phrase with the same
vocabulary the query decomposer used (:mod:`aiv_verifier.lexicon`, :mod:`.words`). The analysis is
deliberately shallow: the parser's tokens in :data:`~.tokens.READING_TOKENS` style, word lists and positions,
no grammar. What cannot be recognised stays empty and the backend then answers Unsure instead of guessing.

Whole descriptions (direct mode) are cut into clauses by the parser's clause splitter with
:data:`~.clauses.DESCRIPTION_CLAUSES` (at commas and connectives: "with", "featuring", "and", ...); each clause
is analysed on its own, and the first clause, which names the object itself, carries the object's main colour
("a light blue straw sun hat ...").
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import lexicon
from .chunks import token_chunks
from .clauses import DESCRIPTION_CLAUSES, split_clauses
from .tokens import CUTTING_TOKENS, READING_TOKENS, Token, tokenize
from .words import (
    COLOUR_LIST_FILLERS,
    MAIN_NOUNS,
    METALLIC_WORDS,
    ONE_SIDED_PARTS,
    ONE_SIDED_WORDS,
    PART_NOUNS,
    SEE_THROUGH_WORDS,
    SMALL_PARTS,
)

__all__ = [
    "MAIN_NOUNS",
    "MAX_PHRASE_CHARS",
    "ColourTerm",
    "PhraseInfo",
    "analyse_phrase",
    "is_main_colour_claim",
    "is_metallic",
    "named_colour_terms",
    "part_faces_every_side",
    "part_is_see_through",
    "pattern_faces_every_side",
    "split_description",
]

#: Phrases longer than this are cut before analysis: a real evidence phrase is a few words, and a runaway
#: input must not cost more than a few milliseconds.
MAX_PHRASE_CHARS = 600

#: The word a quoted string stands as among a phrase's words (the text's colour is found relative to it).
QUOTE_WORD = "qqq"

#: Words that make a logo or pattern mention an absence: the negations, and "plain" ("a plain surface").
_ABSENCE_WORDS: frozenset[str] = lexicon.NEGATIONS | {"plain"}


@dataclass(frozen=True)
class ColourTerm:
    """One colour named in a phrase: canonical name (lexicon) plus an optional lightness modifier.

    ``modifier`` is set only when no compound canonical name absorbed it ("light green" → green + light, but
    "light blue" is its own canonical colour).
    """

    name: str
    modifier: str = ""
    position: int = 0

    def describe(self) -> str:
        return f"{self.modifier} {self.name}".strip()


@dataclass(frozen=True)
class PhraseInfo:
    """What one phrase (or clause) asks for. Empty fields mean "not mentioned".

    ``kind`` is the checkable claim: ``text`` (quoted word), ``logo`` (a mark, maybe with shape), ``no_logo``
    (absence claim), ``no_pattern`` ("no pattern", "without stripes": a plain surface), ``pattern``,
    ``colour``, ``material``, ``shape``, ``count`` or ``unknown``.
    ``colours`` are the colours that describe the claimed thing itself: the pattern's colours for a pattern,
    the text's colour for text, the logo's colour for a logo, the object's/part's colours otherwise.
    ``base_colours`` are colours in the same phrase that describe something else (a pattern's background).
    """

    text: str
    kind: str
    colours: tuple[ColourTerm, ...] = ()
    base_colours: tuple[ColourTerm, ...] = ()
    pattern: str = ""
    quoted: tuple[str, ...] = ()
    logo_shape: str = ""
    part: str = ""
    is_main: bool = False
    materials: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    count: int | None = None
    truncated: bool = False
    words: tuple[str, ...] = field(default=(), repr=False)


def _words(tokens: Sequence[Token]) -> list[str]:
    """A phrase's words in reading order, a quoted string as :data:`QUOTE_WORD`."""
    return [QUOTE_WORD if token.kind == "quote" else token.norm for token in tokens]


def _colour_at(words: list[str], i: int) -> tuple[ColourTerm | None, int]:
    """The colour term starting at word ``i`` and how many words it spans (0 when none)."""
    for span in (3, 2, 1):
        if i + span > len(words):
            continue
        chunk = " ".join(words[i : i + span])
        name = lexicon.canonical_colour(chunk)
        if name is not None:
            return ColourTerm(name, "", i), span
        if span == 1 and "-" in chunk:
            # "light-blue", "blue-ish": try the spaced form and the parts.
            spaced = lexicon.canonical_colour(chunk.replace("-", " "))
            if spaced is not None:
                return ColourTerm(spaced, "", i), 1
    word = words[i]
    if word in lexicon.COLOUR_MODIFIERS and i + 1 < len(words):
        inner, span = _colour_at(words, i + 1)
        if inner is not None and not inner.modifier:
            return ColourTerm(inner.name, word, i), span + 1
    return None, 0


def _find_colours(words: list[str]) -> list[ColourTerm]:
    found: list[ColourTerm] = []
    i = 0
    while i < len(words):
        term, span = _colour_at(words, i)
        if term is not None:
            found.append(term)
            i += span
        else:
            i += 1
    return found


def _find_multiword(words: list[str], vocabulary: dict[str, tuple[str, ...]]) -> tuple[str, int]:
    """(key, position) of the first vocabulary phrase present in ``words``; ("", -1) when none."""
    best = ("", -1)
    for key, phrases in vocabulary.items():
        for phrase in sorted(phrases, key=lambda p: -len(p.split())):
            parts = phrase.split()
            for i in range(len(words) - len(parts) + 1):
                if words[i : i + len(parts)] == parts and (best[1] < 0 or i < best[1]):
                    best = (key, i)
                    break
    return best


def _logo_shape(words: list[str]) -> str:
    for i in range(len(words)):
        for shape, names in lexicon.LOGO_SHAPE_WORDS.items():
            for name in names:
                parts = name.split()
                if words[i : i + len(parts)] == parts:
                    return shape
    return ""


def analyse_phrase(phrase: str) -> PhraseInfo:
    """Read one evidence phrase (a short clause) into a :class:`PhraseInfo`. Never raises.

    An episode asks about the same phrases at every view, so each distinct phrase is read once (the result
    is immutable) rather than at every step.
    """
    return _analyse_phrase(phrase if isinstance(phrase, str) else "")


@functools.lru_cache(maxsize=4096)
def _analyse_phrase(raw: str) -> PhraseInfo:
    truncated = len(raw) > MAX_PHRASE_CHARS
    raw = raw[:MAX_PHRASE_CHARS]
    tokens = tokenize(raw, READING_TOKENS)
    quoted = tuple(
        token.text[1:-1].strip() for token in tokens if token.kind == "quote" and token.text[1:-1].strip()
    )
    words = _words(tokens)
    colours = _find_colours(words)
    pattern, pattern_pos = _find_multiword(words, dict(lexicon.PATTERN_WORDS))
    has_text_cue = bool(quoted) or any(w in lexicon.TEXT_CUES for w in words)
    logo_positions = [i for i, w in enumerate(words) if w in lexicon.LOGO_CUES]
    negated = any(
        w in _ABSENCE_WORDS and any(0 < j - i <= 3 for j in logo_positions) for i, w in enumerate(words)
    )
    pattern_positions = [i for i, w in enumerate(words) if w in lexicon.PATTERN_NOUNS] + (
        [pattern_pos] if pattern else []
    )
    plain_claim = any(
        w in _ABSENCE_WORDS and any(0 < j - i <= 2 for j in pattern_positions) for i, w in enumerate(words)
    )
    logo_shape = _logo_shape(words)
    materials = tuple(w for w in words if w in lexicon.MATERIAL_WORDS)
    shapes = tuple(w for w in words if w in lexicon.SHAPE_WORDS)
    count = next((lexicon.COUNT_WORDS[w] for w in words if w in lexicon.COUNT_WORDS), None)
    if count is None:
        count = next((int(w) for w in words if w.isdigit() and len(w) <= 2 and not quoted), None)

    part = ""
    for w in words:
        if w in PART_NOUNS or w in MAIN_NOUNS:
            part = w
            break
    is_main = part == "" or part in MAIN_NOUNS

    base: list[ColourTerm] = []
    own: list[ColourTerm] = list(colours)
    if negated and logo_positions:
        kind = "no_logo"
        own = []
    elif plain_claim and not quoted:
        kind = "no_pattern"
        own = []
    elif (quoted and has_text_cue) or quoted:
        kind = "text"
        # The text's colour: "in white" after the quote, or a colour right before "word"/"lettering".
        q_pos = words.index(QUOTE_WORD) if QUOTE_WORD in words else 0
        after = [c for c in colours if c.position > q_pos]
        own = after[:1] if after else [c for c in colours if c.position < q_pos][-1:]
    elif logo_positions:
        kind = "logo"
        first_logo = logo_positions[0]
        own = [c for c in colours if c.position < first_logo][-2:] or [
            c for c in colours if c.position > first_logo
        ][:1]
    elif pattern:
        kind = "pattern"
        before = [c for c in colours if c.position < pattern_pos]
        after = [c for c in colours if c.position > pattern_pos]
        # "purple polka dots", "blue and white stripes": colours right before the pattern word are its
        # colours; "stripes in blue" puts them after; "a white body with blue stripes" is split earlier.
        near = [c for c in before if pattern_pos - c.position <= 4]
        own = near or after[:2]
        base = [c for c in colours if c not in own]
    elif has_text_cue:
        kind = "text"
    elif colours:
        kind = "colour"
    elif materials:
        kind = "material"
    elif shapes:
        kind = "shape"
    elif count is not None:
        kind = "count"
    else:
        kind = "unknown"
    return PhraseInfo(
        text=raw,
        kind=kind,
        colours=tuple(own),
        base_colours=tuple(base),
        pattern=pattern,
        quoted=quoted,
        logo_shape=logo_shape,
        part=part,
        is_main=is_main,
        materials=materials,
        shapes=shapes,
        count=count,
        truncated=truncated,
        words=tuple(words),
    )


def split_description(description: str) -> list[str]:
    """Split a whole description into short clause strings, keeping colour pairs ("black and white") together.

    The cuts are the parser's :func:`~.clauses.split_clauses` with :data:`~.clauses.DESCRIPTION_CLAUSES` on
    :data:`~.tokens.CUTTING_TOKENS` (a quoted title is never cut, even when it holds "and"). A clause made only
    of colour words and fillers is glued to the next one, so "black and white stripes" stays one pattern claim
    while "a brown brim and purple dots" becomes two claims. These cuts differ from the query's (fewer words,
    no absence or logo claim kept whole) because the classical verifier's direct- and merged-mode answers were
    tuned on them.
    """
    raw = (description if isinstance(description, str) else "")[: MAX_PHRASE_CHARS * 2]
    tokens = tokenize(raw, CUTTING_TOKENS)
    clauses: list[str] = []
    pending = ""
    for clause in split_clauses(token_chunks(tokens), DESCRIPTION_CLAUSES, text=raw):
        # A quoted string stands apart from its neighbours ("the word"NOVA"" reads as the word "NOVA").
        spaced = _spaced_quotes(raw, clause.start, clause.end, tokens)
        piece = " ".join(spaced.split())
        words = _words(tokenize(spaced, READING_TOKENS))
        only_colour = bool(words) and all(
            w in COLOUR_LIST_FILLERS
            or w in lexicon.COLOUR_MODIFIERS
            or lexicon.canonical_colour(w) is not None
            for w in words
        )
        if only_colour and _find_colours(words):
            pending = f"{pending} {piece} and".strip()
            continue
        clauses.append(f"{pending} {piece}".strip())
        pending = ""
    if pending:
        clauses.append(pending.removesuffix(" and"))
    return [" ".join(clause.split()) for clause in clauses if clause]


def _spaced_quotes(raw: str, start: int, end: int, tokens: Sequence[Token]) -> str:
    """``raw[start:end]`` with a space either side of every quoted string in it."""
    parts: list[str] = []
    position = start
    for token in tokens:
        if token.kind == "quote" and start <= token.start and token.end <= end:
            parts.extend((raw[position : token.start], f" {token.text} "))
            position = token.end
    parts.append(raw[position:end])
    return "".join(parts)


def part_faces_every_side(info: PhraseInfo) -> bool:
    """Whether a part claim names a part that every viewpoint of the object shows (a hat's brim, a shoe's
    laces, a watch's strap, a pair of glasses' lenses), so that its colour missing from a well-resolved view
    contradicts the claim.

    False for parts tied to one side (by a positional word or by what they are), for small accessories that
    a distant view may not resolve, and for claims that name no part at all.
    """
    words = set(info.words)
    if not info.part or info.part in MAIN_NOUNS:
        return False
    return not (words & ONE_SIDED_WORDS or words & ONE_SIDED_PARTS or words & SMALL_PARTS)


def pattern_faces_every_side(info: PhraseInfo) -> bool:
    """Whether a pattern claim covers the object (or a part) that every viewpoint shows, so that none of the
    pattern's colours in a well-resolved view contradicts it: "blue stripes" and "grey checks" print the
    whole object; "stripes on the brim" follow :func:`part_faces_every_side`; "a flower print on the front
    cover" or "plaid on the back of the case" sit on one face."""
    if info.part and info.part not in MAIN_NOUNS:
        return part_faces_every_side(info)
    return not set(info.words) & ONE_SIDED_WORDS


def is_metallic(info: PhraseInfo) -> bool:
    """Whether the claimed colour is a metal finish ("rose gold", "brass", "gunmetal")."""
    return bool(set(info.words) & METALLIC_WORDS)


def part_is_see_through(info: PhraseInfo) -> bool:
    """Whether the claimed part lets the background show through (tinted lenses, a window): its colour is a
    tint over whatever lies behind, so only its complete absence says anything."""
    return bool(set(info.words) & SEE_THROUGH_WORDS)


def is_main_colour_claim(info: PhraseInfo, attribute_name: str = "") -> bool:
    """Whether a colour claim is about the object as a whole (checkable against its dominant colours).

    A part noun in the phrase ("a brown brim") makes it a part claim; so does a part-named attribute with a
    bare colour phrase (``brim_color = "brown"``). Everything else (``"light blue"``, ``"a dark red body"``,
    ``"brass metal"``) is about the whole object.
    """
    prefix = attribute_name.lower().split("_", 1)[0]
    if info.part and info.part not in MAIN_NOUNS:
        return False
    return prefix not in PART_NOUNS


def named_colour_terms(descriptions: tuple[str, ...] | list[str]) -> list[ColourTerm]:
    """Every colour term any description names (object, parts, patterns, print, logos), in reading order;
    quoted text is skipped (a word inside quotes is printed, not a colour of the object)."""
    terms: list[ColourTerm] = []
    for description in descriptions:
        if not isinstance(description, str):
            continue
        terms.extend(_find_colours(_words(tokenize(description[:MAX_PHRASE_CHARS], READING_TOKENS))))
    return terms
