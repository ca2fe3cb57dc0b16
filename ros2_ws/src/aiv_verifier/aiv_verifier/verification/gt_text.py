"""How query text is matched against the privileged ground truth of a synthetic dataset.

Shared by the oracle verifiers (which answer from it) and the oracle audit (which re-derives independently what
each answer should have been): the two may judge differently, but they must split words and recognise absence
claims and mentions the same way, or the audit would report disagreements that are only parsing drift. The
files themselves, and how a description words each attribute, are read by :mod:`aiv_dataset.privileged_truth`.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_WORD = re.compile(r"[a-z0-9]+")
_NEGATIONS = frozenset({"no", "without", "not"})


def content_words(text: str, stop_words: Collection[str]) -> frozenset[str]:
    """Lower-case words of ``text`` without the given stop words."""
    return frozenset(word for word in _WORD.findall(text.lower()) if word not in stop_words)


def is_absence_claim(text: str) -> bool:
    """ "no logo on the lid", "without a pattern": a claim that the object lacks something."""
    words = _WORD.findall(text.lower())
    return bool(words) and words[0] in _NEGATIONS


def mentions(text: str, fragment: str) -> bool:
    """``fragment`` occurs in ``text`` as whole words (case- and whitespace-insensitive)."""
    fragment = " ".join(fragment.lower().split())
    if not fragment:
        return False
    pattern = rf"(?<![a-z0-9]){re.escape(fragment)}(?![a-z0-9])"
    return re.search(pattern, " ".join(text.lower().split())) is not None
