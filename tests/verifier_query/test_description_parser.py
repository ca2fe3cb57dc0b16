"""The one description parser's tokens and clauses, in the styles and rules its two readers use."""

from __future__ import annotations

from aiv_verifier.description.chunks import chunk_tokens, token_chunks
from aiv_verifier.description.clauses import DESCRIPTION_CLAUSES, QUERY_CLAUSES, split_clauses
from aiv_verifier.description.tokens import CUTTING_TOKENS, QUERY_TOKENS, READING_TOKENS, tokenize


def words(text: str, style=QUERY_TOKENS) -> list[str]:
    return [token.norm for token in tokenize(text, style)]


def test_query_tokens_split_hyphens_and_keep_spans() -> None:
    text = "An off-white Colored girl's bag w/ 'Hi there' & more"
    tokens = tokenize(text)
    assert [t.norm for t in tokens] == [
        "an",
        "off",
        "white",
        "coloured",
        "girl",
        "bag",
        "with",
        "hi there",
        "and",
        "more",
    ]
    assert tokens[2].hyphen_before and not tokens[1].hyphen_before
    assert all(text[t.start : t.end] == t.text for t in tokens)


def test_reading_tokens_keep_hyphenated_words_whole() -> None:
    assert words('An off-white, colored "NOVA" It’s', READING_TOKENS) == [
        "an",
        "off-white",
        "coloured",
        "nova",
        "it's",
    ]
    (quote,) = [t for t in tokenize('the word "NOVA" in white', READING_TOKENS) if t.kind == "quote"]
    assert quote.text == '"NOVA"'


def test_cutting_tokens_keep_case_and_cut_hyphens() -> None:
    assert words("Black-and-white, With", CUTTING_TOKENS) == ["Black", "and", "white", ",", "With"]


def test_the_two_clause_rules() -> None:
    text = "a sticker with a logo that says hi, and no handle"
    query = split_clauses(chunk_tokens(tokenize(text)))
    assert [" ".join(c.norm for c in clause.chunks) for clause in query] == [
        "a sticker with a logo that says hi",
        "no handle",
    ]
    assert query[-1].negated and query[-1].opener == "and"
    described = split_clauses(token_chunks(tokenize(text, CUTTING_TOKENS)), DESCRIPTION_CLAUSES, text=text)
    assert [text[clause.start : clause.end].strip() for clause in described] == [
        "a sticker",
        "a logo that says hi",
        "no handle",
    ]
    # Text between two cuts without a token is still a clause for the reader, never for the query.
    text = "a hat, - with a brim"
    described = split_clauses(token_chunks(tokenize(text, CUTTING_TOKENS)), DESCRIPTION_CLAUSES, text=text)
    assert [text[clause.start : clause.end].strip() for clause in described] == ["a hat", "-", "a brim"]
    assert len(split_clauses(chunk_tokens(tokenize(text)), QUERY_CLAUSES, text=text)) == 2
