"""The decomposer's reading of one description, clause by clause: which clause is the object's own noun
phrase, which ones name parts, which state absences, text or logos, and which attach a value to the subject of
an earlier one ("... that is red"); rules 1-5 of :mod:`.rules`."""

from __future__ import annotations

from collections.abc import Sequence

from .. import lexicon
from ..description.chunks import Chunk
from ..description.clauses import Clause, split_clauses
from ..description.tokens import singular
from ..description.words import COPULAS, DETERMINERS, LOGO_CUE_WORDS, PRONOUNS, TEXT_CUE_WORDS
from .categories import keyword_matches
from .mentions import WEIGHT_TEXT, Mention
from .noun_phrases import (
    NounGroup,
    is_breaker,
    location_part,
    noun_groups,
    np_end,
    part_name,
    skip_determiners,
    skip_quantifier,
)
from .values import STRONG_KEYWORD_SHARE, MentionWriter

_CONTRACTED_PRONOUN_COPULAS = frozenset({"theres", "thats", "heres", "whats"})
_PRONOUN_CONTRACTIONS = ("it's", "it’s", "that's", "that’s", "there's", "there’s", "here's", "here’s")


class DescriptionReader(MentionWriter):
    """Parses one description into mentions."""

    def parse(self) -> list[Mention]:
        clauses = split_clauses(self.chunks)
        head_done = False
        negation_start: Chunk | None = None
        previous_subject: str | None = None  # None = the object itself, else a part name
        for clause in clauses:
            chunks = list(clause.chunks)
            if clause.negated:
                start_index = skip_determiners(chunks, 0)
                if start_index < len(chunks) and chunks[start_index].norm in lexicon.NEGATIONS:
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

    def head_clause(self, chunks: list[Chunk]) -> bool:
        """The first clause: find the object's own noun phrase. Returns False if the clause had no content."""
        index = skip_determiners(chunks, 0)
        index = self._skip_pronoun_copula(chunks, index)
        index = skip_quantifier(chunks, skip_determiners(chunks, index))
        if index >= len(chunks):
            return False
        if is_breaker(chunks, index) or (chunks[index].kind == "word" and chunks[index].norm in PRONOUNS):
            keyword_at = self._first_keyword_chunk(chunks)
            if keyword_at is None:
                # No noun phrase at the start and no class word: read the clause like any other.
                self.clause(chunks, None, None)
                return True
            start = keyword_at
            while (
                start > 0 and not is_breaker(chunks, start - 1) and chunks[start - 1].norm not in DETERMINERS
            ):
                if chunks[start - 1].kind == "word" and chunks[start - 1].norm in PRONOUNS:
                    break
                start -= 1
            index = start
        end = np_end(chunks, index)
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
        groups = noun_groups(region)
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
            self.describe(group, part_name(group.nouns) or None, [], is_main=False)
        if len(groups) > 1:
            last = groups[-1]
            self.describe(last, part_name(last.nouns) or None, tail, is_main=False)
        if tail and (not self._is_complement(tail) or self._has_text_or_logo(tail)):
            self.clause(tail, None, None)
        return True

    def clause(self, chunks: list[Chunk], clause: Clause | None, previous_subject: str | None) -> str | None:
        """A later clause. Returns the subject it talked about (for an elided "that is ..." next)."""
        index = skip_determiners(chunks, 0)
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
            subject_groups = noun_groups(subject_region)
            nouns = [noun for group in subject_groups for noun in group.nouns]
            subject = None if (not nouns or self._is_main_noun(nouns)) else (part_name(nouns) or None)
            # values written before the copula ("the red handle is ...") still count
            for group in subject_groups:
                if group.adjectives:
                    self.describe(group, subject, [], is_main=subject is None)
            self.predicate(content[copula_at + 1 :], subject, subject_chunks=subject_region)
            return subject
        start = skip_quantifier(content, 0)
        end = np_end(content, start)
        region = content[start:end]
        tail = content[end:]
        groups = noun_groups(region)
        subject = None
        for position, group in enumerate(groups):
            is_last = position == len(groups) - 1
            group_tail = tail if is_last else []
            if group.nouns and self._is_main_noun(group.nouns):
                self.describe(group, None, group_tail, is_main=True, skip_presence=True)
                subject = None
                continue
            part = part_name(group.nouns) if group.nouns else ""
            if not part:
                part = location_part(group_tail)
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
        start = skip_determiners(chunks, 0)
        end = np_end(chunks, start)
        groups = noun_groups(chunks[start:end])
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
                part = part_name(group.nouns)
                self.describe(group, part or None, group_tail, is_main=not part)
            else:
                self.describe(
                    group, subject, group_tail, is_main=subject is None, anchor=anchor, skip_presence=True
                )
        if not groups and tail:
            self.complement(tail, subject, anchor)

    def brand(self, group: NounGroup) -> None:
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
        group = NounGroup()
        self._absorb_complement(group, list(tail))
        if group.adjectives:
            self.describe(group, subject, [], is_main=subject is None, anchor=anchor, skip_presence=True)

    def _is_existential(self, chunk: Chunk) -> bool:
        return chunk.kind == "word" and chunk.norm in ("there", "here", "theres", "heres")

    def _skip_pronoun_copula(self, chunks: Sequence[Chunk], index: int) -> int:
        """Index after "it is", "it's", "this is", "there are", ...; ``index`` itself if none."""
        if index >= len(chunks) or chunks[index].kind != "word":
            return index
        chunk = chunks[index]
        raw = self.text[chunk.start : chunk.end].lower()
        if chunk.norm in _CONTRACTED_PRONOUN_COPULAS:
            return skip_determiners(chunks, index + 1)
        if chunk.norm in PRONOUNS:
            if raw in _PRONOUN_CONTRACTIONS:
                return skip_determiners(chunks, index + 1)
            if (
                index + 1 < len(chunks)
                and chunks[index + 1].kind == "word"
                and chunks[index + 1].norm in COPULAS
            ):
                return skip_determiners(chunks, index + 2)
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

    def _merge_modifier_groups(self, groups: list[NounGroup]) -> list[NounGroup]:
        """In the object's own noun phrase, nouns before the class word are modifiers ("a thermal yellow
        backpack"): fold every group up to the first one that names a class into one."""
        for position, group in enumerate(groups):
            if not group.nouns:
                continue
            matches = keyword_matches(self.tokens, group.nouns[0].first, group.nouns[-1].last)
            if matches:
                if position == 0:
                    return groups
                merged = NounGroup()
                for item in groups[: position + 1]:
                    merged.adjectives.extend(item.adjectives)
                    merged.pattern_words.extend(item.pattern_words)
                    merged.modifiers.extend(item.modifiers)
                    if item is not group:
                        merged.modifiers.extend(item.nouns)
                merged.nouns = list(group.nouns)
                return [merged, *groups[position + 1 :]]
        return groups
