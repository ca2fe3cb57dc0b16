"""``aiv-eval bench`` breaks the ROS path's extra time per step down by stage (issue 32): the stage lines both
modes end their logs with, read back, and rows that add up to the measured difference."""

from __future__ import annotations

from pathlib import Path

from aiv_eval.bench.ros_vs_inprocess import ModeTiming, format_report
from aiv_eval.bench.stage_times import (
    STEPS,
    format_breakdown,
    overhead_breakdown,
    read_stage_seconds,
    stage_line,
)

ROS = {
    STEPS: 100.0,
    "evaluator.start_episode": 0.40,
    "evaluator.verify_goal": 0.10,
    "evaluator.verify_result": 20.30,
    "verifier.elapsed": 20.00,
    "verifier.ros.frame": 0.50,
    "verifier.ros.move_setup": 0.05,
    "verifier.ros.move_goal": 0.20,
    "verifier.ros.move_result": 0.60,
    "verifier.ros.step_report": 0.05,
    "verifier.ros.frame_decode": 0.08,
    "verifier.ros.frame_arrival": 0.30,
    "verifier.frames": 80.0,
}
INPROC = {STEPS: 100.0, "inprocess.start": 0.30, "inprocess.frame": 0.20, "inprocess.move": 0.40}


def test_the_last_stage_line_of_a_log_is_read_back(tmp_path: Path) -> None:
    log = tmp_path / "evaluator.log"
    log.write_text(
        "noise\n"
        + stage_line("evaluator", {"a": 1.0})
        + "\n"
        + stage_line("evaluator", {STEPS: 3.0, "b": 0.25})
        + "\nevaluator: 3 selected\n",
        encoding="utf-8",
    )
    assert read_stage_seconds(log) == {STEPS: 3.0, "b": 0.25}
    assert read_stage_seconds(tmp_path / "missing.log") == {}


def test_rows_take_the_in_process_work_off_and_sum_to_the_overhead() -> None:
    rows = {row.name: row.ms_per_step for row in overhead_breakdown(ROS, INPROC, 8.0)}
    assert abs(rows["StartEpisode round trip"] - 1.0) < 1e-9  # (0.40 - 0.30) s over 100 steps
    assert abs(rows["VerifyInstance accepted -> result, less the verifier's own time"] - 3.0) < 1e-9
    assert abs(rows["verifier gets the frame"] - 3.0) < 1e-9
    assert abs(rows["MoveToSector accepted -> result"] - 2.0) < 1e-9
    assert abs(sum(rows.values()) - 8.0) < 1e-9
    measured = [value for name, value in rows.items() if name != "not attributed"]
    assert all(value >= 0 for value in measured)


def test_no_breakdown_without_both_stage_lines() -> None:
    assert overhead_breakdown(ROS, {}, 5.0) == []
    assert format_breakdown({}, INPROC, 5.0) == ["ROS overhead by stage: n/a (a log without its stage line)"]


def test_the_bench_report_prints_the_breakdown() -> None:
    def timing(mode: str, loop_s: float, stages: dict[str, float]) -> ModeTiming:
        return ModeTiming(mode, 10, 100, loop_s, loop_s + 5, {}, 0, stage_seconds=stages)

    report = format_report(timing("in-process", 20.0, INPROC), timing("ROS", 20.8, ROS), identical=True)
    assert "ROS overhead per step: +8.0 ms" in report
    assert "| VerifyInstance goal -> accepted | +1.00 |" in report
    assert "| total (the measured overhead) | +8.00 | 100% | |" in report
    assert "| decode in the verifier | 1.00 |" in report  # 0.08 s over 80 frames
