"""Run comparison and the multi-run table."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_eval import ResultsStore, compare_runs, format_comparison_markdown
from aiv_eval.analysis.compare import CompareError, runs_table_markdown, runs_table_rows

from .builders import CONFIG_INFO, index_entry, infra, record, run_config, six_episodes


def _write(run_dir: Path, records, **cfg) -> Path:  # type: ignore[no-untyped-def]
    with ResultsStore.open(run_dir, run_config(**cfg)) as store:
        for rec in records:
            store.append(rec)
    return run_dir


def _flip(rec):  # type: ignore[no-untyped-def]
    """The same episode with the opposite one-step answer."""
    entry = index_entry(
        scene=rec.scene_id,
        episode=rec.episode_id,
        target=rec.target_object_id,
        target_category=rec.target_object_category,
        query=rec.object_id,
        query_category=rec.query_object_category,
        pair_type=rec.pair_type,
    )
    pred = "No" if rec.prediction == "Yes" else "Yes"
    return record(rec.episode_index, entry, pred, [pred])


def test_compare_two_runs(tmp_path: Path) -> None:
    a_records = six_episodes()  # correct: E0 E2 E4 E5 ; wrong: E1 E3
    b_records = list(a_records)
    b_records[1] = _flip(a_records[1])  # B gets E1 right
    b_records[3] = _flip(a_records[3])  # B gets E3 right
    b_records[0] = _flip(a_records[0])  # B gets E0 wrong
    del b_records[5]  # E5 only in A
    extra = record(7, index_entry(scene="s9", episode="ep7"), "Yes", ["Yes"])
    b_records.append(extra)  # only in B
    a_records = [*a_records, infra(8, index_entry(scene="s9", episode="ep8"))]
    b_records.append(record(8, index_entry(scene="s9", episode="ep8"), "Yes", ["Yes"]))
    run_a = _write(tmp_path / "a", a_records)
    run_b = _write(tmp_path / "b", b_records, name="run-b")

    res = compare_runs(run_a, run_b, resamples=400, seed=1)
    assert res["common_episodes"] == 5  # E0..E4
    assert res["dropped"] == {"only_in_a": 1, "only_in_b": 1, "infra_failure_in_either": 1}
    ov = res["overall"]
    # on E0..E4: A correct E0 E2 E4 (3/5), B correct E1 E2 E3 E4 (4/5)
    assert (ov["accuracy_a"], ov["accuracy_b"], ov["difference_b_minus_a"]) == (0.6, 0.8, 0.2)
    assert ov["mcnemar"] == {"only_a_correct": 1, "only_b_correct": 2, "p_value": 1.0}
    lo, hi = ov["paired_bootstrap_ci"]
    assert lo <= 0.2 <= hi
    assert set(res["per_pair_type"]) == {"positive", "neg_same", "neg_diff"}
    assert res["per_pair_type"]["neg_same"]["difference_b_minus_a"] == 0.5
    assert compare_runs(run_a, run_b, resamples=400, seed=1) == res  # deterministic

    md = format_comparison_markdown(res)
    assert "| all | 5 | 0.6000 | 0.8000 | +20.0 |" in md
    assert "run-b (B)" in md


def test_compare_refuses_runs_on_different_indices(tmp_path: Path) -> None:
    run_a = _write(tmp_path / "a", [record(0, index_entry(), "Yes", ["Yes"])])
    other = index_entry(target="mugA", query="mugA")
    other["target_object_category"] = "cup"
    run_b = _write(tmp_path / "b", [record(0, other, "Yes", ["Yes"])])
    # same key, same label/pair type/target: fine; now change the pair type of the key
    compare_runs(run_a, run_b, resamples=10)
    neg = index_entry(target="mugZ", query="mugA", pair_type="neg_same")
    run_c = _write(tmp_path / "c", [record(0, neg, "No", ["No"])])
    run_d = _write(
        tmp_path / "d", [record(0, index_entry(scene="s1", episode="ep1", target="mugA"), "Yes", ["Yes"])]
    )
    with pytest.raises(CompareError, match="same index"):
        compare_runs(run_c, run_d, resamples=10)


def test_runs_table(tmp_path: Path) -> None:
    run_a = _write(tmp_path / "a", six_episodes(), name="MV-Attr+LLM")
    info = dict(CONFIG_INFO, nbv_type="random", query_mode="direct")
    run_b = _write(tmp_path / "b", six_episodes()[:3], name="MV-Direct|Rnd", config_info=info)
    rows = runs_table_rows([run_a, run_b], resamples=200)
    assert rows[0]["name"] == "MV-Attr+LLM" and rows[0]["accuracy"] == 0.6667 and rows[0]["asd"] == 2.17
    assert rows[0]["nav_fail_per_episode"] == 0.3333 and rows[0]["first_view_accuracy"] == 0.6667
    assert rows[1]["nbv"] == "random" and rows[1]["query_mode"] == "direct" and rows[1]["n"] == 3
    md = runs_table_markdown([run_a, run_b], resamples=200)
    lines = md.strip().splitlines()
    assert lines[0].startswith(
        "| Run | NBV | Fusion | Query | N | Acc | Pos | N_S | N_D | ASD | NavFail/ep % |"
    )
    assert lines[2].startswith(
        "| MV-Attr+LLM | llm | attr_majority | attribute | 6 | 0.667 | 0.500 | 0.500 | 1.000 |"
    )
    assert "| 2.17 | 33.3 | 0.667 | [0.300, 0.903] |" in lines[2]
    assert "MV-Direct\\|Rnd" in lines[3]  # the pipe in a name is escaped
