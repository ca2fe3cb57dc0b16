"""Weight-free category prediction from the keyword and synonym lists of :mod:`.category_words` (spec §1, §5.2).

How a query is scored (all descriptions together):

- Every description is cut into clauses (:func:`aiv_verifier.description.clauses.split_clauses`). In the first
  clause that names any class keyword, the *head noun* is the last keyword of the first run of nouns that
  starts at the first keyword ("a teddy bear keychain" → keychain → keys; "a camera bag" → bag; "a keychain on
  a bag" → keychain). English noun phrases are head-final, and what follows a preposition is a location, not
  the object.
- The head scores 3 (2 if the first keyword only comes in a later clause), other keywords in that clause 1,
  keywords in other clauses ("... with a phone pocket") 0.5, class-specific context words ("keyboard",
  "laces", "billfold") 0.3.
- Multi-word keywords win over their parts ("toy car" → toy, "car keys" → keys, "baseball cap" → hat, "visor
  cap" → visor, "purse wallet" → wallet, "plush toy" → teddy bear, "school bag" → backpack, "notebook
  computer" → laptop). Ambiguous words spread their score: "notebook" 0.55 book / 0.45 laptop, "purse" 0.6 bag
  / 0.4 wallet, "car" 0.7 toy, ... so the other descriptions and context words decide.
- The class with the highest total wins; ties go to the first description's head class, then to the class
  mentioned first, then to the order of :data:`CATEGORIES`.
- Only when no keyword matches anywhere, a typo pass compares each word of the first clauses with the
  single-word keywords of 5+ letters (one insertion, deletion, substitution or transposition: "backapck",
  "walet", "headphnes").
- No match at all ⇒ the configured fallback (default "object"; the reference *online* agent falls back to
  "bag", its cache builder and the CLIP baseline to "object", spec §10 item 17).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from aiv_dataset.vocabulary import CATEGORIES

from ..description.chunks import chunk_tokens
from ..description.clauses import split_clauses
from ..description.tokens import PhraseMatcher, Token, tokenize
from ..description.words import COPULAS, PARTICIPLES, PREPOSITIONS
from .category_words import AMBIGUOUS_KEYWORDS, CATEGORY_KEYWORDS, CONTEXT_WORDS

DEFAULT_CATEGORY_FALLBACK = "object"
REFERENCE_ONLINE_FALLBACK = "bag"

_ONE = 1.0

HEAD_WEIGHT = 3.0
LATE_HEAD_WEIGHT = 2.0
SAME_CLAUSE_WEIGHT = 1.0
OTHER_CLAUSE_WEIGHT = 0.5
CONTEXT_WEIGHT = 0.3
FUZZY_MIN_LENGTH = 5
FUZZY_TOKENS_PER_DESCRIPTION = 16


def _keyword_table() -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for category, phrases in CATEGORY_KEYWORDS.items():
        for phrase in phrases:
            table.setdefault(phrase, {})[category] = _ONE
    for phrase, spread in AMBIGUOUS_KEYWORDS.items():
        table[phrase] = dict(spread)
    return table


KEYWORD_MATCHER = PhraseMatcher(_keyword_table())
CONTEXT_MATCHER = PhraseMatcher(
    (phrase, category) for category, phrases in CONTEXT_WORDS.items() for phrase in phrases
)
_FUZZY_KEYWORDS: tuple[tuple[str, Mapping[str, float]], ...] = tuple(
    (phrase, spread)
    for phrase, spread in _keyword_table().items()
    if " " not in phrase and len(phrase) >= FUZZY_MIN_LENGTH and sum(spread.values()) >= _ONE
)
_NP_BREAKERS = PREPOSITIONS | PARTICIPLES | COPULAS


@dataclass(frozen=True)
class KeywordMatch:
    description: int
    first_token: int
    last_token: int
    text: str
    spread: Mapping[str, float]


@dataclass(frozen=True)
class CategoryPrediction:
    """The predicted class (or the fallback), per-class scores and the keyword matches behind them."""

    category: str
    matched: bool
    scores: Mapping[str, float] = field(default_factory=dict)
    head_matches: tuple[KeywordMatch, ...] = ()


def keyword_matches(
    tokens: Sequence[Token], first: int, last: int, description: int = 0
) -> list[KeywordMatch]:
    """Longest keyword matches, left to right, inside tokens[first..last]."""
    matches: list[KeywordMatch] = []
    index = first
    while index <= last:
        length, spread = KEYWORD_MATCHER.match(tokens[: last + 1], index, singularise=True)
        if length:
            end = index + length - 1
            text = " ".join(token.norm for token in tokens[index : end + 1])
            matches.append(KeywordMatch(description, index, end, text, spread))  # type: ignore[arg-type]
            index += length
        else:
            index += 1
    return matches


def head_match(tokens: Sequence[Token], matches: Sequence[KeywordMatch]) -> KeywordMatch | None:
    """The head of the first noun run: start at the first keyword, follow nouns, keep the last keyword."""
    if not matches:
        return None
    head = matches[0]
    by_start = {match.first_token: match for match in matches}
    index = head.last_token + 1
    while index < len(tokens):
        token = tokens[index]
        if token.kind != "word" or token.norm in _NP_BREAKERS:
            break
        if index in by_start:
            head = by_start[index]
            index = head.last_token + 1
            continue
        index += 1
    return head


def _damerau_one(word: str, target: str) -> bool:
    """True when ``word`` is exactly one edit (incl. a transposition) away from ``target``."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diffs = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diffs) == 1:
            return True
        return (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and word[diffs[0]] == target[diffs[1]]
            and word[diffs[1]] == target[diffs[0]]
        )
    short, long_ = (word, target) if len(word) < len(target) else (target, word)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


