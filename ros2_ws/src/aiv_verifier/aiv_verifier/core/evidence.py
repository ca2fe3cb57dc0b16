"""Evidence, opinions and the probability that the object in view is the described one.

This module is the mathematics of the ``evidential`` fusion; nothing here knows about views, ROS or files.

**Evidence of one answer.** A per-view answer y (Yes / No) about a claim is worth what the data say it is
worth: the likelihood ratio

    LR(y) = P(y | the claim holds) / P(y | it does not)

measured per verifier backend, claim kind and view quality (:class:`ReliabilityCell`, fitted by
``aiv-eval calibrate``), once among all answers and once among the decisive ones, the reading less favourable
to the claim used (:meth:`ReliabilityCell.likelihood_ratio` says why). The evidence an answer adds is its
*weight of evidence*, the log of that ratio in nats, filed for the claim (r) when LR > 1 and against it (s)
when LR < 1:

    r = ln LR  (LR ≥ 1),        s = ln (1 / LR)  (LR < 1).

Why logs: views of a fixed object answer about a fixed truth, so for views whose errors are independent
Bayes' rule multiplies their likelihood ratios. **Cumulative fusion** adds evidence (r = Σ r_v, s = Σ s_v), and
with log weights adding is multiplying: the fused likelihood ratio of the claim is

    Λ = exp(r − s)                (1 when it was never judged).

(Counting each answer as r = LR − 1 pseudo-observations, the Beta-binomial reading, makes two answers of
LR 9 worth 17 instead of 81. A global factor fitted to make several views count enough then made one view
count for far more than its ratio: a single flipped Yes of a noisy verifier reached 0.95.) Binomial subjective
logic reads the same evidence with a non-informative prior weight W = 2 as belief b = r / (r + s + W),
disbelief d = s / (r + s + W) and uncertainty u = W / (r + s + W): an attribute never judged has u = 1, one
answer of LR 9 leaves u ≈ 0.48, three agreeing ones u ≈ 0.23.

Unsure answers carry no evidence (the claim stays as uncertain as it was), and the likelihood ratio used is
the end of its 95 % interval nearest to 1: a sparsely measured answer counts for little, one whose interval
contains 1 for nothing. The caller keeps one contribution per pose, so a repeated view adds nothing. Views of
one object are not fully independent (same light, same bias of a cue): the table's fitted ``evidence_scale``
multiplies every weight, a tempered likelihood (scale < 1 discounts correlated views).

**The object.** "Is this the described object?" is the hypothesis T that every claim holds. Its alternatives,
with shares fitted from labelled data (:class:`TargetModel`):

- another object of the same category (share 1 − γ of non-targets): with probability ζ no claim of the
  query tells it apart; otherwise each claim fails independently with probability ρ, at least one failing;
- an object of another category (share γ): every claim fails, and so does the category.

With ℓ_a(holds) / ℓ_a(fails) = Λ_a and n claims, the likelihood ratios of the evidence against T are

    R_same = ζ + (1 − ζ) · [Π_a ((1 − ρ) + ρ / Λ_a) − (1 − ρ)^n] / (1 − (1 − ρ)^n)
    R_diff = Π_a 1/Λ_a · 1/Λ_category

and with the prior share π of targets

    P(T | evidence) = π / (π + (1 − π) · ((1 − γ) · R_same + γ · R_diff)).

A claim never judged (Λ = 1) keeps R_same at least about ρ-weighted 1/n of its value, so the probability
cannot reach a high accept threshold while a claim that could tell a look-alike apart was never seen; a
reliable contradiction (Λ ≪ 1) sends R_same up and the probability down.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .types import Decision

#: W, the weight of the non-informative prior of a binomial opinion (two outcomes, base rate 1/2).
PRIOR_WEIGHT = 2.0
#: Fused log-odds are clipped to ±this many nats (a likelihood ratio of about 1e300) to stay finite.
MAX_LOG_ODDS = 690.0
#: z of the two-sided 95 % interval used for every rate.
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Opinion:
    """Binomial subjective-logic opinion: belief + disbelief + uncertainty = 1."""

    belief: float
    disbelief: float
    uncertainty: float

    @classmethod
    def from_evidence(cls, support: float, against: float, prior_weight: float = PRIOR_WEIGHT) -> Opinion:
        if support < 0 or against < 0:
            raise ValueError(f"evidence must be >= 0, got support={support}, against={against}")
        total = support + against + prior_weight
        return cls(support / total, against / total, prior_weight / total)

    def projected(self, base_rate: float = 0.5) -> float:
        """The probability the opinion stands for: b + a·u."""
        return self.belief + base_rate * self.uncertainty


VACUOUS = Opinion(0.0, 0.0, 1.0)
"""The opinion about a claim never judged."""


def evidence_odds(support: float, against: float) -> float:
    """Λ = exp(r − s): the likelihood ratio fused evidence (in nats) implies for its claim (1 = no evidence)."""
    return math.exp(max(-MAX_LOG_ODDS, min(MAX_LOG_ODDS, support - against)))


def evidence_from_likelihood_ratio(ratio: float) -> tuple[float, float]:
    """(r, s) of one answer with likelihood ratio ``ratio`` for its claim: its weight of evidence in nats."""
    if not ratio > 0 or math.isinf(ratio):
        raise ValueError(f"a likelihood ratio must be finite and > 0, got {ratio}")
    if ratio >= 1.0:
        return math.log(ratio), 0.0
    return 0.0, -math.log(ratio)


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion; (0, 1) without trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


ANSWERS: tuple[Decision, ...] = (Decision.YES, Decision.NO, Decision.UNSURE)


@dataclass(frozen=True)
class AnswerCounts:
    """How often a backend answered Yes / No / Unsure about claims that hold (or that fail)."""

    yes: int = 0
    no: int = 0
    unsure: int = 0

    def __post_init__(self) -> None:
        for name in ("yes", "no", "unsure"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"answer count {name} must be an integer >= 0, got {value!r}")

    @property
    def total(self) -> int:
        return self.yes + self.no + self.unsure

    @property
    def decisive(self) -> int:
        """Yes and No answers: the ones that carry evidence."""
        return self.yes + self.no

    def of(self, answer: Decision) -> int:
        return {Decision.YES: self.yes, Decision.NO: self.no, Decision.UNSURE: self.unsure}[answer]

    def __add__(self, other: AnswerCounts) -> AnswerCounts:
        return AnswerCounts(self.yes + other.yes, self.no + other.no, self.unsure + other.unsure)

    def to_dict(self) -> dict[str, int]:
        return {"yes": self.yes, "no": self.no, "unsure": self.unsure}


@dataclass(frozen=True)
class ReliabilityCell:
    """The answers of one backend to one kind of claim from views of one quality, split by the truth."""

    holds: AnswerCounts
    fails: AnswerCounts

    def __add__(self, other: ReliabilityCell) -> ReliabilityCell:
        return ReliabilityCell(self.holds + other.holds, self.fails + other.fails)

    @property
    def total(self) -> int:
        return self.holds.total + self.fails.total

    def likelihood_ratio_interval(self, answer: Decision, decisive_only: bool = False) -> tuple[float, float]:
        """95 % bounds of P(answer | holds) / P(answer | fails) from two Wilson intervals: among all answers,
        or with ``decisive_only`` among the Yes and No answers alone."""
        holds = self.holds.decisive if decisive_only else self.holds.total
        fails = self.fails.decisive if decisive_only else self.fails.total
        p_lo, p_hi = wilson_interval(self.holds.of(answer), holds)
        q_lo, q_hi = wilson_interval(self.fails.of(answer), fails)
        low = p_lo / q_hi if q_hi > 0 else math.inf
        high = p_hi / q_lo if q_lo > 0 else math.inf
        return low, high

    def likelihood_ratio(self, answer: Decision) -> float:
        """The ratio an answer is counted with: each reading's 95 % interval taken at its end nearest to 1 (1 when
        it contains 1), and of the two readings the one less favourable to the claim. Unsure is always 1.

        The two readings differ by how often the backend abstains. Among all answers, a backend that abstains
        more about claims that fail (they are often small parts a look-alike changes, which it cannot see)
        makes each of its Yes answers look rarer under "fails", so a Yes borrows evidence from the visibility
        of the claim while the Unsure that carries it counts for nothing (measured: a noisy oracle with
        symmetric flips got 7.3 per Yes and 0.64 per No in small views; with the evidence scale one Yes
        outweighed four Nos). Among decisive answers only, a backend that never answers Yes about a claim that
        holds (a category check only ever says "not a visor" or nothing) has no measure of its No at all.
        Taking the smaller ratio keeps what each reading knows and lets neither lend a claim evidence.
        """
        if answer is Decision.UNSURE:
            return 1.0
        return min(
            _nearest_to_one(*self.likelihood_ratio_interval(answer, decisive_only))
            for decisive_only in (False, True)
        )

    def accuracy(self) -> tuple[float, float, float]:
        """Share of decisive answers that are right, with its 95 % interval (a summary for reports)."""
        right = self.holds.yes + self.fails.no
        decisive = right + self.holds.no + self.fails.yes
        low, high = wilson_interval(right, decisive)
        return (right / decisive if decisive else math.nan), low, high

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"holds": self.holds.to_dict(), "fails": self.fails.to_dict()}
        for answer in (Decision.YES, Decision.NO):
            low, high = self.likelihood_ratio_interval(answer)
            decisive_low, decisive_high = self.likelihood_ratio_interval(answer, decisive_only=True)
            out[f"lr_{answer.value.lower()}"] = {
                "used": _finite(self.likelihood_ratio(answer)),
                "ci95": [_finite(low), _finite(high)],
                "ci95_decisive": [_finite(decisive_low), _finite(decisive_high)],
            }
        accuracy, low, high = self.accuracy()
        out["decisive_accuracy"] = {"value": _finite(accuracy), "ci95": [low, high]}
        return out


def _nearest_to_one(low: float, high: float) -> float:
    """The end of an interval nearest to 1, or 1 when the interval contains it."""
    if low > 1.0:
        return low
    if high < 1.0:
        return high
    return 1.0


def _finite(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


EMPTY_CELL = ReliabilityCell(AnswerCounts(), AnswerCounts())
#: A cell is used on its own only with at least this many answers about claims that hold and that fail;
#: otherwise the claim kind's cell pooled over view qualities is (then the backend's, over all kinds).
MIN_ANSWERS_PER_SIDE = 20


@dataclass(frozen=True)
class ReliabilityTable:
    """One backend's reliability: cells keyed by (claim kind, view quality), pooled where data are thin."""

    cells: Mapping[tuple[str, str], ReliabilityCell]
    evidence_scale: float = 1.0
    _pooled_kind: dict[str, ReliabilityCell] = field(init=False, repr=False, compare=False)
    _pooled_all: ReliabilityCell = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.evidence_scale > 0 or not math.isfinite(self.evidence_scale):
            raise ValueError(f"evidence_scale must be a finite number > 0, got {self.evidence_scale}")
        by_kind: dict[str, ReliabilityCell] = {}
        pooled_all = EMPTY_CELL
        for (kind, _quality), cell in self.cells.items():
            by_kind[kind] = by_kind.get(kind, EMPTY_CELL) + cell
            pooled_all = pooled_all + cell
        object.__setattr__(self, "_pooled_kind", by_kind)
        object.__setattr__(self, "_pooled_all", pooled_all)

    def cell(self, kind: str, quality: str) -> ReliabilityCell:
        """The cell an answer is judged by: its own, else its kind's, else the backend's over all kinds."""
        for candidate in (
            self.cells.get((kind, quality)),
            self._pooled_kind.get(kind),
            self._pooled_all,
        ):
            if candidate is not None and _enough(candidate):
                return candidate
        return EMPTY_CELL

    def evidence(self, kind: str, quality: str, answer: Decision, weight: float = 1.0) -> tuple[float, float]:
        """(r, s) one answer adds, scaled by ``weight`` (the view's detection confidence) and the fitted
        evidence scale."""
        if answer is Decision.UNSURE:
            return 0.0, 0.0
        ratio = self.cell(kind, quality).likelihood_ratio(answer)
        support, against = evidence_from_likelihood_ratio(ratio)
        factor = weight * self.evidence_scale
        return support * factor, against * factor

    def strongest(self, kind: str, answer: Decision) -> tuple[float, float]:
        """The most evidence one answer of this kind can add from any view quality (stopping bounds)."""
        best = (0.0, 0.0)
        qualities = {quality for (cell_kind, quality) in self.cells if cell_kind == kind} or {""}
        for quality in qualities:
            support, against = self.evidence(kind, quality, answer)
            if support + against > sum(best):
                best = (support, against)
        return best


