"""Issue 16's must-show: episodes run over DDS and recorded, then replayed both ways, give the recorded verdict
and per-step answers.

The benchmark configuration (``offline_eval.yaml``: classical verifier, ground-truth boxes, angular FPS, T = 6)
runs a few pairs of the micro dataset with ``aiv-eval``'s ROS mode and ``--record-bags``. Then:

- **tour served by the simulator**: each episode is exported as a tour bag (its ground-truth boxes on
  ``/detections``), ``offline_sim`` serves the tours (``tour_bags``), and a verifier node started with the run's
  parameters is asked the recorded request through StartEpisode + VerifyInstance;
- **open loop**, in-process and over ROS (``aiv-bag replay --mode ros``: a replay node publishes the recorded
  frames and serves MoveToSector with the recorded outcomes to a real verifier node).

Every way is compared with the recording by the replay's one comparison (:func:`compare_episode`). A changed
parameter makes the ROS replay list the same changed steps, with the same notes, as the in-process replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from aiv_bags import export_episode
from aiv_bags.cli import main as aiv_bag
from aiv_bags_ros.replay import compare_episode, replay_bag
from aiv_bags_ros.ros_replay import VerifierClient, recorded_goal, replay_bag_ros
from aiv_bags_ros.session_bag import SessionBagError
from aiv_bags_ros.session_reader import read_session
from aiv_common.action_waits import call_idempotent
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_eval.run.ros_mode import RosEvaluation
from aiv_eval.run.spec import EvalSpec
from aiv_interfaces.srv import StartEpisode
from support.ros_harness import DEFAULT_TIMEOUT_S, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG = REPO_ROOT / "ros2_ws" / "src" / "aiv_verifier" / "config" / "offline_eval.yaml"
INSTALL = REPO_ROOT / "ros2_ws" / "install"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
#: A parameter that changes some moves but not every answer.
CHANGE = "agent.nbv=random"


@pytest.fixture(scope="module")
def recorded(
    tmp_path_factory: pytest.TempPathFactory, micro_root: Path
) -> Iterator[tuple[EvalSpec, list[Path]]]:
    tmp_path = tmp_path_factory.mktemp("both_ways")
    spec = EvalSpec.load(
        CONFIG,
        ["evaluator.slice_end=3", f"evaluator.run_dir={tmp_path / 'run'}", "evaluator.server_wait_s=30.0"],
    )
    spec.set_dataset(str(micro_root))
    result = RosEvaluation(spec, evaluator_output=tmp_path / "evaluator.log", record_bags=True).run()
    logs = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "run" / "logs").glob("*.log"))
    assert result.evaluator_exit_code == 0, logs
    bags = sorted(path.parent for path in (tmp_path / "run" / "bags").rglob("metadata.yaml"))
    assert len(bags) == 3
    yield spec, bags


def _episode_path(episode_key: str) -> str:
    scene, episode, _digest = episode_key.split("/")
    return f"pin_capture/val/{scene}/{episode}"


def test_the_tour_served_by_the_simulator_gives_the_recorded_answers(
    recorded: tuple[EvalSpec, list[Path]], ros_executor, node_process, tmp_path: Path
) -> None:
    spec, bags = recorded
    episodes = [read_session(bag, need_ground_truth=True).episodes[0] for bag in bags]
    root = Path(spec.sim["dataset_root"])
    tours = []
    for path in sorted({_episode_path(episode.goal.episode_key) for episode in episodes}):
        tour = tmp_path / "tours" / path.replace("/", "_")
        export_episode(root, path, tour, index=root / str(spec.sim["index_file"]), compression="png")
        tours.append(tour)

    # The simulator's rules as the run used them; the episodes come from the tours, not the dataset.
    sim_params = [
        f"{name}:={spec.sim[name]}" for name in ("max_steps", "seed", "seed_policy", "view_priority")
    ]
    sim_params += ["privileged_output:=true", "tour_bags:=" + ",".join(map(str, tours))]
    sim = node_process(
        [str(SIM_EXECUTABLE), "--ros-args", *[item for p in sim_params for item in ("-p", p)]],
        name="tour_sim",
    )
    verifier = node_process(
        [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(spec.run_dir / "params.yaml")],
        name="verifier",
    )
    start_client = ros_executor.spin_new(
        "tour_start", lambda n: n.create_client(StartEpisode, "start_episode")
    )
    client = VerifierClient("verify_instance", context=ros_executor.context)
    ros_executor.add(client)
    wait_until(lambda: (not sim.running) or start_client.service_is_ready(), "the tour simulator")
    sim.assert_running()
    assert client.wait_for_server(DEFAULT_TIMEOUT_S, lambda: verifier.running), verifier.output()
    assert "boxes: from /detections" in sim.output() and "without a box topic" not in sim.output()

    compared = 0
    for episode in episodes:
        key = episode.goal.episode_key
        started = call_idempotent(
            start_client, StartEpisode.Request(index=-1, episode_key=key), timeout_s=DEFAULT_TIMEOUT_S
        )
        assert started is not None, f"StartEpisode({key}): no reply"
        assert started.success, started.message
        assert started.start_sector == episode.goal.start_sector, "the tour starts elsewhere than the dataset"
        goal = recorded_goal(episode, stamp_to_nanoseconds(started.frame_stamp))
        verdict = client.verify(goal, timeout_s=120.0)
        result = compare_episode(episode, verdict, episode_key=key)
        assert result.identical, "\n".join(result.lines())
        assert verdict.decision in (0, 1) and len(verdict.transcript) == len(episode.steps)
        # The box was used: every step judged a crop (the GT box), as the recording did.
        assert [s.has_crop_box for s in verdict.transcript] == [s.has_crop_box for s in episode.steps]
        compared += 1
    assert compared == len(bags)
    assert any(len(episode.steps) > 1 for episode in episodes), "an episode must move at least once"
    assert any(s.has_crop_box for episode in episodes for s in episode.steps)
    sim.assert_running()
    verifier.assert_running()


def test_open_loop_replay_over_ros_equals_the_recording_and_the_in_process_replay(
    recorded: tuple[EvalSpec, list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    _spec, bags = recorded
    for bag in bags:
        over_ros = replay_bag_ros(bag)
        in_process = replay_bag(bag)
        assert over_ros.identical and in_process.identical, "\n".join(over_ros.lines() + in_process.lines())
        assert [e.replayed_steps for e in over_ros.episodes] == [
            e.replayed_steps for e in in_process.episodes
        ]

    any_changed = False
    for bag in bags:
        over_ros = replay_bag_ros(bag, sets=[CHANGE])
        in_process = replay_bag(bag, sets=[CHANGE])
        (ros_episode,) = over_ros.episodes
        (local_episode,) = in_process.episodes
        assert ros_episode.step_changes == local_episode.step_changes, "\n".join(
            over_ros.lines() + in_process.lines()
        )
        assert ros_episode.verdict_changes == local_episode.verdict_changes
        any_changed |= not ros_episode.identical
    assert any_changed, f"{CHANGE} changed nothing: the test would show nothing"

    assert aiv_bag(["replay", str(bags[0]), "--mode", "ros"]) == 0
    assert "replayed open-loop over ROS" in capsys.readouterr().out


def test_replay_over_ros_refuses_bad_input_in_one_line(
    recorded: tuple[EvalSpec, list[Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _spec, bags = recorded
    missing = tmp_path / "nothing_here"
    assert aiv_bag(["replay", str(missing), "--mode", "ros"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(missing) in line and "no such bag directory" in line

    assert aiv_bag(["replay", str(bags[0]), "--mode", "ros", "--set", "agent.bbox_mode=bogus"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "agent.bbox_mode" in line and "bogus" in line

    with pytest.raises(SessionBagError, match="no verifier serves verify_instance within 1 s"):
        replay_bag_ros(bags[0], verifier="running", server_wait_s=1.0)
