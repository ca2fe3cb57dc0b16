"""One evaluation, two simulator + verifier pairs over real DDS (``evaluator.pairs``, ``aiv-eval run --mode ros``).

- two pairs write byte for byte the records, metrics and crops one pair writes, into one run directory with
  one run id, and both pairs take episodes;
- a pair whose verifier is killed inside an episode is restarted and the episode retried: the records are those
  of a one-pair run whose verifier is killed inside the same episode (the failed attempts' count and reason
  depend on timing: each run has at least one, at that episode only, and no other difference);
- a pair that runs another configuration stops the evaluation before anything is recorded.
(``ros2 launch ... offline_eval.launch.py pairs:=2`` with a pair killed: tests/ros/test_ros2_launch.py.)
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.in_process import run_in_process
from aiv_eval.run.pairs import in_pair
from aiv_eval.run.ros_mode import RosEvaluation, absolute_paths
from aiv_offline_sim.episode_service import pair_key
from support.pair_faults import VerifierKiller
from support.ros_harness import wait_until
from support.ros_runs import CLASSICAL_DEFAULT
from support.ros_runs import result_lines as _lines
from support.ros_runs import ros_evaluation as _ros
from support.ros_runs import ros_spec as _spec
from support.ros_runs import scored_metrics as _metrics

TWO_PAIRS = "evaluator.pairs=pair0,pair1"


def _log(evaluation: RosEvaluation, tmp_path: Path) -> str:
    parts = [tmp_path / f"{evaluation.run_dir.name}-evaluator.log"]
    parts += [node.log_path for node in evaluation.nodes.values() if node.log_path]
    return "\n".join(f"--- {p}\n{p.read_text(errors='replace')}" for p in parts if p and p.exists())


def _attempts_per_pair(evaluation: RosEvaluation, tmp_path: Path) -> dict[str, int]:
    """The evaluator's closing count of attempts per pair."""
    text = (tmp_path / f"{evaluation.run_dir.name}-evaluator.log").read_text(errors="replace")
    found = re.findall(r"attempts per pair: (.*)", text)
    assert found, text
    return {name: int(count) for name, count in (item.split() for item in found[-1].split(", "))}


def test_two_pairs_write_what_one_pair_writes_and_both_take_episodes(
    tmp_path: Path, micro_root: Path
) -> None:
    one = _ros(_spec(tmp_path, micro_root, "one", *CLASSICAL_DEFAULT), tmp_path)
    result_one = one.run()
    assert result_one.evaluator_exit_code == 0, _log(one, tmp_path)
    two = _ros(_spec(tmp_path, micro_root, "two", *CLASSICAL_DEFAULT, TWO_PAIRS), tmp_path)
    result_two = two.run()
    assert result_two.evaluator_exit_code == 0, _log(two, tmp_path)
    assert set(result_two.restarts) == {"pair0/offline_sim", "pair0/verifier", "pair1/offline_sim",
                                        "pair1/verifier", "evaluator"}  # fmt: skip
    assert not any(result_two.restarts.values())

    one_dir, two_dir = result_one.run_dir, result_two.run_dir
    assert len(_lines(two_dir)) == 12
    assert (two_dir / "results.jsonl").read_bytes() == (one_dir / "results.jsonl").read_bytes()
    assert _metrics(two_dir) == _metrics(one_dir)
    assert (
        json.loads((two_dir / "run.json").read_text())["run_id"]
        == json.loads((one_dir / "run.json").read_text())["run_id"]
    )
    crops = sorted(p.relative_to(two_dir) for p in (two_dir / "crops").rglob("*.jpg"))
    assert crops and crops == sorted(p.relative_to(one_dir) for p in (one_dir / "crops").rglob("*.jpg"))
    per_pair = _attempts_per_pair(two, tmp_path)
    assert set(per_pair) == {"pair0", "pair1"} and sum(per_pair.values()) == 12
    assert all(count > 0 for count in per_pair.values()), per_pair  # both pairs served
    assert (two_dir / "logs" / "pair1" / "verifier.log").is_file()


def _run_killing(
    evaluation: RosEvaluation, tmp_path: Path, ros_executor, pairs: tuple[str, ...], target: str
) -> list[str]:
    node = ros_executor.create_node(f"fault_injector_{len(pairs)}")
    killer = VerifierKiller(
        node, pairs, target, lambda pair: evaluation.nodes[in_pair(pair, "verifier")].kill()
    )
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.setdefault("result", evaluation.run()), daemon=True)
    runner.start()
    runner.join(timeout=240.0)
    assert not runner.is_alive(), _log(evaluation, tmp_path)
    assert outcome["result"].evaluator_exit_code == 0, _log(evaluation, tmp_path)
    assert killer.killed, f"no verifier was killed inside {target}:\n{_log(evaluation, tmp_path)}"
    assert sum(outcome["result"].restarts.values()) == 1, outcome["result"].restarts
    return [in_pair(pair, "verifier") for pair in killer.killed]


