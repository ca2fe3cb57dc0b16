"""Camera height levels over ROS: the evaluator node records what the in-process evaluation records (#41).

The dataset is the ``micro`` preset with a raised twin of every view (tests/evaluation/leveled.py) and the agent
the random next-best-view, which takes ``up`` and ``down`` among its moves (``down`` from eye level is
unreachable there): the Verdict's StepReport ``level`` must reach ``results.jsonl`` exactly as the in-process
trace's does, and the metrics by level must follow.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_eval.run.in_process import run_in_process
from evaluation.leveled import leveled_copy
from support.ros_runs import result_lines, ros_evaluation, ros_spec, scored_metrics

RANDOM_NBV = ("verifier.agent.nbv=random", "evaluator.save_crops=false", "evaluator.slice_end=6")


@pytest.fixture(scope="module")
def leveled_root(micro_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return leveled_copy(micro_root, tmp_path_factory.mktemp("leveled") / "pv_micro_above")


@pytest.mark.parametrize("height_levels", ["all", "eye"])
def test_levels_reach_the_records_over_ros_as_in_process(
    tmp_path: Path, leveled_root: Path, height_levels: str
) -> None:
    """Records equal byte for byte, run id included: the evaluator node reads ``height_levels`` from the
    simulator as the in-process mode reads it from the params file."""
    overrides = (*RANDOM_NBV, f"offline_sim.height_levels={height_levels}")
    evaluation = ros_evaluation(ros_spec(tmp_path, leveled_root, "ros", *overrides), tmp_path)
    result = evaluation.run()
    log = tmp_path / f"{evaluation.run_dir.name}-evaluator.log"
    assert result.evaluator_exit_code == 0, log.read_text(errors="replace") if log.exists() else ""
    in_process = run_in_process(ros_spec(tmp_path, leveled_root, "inprocess", *overrides))

    ros_records, ip_records = result_lines(result.run_dir), result_lines(in_process.run_dir)
    assert ros_records == ip_records
    levels = {step.get("level", 0) for record in ros_records for step in record["transcript"]}
    ros_metrics, ip_metrics = scored_metrics(result.run_dir), scored_metrics(in_process.run_dir)
    if height_levels == "eye":
        assert levels == {0} and "levels" not in ros_metrics and "levels" not in ip_metrics
        return
    assert levels == {0, 1}
    assert ros_metrics["levels"] == ip_metrics["levels"]
    assert ros_metrics["levels"]["moves"]["up"]["moved"] > 0
