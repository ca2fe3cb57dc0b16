"""Wilson, cluster bootstrap, paired bootstrap and exact McNemar against known numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from aiv_eval import (
    cluster_bootstrap_ci,
    mcnemar_exact,
    mcnemar_exact_p,
    paired_bootstrap_diff,
    wilson_interval,
)
from aiv_eval.analysis.statistics import z_value


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score, no correction)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_published_values(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson_interval(k, n)
    assert got[0] == pytest.approx(lo, abs=6e-5)
    assert got[1] == pytest.approx(hi, abs=6e-5)


def test_wilson_edge_cases_and_spec_rule_of_thumb() -> None:
    assert z_value(0.95) == pytest.approx(1.959963984540054, abs=1e-12)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(10, 10)[1] == 1.0
    # spec §4.4: ±1.3 pp at p = 0.85, n = 3000
    lo, hi = wilson_interval(2550, 3000)
    assert (hi - lo) / 2 == pytest.approx(0.0128, abs=5e-4)
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def test_mcnemar_exact_against_hand_computed_binomials() -> None:
    # b=1, c=9: 2 * (C(10,0) + C(10,1)) / 2^10 = 22/1024
    assert mcnemar_exact_p(1, 9) == 22 / 1024
    assert mcnemar_exact_p(9, 1) == 22 / 1024
    # b=0, c=5: 2 * 1/32
    assert mcnemar_exact_p(0, 5) == 0.0625
    # b=3, c=5: 2 * (1 + 8 + 28 + 56) / 256 = 186/256
    assert mcnemar_exact_p(3, 5) == 186 / 256
    assert mcnemar_exact_p(4, 4) == 1.0  # capped
    assert mcnemar_exact_p(0, 0) == 1.0
    # large counts do not underflow
    p = mcnemar_exact_p(1400, 1600)
    assert 0.0 < p < 0.001
    a = [1, 1, 1, 0, 0, 1, 0]
    b = [1, 0, 0, 0, 1, 0, 0]
    res = mcnemar_exact(a, b)
    assert (res.only_a, res.only_b, res.discordant) == (3, 1, 4)
    assert res.p_value == 2 * (1 + 4) / 16


def _clustered(n_clusters: int = 10, size: int = 20) -> tuple[list[int], list[str]]:
    """Outcomes perfectly correlated within clusters: clusters 0..5 all correct, 6..9 all wrong."""
    outcomes, clusters = [], []
    for c in range(n_clusters):
        outcomes += [1 if c < 6 else 0] * size
        clusters += [f"obj{c}"] * size
    return outcomes, clusters


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    outcomes, clusters = _clustered()
    a = cluster_bootstrap_ci(outcomes, clusters, resamples=500, seed=7)
    b = cluster_bootstrap_ci(outcomes, clusters, resamples=500, seed=7)
    c = cluster_bootstrap_ci(outcomes, clusters, resamples=500, seed=8)
    assert a == b
    assert (a.low, a.high, a.std_error) != (c.low, c.high, c.std_error)
    assert a.estimate == 0.6 and a.n_clusters == 10 and a.n_items == 200
    # cluster label order does not matter (clusters are sorted by label)
    perm = np.random.default_rng(0).permutation(len(outcomes))
    shuffled = cluster_bootstrap_ci(
        [outcomes[i] for i in perm], [clusters[i] for i in perm], resamples=500, seed=7
    )
    assert shuffled == a


def test_clustering_widens_the_interval() -> None:
    outcomes, clusters = _clustered()
    iid = cluster_bootstrap_ci(outcomes, None, resamples=1000, seed=1)
    clustered = cluster_bootstrap_ci(outcomes, clusters, resamples=1000, seed=1)
    assert iid.n_clusters == 200
    assert iid.low <= 0.6 <= iid.high and clustered.low <= 0.6 <= clustered.high
    assert (clustered.high - clustered.low) > 2.5 * (iid.high - iid.low)
    # the iid bootstrap agrees with the binomial standard error
    assert iid.std_error == pytest.approx(math.sqrt(0.6 * 0.4 / 200), rel=0.15)


def test_paired_bootstrap_of_a_difference() -> None:
    outcomes, clusters = _clustered()
    better = list(outcomes)
    for i in range(120, 140):  # run B also gets cluster 6 right
        better[i] = 1
    res = paired_bootstrap_diff(outcomes, better, clusters, resamples=1000, seed=3)
    assert res.estimate == pytest.approx(0.1)
    assert 0.0 <= res.low <= 0.1 <= res.high
    same = paired_bootstrap_diff(outcomes, outcomes, clusters, resamples=200, seed=3)
    assert (same.estimate, same.low, same.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        paired_bootstrap_diff([1, 0], [1], None)


def test_bootstrap_input_validation() -> None:
    with pytest.raises(ValueError):
        cluster_bootstrap_ci([1, 0, 1], ["a", "b"])
    with pytest.raises(ValueError):
        cluster_bootstrap_ci([1, 0], None, resamples=0)
    empty = cluster_bootstrap_ci([], [])
    assert (empty.estimate, empty.n_clusters) == (0.0, 0)
