"""The ``clip`` embedding agent over ROS: simulator, verifier and evaluator as processes over real DDS.

A trained tiny CLIP (it tells red from blue) answers the colour episodes of ``support.embedding_episodes``:
Yes exactly when the description's colour is the object's, and the records written over ROS are byte-identical
to the in-process run of the same configuration, also for the mixed mug whose answering view alone disagrees
with the answer (both record the answer as that step's prediction, as the reference does). A verifier started
with an unusable model directory exits with status 2 and one line at start-up.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from aiv_eval.run.in_process import run_in_process
from aiv_eval.run.ros_mode import RosEvaluation
from support.embedding_episodes import (
    MIXED_OBJECT,
    colour_dataset,
    colour_spec,
    expected_predictions,
    records_of,
)
from support.offline_models import no_network  # noqa: F401 - fixture
from support.tiny_embedding import clip_dir_fixture  # noqa: F401 - fixture clip_dir

pytestmark = pytest.mark.usefixtures("no_network")


def test_clip_agent_over_ros_follows_the_images_and_equals_in_process(tmp_path: Path, clip_dir: Path) -> None:
    root = colour_dataset(tmp_path / "colours", mixed=True)
    overrides = ("evaluator.server_wait_s=60.0", "evaluator.save_crops=false")
    evaluation = RosEvaluation(
        colour_spec(tmp_path, root, clip_dir, "ros", *overrides),
        evaluator_output=tmp_path / "ros-evaluator.log",
    )
    result = evaluation.run()
    logs = "\n".join(
        p.read_text(errors="replace")
        for p in [
            tmp_path / "ros-evaluator.log",
            *(n.log_path for n in evaluation.nodes.values() if n.log_path),
        ]
        if p is not None and p.exists()
    )
    assert result.evaluator_exit_code == 0, logs
    in_process = run_in_process(colour_spec(tmp_path, root, clip_dir, "inprocess", *overrides))

    ros_records = records_of(result.run_dir)
    expected = ["Yes", "No", "No", "Yes", "Yes", "No"]
    assert [r["prediction"] for r in ros_records] == expected_predictions(root) == expected
    assert all(r["model_calls"]["embedding_text"] == 1 for r in ros_records)
    for record in (r for r in ros_records if r["target_object_id"] == MIXED_OBJECT):
        last = record["transcript"][-1]
        own = {row["name"]: row["observed"] for row in last["attributes"]}["avg_score"]
        assert own != record["prediction"] == last["step_prediction"] == record["step_predictions"][-1]
    assert (result.run_dir / "results.jsonl").read_bytes() == (
        in_process.run_dir / "results.jsonl"
    ).read_bytes()
    assert "agent.kind clip: clip (clip scores) on cpu" in logs  # the verifier says which model and device


def test_a_verifier_with_an_unusable_model_directory_exits_2_with_one_line(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "aiv_verifier.verifier_node", "--ros-args",
        "-p", "agent.kind:=clip", "-p", f"embedding.model_dir:={tmp_path / 'missing'}",
    ]  # fmt: skip
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    lines = [line for line in completed.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "embedding.model_dir" in lines[0] and "does not exist" in lines[0], lines
