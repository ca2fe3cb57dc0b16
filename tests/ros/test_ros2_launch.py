"""Every launch file started through `ros2 launch`, the way a user types it, with the real launch system.

- ``--show-args`` lists every declared argument with a description;
- ``offline_sim.launch.py`` serves a dataset; ``verifier.launch.py`` runs in a namespace with a remapped camera;
- ``offline_eval.launch.py`` on the micro dataset writes the records ``aiv-eval run --mode ros`` writes, keeps its
  promises when the verifier is killed mid-episode (respawned, the interrupted episode retried, every episode
  answered once) and ends by itself when the evaluator does; with ``pairs:=2`` the same, one pair's verifier
  killed inside a chosen episode, both pairs taking episodes;
- ``bag_replay.launch.py`` evaluates the tour bag in the repository and ends.
(``detector.launch.py`` and ``robot_verify.launch.py`` run in test_vision_msgs.py and test_ros2_verbs.py.)
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import psutil
import pytest
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.in_process import run_in_process
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import StepReport
from aiv_offline_sim.episode_service import pair_key
from support.eval_specs import oracle_veto_spec
from support.pair_faults import VerifierKiller
from support.ros2_cli import require_tools, ros2, ros2_until
from support.ros_harness import wait_until

require_tools("launch_ros", "ros2launch")

pytestmark = pytest.mark.ros

REPO_ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((REPO_ROOT / "launch").glob("*.launch.py"))
TOUR_BAG = REPO_ROOT / "bags" / "tour_micro_mug"


def _declared_arguments(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        ast.literal_eval(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "DeclareLaunchArgument"
    ]


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_show_args_lists_every_argument_with_a_description(path: Path) -> None:
    output = ros2("launch", "aiv_verifier", path.name, "--show-args").stdout
    declared = _declared_arguments(path)
    assert declared, f"{path.name} declares no argument"
    for name in declared:
        assert f"'{name}':" in output, f"{path.name}: --show-args does not list {name}:\n{output}"
    assert "no description given" not in output, output


def _records(run_dir: Path) -> list[dict]:
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _answered_once(records: list[dict]) -> list[dict]:
    ok = [record for record in records if record["status"] == "ok"]
    counts = Counter(record["episode_key"] for record in ok)
    assert all(count == 1 for count in counts.values()), f"answered twice: {counts.most_common(3)}"
    return sorted(
        ({key: value for key, value in record.items() if key != "attempts"} for record in ok),
        key=lambda record: record["episode_index"],
    )


def _verifier_pids(launch_pid: int) -> list[int]:
    """The verifier processes the launch started (its children whose command runs aiv_verifier's verifier)."""
    try:
        children = psutil.Process(launch_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    pids = []
    for child in children:
        try:
            command = " ".join(child.cmdline())
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        if "aiv_verifier/verifier" in command:
            pids.append(child.pid)
    return pids


def test_offline_eval_launch_writes_what_aiv_eval_writes_and_survives_a_killed_verifier(
    tmp_path: Path, micro_root: Path, ros2_process, ros_executor
) -> None:
    # episode_timeout_s bounds an attempt whose verdict never comes (seen once under CI load after the kill: the
    # evaluator then waited out the 300 s default); the attempt is then recorded as a failure and retried too.
    overrides = (
        "evaluator.server_wait_s=30.0",
        "evaluator.save_crops=false",
        "evaluator.max_attempts=3",
        "evaluator.episode_timeout_s=30.0",
    )
    launched = oracle_veto_spec(tmp_path, micro_root, "launched", *overrides)
    params = tmp_path / "launched_params.yaml"
    launched.write(params)

    # Kill the verifier inside an episode (a step that asks for a move: another step must follow) once three
    # episodes are recorded; the launch file respawns it and the evaluator retries the interrupted episode.
    killed: list[int] = []

    def on_feedback(message) -> None:
        step = message.feedback.step  # an early step's move: the goal surely still runs when the kill lands
        if killed or step.action != StepReport.ACTION_MOVE or step.step > 2:
            return
        if len(_records(launched.run_dir)) >= 3:
            for pid in _verifier_pids(launch.process.pid):
                psutil.Process(pid).kill()
                killed.append(pid)

    watcher = ros_executor.create_node("fault_injector")
    watcher.create_subscription(
        VerifyInstance.Impl.FeedbackMessage, "/verify_instance/_action/feedback", on_feedback, 10
    )
    launch = ros2_process(
        ["launch", "aiv_verifier", "offline_eval.launch.py", f"params_file:={params}"], "offline_eval"
    )
    assert launch.wait(timeout_s=240.0) == 0, launch.output()  # the launch ends when the evaluator does
    assert killed, f"the verifier was never killed mid-episode:\n{launch.output()}"
    assert "verifier-2" in launch.output() or launch.output().count("process started") >= 4, launch.output()

    records = _records(launched.run_dir)
    retried = [record for record in records if record["status"] != "ok"]
    assert retried and all(
        record["prediction"] == "Unsure"
        and ("verifier" in record["failure_reason"] or "no verdict within" in record["failure_reason"])
        for record in retried
    ), [(record["status"], record.get("failure_reason")) for record in records]

    reference = oracle_veto_spec(tmp_path, micro_root, "aiv_eval_ros", *overrides)
    reference_params = tmp_path / "aiv_eval_ros.yaml"
    reference.write(reference_params)
    completed = subprocess.run(
        [sys.executable, "-m", "aiv_eval.cli", "run", str(reference_params), "--mode", "ros"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    expected = _answered_once(_records(reference.run_dir))
    assert len(expected) == 12
    assert _answered_once(records) == expected


def _launched_verifier_pid(launch_pid: int, pair: str) -> int:
    """The pid of the verifier the launch started in ``pair``'s namespace."""
    pids = [
        pid
        for pid in _verifier_pids(launch_pid)
        if f"__ns:=/{pair}" in " ".join(psutil.Process(pid).cmdline())
    ]
    assert len(pids) == 1, pids
    return pids[0]


def test_offline_eval_launch_with_two_pairs_survives_a_killed_pair_and_ends_with_every_record(
    tmp_path: Path, micro_root: Path, ros2_process, ros_executor
) -> None:
    overrides = (
        "evaluator.server_wait_s=30.0",
        "evaluator.save_crops=false",
        "evaluator.max_attempts=3",
        "evaluator.episode_timeout_s=30.0",
        "verifier.verifier.backend=classical",
        "verifier.agent.fusion=attr_majority",
    )
    reference = _records(
        run_in_process(oracle_veto_spec(tmp_path, micro_root, "reference", *overrides)).run_dir
    )
    launched = oracle_veto_spec(tmp_path, micro_root, "two_pairs", *overrides)
    params = tmp_path / "two_pairs.yaml"
    launched.write(params)
    # Kill, inside the last episode whose agent moves at least three times, the verifier of the pair that serves
    # it (late enough for the watcher to have found the verifiers' feedback; the classical verifier keeps the run
    # a few seconds long); the launch file restarts that verifier and the evaluator retries the episode.
    target = [r for r in reference if r["steps"] >= 4][-1]
    assert target["episode_index"] >= 4
    index = PInVerifyDataset(str(micro_root)).read_pair_index("val/pv_index_all.jsonl")
    killer = VerifierKiller(
        ros_executor.create_node("pair_fault_injector"),
        ("pair0", "pair1"),
        pair_key(index[target["episode_index"]]),
        lambda pair: psutil.Process(_launched_verifier_pid(launch.process.pid, pair)).kill(),
    )
    launch = ros2_process(
        ["launch", "aiv_verifier", "offline_eval.launch.py", f"params_file:={params}", "pairs:=2"],
        "two_pairs",
    )
    assert launch.wait(timeout_s=240.0) == 0, launch.output()  # the launch ends when the evaluator does
    output = launch.output()
    assert killer.killed, f"no verifier was killed inside episode {target['episode_index']}:\n{output}"
    assert "verifier-5" in output or output.count("process started") >= 6, output  # the killed one came back
    counts = re.findall(r"attempts per pair: pair0 (\d+), pair1 (\d+)", output)
    assert counts and all(int(count) > 0 for count in counts[-1]), output  # both pairs served

    records = _records(launched.run_dir)
    failed = [record for record in records if record["status"] != "ok"]
    assert failed and {record["episode_index"] for record in failed} == {target["episode_index"]}
    assert all(
        record["prediction"] == "Unsure"
        and ("verifier" in record["failure_reason"] or "no verdict within" in record["failure_reason"])
        for record in failed
    ), [record["failure_reason"] for record in failed]
    assert _answered_once(records) == _answered_once(reference)
    assert [r["episode_index"] for r in records if r["status"] == "ok"] == list(range(12))  # in index order
    assert (launched.run_dir / "metrics.json").is_file()


def test_offline_sim_launch_serves_a_dataset(tmp_path: Path, micro_root: Path, ros2_process) -> None:
    launch = ros2_process(
        ["launch", "aiv_verifier", "offline_sim.launch.py", f"dataset_root:={micro_root}",
         "privileged_output:=true"],
        "offline_sim",
    )  # fmt: skip
    ros2_until(["node", "list"], lambda out: "/offline_sim" in out.split(), "the simulator node")
    ros2_until(
        ["node", "info", "/offline_sim"],
        lambda out: "/move_to_sector: aiv_interfaces/action/MoveToSector" in out,
        "its MoveToSector server",
    )
    assert launch.stop() == 0, launch.output()


def test_verifier_launch_in_a_namespace_with_a_remapped_camera(ros2_process) -> None:
    launch = ros2_process(
        ["launch", "aiv_verifier", "verifier.launch.py", "namespace:=arm1", "image:=/wrist/color/image_raw",
         "detections:=/wrist/detections"],
        "verifier",
    )  # fmt: skip
    info = ros2_until(
        ["node", "info", "/arm1/verifier"],
        lambda out: "/wrist/color/image_raw" in out,
        "the namespaced verifier subscribing to the remapped camera",
    )
    assert "/arm1/verifier/verdict: aiv_interfaces/msg/Verdict" in info, info
    assert "/arm1/move_to_sector" in info, info
    ros2_until(["node", "info", "/arm1/verifier_goals"],
               lambda out: "/arm1/verify_instance: aiv_interfaces/action/VerifyInstance" in out,
               "the namespaced VerifyInstance server")  # fmt: skip
    assert launch.stop() == 0, launch.output()


def test_bag_replay_launch_evaluates_a_tour_bag_and_ends(tmp_path: Path, ros2_process) -> None:
    run_dir = tmp_path / "tours_run"
    launch = ros2_process(
        ["launch", "aiv_verifier", "bag_replay.launch.py", f"tour_bags:={TOUR_BAG}",
         f"tour_root:={tmp_path / 'tours'}", "evaluate:=true", f"run_dir:={run_dir}"],
        "bag_replay",
    )  # fmt: skip
    assert launch.wait(timeout_s=180.0) == 0, launch.output()
    records = _records(run_dir)
    assert records and all(record["status"] == "ok" for record in records), records
    assert {record["prediction"] for record in records} <= {"Yes", "No"}


def test_a_launch_stopped_with_ctrl_c_leaves_no_process(ros2_process) -> None:
    launch = ros2_process(["launch", "aiv_verifier", "verifier.launch.py", "namespace:=stopme"], "ctrl_c")
    ros2_until(["node", "list"], lambda out: "/stopme/verifier" in out.split(), "the verifier")
    children = psutil.Process(launch.process.pid).children(recursive=True)
    assert children
    assert launch.stop() == 0, launch.output()
    wait_until(
        lambda: not any(child.is_running() and child.status() != psutil.STATUS_ZOMBIE for child in children),
        "every launched process to exit",
    )
