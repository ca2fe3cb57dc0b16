"""The evaluator node with the simulator and the verifier as real processes over DDS (``aiv-eval run --mode ros``).

- ROS mode and in-process mode write byte-identical ``results.jsonl`` (and the same metrics and crops);
- a verifier and then a simulator killed mid-run are restarted, the interrupted episode is recorded as an
  infrastructure failure and retried, and the run ends with every episode answered exactly once and the
  metrics of an uninterrupted run;
- a killed evaluator loses nothing: running again resumes where it stopped;
- bad parameters, a run dir of another configuration and absent servers end the evaluator with a clear message;
- queries the rules refuse (too long for the verifier, no visible text, a NUL that ROS would cut off) and the
  ``seed_plus_slice_index`` seed policy give the same records in both modes.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from action_msgs.msg import GoalStatus
from aiv_common.action_waits import ServerLostError, action_server_watch, send_goal_confirmed
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.in_process import run_in_process
from aiv_eval.run.ros_mode import ManagedNode, RosEvaluation, executable_path
from aiv_interfaces.action import MoveToSector
from aiv_offline_sim.environment import PInVerifyEnv
from rclpy.action import ActionClient, ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from support.ros_harness import wait_until
from support.ros_runs import CLASSICAL_DEFAULT
from support.ros_runs import result_lines as _lines
from support.ros_runs import ros_evaluation as _ros
from support.ros_runs import ros_spec as _spec
from support.ros_runs import scored_metrics as _metrics
from support.tiny_dataset import EpisodeSpec, TinyDataset

ORACLE = ()
#: Where the fault test's relay serves the verifier's moves.
RELAYED_MOVES = "/fault_relay/move_to_sector"


def _without_attempts(records: list[dict]) -> list[dict]:
    return [{key: value for key, value in record.items() if key != "attempts"} for record in records]


def _effective_ok(records: list[dict]) -> list[dict]:
    ok = [record for record in records if record["status"] == "ok"]
    counts = Counter(record["episode_key"] for record in ok)
    assert all(count == 1 for count in counts.values()), f"duplicate answers: {counts.most_common(3)}"
    return sorted(ok, key=lambda record: record["episode_index"])


def _log(evaluation: RosEvaluation, tmp_path: Path) -> str:
    parts = [(tmp_path / f"{evaluation.run_dir.name}-evaluator.log")]
    parts += [node.log_path for node in evaluation.nodes.values() if node.log_path]
    return "\n".join(f"--- {p}\n{p.read_text(errors='replace')}" for p in parts if p and p.exists())


@pytest.mark.parametrize(
    ("overrides", "episodes"),
    [(ORACLE, 12), ((*CLASSICAL_DEFAULT, "evaluator.slice_end=3"), 3)],
    ids=["oracle-veto-all-pairs", "classical-default-3-pairs"],
)
def test_ros_mode_and_in_process_mode_write_identical_results(
    tmp_path: Path, micro_root: Path, overrides: tuple[str, ...], episodes: int
) -> None:
    evaluation = _ros(_spec(tmp_path, micro_root, "ros", *overrides), tmp_path)
    result = evaluation.run()
    assert result.evaluator_exit_code == 0, _log(evaluation, tmp_path)
    assert result.restarts == {"offline_sim": 0, "verifier": 0, "evaluator": 0}
    assert all(peak > 10.0 for peak in result.peak_rss_mib.values()), result.peak_rss_mib
    in_process = run_in_process(_spec(tmp_path, micro_root, "inprocess", *overrides))

    ros_dir, ip_dir = result.run_dir, in_process.run_dir
    assert len(_lines(ros_dir)) == episodes
    assert (ros_dir / "results.jsonl").read_bytes() == (ip_dir / "results.jsonl").read_bytes()
    assert _metrics(ros_dir) == _metrics(ip_dir)
    run_ids = {json.loads((d / "run.json").read_text())["run_id"] for d in (ros_dir, ip_dir)}
    assert len(run_ids) == 1  # the identity read from the running nodes equals the params file's
    ros_crops = sorted(p.relative_to(ros_dir) for p in (ros_dir / "crops").rglob("*.jpg"))
    assert ros_crops and ros_crops == sorted(p.relative_to(ip_dir) for p in (ip_dir / "crops").rglob("*.jpg"))
    assert (ros_dir / "report.html").is_file()  # write_report defaults to true in the node


class MoveRelay:
    """A MoveToSector server under another name that passes each goal on to the simulator's server and its
    answer back: the verifier's moves go through it, so a test can act *inside* a move the verifier is
    waiting for. ``before_move(handle)`` runs first; when it returns a result, that result ends the move
    (aborted) and nothing is passed on. ``while_simulator_moves()`` runs once the simulator has accepted a
    passed-on move and before its result is awaited.
    """

    def __init__(
        self,
        node: Node,
        name: str,
        before_move: Callable[[Any], Any],
        while_simulator_moves: Callable[[], None],
    ) -> None:
        self.node = node
        self.before_move = before_move
        self.while_simulator_moves = while_simulator_moves
        self.simulator = ActionClient(node, MoveToSector, "/move_to_sector")
        ActionServer(
            node, MoveToSector, name, execute_callback=self.relay, callback_group=ReentrantCallbackGroup()
        )

    def relay(self, handle: Any) -> Any:
        ended = self.before_move(handle)
        if ended is None:
            ended, succeeded = self._pass_on(handle.request)
            if succeeded:
                handle.succeed()
                return ended
        handle.abort()
        return ended

    def _pass_on(self, goal: Any) -> tuple[Any, bool]:
        def refused(message: str) -> tuple[Any, bool]:
            return MoveToSector.Result(
                outcome=MoveToSector.Result.OUTCOME_REJECTED, sector=-1, message=message
            ), False

        if not self.simulator.wait_for_server(timeout_sec=30.0):
            return refused("no simulator move server")
        alive = action_server_watch(self.node, "/move_to_sector")
        try:
            sent = send_goal_confirmed(
                self.simulator, goal, timeout_s=30.0, alive=alive, what="the simulator"
            )
            if sent is None or not sent.accepted:
                return refused("the simulator did not accept the move")
            self.while_simulator_moves()
            response = sent.result(30.0, alive, "the simulator")
        except ServerLostError as error:
            return refused(str(error))
        if response is None:
            return refused("no move result from the simulator")
        return response.result, response.status == GoalStatus.STATUS_SUCCEEDED


def test_killed_verifier_then_simulator_are_restarted_and_every_episode_is_answered_once(
    tmp_path: Path, micro_root: Path, ros_executor
) -> None:
    reference = run_in_process(_spec(tmp_path, micro_root, "reference", "evaluator.save_crops=false"))
    spec = _spec(
        tmp_path,
        micro_root,
        "faulty",
        "evaluator.save_crops=false",
        "evaluator.max_attempts=3",
        f"verifier.move_action={RELAYED_MOVES}",
    )
    evaluation = _ros(spec, tmp_path)
    # Both kills land inside a move the verifier waits for, so with a goal certainly in flight: the verifier's
    # once 2 episodes are recorded, the simulator's once 6 are (moving episodes follow both).
    plan = [("verifier", 2), ("offline_sim", 6)]
    killed: list[str] = []

    def kill_when_due(node: str) -> bool:
        if not plan or plan[0][0] != node or len(_lines(spec.run_dir)) < plan[0][1]:
            return False
        plan.pop(0)
        evaluation.nodes[node].kill()
        killed.append(node)
        return True

    def kill_the_waiting_verifier(_handle: Any) -> Any:
        if not kill_when_due("verifier"):
            return None
        return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_REJECTED, sector=-1, message="killed")

    watcher = ros_executor.create_node("fault_injector")
    MoveRelay(watcher, RELAYED_MOVES, kill_the_waiting_verifier, lambda: kill_when_due("offline_sim"))
    outcome = {}
    runner = threading.Thread(target=lambda: outcome.setdefault("result", evaluation.run()), daemon=True)
    runner.start()
    wait_until(lambda: len(killed) == 2, "both kills", timeout_s=90.0)
    runner.join(timeout=120.0)
    assert not runner.is_alive(), _log(evaluation, tmp_path)
    result = outcome["result"]
    assert result.evaluator_exit_code == 0, _log(evaluation, tmp_path)
    assert result.restarts["verifier"] == 1 and result.restarts["offline_sim"] == 1

    lines = _lines(spec.run_dir)
    failures = [record for record in lines if record["status"] != "ok"]
    assert all(record["prediction"] == "Unsure" and record["failure_reason"] for record in failures)
    # The verifier died with a goal in flight: that attempt is an infrastructure failure, never a wrong answer.
    assert any("the verifier disappeared" in record["failure_reason"] for record in failures), [
        r["failure_reason"] for r in failures
    ]
    answered = _effective_ok(lines)
    expected = _lines(reference.run_dir)
    assert [r["episode_key"] for r in answered] == [r["episode_key"] for r in expected]
    assert _without_attempts(answered) == _without_attempts(expected)
    scored = {k: v for k, v in _metrics(spec.run_dir).items() if k != "infra_failures"}
    assert scored == {k: v for k, v in _metrics(reference.run_dir).items() if k != "infra_failures"}


def test_killed_evaluator_resumes_where_it_stopped(tmp_path: Path, micro_root: Path) -> None:
    reference = run_in_process(_spec(tmp_path, micro_root, "reference", "evaluator.save_crops=false"))
    spec = _spec(tmp_path, micro_root, "resumed", "evaluator.save_crops=false")
    first = _ros(spec, tmp_path)
    outcome = {}
    runner = threading.Thread(target=lambda: outcome.setdefault("result", first.run()), daemon=True)
    runner.start()
    wait_until(lambda: len(_lines(spec.run_dir)) >= 4, "4 records", timeout_s=60.0)
    first.nodes["evaluator"].kill()
    runner.join(timeout=60.0)
    assert outcome["result"].evaluator_exit_code == -9
    recorded_before = len(_lines(spec.run_dir))
    assert 4 <= recorded_before < 12

    second = _ros(spec, tmp_path).run()
    assert second.evaluator_exit_code == 0
    lines = _lines(spec.run_dir)
    assert len(lines) == 12  # nothing run twice, nothing lost
    assert (spec.run_dir / "results.jsonl").read_bytes() == (reference.run_dir / "results.jsonl").read_bytes()
    assert _metrics(spec.run_dir) == _metrics(reference.run_dir)


def test_run_dir_of_another_configuration_is_refused(tmp_path: Path, micro_root: Path) -> None:
    run_in_process(
        _spec(tmp_path, micro_root, "taken", "evaluator.slice_end=2", "evaluator.save_crops=false")
    )
    before = (tmp_path / "taken" / "results.jsonl").read_bytes()
    spec = _spec(
        tmp_path,
        micro_root,
        "taken",
        "evaluator.slice_end=2",
        "verifier.agent.nbv=random",
        "evaluator.save_crops=false",
    )
    evaluation = _ros(spec, tmp_path)
    result = evaluation.run()
    assert result.evaluator_exit_code == 2
    assert "agent.nbv" in _log(evaluation, tmp_path)
    assert (tmp_path / "taken" / "results.jsonl").read_bytes() == before


def test_evaluator_without_servers_and_with_bad_parameters_exits_with_a_reason(tmp_path: Path) -> None:
    evaluator = executable_path("aiv_eval", "evaluator")
    alone = ManagedNode(
        "evaluator",
        [str(evaluator), "--ros-args", "-p", "server_wait_s:=1.0", "-p", f"run_dir:={tmp_path / 'run'}"],
        tmp_path / "alone.log",
        dict(os.environ),
    )
    alone.start()
    assert alone.wait(60.0) == 1
    assert "not available" in (tmp_path / "alone.log").read_text()
    assert not (tmp_path / "run" / "results.jsonl").exists()

    bad = ManagedNode(
        "evaluator",
        [str(evaluator), "--ros-args", "-p", "slice_start:=5", "-p", "slice_end:=2"],
        tmp_path / "bad.log",
        dict(os.environ),
    )
    bad.start()
    assert bad.wait(60.0) == 2
    assert "slice_end 2 is before slice_start 5" in (tmp_path / "bad.log").read_text()


#: Queries of one hand-written episode: each breaks one rule (aiv_dataset.query_rules), after one valid query.
BAD_QUERIES = {
    "long_q": ["a red mug " * 10_000, "a red mug", "mug"],  # 100,000 characters; the verifier allows 20,000
    "blank_q": ["", "   ", "\t\n"],
    "nul_q": ["a red mug", "a red\x00 mug with a white handle", "mug"],  # ROS would deliver "a red"
}


def test_queries_the_rules_refuse_are_recorded_identically_in_both_modes(tmp_path: Path) -> None:
    data = TinyDataset(tmp_path / "tiny")
    episode = data.add_episode(EpisodeSpec())
    pairs = [data.pair(episode)]
    pairs += [data.pair(episode, query_object_id=query, query_category="mug") for query in BAD_QUERIES]
    data.write_descriptions(texts=BAD_QUERIES)
    data.write_index("pv_index_all.jsonl", pairs)
    overrides = (*CLASSICAL_DEFAULT, "evaluator.save_crops=false")
    evaluation = _ros(_spec(tmp_path, data.root, "ros", *overrides), tmp_path)
    result = evaluation.run()
    assert result.evaluator_exit_code == 1, _log(evaluation, tmp_path)  # 1: infrastructure failures left
    assert result.restarts == {"offline_sim": 0, "verifier": 0, "evaluator": 0}
    in_process = run_in_process(_spec(tmp_path, data.root, "inprocess", *overrides))
    assert not in_process.complete

    ros_bytes = (result.run_dir / "results.jsonl").read_bytes()
    assert ros_bytes == (in_process.run_dir / "results.jsonl").read_bytes()
    assert _metrics(result.run_dir) == _metrics(in_process.run_dir)
    records = _lines(result.run_dir)
    assert [r["status"] for r in records] == ["ok"] + ["infra_failure"] * 6  # two attempts per refused query
    reasons = {r["object_id"]: r["failure_reason"] for r in records if r["status"] != "ok"}
    assert reasons["long_q"] == (
        "the verifier failed (rejected): a description has 100000 characters; at most 20000 are accepted"
    )
    assert reasons["blank_q"].startswith("the simulator refused the episode: the query of pair ")
    assert reasons["blank_q"].endswith(
        "cannot be served: no descriptions: give at least one non-empty description of the object"
    )
    assert reasons["nul_q"].endswith("description 2 contains a NUL character (at offset 5)")
    by_query = {r["object_id"]: r["query_descriptions"] for r in records}
    assert by_query["long_q"] == BAD_QUERIES["long_q"]  # what was sent, whole
    assert by_query["blank_q"] == by_query["nul_q"] == []  # never handed out


def test_seed_plus_slice_index_seeds_by_the_position_in_the_slice_in_both_modes(
    tmp_path: Path, micro_root: Path
) -> None:
    sliced = ("evaluator.slice_start=5", "evaluator.slice_end=9", "evaluator.save_crops=false")
    policy = "offline_sim.seed_policy=seed_plus_slice_index"
    evaluation = _ros(_spec(tmp_path, micro_root, "ros", policy, *sliced), tmp_path)
    result = evaluation.run()
    assert result.evaluator_exit_code == 0, _log(evaluation, tmp_path)
    in_process = run_in_process(_spec(tmp_path, micro_root, "inprocess", policy, *sliced))
    assert (result.run_dir / "results.jsonl").read_bytes() == (
        in_process.run_dir / "results.jsonl"
    ).read_bytes()

    # The reference: one process over the slice loads records 5..8 as its list and seeds record k with 42 + k.
    dataset = PInVerifyDataset(str(micro_root))
    reference = PInVerifyEnv(
        dataset.read_pair_index("val/pv_index_all.jsonl")[5:9], dataset, seed_policy="seed_plus_index"
    )
    starts = [record["transcript"][0]["sector"] for record in _lines(result.run_dir)]
    assert starts == [reference.reset(k).current_sector for k in range(4)]
    whole = run_in_process(
        _spec(tmp_path, micro_root, "whole", "offline_sim.seed_policy=seed_plus_index", *sliced)
    )
    assert starts != [record["transcript"][0]["sector"] for record in _lines(whole.run_dir)]
