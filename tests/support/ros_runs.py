"""What the ROS evaluation tests share: a spec, the evaluation over ROS, and reading a run's records and scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.eval_specs import oracle_veto_spec

#: The main job's weight-free verifier with the reference fusion, as overrides of the oracle / veto spec.
CLASSICAL_DEFAULT = ("verifier.verifier.backend=classical", "verifier.agent.fusion=attr_majority")


def ros_spec(tmp_path: Path, root: Path, name: str, *overrides: str) -> Any:
    """The oracle / veto spec with the evaluator waiting up to 30 s for its servers (nodes start on 2 cores)."""
    return oracle_veto_spec(tmp_path, root, name, "evaluator.server_wait_s=30.0", *overrides)


def ros_evaluation(spec: Any, tmp_path: Path) -> Any:
    """The spec's evaluation over ROS, the evaluator's output in ``tmp_path/<run name>-evaluator.log``."""
    from aiv_eval.run.ros_mode import RosEvaluation

    return RosEvaluation(spec, evaluator_output=tmp_path / f"{spec.run_dir.name}-evaluator.log")


def result_lines(run_dir: Path) -> list[dict]:
    """The run's records in file order ([] before the first one is written)."""
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def scored_metrics(run_dir: Path) -> dict:
    """metrics.json without its wall time (the one field two equal runs may differ in)."""
    metrics = json.loads((run_dir / "metrics.json").read_text())
    metrics.pop("wall_time_s", None)
    return metrics
