"""Clauses: a chunk list cut at punctuation and clause words, one splitter with the cut rules as an option.

The two readers cut differently, and each one's answers were tuned on its own cuts, so the difference is kept
as two :class:`ClauseRules`:

- :data:`QUERY_CLAUSES` (the query decomposer and category predictor): cut at every punctuation mark and at
  the clause words of :data:`aiv_verifier.description.words.SPLIT_WORDS` ("with", "that", "or", ...); an
  absence claim ("no sticker with a logo") and a logo claim ("a sticker with the word X") are not cut at
  "with"/"that"/"which", and "without" starts a clause of its own (it stays in it).
- :data:`DESCRIPTION_CLAUSES` (the phrase reader's :func:`aiv_verifier.description.phrases.split_description`,
  on :data:`aiv_verifier.description.tokens.CUTTING_TOKENS`): cut at ``, ; : . ! ?`` and at fewer words ("and",
  "with", "featuring", "has", "that has", "as well as", ...) written in lower case; text between two cuts that
  holds no token (a stray "-") is still a clause.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from .. import lexicon
from .chunks import Chunk
from .words import DETERMINERS, LOGO_CUE_WORDS, SPLIT_WORDS

SPLIT_PUNCT: frozenset[str] = frozenset(
    {",", ";", ":", ".", "!", "?", "(", ")", "[", "]", "{", "}", "|", "\n"}
)
SENTENCE_PUNCT: frozenset[str] = frozenset({".", "!", "?", "\n", ";"})


@dataclass(frozen=True)
class ClauseRules:
    """Where :func:`split_clauses` cuts.

    ``split_words``: words that cut (the word belongs to neither clause); ``split_phrases``: word sequences
    that cut when written with single spaces ("that has"); ``split_punct``: punctuation chunks that cut;
    ``keep_claims_whole``: absence and logo claims are not cut at "with"/"that"/"which", and "without" opens a
    clause; ``keep_bare_text``: text between two cuts without any chunk is a clause (needs the text).
    """

    split_words: frozenset[str]
    split_punct: frozenset[str]
    split_phrases: tuple[tuple[str, ...], ...] = ()
    keep_claims_whole: bool = False
    keep_bare_text: bool = False


QUERY_CLAUSES = ClauseRules(
    split_words=SPLIT_WORDS, split_punct=SPLIT_PUNCT | {"and", "/"}, keep_claims_whole=True
)
DESCRIPTION_CLAUSES = ClauseRules(
    split_words=frozenset({"and", "with", "featuring", "having", "has", "plus", "while", "but"}),
    split_punct=frozenset({",", ";", ":", ".", "!", "?"}),
    split_phrases=(("that", "has"), ("which", "has"), ("as", "well", "as")),
    keep_bare_text=True,
)


@dataclass(frozen=True, slots=True)
class Clause:
    """A stretch of chunks between clause boundaries.

    ``opener`` is what started it ("" at the start of the text, else the splitting word or punctuation),
    ``sentence_start`` whether it begins a sentence, ``negated`` whether it is an absence claim ("no logo",
    "without a handle", or an "or" continuation of one). ``start``/``end``: the text between the boundary
    before it and the one after it (the text's end for the last clause when the text was given).
    """

    chunks: tuple[Chunk, ...]
    opener: str
    sentence_start: bool
    negated: bool
    start: int = 0
    end: int = 0


def _content_start(chunks: Sequence[Chunk]) -> int:
    index = 0
    while index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in DETERMINERS:
        index += 1
    return index


def _starts_negated(chunks: Sequence[Chunk]) -> bool:
    index = _content_start(chunks)
    return index < len(chunks) and chunks[index].kind == "word" and chunks[index].norm in lexicon.NEGATIONS


def _phrase_at(chunks: Sequence[Chunk], index: int, rules: ClauseRules, text: str | None) -> int:
    """How many chunks a cutting word sequence at ``index`` spans (0 when none starts there)."""
    if text is None:
        return 0
    for phrase in rules.split_phrases:
        window = chunks[index : index + len(phrase)]
        if (
            len(window) == len(phrase)
            and all(
                chunk.kind == "word" and chunk.norm == word
                for chunk, word in zip(window, phrase, strict=True)
            )
            and all(text[a.end : b.start] == " " for a, b in itertools.pairwise(window))
        ):
            return len(phrase)
    return 0


def split_clauses(
    chunks: Sequence[Chunk], rules: ClauseRules = QUERY_CLAUSES, text: str | None = None
) -> list[Clause]:
    """Cut a chunk list into clauses by ``rules``. Empty clauses are dropped (unless ``keep_bare_text``).

    ``text`` is the text the chunks were read from; the description rules need it (word sequences must be
    single-spaced, and text without chunks may be a clause).
    """
    clauses: list[Clause] = []
    current: list[Chunk] = []
    opener = ""
    sentence_start = True
    has_logo_cue = False
    extent = 0

    def close(next_opener: str, next_sentence_start: bool, boundary_start: int, boundary_end: int) -> None:
        nonlocal current, opener, sentence_start, has_logo_cue, extent
        bare = rules.keep_bare_text and text is not None and bool(text[extent:boundary_start].strip())
        if current or bare:
            negated = _starts_negated(current)
            if not negated and opener in {"or", "nor"} and clauses and clauses[-1].negated:
                negated = True
            clauses.append(Clause(tuple(current), opener, sentence_start, negated, extent, boundary_start))
            current = []
            opener, sentence_start = next_opener, next_sentence_start
        else:
            # Nothing since the last boundary: keep the stronger boundary (a sentence start stays one).
            opener = next_opener if not sentence_start or next_sentence_start else opener
            sentence_start = sentence_start or next_sentence_start
        has_logo_cue = False
        extent = boundary_end

    index = 0
    while index < len(chunks):
        chunk = chunks[index]
        norm = chunk.norm
        if chunk.kind == "punct" and norm in rules.split_punct:
            close(norm, norm in SENTENCE_PUNCT, chunk.start, chunk.end)
            index += 1
            continue
        span = _phrase_at(chunks, index, rules, text)
        if span:
            last = chunks[index + span - 1]
            close(" ".join(item.norm for item in chunks[index : index + span]), False, chunk.start, last.end)
            index += span
            continue
        index += 1
        if chunk.kind == "word" and norm in rules.split_words:
            keep_whole = (
                rules.keep_claims_whole
                and norm in {"with", "that", "which"}
                and bool(current)
                and (_starts_negated(current) or has_logo_cue)
            )
            if not keep_whole:
                close(norm, False, chunk.start, chunk.end)
                continue
        if rules.keep_claims_whole:
            if chunk.kind == "word" and norm == "without" and current:
                close("without", False, chunk.start, chunk.start)
            if chunk.kind == "word" and norm in LOGO_CUE_WORDS:
                has_logo_cue = True
        current.append(chunk)
    end = len(text) if text is not None else (chunks[-1].end if chunks else 0)
    close("", False, end, end)
    return clauses
