"""``evaluator.episodes_in_flight``: several episodes at once in-process, the same results file byte for byte."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from aiv_eval.run.in_flight import run_in_flight
from aiv_eval.run.in_process import run_in_process
from support.eval_specs import ORACLE_VETO_PARAMS, oracle_veto_spec


def test_pipeline_episodes_in_flight_write_the_same_results_as_one_at_a_time(
    tmp_path: Path, micro_root: Path
) -> None:
    one = run_in_process(oracle_veto_spec(tmp_path, micro_root, "one", "evaluator.save_crops=false")).run_dir
    many = run_in_process(
        oracle_veto_spec(
            tmp_path, micro_root, "many", "evaluator.save_crops=false", "evaluator.episodes_in_flight=5"
        )
    ).run_dir
    assert (many / "results.jsonl").read_bytes() == (one / "results.jsonl").read_bytes()


def test_results_come_back_in_order_whatever_order_the_work_finishes_in() -> None:
    # Item 0 waits until every later item has finished: the order of completion is the reverse of submission.
    others_done = threading.Event()
    finished: list[int] = []
    lock = threading.Lock()

    def work(item: int) -> int:
        if item == 0:
            assert others_done.wait(timeout=30)
        with lock:
            finished.append(item)
            if len(finished) == 3:
                others_done.set()
        return item * 10

    assert list(run_in_flight([0, 1, 2, 3], work, 4)) == [(0, 0), (1, 10), (2, 20), (3, 30)]
    assert finished[-1] == 0

    def failing(item: int) -> int:
        if item == 1:
            raise RuntimeError("episode 1 broke")
        return item

    results = []
    with pytest.raises(RuntimeError, match="episode 1 broke"):
        for pair in run_in_flight(range(6), failing, 2):
            results.append(pair)
    assert results == [(0, 0)]


def test_more_than_one_in_flight_is_refused_over_ros_in_one_line(tmp_path: Path, capsys) -> None:
    params = tmp_path / "p.yaml"
    params.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / "r"))
    assert aiv_eval(["run", str(params), "--set", "evaluator.episodes_in_flight=3"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert "runs only in-process" in error and "namespaced pairs" in error
    assert (
        aiv_eval(["run", str(params), "--set", "evaluator.episodes_in_flight=0", "--mode", "inprocess"]) == 2
    )
    assert "episodes_in_flight" in capsys.readouterr().err
