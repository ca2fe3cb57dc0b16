"""The offline_sim node serves camera height levels over ROS exactly as the in-process environment does.

The dataset is the capture pipeline's ``micro`` preset with views above and below added
(:mod:`support.leveled_dataset`). Over real DDS: an ``up`` / ``down`` goal's result names the level, the frame it
publishes shows the view of that level and its GroundTruthView says the level; ``height_levels:=eye`` serves the
same episodes at one level and refuses ``up`` without a step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiv_common.image_conversion import imgmsg_to_numpy
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.vocabulary import MoveOutcome
from aiv_interfaces.action import MoveToSector
from aiv_offline_sim.environment import Action, PInVerifyEnv
from support.leveled_dataset import add_height_levels
from support.ros_harness import wait_until
from test_offline_sim_node import EXPECTED_OUTCOME, SimClient, _sim_argv  # tests/ros is on sys.path

INDEX = "val/pv_index_all.jsonl"
SCRIPTS = [
    ["up", "front-left", "down", "down", "back", "up"],
    ["down", "up", "front-right", "up", "down", "back"],
]
ONE_LEVEL_UP = "this episode has one camera height level; 'up' needs a dataset with height levels"


@pytest.fixture(scope="module")
def leveled_root(micro_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return add_height_levels(micro_root, tmp_path_factory.mktemp("leveled") / "pv_leveled")


def _truth(client: SimClient, stamp):
    key = stamp_to_nanoseconds(stamp)
    wait_until(
        lambda: key in client.truths and key in client.images, f"the frame and ground truth stamped {key}"
    )
    return client.truths[key], client.images[key]


def test_up_and_down_goals_answer_with_the_level_as_in_process(ros_executor, node_process, leveled_root):
    root = leveled_root
    process = node_process(_sim_argv(root, root / INDEX, "privileged_output:=true"), name="offline_sim")
    client = SimClient(ros_executor)
    client.wait_ready(process)
    dataset = PInVerifyDataset(root)
    env = PInVerifyEnv(dataset.read_pair_index(INDEX), dataset, privileged=True)

    levels_reached: set[int] = set()
    for episode_index in (0, 3, 6, 9, 1):
        expected = env.reset(episode_index)
        started = client.start(index=episode_index)
        assert started.success, started.message
        truth, _ = _truth(client, started.frame_stamp)
        assert truth.level == 0 and {entry.level for entry in truth.layout} == {-1, 0, 1}
        assert [(e.sector, e.level, e.capture_tag) for e in truth.layout] == [
            (e.virtual_sector, e.level, e.capture_tag) for e in expected.privileged.layout
        ]
        for direction in SCRIPTS[episode_index % 2]:
            observation, _, done, info = env.step(Action.move(direction))
            result = client.move(direction)
            where = f"episode {episode_index}, step {info.step} ({direction})"
            assert result.outcome == EXPECTED_OUTCOME[info.outcome], where
            assert (result.sector, result.level) == (observation.current_sector, observation.current_level), (
                where
            )
            assert result.trap_view == info.trap_view, where
            assert result.visibility_warning == (info.visibility_warning or ""), where
            assert result.steps_taken == info.step, where
            truth, image = _truth(client, result.frame_stamp)
            assert (truth.level, truth.sector) == (observation.current_level, observation.current_sector), (
                where
            )
            assert truth.capture_tag == observation.privileged.capture_tag, where
            np.testing.assert_array_equal(imgmsg_to_numpy(image), observation.load_image())
            levels_reached.add(result.level)
            if done:
                break
    assert levels_reached >= {-1, 1}, "the script must reach a level above and one below"
    process.assert_running()


def test_eye_level_only_refuses_up_without_a_step(ros_executor, node_process, leveled_root):
    root = leveled_root
    argv = _sim_argv(root, root / INDEX, "privileged_output:=true", "height_levels:=eye")
    process = node_process(argv, name="offline_sim")
    client = SimClient(ros_executor)
    client.wait_ready(process)
    started = client.start(index=0)
    assert started.success, started.message
    truth, _ = _truth(client, started.frame_stamp)
    assert {entry.level for entry in truth.layout} == {0}

    refused = client.move("up")
    assert refused.outcome == MoveToSector.Result.OUTCOME_REJECTED
    assert (refused.message, refused.steps_taken, refused.level) == (ONE_LEVEL_UP, 0, 0)
    moved = client.move(MoveToSector.Goal.DIRECTION_DOWN)
    assert moved.outcome == MoveToSector.Result.OUTCOME_REJECTED and moved.steps_taken == 0
    front = client.move("front")
    assert front.outcome == EXPECTED_OUTCOME[MoveOutcome.STAYED] and front.steps_taken == 1
    process.assert_running()
