"""Interval estimates and tests for accuracy (numpy + math only).

* :func:`wilson_interval` — Wilson score interval of a binomial proportion.
* :func:`cluster_bootstrap_ci` — percentile bootstrap of accuracy, resampling whole clusters (target instances:
  the 3,000 benchmark episodes come from 71 objects, so episodes are not independent; spec §4.4).
* :func:`paired_bootstrap_diff` — the same for the accuracy difference of two runs on common episodes, resampling
  clusters jointly so the pairing is kept.
* :func:`mcnemar_exact` — exact two-sided McNemar test (binomial on the discordant pairs).

Everything is deterministic: the bootstrap draws from ``numpy.random.default_rng(seed)`` in fixed-size chunks
and clusters are ordered by their sorted string labels, so the same inputs and seed give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
_CHUNK = 256  # bootstrap resamples drawn per RNG call (fixed: part of the determinism contract)


def z_value(confidence: float) -> float:
    """Two-sided standard-normal quantile, e.g. 1.959963984540054 for 0.95."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n``; ``(0.0, 1.0)`` when ``n`` is 0."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    z = z_value(confidence)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate (on the original sample), percentile interval and bootstrap standard error."""

    estimate: float
    low: float
    high: float
    std_error: float
    resamples: int
    n_clusters: int
    n_items: int
    confidence: float
    seed: int

    def rounded(self, decimals: int = 4) -> dict[str, float | int]:
        return {
            "estimate": round(self.estimate, decimals),
            "low": round(self.low, decimals),
            "high": round(self.high, decimals),
            "std_error": round(self.std_error, decimals),
            "resamples": self.resamples,
            "n_clusters": self.n_clusters,
            "n_items": self.n_items,
            "confidence": self.confidence,
            "seed": self.seed,
        }


def _cluster_sums(values: np.ndarray, clusters: Sequence[Hashable] | None) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums of ``values`` and item counts; clusters in sorted-label order (None = one per item)."""
    if clusters is None:
        return values.astype(float), np.ones(len(values), dtype=float)
    if len(clusters) != len(values):
        raise ValueError(f"{len(clusters)} cluster labels for {len(values)} outcomes")
    labels = sorted({str(c) for c in clusters})
    code = {c: i for i, c in enumerate(labels)}
    idx = np.fromiter((code[str(c)] for c in clusters), dtype=np.int64, count=len(clusters))
    sums = np.bincount(idx, weights=values.astype(float), minlength=len(labels))
    counts = np.bincount(idx, minlength=len(labels)).astype(float)
    return sums, counts


def _bootstrap_ratio(
    sums: np.ndarray, counts: np.ndarray, resamples: int, seed: int, confidence: float, n_items: int
) -> BootstrapResult:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    k = len(sums)
    if k == 0:
        return BootstrapResult(0.0, 0.0, 0.0, 0.0, resamples, 0, 0, confidence, seed)
    estimate = float(sums.sum() / counts.sum())
    rng = np.random.default_rng(seed)
    stats = np.empty(resamples, dtype=float)
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        picks = rng.integers(0, k, size=(rows, k))
        stats[start : start + rows] = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    std = float(stats.std(ddof=1)) if resamples > 1 else 0.0
    return BootstrapResult(estimate, float(low), float(high), std, resamples, k, n_items, confidence, seed)


def cluster_bootstrap_ci(
    outcomes: Sequence[bool | int | float],
    clusters: Sequence[Hashable] | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap CI of the mean of ``outcomes`` (accuracy for 0/1 outcomes).

    With ``clusters`` (one label per outcome, e.g. ``target_object_id``) whole clusters are resampled with
    replacement and the statistic is the pooled mean (Σ correct / Σ episodes over the drawn clusters);
    without, episodes are resampled independently.
    """
    values = np.asarray(outcomes, dtype=float)
    sums, counts = _cluster_sums(values, clusters)
    return _bootstrap_ratio(sums, counts, resamples, seed, confidence, len(values))


def paired_bootstrap_diff(
    outcomes_a: Sequence[bool | int | float],
    outcomes_b: Sequence[bool | int | float],
    clusters: Sequence[Hashable] | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap CI of ``mean(b) - mean(a)`` over the same episodes (aligned sequences)."""
    a = np.asarray(outcomes_a, dtype=float)
    b = np.asarray(outcomes_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired outcomes differ in length: {len(a)} vs {len(b)}")
    sums, counts = _cluster_sums(b - a, clusters)
    return _bootstrap_ratio(sums, counts, resamples, seed, confidence, len(a))


@dataclass(frozen=True)
class McNemarResult:
    """Discordant counts and the exact two-sided p-value.

    ``only_a`` = episodes A got right and B wrong; ``only_b`` the reverse.
    """

    only_a: int
    only_b: int
    p_value: float

    @property
    def discordant(self) -> int:
        return self.only_a + self.only_b


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p: ``min(1, 2 · P[X <= min(b, c)])`` with ``X ~ Binomial(b + c, 1/2)``.

    Computed with integers (no underflow for thousands of discordant pairs); 1.0 when there are none.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts must be >= 0")
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def mcnemar_exact(outcomes_a: Sequence[bool | int], outcomes_b: Sequence[bool | int]) -> McNemarResult:
    """Exact McNemar test on paired correctness outcomes of two runs."""
    if len(outcomes_a) != len(outcomes_b):
        raise ValueError(f"paired outcomes differ in length: {len(outcomes_a)} vs {len(outcomes_b)}")
    only_a = sum(1 for x, y in zip(outcomes_a, outcomes_b, strict=True) if bool(x) and not bool(y))
    only_b = sum(1 for x, y in zip(outcomes_a, outcomes_b, strict=True) if bool(y) and not bool(x))
    return McNemarResult(only_a, only_b, mcnemar_exact_p(only_a, only_b))
