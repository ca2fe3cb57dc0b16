"""How the privileged ground truth of a synthetic dataset is matched against query text.

Shared by the oracle verifiers (which answer from it) and the oracle audit (which re-derives independently what
each answer should have been): the two may judge differently, but they must read phrases, absences and the
descriptions' wording the same way, or the audit would report disagreements that are only parsing drift.
"""

from __future__ import annotations

import re
from collections.abc import Collection

#: Directory of the per-instance ground-truth files inside a dataset written by aiv-capture.
PRIVILEGED_GT_DIR = "privileged_gt"
#: Recipe value of an optional attribute the instance does not have.
ABSENT = "none"

_WORD = re.compile(r"[a-z0-9]+")
_NEGATIONS = frozenset({"no", "without", "not"})
_ARTICLE = re.compile(r"^(a|an|the)\s+", re.IGNORECASE)


def content_words(text: str, stop_words: Collection[str]) -> frozenset[str]:
    """Lower-case words of ``text`` without the given stop words."""
    return frozenset(word for word in _WORD.findall(text.lower()) if word not in stop_words)


def is_absence_claim(text: str) -> bool:
    """ "no logo on the lid", "without a pattern": a claim that the object lacks something."""
    words = _WORD.findall(text.lower())
    return bool(words) and words[0] in _NEGATIONS


def strip_article(text: str) -> str:
    return _ARTICLE.sub("", " ".join(text.split()))


def mentions(text: str, fragment: str) -> bool:
    """``fragment`` occurs in ``text`` as whole words (case- and whitespace-insensitive)."""
    fragment = " ".join(fragment.lower().split())
    if not fragment:
        return False
    pattern = rf"(?<![a-z0-9]){re.escape(fragment)}(?![a-z0-9])"
    return re.search(pattern, " ".join(text.lower().split())) is not None


def description_mention(name: str, value: str, phrase: str, main_colour: str | None) -> str:
    """How the specific description words a present attribute.

    The main colour is written into the head noun phrase ("a cream mug"), so only its value appears; every other
    attribute appears as its phrase without the article.
    """
    return value if name == main_colour else strip_article(phrase)
