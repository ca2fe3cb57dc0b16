"""Values of noun phrases → mentions: the part of the decomposer that writes what a clause states (colours,
patterns, materials, shapes, counts, text, logos, absences) with its verbatim evidence (rules 1-4 of
:mod:`.rules`). :class:`aiv_verifier.query.clause_reader.DescriptionReader` decides which clause says what
about which thing and calls these writers."""

from __future__ import annotations

from collections.abc import Sequence

from .. import lexicon
from ..description.chunks import ADJECTIVE_KINDS, Chunk, chunk_tokens
from ..description.tokens import Token, singular, tokenize
from ..description.words import (
    DETERMINERS,
    IGNORABLE_ADJECTIVES,
    LOGO_CUE_WORDS,
    PARTICIPLES,
    PREPOSITIONS,
    TEXT_CUE_WORDS,
)
from .categories import KEYWORD_MATCHER
from .mentions import (
    WEIGHT_ABSENCE,
    WEIGHT_BARE_LOGO,
    WEIGHT_COLOUR,
    WEIGHT_COUNT,
    WEIGHT_LOGO,
    WEIGHT_MATERIAL,
    WEIGHT_PART,
    WEIGHT_PATTERN,
    WEIGHT_SHAPE,
    WEIGHT_TEXT,
    Mention,
)
from .noun_phrases import (
    NounGroup,
    colour_signature,
    location_part,
    noun_groups,
    np_end,
    part_name,
    skip_determiners,
)

STRONG_KEYWORD_SHARE = 0.7
"""A class word this unambiguous ("keys", not "fob") marks a noun as the object itself."""
MAX_TAIL_CHUNKS = 8
"""A location complement longer than this is not appended to a part's evidence."""
MAX_CLAUSE_EVIDENCE_CHUNKS = 16
"""Text/logo/absence evidence longer than this is cut after the cue word (or the quote)."""
APPEARANCE_WORDS: frozenset[str] = frozenset({"clear", "transparent", "translucent", "opaque", "shiny"})
"""Kept in a colour's evidence when they come right before it ("transparent white")."""


class MentionWriter:
    """The state of reading one description (its tokens, chunks, mentions so far and the object's own head
    noun) and the writers of mentions."""

    def __init__(self, text: str, index: int) -> None:
        self.text = text
        self.index = index
        self.tokens: list[Token] = tokenize(text)
        self.chunks = chunk_tokens(self.tokens)
        self.mentions: list[Mention] = []
        self.head_classes: frozenset[str] = frozenset()
        self.head_noun = ""

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

    def describe(
        self,
        group: NounGroup,
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
                colour_signature([colour]),
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
                pattern_part = location_part(tail) or None
            else:
                pattern_part = part if part else (location_part(tail) or None)
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
                    kinds | colour_signature(pattern_colours),
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
                noun_part = part_name(group.nouns)
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

    def _absorb_complement(self, group: NounGroup, tail: list[Chunk]) -> None:
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
        colours = colour_signature([chunk for chunk in content if chunk.start <= last.start])
        location = location_part(content)
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
        index = skip_determiners(chunks, 0)
        while (
            index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in lexicon.NEGATIONS
        ):
            index += 1
        content = chunks[skip_determiners(chunks, index) :]
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
        location = location_part(content)
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
        end = np_end(content, 0)
        groups = noun_groups(content[:end])
        nouns = [noun for group in groups for noun in group.nouns]
        if not nouns or self._is_main_noun(nouns, loose=True):
            return
        part = part_name(nouns)
        if part:
            self.emit(part, "part", WEIGHT_ABSENCE, start_chunk, last, set(), positive=False)

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
