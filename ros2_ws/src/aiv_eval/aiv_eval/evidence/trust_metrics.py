"""How far a verdict can be trusted: the scores of runs with abstention, calibration and difficulty.

Everything here reads finished records (``results.jsonl``) and, for difficulty, the dataset's meta.json; no
agent runs. Definitions:

- **score of an episode**: the evidential probability for the evidential fusion, else the share of the final
  step's decisive attribute states that are Matched (the attr_majority vote share; 0.5 when none is decisive).
- **YES-precision**: correct YES / all YES, with its 95 % Wilson interval; **false-accept rate on neg_same**:
  YES answers to same-category look-alikes / look-alike pairs; **undecided share**: Unsure predictions / all.
- **ECE**: 10 equal-width bins of the score over [0, 1], Σ_b (n_b / N) · |mean score_b − positive share_b|, all
  pairs; **Brier**: mean (score − label)²; **AUROC**: probability that a positive scores above a negative (ties
  count half).
- **risk–coverage**: for t from 0.50 to 0.99, a decision is YES when score ≥ t and NO when score ≤ 1 − t, the
  rest abstain; coverage = decided share, and YES-precision among them. It is read off the final scores of one
  run, not replayed with other thresholds.
- **difficulty** (Evidential Active Recognition style, from the first view): s = 0.2 · visible share + 0.2 ·
  (1 − (d − 0.9) / 0.8, clipped to [0, 1]) + 0.6 · min(1, object pixels / 102,400), with d the camera's distance
  (capture radius, m) and the visible share estimated as mask pixels · d² over the largest such value among
  the episode's captures (how much of its best-seen extent this view shows); hard below 0.33, easy above 0.66.
  A view without a mask has no visible pixels: s is its distance term alone (at most 0.2: hard).
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiv_verifier.core.evidence import wilson_interval

from ..records.episode import EpisodeRecord

HARD_BELOW = 0.33
EASY_ABOVE = 0.66
RANGE_M = (0.9, 1.7)
FULL_SIZE_PX = 102_400.0


def episode_score(record: EpisodeRecord, use_probability: bool = True) -> float:
    """The evidential probability (when the record has one and ``use_probability``), else the vote share."""
    if use_probability and record.evidence is not None:
        return float(record.evidence.probability)
    if not record.transcript:
        return 0.5
    states = [attribute.state for attribute in record.transcript[-1].attributes]
    matched = sum(state == "Matched" for state in states)
    contradicted = sum(state == "Contradictory" for state in states)
    return matched / (matched + contradicted) if matched + contradicted else 0.5


def expected_calibration_error(scores: Sequence[float], labels: Sequence[int], bins: int = 10) -> float:
    if not scores:
        return math.nan
    grouped: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for score, label in zip(scores, labels, strict=True):
        grouped[min(int(score * bins), bins - 1)].append((score, label))
    total = len(scores)
    return sum(
        len(items)
        / total
        * abs(sum(s for s, _ in items) / len(items) - sum(y for _, y in items) / len(items))
        for items in grouped.values()
    )


def reliability_diagram(
    scores: Sequence[float], labels: Sequence[int], bins: int = 10
) -> list[dict[str, Any]]:
    rows = []
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        items = [
            (s, y)
            for s, y in zip(scores, labels, strict=True)
            if (low <= s < high) or (index == bins - 1 and s == 1.0)
        ]
        rows.append(
            {
                "bin": f"{low:.1f}-{high:.1f}",
                "n": len(items),
                "mean_score": round(sum(s for s, _ in items) / len(items), 4) if items else None,
                "positive_share": round(sum(y for _, y in items) / len(items), 4) if items else None,
            }
        )
    return rows


def brier_score(scores: Sequence[float], labels: Sequence[int]) -> float:
    if not scores:
        return math.nan
    return sum((s - y) ** 2 for s, y in zip(scores, labels, strict=True)) / len(scores)


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float:
    positives = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    negatives = [s for s, y in zip(scores, labels, strict=True) if y != 1]
    if not positives or not negatives:
        return math.nan
    ranked = sorted(set(scores))
    below: dict[float, int] = {}
    equal = Counter(negatives)
    running = 0
    for value in ranked:
        below[value] = running
        running += equal.get(value, 0)
    wins = sum(below[s] + 0.5 * equal.get(s, 0) for s in positives)
    return wins / (len(positives) * len(negatives))


def risk_coverage(scores: Sequence[float], labels: Sequence[int]) -> list[dict[str, Any]]:
    rows = []
    for step in range(50, 100):
        threshold = step / 100
        yes = [y for s, y in zip(scores, labels, strict=True) if s >= threshold]
        decided = sum(1 for s in scores if s >= threshold or s <= 1 - threshold)
        rows.append(
            {
                "threshold": threshold,
                "coverage": round(decided / len(scores), 4) if scores else 0.0,
                "yes": len(yes),
                "yes_precision": round(sum(yes) / len(yes), 4) if yes else None,
            }
        )
    return rows


@dataclass(frozen=True)
class TrustRow:
    """The table's figures for one run."""

    name: str
    n: int
    accuracy: float
    per_pair: dict[str, float]
    asd: float
    yes: int
    yes_correct: int
    false_accept_same: float
    undecided: float
    ece: float
    brier: float
    auroc: float
    accepted_positives: int

    @property
    def yes_precision(self) -> tuple[float, float, float]:
        if not self.yes:
            return math.nan, 0.0, 1.0
        low, high = wilson_interval(self.yes_correct, self.yes)
        return self.yes_correct / self.yes, low, high

    def to_dict(self) -> dict[str, Any]:
        precision, low, high = self.yes_precision
        return {
            "name": self.name,
            "n": self.n,
            "accuracy": self.accuracy,
            "per_pair": self.per_pair,
            "asd": self.asd,
            "yes": self.yes,
            "yes_correct": self.yes_correct,
            "yes_precision": None if math.isnan(precision) else precision,
            "yes_precision_ci95": [low, high],
            "false_accept_same": self.false_accept_same,
            "undecided": self.undecided,
            "ece": self.ece,
            "brier": self.brier,
            "auroc": self.auroc,
            "accepted_positives": self.accepted_positives,
        }


