"""A verifier killed in the middle of an episode is noticed within ``server_wait_s``, not after the episode timeout.

The evaluator over ROS (``aiv-eval run --mode ros``: simulator, verifier and evaluator as processes, the verifier
restarted when it dies, as ``respawn`` does in the launch file) runs the micro dataset with an episode timeout
far longer than the test may take. The verifier is killed (SIGKILL, as a crash) while it moves inside an
episode. The evaluator must record that attempt as an infrastructure failure because the verifier left the
graph, well within ``server_wait_s`` of the kill, retry it on the restarted verifier, and end with every
episode answered exactly once. (Before, a watch made while the restarted server was not yet listed in the
graph, or a verdict reply lost right after its discovery, left the evaluator waiting out the whole
``episode_timeout_s``: 300 s by default.)
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.in_process import run_in_process
from aiv_offline_sim.episode_service import pair_key
from support.pair_faults import VerifierKiller
from support.ros_runs import CLASSICAL_DEFAULT
from support.ros_runs import result_lines as _lines
from support.ros_runs import ros_evaluation as _ros
from support.ros_runs import ros_spec as _spec

pytestmark = pytest.mark.ros

SERVER_WAIT_S = 30.0
EPISODE_TIMEOUT_S = 900.0  # what a missed loss would cost: far beyond the test's own limit
RUN_LIMIT_S = 300.0


def test_a_verifier_killed_mid_episode_is_noticed_within_server_wait_and_the_episode_answered_once(
    tmp_path: Path, micro_root: Path, ros_executor
) -> None:
    overrides = (*CLASSICAL_DEFAULT, "evaluator.save_crops=false", "evaluator.max_attempts=3",
                 f"evaluator.server_wait_s={SERVER_WAIT_S}", f"evaluator.episode_timeout_s={EPISODE_TIMEOUT_S}")  # fmt: skip
    # The kill lands on an early move of the last episode whose agent moves at least three times (the in-process
    # run of the same configuration says which): the goal surely still runs when it lands.
    reference = _lines(run_in_process(_spec(tmp_path, micro_root, "reference", *overrides)).run_dir)
    target = [record for record in reference if record["steps"] >= 4][-1]
    index = PInVerifyDataset(str(micro_root)).read_pair_index("val/pv_index_all.jsonl")
    evaluation = _ros(_spec(tmp_path, micro_root, "killed", *overrides), tmp_path)
    run_dir = evaluation.run_dir
    killed_at: list[float] = []

    def kill(_pair: str) -> None:
        killed_at.append(time.monotonic())
        evaluation.nodes["verifier"].kill()

    target_key = pair_key(index[target["episode_index"]])
    killer = VerifierKiller(ros_executor.create_node("verifier_killer"), ("",), target_key, kill)
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.setdefault("result", evaluation.run()), daemon=True)
    runner.start()
    noticed_at: float | None = None
    deadline = time.monotonic() + RUN_LIMIT_S
    pause = threading.Event()
    while runner.is_alive() and time.monotonic() < deadline:
        if noticed_at is None and any(record["status"] != "ok" for record in _lines(run_dir)):
            noticed_at = time.monotonic()
        pause.wait(0.1)  # paces the polling of the results file only
    log = _log(tmp_path, evaluation)
    assert not runner.is_alive(), f"the run took over {RUN_LIMIT_S:.0f} s:\n{log}"
    if noticed_at is None and any(record["status"] != "ok" for record in _lines(run_dir)):
        noticed_at = time.monotonic()  # recorded during the last poll interval

    assert killer.killed and killed_at, f"the verifier was never killed inside an episode:\n{log}"
    assert noticed_at is not None, f"no attempt was recorded as failed:\n{log}"
    noticed_s = noticed_at - killed_at[0]
    assert noticed_s < SERVER_WAIT_S, (
        f"the lost verifier was noticed {noticed_s:.1f} s after the kill:\n{log}"
    )

    result = outcome["result"]
    assert result.evaluator_exit_code == 0, log
    assert result.restarts["verifier"] == 1, result.restarts
    records = _lines(run_dir)
    failures = [record for record in records if record["status"] != "ok"]
    assert failures and all("disappeared" in record["failure_reason"] for record in failures), [
        record["failure_reason"] for record in failures
    ]
    answered = Counter(record["episode_key"] for record in records if record["status"] == "ok")
    assert len(answered) == 12 and set(answered.values()) == {1}, answered  # every episode, exactly once
    assert {record["episode_key"] for record in failures} == {target["episode_key"]}


def _log(tmp_path: Path, evaluation) -> str:
    parts = [tmp_path / f"{evaluation.run_dir.name}-evaluator.log"]
    parts += [node.log_path for node in evaluation.nodes.values() if node.log_path]
    return "\n".join(f"--- {p}\n{p.read_text(errors='replace')}" for p in parts if p and p.exists())