def _split(records: list[dict]) -> tuple[list[dict], list[int]]:
    """The records without the failed attempts (and without ``attempts``), and the indices that failed."""
    answered = [{k: v for k, v in r.items() if k != "attempts"} for r in records if r["status"] == "ok"]
    failed = [r["episode_index"] for r in records if r["status"] != "ok"]
    return answered, failed


def test_a_pair_killed_inside_an_episode_gives_the_records_of_one_pair_killed_there(
    tmp_path: Path, micro_root: Path, ros_executor
) -> None:
    overrides = (*CLASSICAL_DEFAULT, "evaluator.save_crops=false", "evaluator.max_attempts=3",
                 "evaluator.episode_timeout_s=30.0")  # fmt: skip
    reference = _lines(run_in_process(_spec(tmp_path, micro_root, "reference", *overrides)).run_dir)
    # The last episode whose agent moves at least three times, by the key its requests carry: late enough for
    # the watcher to have found the verifiers' feedback however fast the run (the classical verifier, not the
    # near-instant oracle, keeps it a few seconds long).
    target = [r for r in reference if r["steps"] >= 4][-1]
    assert target["episode_index"] >= 4
    index = PInVerifyDataset(str(micro_root)).read_pair_index("val/pv_index_all.jsonl")
    key = pair_key(index[target["episode_index"]])
    one = _ros(_spec(tmp_path, micro_root, "one_killed", *overrides), tmp_path)
    assert _run_killing(one, tmp_path, ros_executor, ("",), key) == ["verifier"]
    two = _ros(_spec(tmp_path, micro_root, "two_killed", *overrides, TWO_PAIRS), tmp_path)
    killed = _run_killing(two, tmp_path, ros_executor, ("pair0", "pair1"), key)
    assert killed[0] in ("pair0/verifier", "pair1/verifier")

    one_answered, one_failed = _split(_lines(one.run_dir))
    two_answered, two_failed = _split(_lines(two.run_dir))
    assert (
        two_answered == one_answered == [{k: v for k, v in r.items() if k != "attempts"} for r in reference]
    )  # every episode answered once, in index order, as without a kill
    assert one_failed and set(one_failed) == {target["episode_index"]}
    assert two_failed and set(two_failed) == {target["episode_index"]}
    for records in (_lines(one.run_dir), _lines(two.run_dir)):
        failures = [r for r in records if r["status"] != "ok"]
        assert all(r["prediction"] == "Unsure" for r in failures)
        assert all("verifier" in r["failure_reason"] or "no verdict within" in r["failure_reason"]
                   for r in failures), [r["failure_reason"] for r in failures]  # fmt: skip
        ok = next(r for r in records if r["status"] == "ok" and r["episode_key"] == target["episode_key"])
        assert ok["attempts"] == len(failures) + 1  # its attempts count the failed ones before it
    scored = {k: v for k, v in _metrics(two.run_dir).items() if k != "infra_failures"}
    assert scored == {k: v for k, v in _metrics(one.run_dir).items() if k != "infra_failures"}


def test_a_pair_of_another_configuration_stops_the_run_before_anything_is_recorded(
    tmp_path: Path, micro_root: Path, ros_executor
) -> None:
    spec = _spec(tmp_path, micro_root, "mixed", "evaluator.save_crops=false", TWO_PAIRS)
    evaluation = _ros(spec, tmp_path)
    # pair1's verifier is started with another next-best-view strategy than the params file's.
    evaluation.nodes["pair1/verifier"].argv += ["-p", "agent.nbv:=random"]
    spec.run_dir.mkdir(parents=True)
    absolute_paths(spec).write(evaluation.params_file)
    servers = [f"/{pair}/{name}" for pair in ("pair0", "pair1")
               for name in ("start_episode", "verify_instance/_action/send_goal")]  # fmt: skip
    pairs = [node for name, node in evaluation.nodes.items() if name != "evaluator"]
    try:
        for node in pairs:
            node.start()
        graph = ros_executor.create_node("graph_watch")
        # The evaluator starts once both pairs serve, so it meets pair1 before the first episode.
        wait_until(lambda: set(servers) <= {name for name, _ in graph.get_service_names_and_types()},
                   "both pairs' servers", timeout_s=60.0)  # fmt: skip
        evaluator = evaluation.nodes["evaluator"]
        evaluator.start()
        assert evaluator.wait(120.0) == 2, _log(evaluation, tmp_path)
    finally:
        for node in evaluation.nodes.values():
            node.stop()
    log = _log(evaluation, tmp_path)
    assert re.search(r"evaluator: pair pair1: it runs another configuration than the run's "
                     r"\(verifier\.agent\.nbv = 'random', the run's is 'farthest'\)", log), log  # fmt: skip
    assert not (spec.run_dir / "results.jsonl").exists()


pytestmark = pytest.mark.ros
