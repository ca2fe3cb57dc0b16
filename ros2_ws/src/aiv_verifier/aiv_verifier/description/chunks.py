"""Chunks: runs of tokens read as one unit — a colour phrase, a pattern phrase, a material, a shape, a count
word, a quoted string, a punctuation mark or a plain word.

Everything works on token lists in one left-to-right pass, with every look-ahead bounded by a small constant,
so the cost is linear in the length of the text: a 10,000-character description costs a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import lexicon
from .tokens import PhraseMatcher, Token
from .words import COLOUR_SUFFIXES, COPULAS, DETERMINERS, PREPOSITIONS, PRONOUNS, SPLIT_WORDS


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

ADJECTIVE_KINDS: frozenset[str] = frozenset({"colour", "pattern", "material", "shape", "count"})
"""Chunk kinds that describe a noun (they are the values the parser reports)."""


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


_NOT_SHAPES: frozenset[str] = (
    DETERMINERS | COPULAS | PRONOUNS | PREPOSITIONS | SPLIT_WORDS | lexicon.NEGATIONS
)


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
        if token.kind in ("quote", "punct"):
            chunks.append(Chunk(token.kind, index, index, token.start, token.end, token.norm, token.norm))
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
        if token.norm in lexicon.PATTERN_NOUNS:
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


def token_chunks(tokens: Sequence[Token]) -> list[Chunk]:
    """Every token as a chunk of its own kind (word, quote, punct), for a reader that cuts text without
    reading values (:func:`aiv_verifier.description.phrases.split_description`)."""
    return [
        Chunk(token.kind, index, index, token.start, token.end, token.norm, token.norm)
        for index, token in enumerate(tokens)
    ]
