"""Printed text: does the object read the quoted words ("the word 'FOREST'")?

Yes when the one OCR pass over the crop read something close enough to a quoted word (and, for coloured
print, its ink is not clearly another colour). No when it confidently read other words that cannot be the
claimed ones: of a similar length, or a piece that is no part of them. A read that holds most of a claimed
word's letters in order is taken as a misread of it and contradicts nothing.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from aiv_common.setting_fields import setting
from aiv_verifier.core.types import Decision

from ..measure import colour as colour_mod
from ..measure.colour import claimed_names
from ..measure.ocr import OcrItem
from ..outcome import CheckOutcome, unsure
from ..view import Claim, ViewAnalysis


@dataclass(frozen=True)
class TextSettings:
    """When read text confirms or contradicts a quoted claim."""

    match_ratio: float = setting(
        0.75, "similarity (0-1) of a read and a claimed word for a match", minimum=0.0, maximum=1.0
    )
    mismatch_is_no: bool = setting(
        True, "confidently read other words of a similar length answer No (another title or brand in view)"
    )
    min_confidence: float = setting(
        0.85, "OCR confidence a read needs to contradict a claim", minimum=0.0, maximum=1.0
    )
    partial_mismatch_is_no: bool = setting(
        True,
        "a confident read of another length also answers No when it cannot be a piece of the claimed word",
    )
    partial_max_ratio: float = setting(
        0.5,
        "... that is, when it is not contained in it and less similar to it than this",
        minimum=0.0,
        maximum=1.0,
    )
    misread_overlap: float = setting(
        0.5,
        "a read holding more than this share of a claimed word's letters, at least that share in the word's "
        "order, is a misread of it and contradicts nothing (1 = off)",
        minimum=0.0,
    )


def _letters_in_order(a: str, b: str) -> int:
    """Length of the longest run of letters that ``a`` and ``b`` share in the same order (gaps allowed)."""
    previous = [0] * (len(b) + 1)
    for letter in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if letter == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _normalise_word(text: str) -> str:
    return re.sub(r"[^0-9A-Z]", "", text.upper())


def _text_colour(item: OcrItem, analysis: ViewAnalysis) -> tuple[str, dict[str, float]]:
    """Ink colour inside an OCR box (the colour most over-represented in the box's middle band compared
    with its rim) and every colour's share of that middle band; ("", {}) when unclear."""
    region = analysis.region
    crop_h, crop_w = analysis.crop.shape[:2]
    sy, sx = region.labels.shape[0] / crop_h, region.labels.shape[1] / crop_w
    x1, y1, x2, y2 = item.box
    ax1, ay1 = max(0, int(x1 * sx)), max(0, int(y1 * sy))
    ax2, ay2 = (
        min(region.labels.shape[1], int(np.ceil(x2 * sx))),
        min(region.labels.shape[0], int(np.ceil(y2 * sy))),
    )
    if ax2 - ax1 < 2 or ay2 - ay1 < 2:
        return "", {}
    patch = region.labels[ay1:ay2, ax1:ax2]
    k = len(colour_mod.COLOUR_NAMES)
    ph = patch.shape[0]
    # Ink concentrates in the middle band of a text box; the paper shows all around its rim.
    middle = patch[ph // 4 : ph - ph // 4 or ph, :]
    rim = np.concatenate([patch[0], patch[-1], patch[:, 0], patch[:, -1]])
    inner = np.bincount(middle.ravel(), minlength=k) / max(middle.size, 1)
    outer = np.bincount(rim, minlength=k) / max(rim.size, 1)
    excess = inner - outer
    ink = int(np.argmax(excess))
    if excess[ink] <= 0.02:
        return "", {}
    return colour_mod.COLOUR_NAMES[ink], {
        name: float(inner[i]) for i, name in enumerate(colour_mod.COLOUR_NAMES)
    }


def check(claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    info = claim.info
    p = analysis.settings.text
    if not info.quoted:
        return unsure("the phrase names no specific text to read")
    if analysis.ocr_engine() is None:
        return unsure("no OCR engine")
    wanted = [_normalise_word(q) for q in info.quoted if _normalise_word(q)]
    if not wanted:
        return unsure("the quoted text has no letters or digits to read")
    items = analysis.ocr_items()
    if not items:
        return unsure("no legible text in this view")
    best: tuple[float, OcrItem] | None = None
    for item in items:
        read = _normalise_word(item.text)
        if not read:
            continue
        for target in wanted:
            ratio = difflib.SequenceMatcher(None, target, read).ratio()
            if target in read or (len(read) >= 2 and read in target and len(read) >= 0.75 * len(target)):
                ratio = max(ratio, 0.95)
            if best is None or ratio > best[0]:
                best = (ratio, item)
    shown = ", ".join(f'"{i.text}"' for i in items[:3])
    quoted = " ".join(info.quoted)
    if best is not None and best[0] >= p.match_ratio:
        ratio, item = best
        if info.colours:
            ink, middle = _text_colour(item, analysis)
            term = info.colours[0]
            names = set(claimed_names(term.name, term.modifier))
            ok = set().union(*(colour_mod.confusable(n) for n in names))
            # Thin strokes blend with the paper; contradict only when the claimed ink is nowhere
            # in the text's band, not merely outnumbered.
            if ink and ink not in ok and sum(middle.get(n, 0.0) for n in ok) < 0.03:
                return CheckOutcome(
                    Decision.NO, f'reads "{item.text}" but its colour looks {ink}, not {term.describe()}', 0.5
                )
        return CheckOutcome(
            Decision.YES,
            f'reads "{item.text}" (confidence {item.confidence:.2f})',
            min(0.95, ratio * item.confidence),
        )
    confident = [
        i
        for i in items
        if i.confidence >= p.min_confidence
        and sum(ch.isalpha() for ch in _normalise_word(i.text)) >= 3
        and (
            any(abs(len(_normalise_word(i.text)) - len(w)) <= max(1, len(w) // 3) for w in wanted)
            or _partial_mismatch(_normalise_word(i.text), wanted, p)
        )
    ]
    contradicting = [i for i in confident if not _misread(_normalise_word(i.text), wanted, p)]
    if p.mismatch_is_no and contradicting:
        return CheckOutcome(Decision.NO, f'reads {shown}, not "{quoted}"', 0.5)
    if p.mismatch_is_no and confident:
        return unsure(f'reads {shown}: most of the letters of "{quoted}", taken as a misread')
    return unsure(f'"{quoted}" not read (read: {shown})')


def _misread(read: str, wanted: Sequence[str], p: TextSettings) -> bool:
    """A read that holds more than ``misread_overlap`` of some claimed word's letters (counted with repeats)
    and at least that share in the word's order: OCR garbling that word ("CULL" for "QUILL"), not another
    word that happens to use the same letters ("KIRO" against "ORBIT")."""
    have = Counter(read)
    share = p.misread_overlap
    return any(
        sum((Counter(word) & have).values()) > share * len(word)
        and _letters_in_order(read, word) >= share * len(word)
        for word in wanted
        if word
    )


def _partial_mismatch(read: str, wanted: Sequence[str], p: TextSettings) -> bool:
    """A shorter confident read ("FEE" of "COFFEE") that cannot be a piece of any claimed word."""
    if not p.partial_mismatch_is_no:
        return False
    return all(
        read not in w
        and w not in read
        and difflib.SequenceMatcher(None, w, read).ratio() < p.partial_max_ratio
        for w in wanted
    )


__all__ = ["TextSettings", "check"]
