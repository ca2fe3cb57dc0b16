"""Fit the evidential fusion's calibration from surveyed views: reliability cells, target model, evidence scale.

Three things are fitted, each from data with known truth and nothing set by hand:

- **reliability cells** (claim kind × view quality): how often the backend answered Yes / No / Unsure about
  claims that hold and claims that fail. Answers about the whole object (a category check) are counted once
  per view under the kind ``category``: No when any answer of the view says the object is another one,
  Unsure otherwise; its truth is whether the target shares the query's category.
- **the target model**: the share of targets among pairs, of other categories among the others, of
  same-category others that no claim of the query tells apart, and the per-claim rate ρ at which the rest
  differ, fitted by maximum likelihood over their count of failing claims (at least one fails).
- **the evidence scale**: views of one object are not independent (same light, same shape, same bias of a
  cue), so summed evidence overstates certainty. The scale multiplying all evidence is the one of a fixed grid
  that minimises the log loss of the final probability over episodes sampled from the survey (random sets of
  one to six served views per pair, seeded).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aiv_verifier.claims import CATEGORY_KIND
from aiv_verifier.core.evidence import AnswerCounts, ReliabilityCell, ReliabilityTable, TargetModel
from aiv_verifier.core.evidential import ClaimAnswer, ClaimItem, EvidenceLedger
from aiv_verifier.core.evidential import object_verdict as ledger_object_verdict
from aiv_verifier.core.types import Decision

from .survey import SurveyPair, SurveyView

#: Candidate evidence scales (the fit picks the one with the lowest log loss).
EVIDENCE_SCALES: tuple[float, ...] = (
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.85,
    1.0,
    1.2,
    1.5,
    2.0,
    3.0,
    5.0,
    8.0,
)
#: Sampled episodes per pair for the evidence-scale fit, and the most views one may hold.
EPISODES_PER_PAIR = 6
MAX_VIEWS = 6
SEED = 20261127


@dataclass(frozen=True)
class FittedBackend:
    table: ReliabilityTable
    model: TargetModel
    facts: dict[str, object]


def _add(
    counts: dict[tuple[str, str], list[list[int]]], key: tuple[str, str], holds: bool, answer: Decision
) -> None:
    row = counts.setdefault(key, [[0, 0, 0], [0, 0, 0]])[0 if holds else 1]
    row[{Decision.YES: 0, Decision.NO: 1, Decision.UNSURE: 2}[answer]] += 1


def object_verdict(view: SurveyView) -> Decision:
    """The view's answer about the category, by the rule the ledger files it with (Unsure: it made none)."""
    return ledger_object_verdict([ClaimAnswer(a.name, a.answer, a.about_object) for a in view.answers])


def reliability_cells(pairs: Iterable[SurveyPair]) -> dict[tuple[str, str], ReliabilityCell]:
    counts: dict[tuple[str, str], list[list[int]]] = {}
    for pair in pairs:
        same_category = pair.pair_type != "neg_diff"
        for view in pair.views:
            for answer in view.answers:
                if answer.about_object or answer.holds is None:
                    continue
                _add(counts, (answer.kind, view.quality), answer.holds, answer.answer)
            _add(counts, (CATEGORY_KIND, view.quality), same_category, object_verdict(view))
    return {
        key: ReliabilityCell(AnswerCounts(*holds), AnswerCounts(*fails))
        for key, (holds, fails) in counts.items()
    }


#: A claim kind gets its own fails rate with at least this many claims of it in same-category look-alikes.
MIN_KIND_CLAIMS = 30


def fit_target_model(pairs: Sequence[SurveyPair]) -> TargetModel:
    total = len(pairs)
    if total == 0:
        raise ValueError("no surveyed pairs to fit the target model on")
    positives = sum(pair.label == 1 for pair in pairs)
    others = [pair for pair in pairs if pair.label != 1]
    other_category = sum(pair.pair_type == "neg_diff" for pair in others)
    same = [pair for pair in others if pair.pair_type == "neg_same"]
    # per look-alike: its claims' kinds and whether each fails
    samples = [
        [(kind, pair.holds.get(name) is False) for name, kind, _ in pair.claims]
        for pair in same
        if pair.claims
    ]
    indistinguishable = sum(not any(fails for _, fails in sample) for sample in samples)
    distinct = [sample for sample in samples if any(fails for _, fails in sample)]
    overall = _fit_rates(distinct, {})[""]
    counts: dict[str, int] = defaultdict(int)
    for sample in distinct:
        for kind, _ in sample:
            counts[kind] += 1
    kinds = sorted(kind for kind, count in counts.items() if count >= MIN_KIND_CLAIMS)
    rates = _fit_rates(distinct, dict.fromkeys(kinds, overall)) if kinds else {"": overall}
    rates.pop("", None)
    # The fallback for kinds without a rate of their own is the rate pooled over every claim: the joint fit's
    # own "" rate is fitted on the rare kinds alone, and on nothing at all when every kind has its own rate
    # (its likelihood is then flat and the grid's first value, 0.005, came out).
    return TargetModel(
        target_share=min(max(positives / total, 1e-3), 1 - 1e-3),
        other_category_share=other_category / len(others) if others else 0.5,
        indistinguishable_share=min(indistinguishable / len(samples), 0.999) if samples else 0.0,
        claim_fails_rate=overall,
        kind_fails_rates=rates,
    )


