"""metrics.json against hand-computed values (the six-episode set is described in builders.six_episodes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval import ResultsStore, compute_metrics, write_metrics

from .builders import CONFIG_INFO, index_entry, infra, record, run_config, six_episodes

REFERENCE_KEYS = [
    "accuracy",
    "asd",
    "total_episodes",
    "correct_count",
    "wrong_count",
    "nav_stats",
    "diagnostic_stats",
    "correct_episodes",
    "wrong_episodes",
    "per_pair_type",
    "per_category",
]


@pytest.fixture(scope="module")
def metrics() -> dict:
    return compute_metrics(six_episodes(), config_info=CONFIG_INFO)


def test_headline_numbers(metrics: dict) -> None:
    # correct: E0, E2, E4, E5 (Unsure on a negative pair counts as No) -> 4/6; steps 1+3+2+1+4+2 = 13
    assert metrics["accuracy"] == 0.6667
    assert (metrics["total_episodes"], metrics["correct_count"], metrics["wrong_count"]) == (6, 4, 2)
    assert metrics["asd"] == 2.17
    assert metrics["correct_episodes"] == ["s1/ep1", "s1/ep1", "s2/ep3", "s1/ep2"]
    assert metrics["wrong_episodes"] == ["s1/ep2", "s2/ep3"]


def test_reference_keys_come_first_in_reference_order(metrics: dict) -> None:
    keys = list(metrics)
    assert keys[: len(REFERENCE_KEYS)] == REFERENCE_KEYS
    assert keys[len(REFERENCE_KEYS)] == "config_info"  # no wall_time_s unless given
    assert list(metrics["nav_stats"]) == [
        "total_nav_failures",
        "nav_fail_unreachable",
        "nav_fail_trap",
        "episodes_with_nav_failure",
        "nav_failure_rate_per_step",
        "nav_failure_rate_per_episode",
        "avg_nav_failures_per_episode",
    ]
    assert list(metrics["per_pair_type"]) == ["positive", "neg_same", "neg_diff"]
    assert list(metrics["per_pair_type"]["positive"]) == [
        "accuracy",
        "correct",
        "total",
        "correct_episodes",
        "wrong_episodes",
        "asd",
        "nav_fail_unreachable",
        "nav_fail_trap",
        "first_view_accuracy",
        "avg_effective_views",
    ]
    assert metrics["config_info"] == CONFIG_INFO


def test_per_pair_type(metrics: dict) -> None:
    pos, ns, nd = (metrics["per_pair_type"][k] for k in ("positive", "neg_same", "neg_diff"))
    assert (pos["accuracy"], pos["correct"], pos["total"], pos["asd"]) == (0.5, 1, 2, 2.0)
    assert (pos["nav_fail_unreachable"], pos["nav_fail_trap"]) == (1, 1)
    assert (pos["first_view_accuracy"], pos["avg_effective_views"]) == (1.0, 1.0)
    assert pos["correct_episodes"] == ["s1/ep1"] and pos["wrong_episodes"] == ["s1/ep2"]
    assert (ns["accuracy"], ns["asd"], ns["first_view_accuracy"], ns["avg_effective_views"]) == (
        0.5,
        1.5,
        0.0,
        1.5,
    )
    assert (ns["nav_fail_unreachable"], ns["nav_fail_trap"]) == (0, 0)
    assert (nd["accuracy"], nd["asd"], nd["first_view_accuracy"], nd["avg_effective_views"]) == (
        1.0,
        3.0,
        1.0,
        2.0,
    )


def test_per_category_by_target_category(metrics: dict) -> None:
    mug, keys = metrics["per_category"]["mug"], metrics["per_category"]["keys"]
    assert list(metrics["per_category"]) == ["keys", "mug"]
    assert (mug["total"], mug["correct"], mug["accuracy"]) == (4, 3, 0.75)
    assert mug["positive"] == {"total": 2, "correct": 1, "accuracy": 0.5}
    assert mug["neg_same"] == {"total": 1, "correct": 1, "accuracy": 1.0}
    assert mug["neg_diff"] == {"total": 1, "correct": 1, "accuracy": 1.0}
    assert (keys["total"], keys["correct"], keys["accuracy"]) == (2, 1, 0.5)
    assert keys["positive"] == {"total": 0, "correct": 0, "accuracy": 0.0}
    assert keys["neg_same"] == {"total": 1, "correct": 0, "accuracy": 0.0}


def test_navigation_and_diagnostics(metrics: dict) -> None:
    nav = metrics["nav_stats"]
    # E1: trap + unreachable, E4: already_visited + trap -> 4 failures over 13 steps in 2 of 6 episodes
    assert (nav["total_nav_failures"], nav["nav_fail_unreachable"], nav["nav_fail_trap"]) == (4, 2, 2)
    assert nav["episodes_with_nav_failure"] == 2
    assert nav["nav_failure_rate_per_step"] == 0.3077
    assert nav["nav_failure_rate_per_episode"] == 0.3333
    assert nav["avg_nav_failures_per_episode"] == 0.67
    # first views: E0 Yes(1) ok, E1 Yes(1) ok, E2 Yes(0) x, E3 Yes(0) x, E4 No(0) ok, E5 No(0) ok
    assert metrics["diagnostic_stats"] == {"first_view_accuracy": 0.6667, "avg_effective_views": 1.5}


def test_nav_fail_rate_per_step_vs_per_episode() -> None:
    """3 failures over 10 steps, in 2 of 5 episodes -> 0.3 per step, 0.4 per episode, 0.6 per episode avg."""
    recs = [
        record(
            0,
            index_entry(episode="e0"),
            "Yes",
            ["Yes", "Yes"],
            outcomes=["unreachable", "none"],
            sectors=[0, 0],
        ),
        record(1, index_entry(episode="e1"), "Yes", ["Yes", "Yes"], traps=[True, False]),
        record(2, index_entry(episode="e2"), "Yes", ["Yes", "Yes"]),
        record(3, index_entry(episode="e3"), "Yes", ["Yes", "Yes"]),
        record(4, index_entry(episode="e4"), "Yes", ["Yes", "Yes"]),
    ]
    nav = compute_metrics(recs)["nav_stats"]
    assert (nav["total_nav_failures"], nav["episodes_with_nav_failure"]) == (2, 2)
    # add a third failure to episode e1 (a failed move after the trap arrival)
    recs[1] = record(
        1,
        index_entry(episode="e1"),
        "Yes",
        ["Yes", "Yes", "Yes"],
        outcomes=["moved", "unreachable", "none"],
        traps=[True, False, False],
    )
    recs[4] = record(4, index_entry(episode="e4"), "Yes", ["Yes"])
    assert sum(r.steps for r in recs) == 10
    nav = compute_metrics(recs)["nav_stats"]
    assert nav["total_nav_failures"] == 3
    assert nav["nav_failure_rate_per_step"] == 0.3
    assert nav["nav_failure_rate_per_episode"] == 0.4
    assert nav["avg_nav_failures_per_episode"] == 0.6


def test_forced_stop_at_the_horizon_is_no_navigation_failure() -> None:
    """The reference ends a budget-exhausted episode with "Unsure" without trying the move (spec §3.5, step 3),
    so it flags no ``navigation_failed``: only unreachable / already-visited requests and trap arrivals count."""
    forced = record(
        0,
        index_entry(episode="e0", query="keysB", query_category="keys", pair_type="neg_diff"),
        "Unsure",
        ["No", "No", "No"],
        outcomes=["moved", "moved", "rejected"],
        nav_rels=["front-left", "back-left", "back"],
        stop_reason="budget",
    )
    assert forced.transcript[-1].outcome == "rejected" and not forced.transcript[-1].failed_move
    assert (forced.nav_failures, forced.nav_fail_unreachable, forced.effective_views) == (0, 0, 3)
    failed = record(
        1,
        index_entry(episode="e1"),
        "Yes",
        ["Yes", "Yes"],
        outcomes=["unreachable", "none"],
        sectors=[0, 0],
    )
    m = compute_metrics([forced, failed])
    assert m["nav_stats"] == {
        "total_nav_failures": 1,
        "nav_fail_unreachable": 1,
        "nav_fail_trap": 0,
        "episodes_with_nav_failure": 1,
        "nav_failure_rate_per_step": 0.2,
        "nav_failure_rate_per_episode": 0.5,
        "avg_nav_failures_per_episode": 0.5,
    }
    assert m["diagnostic_stats"]["avg_effective_views"] == 2.0  # (3 + 1) / 2
    assert m["per_pair_type"]["neg_diff"]["nav_fail_unreachable"] == 0


def test_unsure_as_negative_both_ways() -> None:
    as_wrong = compute_metrics(six_episodes(unsure_as_negative=False), unsure_as_negative=False)
    assert as_wrong["accuracy"] == 0.5 and as_wrong["correct_count"] == 3
    assert as_wrong["per_pair_type"]["neg_diff"]["accuracy"] == 0.5
    assert as_wrong["evaluation"]["unsure_as_negative"] is False
    # the flag is applied at scoring time, whatever the records were built with
    rescored = compute_metrics(six_episodes(unsure_as_negative=True), unsure_as_negative=False)
    assert rescored["accuracy"] == 0.5
    assert rescored["flip_stats"]["flip_direction"]["flip_to_wrong"] == 2
    # first-view accuracy only scores Yes/No first views and does not depend on the flag
    assert rescored["diagnostic_stats"]["first_view_accuracy"] == 0.6667


def test_flip_stats(metrics: dict) -> None:
    flips = metrics["flip_stats"]
    assert (flips["episodes_with_flip"], flips["total_flips"], flips["mean_flips"]) == (3, 4, 0.67)
    assert flips["flip_rate_per_episode"] == 0.5
    assert flips["flip_direction"] == {
        "stable_correct": 3,  # E0, E4 (two flips, back to No), E5
        "stable_wrong": 1,  # E3
        "flip_to_correct": 1,  # E2
        "flip_to_wrong": 1,  # E1
    }
    assert flips["per_pair_type"]["neg_diff"]["total_flips"] == 2


def test_infra_failures_are_excluded_and_listed() -> None:
    base = compute_metrics(six_episodes(), config_info=CONFIG_INFO)
    failure = infra(
        6, index_entry(scene="s3", episode="ep6", target="bagA", target_category="bag"), reason="timeout"
    )
    with_failure = compute_metrics([*six_episodes(), failure], config_info=CONFIG_INFO)
    for key in [
        *REFERENCE_KEYS,
        "flip_stats",
        "confidence_intervals",
        "bootstrap",
        "stop_reasons",
        "model_calls",
    ]:
        assert with_failure[key] == base[key], key
    assert with_failure["infra_failures"] == {"count": 1, "keys": ["s3/ep6/bagA"], "reasons": {"timeout": 1}}
    assert "bag" not in with_failure["per_category"]


def test_extras(metrics: dict) -> None:
    assert metrics["stop_reasons"] == {
        "converged": 1,
        "unanimous": 3,
        "final": 1,
        "early_exit": 0,
        "budget": 1,
        "failure": 0,
    }
    calls = metrics["model_calls"]
    assert calls["totals"] == {"llm_nbv": 3, "verifier": 13}
    assert calls["per_episode_mean"] == {"llm_nbv": 0.5, "verifier": 2.17}
    assert (calls["total"], calls["per_episode_mean_total"]) == (16, 2.67)
    ci = metrics["confidence_intervals"]
    assert ci["accuracy"] == [0.3, 0.9032]  # Wilson 4/6
    assert ci["per_pair_type"]["positive"] == [0.0945, 0.9055]  # Wilson 1/2
    boot = metrics["bootstrap"]
    assert boot["n_clusters"] == 3 and boot["resamples"] == 2000 and boot["cluster_key"] == "target_object_id"
    lo, hi = boot["accuracy"]
    assert 0.0 <= lo <= 0.6667 <= hi <= 1.0


def test_nav_fail_variants(metrics: dict) -> None:
    # unreachable requests in E1 and E4; no episode reaches max_steps = 6
    assert metrics["nav_fail_variants"] == {
        "per_step": 0.3077,
        "per_episode": 0.3333,
        "episodes_with_unreachable": 0.3333,
        "episodes_budget_exhausted_or_unreachable": 0.3333,
    }
    short_budget = compute_metrics(six_episodes(), config_info=dict(CONFIG_INFO, max_steps=2))
    # steps >= 2: E1, E2, E4, E5 (E1 and E4 also unreachable) -> 4/6
    assert short_budget["nav_fail_variants"]["episodes_budget_exhausted_or_unreachable"] == 0.6667
    assert (
        compute_metrics(six_episodes())["nav_fail_variants"]["episodes_budget_exhausted_or_unreachable"]
        is None
    )


def test_bootstrap_settings_are_parameters() -> None:
    a = compute_metrics(six_episodes(), bootstrap_resamples=300, bootstrap_seed=5)
    b = compute_metrics(six_episodes(), bootstrap_resamples=300, bootstrap_seed=5)
    assert a["bootstrap"] == b["bootstrap"] and a["bootstrap"]["resamples"] == 300


def test_empty_input_gives_the_full_structure() -> None:
    m = compute_metrics([])
    assert m["accuracy"] == 0.0 and m["total_episodes"] == 0 and m["per_pair_type"] == {}
    assert m["diagnostic_stats"]["first_view_accuracy"] is None
    assert m["nav_stats"]["nav_failure_rate_per_step"] == 0


def test_write_metrics_from_a_run_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with ResultsStore.open(run_dir, run_config()) as store:
        for rec in six_episodes():
            store.append(rec)
    path, m = write_metrics(run_dir, wall_time_s=12.345)
    data = json.loads(path.read_text())
    assert data == m
    assert data["wall_time_s"] == 12.3  # one decimal, as the reference's scripts/evaluate.py rounds it
    assert write_metrics(run_dir, wall_time_s=0.96)[1]["wall_time_s"] == 1.0
    assert list(data)[len(REFERENCE_KEYS) : len(REFERENCE_KEYS) + 2] == ["wall_time_s", "config_info"]
    assert data["config_info"] == CONFIG_INFO
    assert data["accuracy"] == 0.6667
    # the run's own unsure mapping is the default; it can be overridden
    _, as_wrong = write_metrics(run_dir, unsure_as_negative=False)
    assert as_wrong["accuracy"] == 0.5