def _enough(cell: ReliabilityCell) -> bool:
    return cell.holds.total >= MIN_ANSWERS_PER_SIDE and cell.fails.total >= MIN_ANSWERS_PER_SIDE


@dataclass(frozen=True)
class TargetModel:
    """Prior shares of the hypotheses about the object in view (module docstring for the formula).

    ``target_share`` π: how often the object in view is the described one; ``other_category_share`` γ: of
    the others, how many are another category; ``indistinguishable_share`` ζ: of same-category others, how
    many no claim of the query tells apart; ``claim_fails_rate`` ρ: for the rest, how likely a claim is to be
    one they differ in, per claim kind in ``kind_fails_rates`` where the data had enough claims of that kind
    (look-alikes differ more often in a colour than in a material), else this overall rate.
    """

    target_share: float = 1.0 / 3.0
    other_category_share: float = 0.5
    indistinguishable_share: float = 0.0
    claim_fails_rate: float = 0.2
    kind_fails_rates: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_rate("target_share", self.target_share, low_open=True, high_open=True)
        _check_rate("other_category_share", self.other_category_share)
        _check_rate("indistinguishable_share", self.indistinguishable_share, high_open=True)
        _check_rate("claim_fails_rate", self.claim_fails_rate, low_open=True)
        for kind, rate in self.kind_fails_rates.items():
            _check_rate(f"kind_fails_rates[{kind}]", rate, low_open=True, high_open=True)

    def with_target_share(self, share: float) -> TargetModel:
        return replace(self, target_share=share)

    def fails_rate(self, kind: str) -> float:
        return self.kind_fails_rates.get(kind, self.claim_fails_rate)

    def same_category_ratio(self, odds: Sequence[float], kinds: Sequence[str] | None = None) -> float:
        """R_same: likelihood of the evidence under 'a same-category look-alike' over under 'the target'."""
        n = len(odds)
        if n == 0:
            return 1.0
        rates = (
            [self.fails_rate(kind) for kind in kinds] if kinds is not None else [self.claim_fails_rate] * n
        )
        if len(rates) != n:
            raise ValueError(f"{n} claims but {len(rates)} claim kinds")
        inverse = [1.0 / value for value in odds]
        if max(rates) < 1e-9:
            distinct = sum(inverse) / n  # the limit rho -> 0: exactly one claim fails, uniformly chosen
        else:
            product = math.prod((1.0 - rho) + rho * value for rho, value in zip(rates, inverse, strict=True))
            none_fail = math.prod(1.0 - rho for rho in rates)
            distinct = max(0.0, product - none_fail) / (1.0 - none_fail)
        zeta = self.indistinguishable_share
        return zeta + (1.0 - zeta) * distinct

    def probability(
        self, odds: Sequence[float], category_odds: float = 1.0, kinds: Sequence[str] | None = None
    ) -> float:
        """P(this is the described object | evidence) from each claim's Λ (of the given kinds) and the
        category's."""
        for value in (*odds, category_odds):
            if not value > 0 or math.isinf(value):
                raise ValueError(f"evidence odds must be finite and > 0, got {value}")
        log_diff = -sum(math.log(value) for value in odds) - math.log(category_odds)
        gamma = self.other_category_share
        terms = []
        if gamma < 1.0:
            terms.append(math.log1p(-gamma) + _safe_log(self.same_category_ratio(odds, kinds)))
        if gamma > 0.0:
            terms.append(math.log(gamma) + log_diff)
        log_alternative = _logsumexp(terms) + math.log1p(-self.target_share)
        log_target = math.log(self.target_share)
        return 1.0 / (1.0 + math.exp(min(700.0, log_alternative - log_target)))

    def claim_base_rate(self, kind: str = "") -> float:
        """Prior probability that one claim (of ``kind``) of the query holds for the object in view."""
        pi, gamma = self.target_share, self.other_category_share
        same = (1.0 - pi) * (1.0 - gamma)
        rho = self.fails_rate(kind) if kind else self.claim_fails_rate
        return pi + same * (1.0 - (1.0 - self.indistinguishable_share) * rho)


def _safe_log(value: float) -> float:
    return math.log(value) if value > 0 else -math.inf


def _logsumexp(terms: Sequence[float]) -> float:
    finite = [term for term in terms if term != -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(sum(math.exp(term - top) for term in finite))


def _check_rate(name: str, value: float, *, low_open: bool = False, high_open: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    low_ok = value > 0 if low_open else value >= 0
    high_ok = value < 1 if high_open else value <= 1
    if not (low_ok and high_ok):
        interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value}")


__all__ = [
    "ANSWERS",
    "EMPTY_CELL",
    "MIN_ANSWERS_PER_SIDE",
    "PRIOR_WEIGHT",
    "VACUOUS",
    "AnswerCounts",
    "Opinion",
    "ReliabilityCell",
    "ReliabilityTable",
    "TargetModel",
    "evidence_from_likelihood_ratio",
    "evidence_odds",
    "wilson_interval",
]