def trust_row(name: str, records: Sequence[EpisodeRecord], use_probability: bool = True) -> TrustRow:
    """The row of a run; ``use_probability`` False scores a vote fusion by its vote share even when its records
    carry an evidential probability (the uncertainty next-best-view keeps one)."""
    ok = [record for record in records if record.is_ok]
    labels = [record.label for record in ok]
    scores = [episode_score(record, use_probability) for record in ok]
    per_pair = {}
    for pair_type in ("positive", "neg_same", "neg_diff"):
        group = [record for record in ok if record.pair_type == pair_type]
        per_pair[pair_type] = sum(r.is_correct for r in group) / len(group) if group else math.nan
    yes = [record for record in ok if record.prediction == "Yes"]
    same = [record for record in ok if record.pair_type == "neg_same"]
    return TrustRow(
        name=name,
        n=len(ok),
        accuracy=sum(r.is_correct for r in ok) / len(ok) if ok else math.nan,
        per_pair=per_pair,
        asd=sum(r.steps for r in ok) / len(ok) if ok else math.nan,
        yes=len(yes),
        yes_correct=sum(r.label == 1 for r in yes),
        false_accept_same=sum(r.prediction == "Yes" for r in same) / len(same) if same else math.nan,
        undecided=sum(r.prediction == "Unsure" for r in ok) / len(ok) if ok else math.nan,
        ece=expected_calibration_error(scores, labels),
        brier=brier_score(scores, labels),
        auroc=auroc(scores, labels),
        accepted_positives=sum(r.prediction == "Yes" and r.label == 1 for r in ok),
    )


# ---- difficulty -------------------------------------------------------------------------------------------


def _captures(
    dataset_root: Path, episode_path: str, cache: dict[str, dict[str, dict[str, Any]]]
) -> dict[str, Any]:
    if episode_path not in cache:
        try:
            meta = json.loads((dataset_root / episode_path / "meta.json").read_text(encoding="utf-8"))
            cache[episode_path] = {str(v.get("tag")): v for v in meta.get("viewpoints") or []}
        except (OSError, ValueError):
            cache[episode_path] = {}
    return cache[episode_path]


def view_difficulty(capture: Mapping[str, Any], captures: Iterable[Mapping[str, Any]]) -> float:
    """s of one view (module docstring); a capture without a mask scores its distance term only."""
    pixels = float(capture.get("mask_area_px") or 0.0)
    distance = float(capture.get("radius_m") or RANGE_M[1])
    extents = [
        float(other.get("mask_area_px") or 0.0) * float(other.get("radius_m") or RANGE_M[1]) ** 2
        for other in captures
    ]
    best = max(extents, default=0.0)
    visible = pixels * distance**2 / best if best > 0 else 0.0
    near = 1.0 - min(1.0, max(0.0, (distance - RANGE_M[0]) / (RANGE_M[1] - RANGE_M[0])))
    return 0.2 * min(1.0, visible) + 0.2 * near + 0.6 * min(1.0, pixels / FULL_SIZE_PX)


def difficulty_level(score: float) -> str:
    if score < HARD_BELOW:
        return "hard"
    return "easy" if score > EASY_ABOVE else "moderate"


def accuracy_by_difficulty(
    records: Sequence[EpisodeRecord], dataset_root: Path, episode_paths: Mapping[str, str]
) -> dict[str, dict[str, float]]:
    """Accuracy per difficulty level of the first view (``episode_paths``: episode key -> episode path)."""
    cache: dict[str, dict[str, dict[str, Any]]] = {}
    groups: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        if not record.is_ok or not record.transcript:
            continue
        path = episode_paths.get(record.episode_key)
        if path is None:
            continue
        captures = _captures(dataset_root, path, cache)
        first = captures.get(record.transcript[0].capture_tag)
        if first is None:
            continue
        groups[difficulty_level(view_difficulty(first, captures.values()))].append(record.is_correct)
    return {
        level: {"n": len(groups[level]), "accuracy": sum(groups[level]) / len(groups[level])}
        for level in ("hard", "moderate", "easy")
        if groups.get(level)
    }


def unverified_by_kind(records: Sequence[EpisodeRecord]) -> dict[str, int]:
    """Claim kinds no view could verify, counted over the positives that were not accepted."""
    counts: Counter[str] = Counter()
    for record in records:
        if record.label != 1 or record.prediction == "Yes" or record.evidence is None:
            continue
        kinds = {claim.name: claim.kind for claim in record.evidence.claims}
        for name in record.evidence.unverified:
            counts[kinds.get(name, "unknown")] += 1
    return dict(counts.most_common())


__all__ = [
    "TrustRow",
    "accuracy_by_difficulty",
    "auroc",
    "brier_score",
    "difficulty_level",
    "episode_score",
    "expected_calibration_error",
    "reliability_diagram",
    "risk_coverage",
    "trust_row",
    "unverified_by_kind",
    "view_difficulty",
]
