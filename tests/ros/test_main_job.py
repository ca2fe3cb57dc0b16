"""`make demo`'s script end to end: the weight-free default over ROS on a small generated dataset, with as many
simulator + verifier pairs as the machine's cores allow (``aiv_eval.run.pairs.demo_pair_count``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from aiv_eval.run.pairs import demo_pair_count, demo_pair_names

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_main_job_runs_the_default_evaluation_over_ros_and_prints_the_table(tmp_path: Path, micro_root: Path):
    run_dir = tmp_path / "run"
    command = [
        sys.executable, str(REPO_ROOT / "scripts" / "offline_eval.py"), "--dataset", str(micro_root),
        "--run-dir", str(run_dir), "--set", "evaluator.slice_end=2",
    ]  # fmt: skip
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert (
        "| Run | NBV | Fusion |" in completed.stdout
        and "| farthest | attr_majority | attribute | 2 |" in output
    )
    assert f"report: {run_dir / 'report.html'}" in completed.stdout
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["total_episodes"] == 2
    assert metrics["config_info"] == {
        "agent_type": "aiv:classical", "nbv_type": "farthest", "fusion_type": "attr_majority",
        "bbox_mode": "gt", "max_steps": 6, "query_mode": "attribute",
    }  # fmt: skip
    pairs = demo_pair_count()
    assert (
        f"[main] simulator + verifier pairs: {pairs} (one per CPU core, at most 8, memory allowing)" in output
    )
    logs = [run_dir / "logs" / pair / "verifier.log" for pair in demo_pair_names(pairs) or ("",)]
    assert (run_dir / "report.html").is_file() and all(log.is_file() for log in logs), output
    # Running it again finds the run complete and only reprints the result.
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 2