class KeywordCategoryClassifier:
    """Predict one of the 18 classes from descriptions with keyword lists (no model).

    ``fallback`` is returned (with ``matched=False``) when nothing matches.
    """

    def __init__(
        self, fallback: str = DEFAULT_CATEGORY_FALLBACK, categories: Sequence[str] = CATEGORIES
    ) -> None:
        self.fallback = fallback
        self.categories = tuple(categories)

    def predict(self, descriptions: Sequence[str]) -> CategoryPrediction:
        scores: dict[str, float] = {}
        first_mention: dict[str, tuple[int, int]] = {}
        heads: list[KeywordMatch] = []
        fuzzy_candidates: list[list[Token]] = []

        def add(spread: Mapping[str, float], weight: float, where: tuple[int, int]) -> None:
            for category, share in spread.items():
                if category in self.categories:
                    scores[category] = scores.get(category, 0.0) + weight * share
                    first_mention.setdefault(category, where)
                    first_mention[category] = min(first_mention[category], where)

        for d_index, description in enumerate(descriptions):
            if not isinstance(description, str) or not description.strip():
                continue
            tokens = tokenize(description)
            clauses = split_clauses(chunk_tokens(tokens))
            head_found = False
            for c_index, clause in enumerate(clauses):
                first, last = clause.chunks[0].first, clause.chunks[-1].last
                matches = keyword_matches(tokens, first, last, d_index)
                head = None
                if matches and not head_found:
                    head = head_match(tokens[: last + 1], matches)
                    head_found = True
                    heads.append(head)  # type: ignore[arg-type]
                    weight = HEAD_WEIGHT if c_index == 0 else LATE_HEAD_WEIGHT
                    add(head.spread, weight, (d_index, head.first_token))  # type: ignore[union-attr]
                for match in matches:
                    if match is head:
                        continue
                    weight = SAME_CLAUSE_WEIGHT if head is not None else OTHER_CLAUSE_WEIGHT
                    add(match.spread, weight, (d_index, match.first_token))
                index = first
                while index <= last:
                    length, category = CONTEXT_MATCHER.match(tokens[: last + 1], index, singularise=True)
                    if length:
                        add({str(category): _ONE}, CONTEXT_WEIGHT, (d_index, index))
                        index += length
                    else:
                        index += 1
            if clauses:
                first_clause = clauses[0]
                span = tokens[first_clause.chunks[0].first : first_clause.chunks[-1].last + 1]
                fuzzy_candidates.append(span[:FUZZY_TOKENS_PER_DESCRIPTION])

        if not heads:
            # Context words alone are not evidence of a class; try the typo pass instead.
            scores.clear()
            first_mention.clear()
            for d_index, span in enumerate(fuzzy_candidates):
                for token in span:
                    if token.kind != "word" or len(token.norm) < FUZZY_MIN_LENGTH - 1:
                        continue
                    for phrase, spread in _FUZZY_KEYWORDS:
                        if _damerau_one(token.norm, phrase):
                            add(spread, HEAD_WEIGHT, (d_index, 0))
                            break
        if not scores or max(scores.values()) <= 0.0:
            return CategoryPrediction(self.fallback, False, dict(scores), tuple(heads))

        best = max(scores.values())
        tied = [category for category, score in scores.items() if abs(score - best) < 1e-9]
        if len(tied) > 1 and heads:
            first_head = heads[0]
            head_classes = [c for c in tied if first_head.spread.get(c, 0.0) > 0.0]
            if len(head_classes) == 1:
                return CategoryPrediction(head_classes[0], True, dict(scores), tuple(heads))
        tied.sort(key=lambda c: (first_mention.get(c, (1 << 30, 0)), self.categories.index(c)))
        return CategoryPrediction(tied[0], True, dict(scores), tuple(heads))

    def classify(self, descriptions: Sequence[str]) -> str:
        return self.predict(descriptions).category


def normalise_category(value: str, categories: Sequence[str] = CATEGORIES) -> str | None:
    """The class a caller's hint names (case and surrounding space ignored), or None if it names none."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split()).lower()
    for category in categories:
        if text == category:
            return category
    return None
