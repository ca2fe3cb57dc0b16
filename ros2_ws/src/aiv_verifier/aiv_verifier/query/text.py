"""Text plumbing for the weight-free query parser: tokens with character spans, lexicon phrase matching and
"chunks" (a colour phrase, a pattern phrase, a material, a shape, a count word, a quoted string, a plain word).

Everything works on token lists in one left-to-right pass, with every look-ahead bounded by a small constant,
so the cost is linear in the length of the text: a 10,000-character description costs a few milliseconds.
Spans always index the *original* string, which is what lets the decomposer quote evidence verbatim.

Normalisation for matching only (never for evidence): lower case, curly apostrophes straightened, possessive
"'s" dropped, American "color(ed)" read as "colour(ed)", and hyphenated words split into their parts with the
hyphen remembered (so "off-white", "off white" and "light-blue" all match the lexicon).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .. import lexicon

# --- tokens ----------------------------------------------------------------------------------------------------

# One alternation, no nested quantifiers: linear time. Quoted strings are bounded (200 / 80 characters) so an
# unmatched quote costs a bounded scan. Single quotes count as quotes only when not glued to a letter on the
# outside, so "it's" and "girls' bag" stay words.
_TOKEN_RE = re.compile(
    r"""
    (?P<quote>"[^"\n]{1,200}"|“[^”\n]{1,200}”|«[^»\n]{1,200}»|(?<![^\W_])['‘][^'’‘\n]{1,80}['’](?![^\W_]))
    |(?P<without>(?<![^\W_])[wW]/[oO](?![^\W_]))
    |(?P<with>(?<![^\W_])[wW]/)
    |(?P<word>[^\W_]+(?:['’][^\W_]+)*)
    |(?P<punct>[,;:.!?()\[\]{}&+|\n/]|\r\n?)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Token:
    """A word, a quoted string or a punctuation mark; ``start``/``end`` index the original text."""

    start: int
    end: int
    text: str
    norm: str
    kind: str  # "word" | "quote" | "punct"
    hyphen_before: bool = False


def normalise_word(word: str) -> str:
    text = word.lower().replace("’", "'")
    if text.endswith("'s"):
        text = text[:-2]
    if text.startswith("color"):
        text = "colour" + text[5:]
    return text


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN_RE.finditer(text):
        kind = match.lastgroup or "punct"
        raw = match.group()
        start, end = match.start(), match.end()
        if kind == "quote":
            tokens.append(Token(start, end, raw, raw[1:-1].strip().lower(), "quote"))
        elif kind == "with":
            tokens.append(Token(start, end, raw, "with", "word"))
        elif kind == "without":
            tokens.append(Token(start, end, raw, "without", "word"))
        elif kind == "word":
            hyphen = (
                start > 0
                and text[start - 1] == "-"
                and bool(tokens)
                and tokens[-1].end == start - 1
                and tokens[-1].kind == "word"
            )
            tokens.append(Token(start, end, raw, normalise_word(raw), "word", hyphen))
        else:
            norm = "\n" if raw.startswith("\r") else raw
            tokens.append(Token(start, end, raw, "and" if norm in "&+" else norm, "punct"))
    return tokens


def phrase_tokens(phrase: str) -> tuple[str, ...]:
    """How a lexicon phrase looks as normalised tokens ("off-white" → ("off", "white"))."""
    return tuple(normalise_word(part) for part in re.split(r"[\s\-]+", phrase.strip()) if part)


def singular(word: str) -> str:
    """A light-weight singular for part names ("straps" → "strap", "lenses" → "lens", "glasses" kept)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word in _IRREGULAR_SINGULAR:
        return _IRREGULAR_SINGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zzes", "sses")):
        return word[:-2]
    if word.endswith(("ss", "us", "is", "ous")):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


_IRREGULAR_SINGULAR: Mapping[str, str] = {
    "lenses": "lens",
    "lens": "lens",
    "canvas": "canvas",
    "atlas": "atlas",
    "gas": "gas",
    "bus": "bus",
    "plus": "plus",
    "chassis": "chassis",
    "dress": "dress",
    "dresses": "dress",
    "glasses": "glasses",
    "eyeglasses": "eyeglasses",
    "sunglasses": "sunglasses",
    "headphones": "headphones",
    "earphones": "earphones",
    "feet": "foot",
    "teeth": "tooth",
    "series": "series",
    "species": "species",
    "jeans": "jeans",
    "pants": "pants",
    "shorts": "shorts",
    "trousers": "trousers",
}


class PhraseMatcher:
    """Longest-match lookup of multi-word phrases (as normalised token tuples) starting at a token index."""

    def __init__(self, phrases: Mapping[str, object] | Iterable[tuple[str, object]]) -> None:
        items = phrases.items() if isinstance(phrases, Mapping) else phrases
        self._table: dict[tuple[str, ...], object] = {}
        for phrase, value in items:
            key = phrase_tokens(phrase)
            if key and key not in self._table:
                self._table[key] = value
        self.max_len = max((len(key) for key in self._table), default=0)

    def match(self, tokens: Sequence[Token], index: int, *, singularise: bool = False) -> tuple[int, object]:
        """(number of tokens matched, value) for the longest phrase at ``index``; (0, None) if none.

        A phrase never spans punctuation or a quoted string.
        """
        words: list[str] = []
        for offset in range(self.max_len):
            position = index + offset
            if position >= len(tokens) or tokens[position].kind != "word":
                break
            words.append(tokens[position].norm)
        for length in range(len(words), 0, -1):
            key = tuple(words[:length])
            if key in self._table:
                return length, self._table[key]
            if singularise:
                key = (*key[:-1], singular(key[-1]))
                if key in self._table:
                    return length, self._table[key]
        return 0, None


# --- word classes the parser needs beyond the shared lexicon ---------------------------------------------------

DETERMINERS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "the",
        "its",
        "it's",
        "their",
        "his",
        "her",
        "my",
        "our",
        "your",
        "some",
        "this",
        "these",
        "those",
        "also",
        "just",
        "only",
        "both",
        "each",
        "every",
        "any",
        "another",
        "other",
    }
)
"""Dropped at the start of a noun phrase."""

QUANTIFIER_NOUNS: frozenset[str] = frozenset(
    {
        "pair",
        "set",
        "bunch",
        "couple",
        "kind",
        "type",
        "sort",
        "piece",
        "ring",
        "bundle",
        "collection",
        "stack",
    }
)
"""``<noun> of`` at the start of a phrase is skipped ("a pair of shoes", "a bunch of keys")."""

PRONOUNS: frozenset[str] = frozenset({"it", "this", "that", "there", "here", "they", "these", "those", "i"})
COPULAS: frozenset[str] = frozenset(
    {"is", "are", "was", "were", "be", "been", "looks", "look", "seems", "seem", "appears", "appear", "'s"}
)

SPLIT_WORDS: frozenset[str] = frozenset(
    {
        "with",
        "featuring",
        "features",
        "feature",
        "that",
        "which",
        "who",
        "has",
        "have",
        "having",
        "had",
        "plus",
        "and",
        "or",
        "but",
        "also",
        "including",
        "includes",
        "include",
        "while",
        "whereas",
        "where",
        "whose",
        "wearing",
        "showing",
        "shows",
        "contains",
        "containing",
        "sporting",
        "boasting",
    }
)
"""Words that start a new clause (the word itself is not part of either clause)."""

SPLIT_PUNCT: frozenset[str] = frozenset(
    {",", ";", ":", ".", "!", "?", "(", ")", "[", "]", "{", "}", "|", "\n"}
)

NEGATIONS: frozenset[str] = frozenset({"no", "without", "not", "nothing", "none", "never"})

PREPOSITIONS: frozenset[str] = frozenset(
    {
        "on",
        "at",
        "in",
        "around",
        "along",
        "near",
        "across",
        "over",
        "under",
        "underneath",
        "beneath",
        "below",
        "above",
        "behind",
        "between",
        "inside",
        "outside",
        "of",
        "by",
        "for",
        "from",
        "to",
        "into",
        "onto",
        "about",
        "like",
        "as",
        "than",
        "within",
        "beside",
        "next",
        "via",
        "per",
        "towards",
        "toward",
        "throughout",
        "upon",
        "against",
        "among",
        "atop",
        "out",
        "off",
        "up",
        "down",
    }
)
"""End a noun phrase; what follows is a location or other complement."""

PLACE_PREPOSITIONS: frozenset[str] = frozenset(
    {
        "on",
        "at",
        "around",
        "along",
        "near",
        "across",
        "over",
        "under",
        "underneath",
        "beneath",
        "below",
        "above",
        "behind",
        "inside",
        "outside",
        "onto",
        "atop",
        "upon",
        "within",
        "in",
    }
)
"""Prepositions that introduce where on the object something is ("on the lid", "around it")."""

PARTICIPLES: frozenset[str] = frozenset(
    {
        "sticking",
        "hanging",
        "holding",
        "coming",
        "going",
        "attached",
        "printed",
        "written",
        "embroidered",
        "engraved",
        "located",
        "placed",
        "made",
        "painted",
        "stitched",
        "sewn",
        "covered",
        "decorated",
        "filled",
        "lying",
        "sitting",
        "standing",
        "facing",
        "looking",
        "peeking",
        "poking",
        "protruding",
        "reading",
        "saying",
        "spelling",
        "shaped",
        "used",
    }
)
"""Verb forms that end a noun phrase ("a card sticking out", "a logo printed on the side")."""

IGNORABLE_ADJECTIVES: frozenset[str] = frozenset(
    {
        "small",
        "smaller",
        "big",
        "bigger",
        "large",
        "larger",
        "tiny",
        "little",
        "huge",
        "long",
        "longer",
        "mini",
        "medium",
        "cute",
        "nice",
        "pretty",
        "old",
        "new",
        "worn",
        "cool",
        "beautiful",
        "lovely",
        "simple",
        "classic",
        "standard",
        "normal",
        "regular",
        "typical",
        "generic",
        "common",
        "fancy",
        "shiny",
        "soft",
        "hard",
        "heavy",
        "light",
        "very",
        "really",
        "quite",
        "rather",
        "slightly",
        "somewhat",
        "mostly",
        "mainly",
        "predominantly",
        "entirely",
        "fully",
        "all",
        "super",
        "kinda",
        "dull",
        "faded",
        "dirty",
        "clean",
        "usual",
        "ordinary",
        "cheap",
        "expensive",
        "fake",
        "real",
        "vintage",
        "modern",
        "retro",
        "some",
        "various",
        "several",
        "many",
        "few",
        "multiple",
        "lots",
        "clear",
        "transparent",
        "translucent",
        "opaque",
    }
)
"""Size/quality words skipped inside a noun phrase (neither the value nor the part)."""

VAGUE_NOUNS: frozenset[str] = frozenset(
    {
        "it",
        "them",
        "one",
        "ones",
        "thing",
        "things",
        "stuff",
        "something",
        "lot",
        "bit",
        "kind",
        "type",
        "sort",
        "design",
        "designs",
        "style",
        "look",
        "color",
        "colour",
        "colours",
        "shade",
        "tone",
        "item",
        "object",
        "way",
        "i",
        "me",
        "you",
        "we",
        "they",
        "he",
        "she",
        "this",
        "that",
        "there",
        "here",
        "what",
        "etc",
        "maybe",
        "probably",
        "too",
        "well",
        "yes",
        "not",
        "sure",
    }
)
"""Nouns that never name a checkable part."""

POSITION_WORDS: frozenset[str] = frozenset(
    {
        "front",
        "back",
        "top",
        "bottom",
        "side",
        "sides",
        "left",
        "right",
        "middle",
        "center",
        "centre",
        "edge",
        "edges",
        "corner",
        "corners",
        "surface",
        "inside",
        "outside",
        "interior",
        "exterior",
        "it",
        "them",
        "this",
        "that",
        "one",
        "end",
        "ends",
        "part",
        "area",
        "place",
        "spot",
        "rear",
        "face",
        "underside",
        "base",
        "upper",
        "lower",
        "outer",
        "inner",
        "both",
        "each",
        "all",
        "whole",
        "entire",
        "half",
        "itself",
    }
)
"""A location made only of these words names no part ("on the front", "on its right side", "around it")."""

SIDE_QUALIFIERS: frozenset[str] = frozenset(
    {"left", "right", "both", "one", "each", "outer", "inner", "upper", "lower", "its", "their", "his", "her"}
)
"""Dropped from the start of a location's noun phrase ("the right arm" → arm)."""

COLOUR_SUFFIXES: frozenset[str] = frozenset(
    {"coloured", "colour", "colours", "toned", "tone", "ish", "tinted"}
)
"""Tokens that may close a colour phrase ("cream colored", "blue-ish")."""

TEXT_CUE_WORDS: frozenset[str] = frozenset(normalise_word(word) for word in lexicon.TEXT_CUES) - {"printed"}
"""Words that announce printed text. "printed" alone ("printed teapots") reads as a pattern, not text."""
LOGO_CUE_WORDS: frozenset[str] = frozenset(normalise_word(word) for word in lexicon.LOGO_CUES) | frozenset(
    {"logos", "emblems", "badges", "brands", "symbols", "icons", "labels", "patches", "stickers"}
)
PATTERN_NOUNS: frozenset[str] = frozenset(
    {"pattern", "patterns", "patterned", "print", "prints", "printed", "motif", "motifs"}
)
"""Generic pattern words; the word before them names the kind ("galaxy print")."""


# --- chunks ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chunk:
    """A run of tokens read as one unit.

    ``kind``: colour (value = tuple of canonical colours), pattern (value = pattern kind), patnoun (generic
    "pattern"/"print"), material (value = material word), shape (value = shape word), count (value = int),
    quote (value = the quoted text, lower case), punct, word (value = the normalised word).
    """

    kind: str
    first: int
    last: int  # inclusive token index
    start: int
    end: int
    value: object
    norm: str


def _colour_phrases() -> dict[str, str]:
    table = {name: name for name in lexicon.CANONICAL_COLOURS}
    table.update(lexicon.COLOUR_SYNONYMS)
    return table


COLOUR_MATCHER = PhraseMatcher(_colour_phrases())
MODIFIERS: frozenset[str] = frozenset(lexicon.COLOUR_MODIFIERS)
PATTERN_MATCHER = PhraseMatcher(
    (phrase, kind) for kind, phrases in lexicon.PATTERN_WORDS.items() for phrase in phrases
)
MATERIAL_MATCHER = PhraseMatcher((word, word) for word in lexicon.MATERIAL_WORDS)
SHAPE_MATCHER = PhraseMatcher((word, word) for word in lexicon.SHAPE_WORDS)
COUNT_WORDS: Mapping[str, int] = lexicon.COUNT_WORDS
_MAX_MODIFIERS = 3
_MAX_LIST_COLOURS = 8


def _colour_unit(tokens: Sequence[Token], index: int) -> tuple[int, str | None]:
    """(tokens consumed, canonical colour) for ``modifier* colour`` at ``index``; (0, None) if none."""
    position = index
    for _ in range(_MAX_MODIFIERS + 1):
        if position >= len(tokens):
            return 0, None
        length, canonical = COLOUR_MATCHER.match(tokens, position)
        if length:
            position += length
            # "blue-ish", "cream coloured", "dark-toned"
            while position < len(tokens) and tokens[position].kind == "word":
                if tokens[position].norm in COLOUR_SUFFIXES:
                    position += 1
                else:
                    break
            return position - index, str(canonical)
        if tokens[position].kind == "word" and tokens[position].norm in MODIFIERS:
            position += 1
            continue
        return 0, None
    return 0, None


def _colour_phrase(tokens: Sequence[Token], index: int) -> tuple[int, tuple[str, ...]]:
    """A colour phrase: units joined by and/&/'/'/hyphen, and "a, b and c" lists. Bounded look-ahead."""
    length, first = _colour_unit(tokens, index)
    if not length or first is None:
        return 0, ()
    colours = [first]
    position = index + length
    committed_end = position
    committed_colours = list(colours)
    pending_comma = False
    while len(colours) < _MAX_LIST_COLOURS and position < len(tokens):
        joiner = tokens[position]
        if joiner.kind == "word" and joiner.hyphen_before:
            step, colour = _colour_unit(tokens, position)  # "black-white"
            if step and colour:
                colours.append(colour)
                position += step
                if not pending_comma:
                    committed_end, committed_colours = position, list(colours)
                continue
            break
        if joiner.norm in {"and", "/"} or (joiner.kind == "word" and joiner.norm == "and"):
            step, colour = _colour_unit(tokens, position + 1)
            if step and colour:
                colours.append(colour)
                position += 1 + step
                pending_comma = False
                committed_end, committed_colours = position, list(colours)
                continue
            break
        if joiner.norm == ",":
            step, colour = _colour_unit(tokens, position + 1)
            if step and colour:
                colours.append(colour)
                position += 1 + step
                pending_comma = True  # only kept if the list is closed by "and"
                continue
            break
        break
    unique: list[str] = []
    for colour in committed_colours:
        if colour not in unique:
            unique.append(colour)
    return committed_end - index, tuple(unique)


def _shape_at(tokens: Sequence[Token], index: int) -> int:
    """Tokens in a shape word at ``index``: a lexicon shape, or ``X-shaped`` / ``X shaped``."""
    token = tokens[index]
    if token.kind != "word":
        return 0
    nxt = tokens[index + 1] if index + 1 < len(tokens) else None
    if nxt is not None and nxt.kind == "word" and nxt.norm == "shaped" and token.norm not in _NOT_SHAPES:
        return 2
    length, _ = SHAPE_MATCHER.match(tokens, index)
    return length


_NOT_SHAPES: frozenset[str] = DETERMINERS | COPULAS | PRONOUNS | PREPOSITIONS | SPLIT_WORDS | NEGATIONS


def _is_count(token: Token, nxt: Token | None) -> int | None:
    if token.kind != "word":
        return None
    if token.norm.isdigit() and len(token.norm) <= 3:
        return int(token.norm)
    value = COUNT_WORDS.get(token.norm)
    if value is None or token.norm == "pair":
        return None
    if nxt is not None and nxt.kind == "word" and nxt.norm == "of":  # "one of the ...", "two of them"
        return None
    return value


def chunk_tokens(tokens: Sequence[Token]) -> list[Chunk]:
    """Group tokens into chunks in one left-to-right pass (longest lexicon match wins, colour first)."""
    chunks: list[Chunk] = []
    index = 0
    count = len(tokens)
    while index < count:
        token = tokens[index]
        if token.kind == "quote":
            chunks.append(Chunk("quote", index, index, token.start, token.end, token.norm, token.norm))
            index += 1
            continue
        if token.kind == "punct":
            chunks.append(Chunk("punct", index, index, token.start, token.end, token.norm, token.norm))
            index += 1
            continue
        length, colours = _colour_phrase(tokens, index)
        if length:
            last = index + length - 1
            chunks.append(
                Chunk("colour", index, last, token.start, tokens[last].end, colours, " ".join(colours))
            )
            index += length
            continue
        length, kind = PATTERN_MATCHER.match(tokens, index)
        if length:
            last = index + length - 1
            chunks.append(Chunk("pattern", index, last, token.start, tokens[last].end, kind, str(kind)))
            index += length
            continue
        if token.norm in PATTERN_NOUNS:
            chunks.append(Chunk("patnoun", index, index, token.start, token.end, token.norm, token.norm))
            index += 1
            continue
        length, material = MATERIAL_MATCHER.match(tokens, index)
        if length:
            last = index + length - 1
            chunks.append(
                Chunk("material", index, last, token.start, tokens[last].end, material, str(material))
            )
            index += length
            continue
        length = _shape_at(tokens, index)
        if length:
            last = index + length - 1
            value = " ".join(t.norm for t in tokens[index : last + 1] if t.norm != "shaped")
            chunks.append(Chunk("shape", index, last, token.start, tokens[last].end, value, value))
            index += length
            continue
        nxt = tokens[index + 1] if index + 1 < count else None
        number = _is_count(token, nxt)
        if number is not None:
            chunks.append(Chunk("count", index, index, token.start, token.end, number, token.norm))
            index += 1
            continue
        chunks.append(Chunk("word", index, index, token.start, token.end, token.norm, token.norm))
        index += 1
    return chunks


ADJECTIVE_KINDS: frozenset[str] = frozenset({"colour", "pattern", "material", "shape", "count"})
"""Chunk kinds that describe a noun (they are the values the parser reports)."""


# --- clauses ---------------------------------------------------------------------------------------------------

SENTENCE_PUNCT: frozenset[str] = frozenset({".", "!", "?", "\n", ";"})


@dataclass(frozen=True, slots=True)
class Clause:
    """A stretch of chunks between clause boundaries.

    ``opener`` is what started it ("" at the start of the text, else the splitting word or punctuation),
    ``sentence_start`` whether it begins a sentence, ``negated`` whether it is an absence claim ("no logo",
    "without a handle", or an "or" continuation of one).
    """

    chunks: tuple[Chunk, ...]
    opener: str
    sentence_start: bool
    negated: bool


def _content_start(chunks: Sequence[Chunk]) -> int:
    index = 0
    while index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in DETERMINERS:
        index += 1
    return index


def _starts_negated(chunks: Sequence[Chunk]) -> bool:
    index = _content_start(chunks)
    return index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in NEGATIONS


def split_clauses(chunks: Sequence[Chunk]) -> list[Clause]:
    """Cut a chunk list into clauses at punctuation and clause words (see :data:`SPLIT_WORDS`).

    Inside an absence claim ("no sticker with a logo") and after a logo word ("a sticker with the word X"),
    "with"/"that"/"which" do not split, so the claim stays whole. Empty clauses are dropped.
    """
    clauses: list[Clause] = []
    current: list[Chunk] = []
    opener = ""
    sentence_start = True
    has_logo_cue = False

    def close(next_opener: str, next_sentence_start: bool) -> None:
        nonlocal current, opener, sentence_start, has_logo_cue
        if current:
            negated = _starts_negated(current)
            if not negated and opener in {"or", "nor"} and clauses and clauses[-1].negated:
                negated = True
            clauses.append(Clause(tuple(current), opener, sentence_start, negated))
            current = []
            opener, sentence_start = next_opener, next_sentence_start
        else:
            # Nothing since the last boundary: keep the stronger boundary (a sentence start stays one).
            opener = next_opener if not sentence_start or next_sentence_start else opener
            sentence_start = sentence_start or next_sentence_start
        has_logo_cue = False

    for chunk in chunks:
        norm = chunk.norm
        if chunk.kind == "punct" and (norm in SPLIT_PUNCT or norm in {"and", "/"}):
            close(norm, norm in SENTENCE_PUNCT)
            continue
        if chunk.kind == "word" and norm in SPLIT_WORDS:
            keep_whole = (
                norm in {"with", "that", "which"}
                and bool(current)
                and (_starts_negated(current) or has_logo_cue)
            )
            if not keep_whole:
                close(norm, False)
                continue
        if chunk.kind == "word" and norm == "without" and current:
            close("without", False)
        if chunk.kind == "word" and norm in LOGO_CUE_WORDS:
            has_logo_cue = True
        current.append(chunk)
    close("", False)
    return clauses
