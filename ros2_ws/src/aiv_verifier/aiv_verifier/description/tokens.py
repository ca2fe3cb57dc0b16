"""Tokens: a description cut into words, quoted strings and punctuation marks, each with its character span.

One function, :func:`tokenize`, reads every text the parser sees; a :class:`TokenStyle` says what counts as a
quote, a word and a punctuation mark, and how a word is normalised. Three styles exist because the two readers
of descriptions were tuned on different cuts, and their answers must not move:

- :data:`QUERY_TOKENS` (the query decomposer and category predictor): any letters or digits, a hyphenated word
  in parts with the hyphen remembered ("off-white" matches the lexicon as "off white"), possessive "'s"
  dropped, "color(ed)" read as "colour(ed)", "w/" and "w/o" read as "with" and "without"; quotes are straight,
  curly or guillemet pairs up to 200 characters, or single quotes not glued to a letter (so "it's" stays a
  word). Spans index the original text, which is what lets the decomposer quote evidence verbatim.
- :data:`READING_TOKENS` (the phrase reader, :mod:`.phrases`): the text between quotes is lower-cased first;
  words are ASCII letters and digits with inner hyphens and apostrophes kept ("light-blue", "it's"); no
  punctuation marks; a quote is any pair of quote characters around up to 60 characters.
- :data:`CUTTING_TOKENS` (where :func:`aiv_verifier.description.phrases.split_description` cuts a whole
  description): the phrase reader's quotes, words as written (case kept, so "With" does not cut) in maximal
  runs of word characters, and the punctuation marks ``, ; : . ! ?``.

Every style reads quotes first and words only between them, in one left-to-right pass with bounded quotes, so
the cost is linear in the length of the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Token:
    """A word, a quoted string or a punctuation mark; ``start``/``end`` index the text (see the styles)."""

    start: int
    end: int
    text: str
    norm: str
    kind: str  # "word" | "quote" | "punct"
    hyphen_before: bool = False


@dataclass(frozen=True)
class TokenStyle:
    """What one reader counts as a token (see the module docstring for the three styles).

    ``inner`` reads the text between quotes; its named groups say the kind: ``word``, ``punct``, ``with`` and
    ``without`` (the shorthands "w/" and "w/o"). With ``lower_first`` the text between quotes is lower-cased
    (and curly apostrophes straightened) before ``inner`` reads it, and spans index that lowered text.
    """

    name: str
    quote: re.Pattern[str]
    inner: re.Pattern[str]
    lower_first: bool
    normalise: Callable[[str], str]


def normalise_word(word: str) -> str:
    """The query style's word normalisation: lower case, straight apostrophe, no "'s", "colour" spelling."""
    text = word.lower().replace("’", "'")
    if text.endswith("'s"):
        text = text[:-2]
    if text.startswith("color"):
        text = "colour" + text[5:]
    return text


def _reading_spelling(word: str) -> str:
    return word.replace("colored", "coloured")


def _as_written(word: str) -> str:
    return word


# Query quotes are bounded (200 / 80 characters) so an unmatched quote costs a bounded scan. Single quotes count
# only when not glued to a letter on the outside, so "it's" and "girls' bag" stay words.
_QUERY_QUOTE = re.compile(
    r"""
    "[^"\n]{1,200}"|“[^”\n]{1,200}”|«[^»\n]{1,200}»|(?<![^\W_])['‘][^'’‘\n]{1,80}['’](?![^\W_])
    """,
    re.VERBOSE,
)
_QUERY_INNER = re.compile(
    r"""
    (?P<without>(?<![^\W_])[wW]/[oO](?![^\W_]))
    |(?P<with>(?<![^\W_])[wW]/)
    |(?P<word>[^\W_]+(?:['’][^\W_]+)*)
    |(?P<punct>[,;:.!?()\[\]{}&+|\n/]|\r\n?)
    """,
    re.VERBOSE,
)
#: Any quote character opens, any closes: the phrase reader's notion of a quoted title.
_READER_QUOTE = re.compile(r"[\"“”„«»][^\"“”„«»]{1,60}[\"“”„«»]")

QUERY_TOKENS = TokenStyle("query", _QUERY_QUOTE, _QUERY_INNER, False, normalise_word)
READING_TOKENS = TokenStyle(
    "reading", _READER_QUOTE, re.compile(r"(?P<word>[a-z0-9]+(?:[-'][a-z0-9]+)*)"), True, _reading_spelling
)
CUTTING_TOKENS = TokenStyle(
    "cutting", _READER_QUOTE, re.compile(r"(?P<word>\w+)|(?P<punct>[,;:.!?])"), False, _as_written
)


def tokenize(text: str, style: TokenStyle = QUERY_TOKENS) -> list[Token]:
    """The tokens of ``text`` in the given style, left to right."""
    tokens: list[Token] = []
    position = 0
    for quote in style.quote.finditer(text):
        _read_between(text, position, quote.start(), style, tokens)
        raw = quote.group()
        tokens.append(Token(quote.start(), quote.end(), raw, raw[1:-1].strip().lower(), "quote"))
        position = quote.end()
    _read_between(text, position, len(text), style, tokens)
    return tokens


def _read_between(text: str, start: int, end: int, style: TokenStyle, tokens: list[Token]) -> None:
    if start >= end:
        return
    if style.lower_first:
        offset = start
        matches = style.inner.finditer(text[start:end].lower().replace("’", "'"))
    else:
        offset = 0
        matches = style.inner.finditer(text, start, end)
    for match in matches:
        kind = match.lastgroup or "punct"
        raw = match.group()
        first, last = offset + match.start(), offset + match.end()
        if kind in ("with", "without"):
            tokens.append(Token(first, last, raw, kind, "word"))
        elif kind == "word":
            hyphen = (
                first > 0
                and text[first - 1] == "-"
                and bool(tokens)
                and tokens[-1].end == first - 1
                and tokens[-1].kind == "word"
            )
            tokens.append(Token(first, last, raw, style.normalise(raw), "word", hyphen))
        else:
            norm = "\n" if raw.startswith("\r") else raw
            tokens.append(Token(first, last, raw, "and" if norm in "&+" else norm, "punct"))


def _words_of(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def phrase_tokens(phrase: str) -> tuple[str, ...]:
    """How a lexicon phrase looks as normalised query tokens ("off-white" → ("off", "white"))."""
    return tuple(normalise_word(part) for part in re.split(r"[\s\-]+", phrase.strip()) if part)


_UNCHANGED_PLURALS = _words_of(
    "lens canvas atlas gas bus plus chassis dress glasses eyeglasses sunglasses headphones earphones series "
    "species jeans pants shorts trousers"
)
_IRREGULAR_SINGULAR: Mapping[str, str] = {
    **{word: word for word in _UNCHANGED_PLURALS},
    "lenses": "lens",
    "dresses": "dress",
    "feet": "foot",
    "teeth": "tooth",
}


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
