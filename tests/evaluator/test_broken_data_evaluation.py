"""``aiv-eval run --mode inprocess`` on broken data (issue 13): a broken episode is recorded as refused, with
the simulator's words, and skipped (never scored); an index or description file that cannot be evaluated
stops the run before the first episode with one line naming the file and line.

The ROS mode gives byte-identical records for the same datasets (``tests/ros/test_broken_data_over_ros.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from support.broken_data import (
    BROKEN_BY_NAME,
    BROKEN_EPISODES,
    BROKEN_INDEXES,
    OUTSIDE_TEXT,
    BrokenIndex,
    broken_episode_dataset,
    broken_index_dataset,
    escaping_descriptions_dataset,
    eval_params,
    refusal_reason,
)

#: One episode of kind 1 (images against the camera), one absurd camera, one number beyond float32.
ONE_OF_EACH = ("images-90x160-camera-360x640", "width-1e10", "box-1e39")


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_broken_episodes_are_recorded_as_refused_and_not_scored(tmp_path: Path) -> None:
    cases = [BROKEN_BY_NAME[name] for name in ONE_OF_EACH]
    broken = broken_episode_dataset(tmp_path / "pv", cases)
    params = eval_params(tmp_path, "run")
    assert aiv_eval(["run", str(params), "--dataset", str(broken.root), "--mode", "inprocess"]) == 1
    records = _records(tmp_path / "run")
    assert [r["status"] for r in records] == ["ok"] + ["infra_failure"] * 6  # two attempts each
    assert records[0]["object_id"] == "mug_good"
    for number, (case, episode) in enumerate(broken.broken):
        expected = refusal_reason(broken, case, episode)
        for record in records[1 + 2 * number : 3 + 2 * number]:
            assert record["object_id"] == episode.object_id and record["prediction"] == "Unsure"
            assert record["failure_reason"].startswith(expected) and case.message in record["failure_reason"]
            assert record["steps"] == 0 and record["query_descriptions"] == []
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["total_episodes"] == 1  # only the good episode is scored
    assert metrics["infra_failures"]["count"] == 3  # one per refused pair


@pytest.mark.parametrize("case", BROKEN_EPISODES, ids=lambda case: case.name)
def test_every_kind_of_broken_episode_is_refused_with_its_file_and_field(tmp_path: Path, case) -> None:
    broken = broken_episode_dataset(tmp_path / "pv", [case])
    params = eval_params(tmp_path, "run")
    code = aiv_eval([
        "run", str(params), "--dataset", str(broken.root), "--mode", "inprocess",
        "--set", "evaluator.max_attempts=1",
    ])  # fmt: skip
    assert code == 1
    records = _records(tmp_path / "run")
    assert [r["status"] for r in records] == ["ok", "infra_failure"]
    _, episode = broken.broken[0]
    assert records[1]["failure_reason"].startswith(refusal_reason(broken, case, episode))


@pytest.mark.parametrize("case", BROKEN_INDEXES, ids=lambda case: case.name)
def test_an_unusable_index_stops_the_run_before_the_first_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: BrokenIndex
) -> None:
    data, index = broken_index_dataset(tmp_path / "pv", case)
    params = eval_params(tmp_path, "run")
    assert aiv_eval(["run", str(params), "--dataset", str(data.root), "--mode", "inprocess"]) == 2
    err = capsys.readouterr().err.splitlines()
    where = f"{index}:{case.line}: field '{case.field}': " if case.line else f"{index}: "
    # One line, "<prog>: error: <file>:<line>: field '<field>': <reason>" (prog is the command's name).
    assert len(err) == 1 and f": error: {where}" in err[0] and case.message in err[0]
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_slice_that_selects_nothing_is_not_a_finished_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = broken_episode_dataset(tmp_path / "pv", [])
    params = eval_params(tmp_path, "run")
    code = aiv_eval([
        "run", str(params), "--dataset", str(broken.root), "--mode", "inprocess",
        "--set", "evaluator.slice_start=5",
    ])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "pv_index_all.jsonl: evaluator the slice [5, end) selects no pair of an index of 1 pair(s)" in err
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_a_description_file_leading_out_of_the_root_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, link = escaping_descriptions_dataset(tmp_path / "pv", tmp_path / "elsewhere" / "descriptions.json")
    params = eval_params(tmp_path, "run")
    assert aiv_eval(["run", str(params), "--dataset", str(data.root), "--mode", "inprocess"]) == 2
    err = capsys.readouterr().err
    assert f": error: {link}: path 'object_descriptions_with_category.json' leads outside" in err
    assert OUTSIDE_TEXT not in err
    assert not (tmp_path / "run" / "results.jsonl").exists()
