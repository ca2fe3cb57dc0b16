"""Noun phrases inside a clause: where one ends, how its chunks group into describing values and nouns, and
which part a group or a location complement names ("a brown brim" → brim, "on the back of the lid" → lid)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..description.chunks import ADJECTIVE_KINDS, Chunk
from ..description.tokens import singular
from ..description.words import (
    COPULAS,
    DETERMINERS,
    IGNORABLE_ADJECTIVES,
    PARTICIPLES,
    PLACE_PREPOSITIONS,
    POSITION_WORDS,
    PREPOSITIONS,
    QUANTIFIER_NOUNS,
    SIDE_QUALIFIERS,
    SPLIT_WORDS,
    VAGUE_NOUNS,
)

ING_NOUNS: frozenset[str] = frozenset(
    [
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
    ]
)
"""Nouns that end in "-ing" and must not be read as verbs."""


@dataclass
class NounGroup:
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


def is_breaker(chunks: Sequence[Chunk], index: int) -> bool:
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


def skip_determiners(chunks: Sequence[Chunk], index: int) -> int:
    while index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in DETERMINERS:
        index += 1
    return index


def skip_quantifier(chunks: Sequence[Chunk], index: int) -> int:
    """Skip "pair of", "a set of the", ... at ``index``."""
    if (
        index + 1 < len(chunks)
        and chunks[index].kind == "word"
        and chunks[index].norm in QUANTIFIER_NOUNS
        and chunks[index + 1].kind == "word"
        and chunks[index + 1].norm == "of"
    ):
        return skip_determiners(chunks, index + 2)
    return index


def np_end(chunks: Sequence[Chunk], start: int) -> int:
    index = start
    while index < len(chunks) and not is_breaker(chunks, index):
        index += 1
    return index


def noun_groups(chunks: Sequence[Chunk]) -> list[NounGroup]:
    """Split a noun-phrase region into groups: a describing chunk after a noun starts a new group."""
    groups: list[NounGroup] = []
    current = NounGroup()
    for chunk in chunks:
        if chunk.kind == "word" and chunk.norm in DETERMINERS:
            if current.nouns:  # "there's | a little panda keychain"
                groups.append(current)
                current = NounGroup()
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
                current = NounGroup()
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


def part_name(nouns: Sequence[Chunk]) -> str:
    words = [
        singular(chunk.norm.replace("'", ""))
        for chunk in nouns
        if chunk.kind == "word" and chunk.norm not in IGNORABLE_ADJECTIVES
    ]
    words = [word for word in words if word and word not in VAGUE_NOUNS]
    name = "_".join(words[-2:])
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_")


def location_part(chunks: Sequence[Chunk]) -> str:
    """Part named by the first place complement in ``chunks`` ("on the back of the lid" → "lid"), or ""."""
    index = 0
    while index < len(chunks):
        chunk = chunks[index]
        if chunk.kind == "word" and chunk.norm in PLACE_PREPOSITIONS:
            nxt = skip_determiners(chunks, index + 1)
            if chunk.norm == "in" and (nxt == index + 1 or nxt >= len(chunks)):
                index += 1  # "in white" is a colour, "in the middle" a place
                continue
            words: list[Chunk] = []
            position = nxt
            while position < len(chunks):
                item = chunks[position]
                if item.kind == "word" and item.norm == "of":
                    words = []
                    position = skip_determiners(chunks, position + 1)
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
                return part_name(words)
            return ""
        index += 1
    return ""


def colour_signature(chunks: Sequence[Chunk]) -> set[str]:
    return {f"c:{colour}" for chunk in chunks if chunk.kind == "colour" for colour in chunk.value}  # type: ignore[attr-defined]