_GRID = tuple(step / 400.0 for step in range(2, 399))


def _fit_rates(samples: Sequence[Sequence[tuple[str, bool]]], kinds: dict[str, float]) -> dict[str, float]:
    """Maximum-likelihood fails rates for 'each claim fails independently with its kind's rate (the overall
    rate for other kinds), at least one fails', by coordinate ascent on a grid; key "" is the overall rate."""
    if not samples:
        return {"": 0.2, **kinds}
    rates = {"": 0.2, **kinds}

    def log_likelihood() -> float:
        total = 0.0
        for sample in samples:
            none_fail = 0.0
            for kind, fails in sample:
                rho = rates.get(kind, rates[""])
                total += math.log(rho) if fails else math.log1p(-rho)
                none_fail += math.log1p(-rho)
            total -= math.log1p(-math.exp(none_fail))
        return total

    for _ in range(3):
        for key in list(rates):
            best, best_ll = rates[key], -math.inf
            for value in _GRID:
                rates[key] = value
                ll = log_likelihood()
                if ll > best_ll:
                    best, best_ll = value, ll
            rates[key] = best
    return rates


def _ledger_probability(
    pair: SurveyPair, views: Sequence[SurveyView], table: ReliabilityTable, model: TargetModel
) -> float:
    ledger = EvidenceLedger([ClaimItem(name, kind, hint) for name, kind, hint in pair.claims], table, model)
    for view in views:
        ledger.record(
            (view.sector, ""),
            [ClaimAnswer(answer.name, answer.answer, answer.about_object) for answer in view.answers],
            quality=view.quality,
            weight=view.weight,
        )
    return ledger.probability()


def sampled_episodes(
    pairs: Sequence[SurveyPair], seed: int = SEED
) -> list[tuple[SurveyPair, tuple[SurveyView, ...]]]:
    rng = random.Random(seed)
    episodes = []
    for pair in pairs:
        if not pair.views:
            continue
        for _ in range(EPISODES_PER_PAIR):
            size = rng.randint(1, min(MAX_VIEWS, len(pair.views)))
            episodes.append((pair, tuple(rng.sample(list(pair.views), size))))
    return episodes


def log_loss(probabilities: Sequence[float], labels: Sequence[int]) -> float:
    eps = 1e-6
    return -sum(
        math.log(min(max(p, eps), 1 - eps)) if label == 1 else math.log(min(max(1 - p, eps), 1 - eps))
        for p, label in zip(probabilities, labels, strict=True)
    ) / max(1, len(labels))


def fit_backend(pairs: Sequence[SurveyPair]) -> FittedBackend:
    cells = reliability_cells(pairs)
    model = fit_target_model(pairs)
    episodes = sampled_episodes(pairs)
    labels = [pair.label for pair, _ in episodes]
    losses: dict[float, float] = {}
    for scale in EVIDENCE_SCALES:
        table = ReliabilityTable(cells, scale)
        losses[scale] = log_loss(
            [_ledger_probability(pair, views, table, model) for pair, views in episodes], labels
        )
    scale = min(losses, key=lambda value: (losses[value], value))
    facts: dict[str, object] = {
        "pairs": len(pairs),
        "views": sum(len(pair.views) for pair in pairs),
        "evidence_scale_fit": {
            "sampled_episodes": len(episodes),
            "log_loss": {f"{key:g}": round(value, 5) for key, value in sorted(losses.items())},
        },
        "visible_decisive_rate": _decisive_when_visible(pairs),
    }
    return FittedBackend(ReliabilityTable(cells, scale), model, facts)


def _decisive_when_visible(pairs: Iterable[SurveyPair]) -> dict[str, float]:
    """Per claim kind: the share of views showing a claim in which the backend answered it Yes or No."""
    shown: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pair in pairs:
        for view in pair.views:
            for answer in view.answers:
                if answer.visible and not answer.about_object:
                    shown[answer.kind][1] += 1
                    shown[answer.kind][0] += answer.answer is not Decision.UNSURE
    return {kind: round(decisive / total, 4) for kind, (decisive, total) in sorted(shown.items()) if total}


__all__ = [
    "EVIDENCE_SCALES",
    "FittedBackend",
    "fit_backend",
    "fit_target_model",
    "log_loss",
    "object_verdict",
    "reliability_cells",
    "sampled_episodes",
]
