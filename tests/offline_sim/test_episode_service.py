"""The simulator node's ROS-free core: episode selection, refusals, keys and the camera model."""

from __future__ import annotations

import pytest
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.vocabulary import MoveOutcome
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import (
    EpisodeRequestError,
    EpisodeService,
    camera_matrix,
    pair_key,
)
from support.tiny_dataset import EpisodeSpec, TinyDataset, ring


@pytest.fixture
def service(tmp_path) -> EpisodeService:
    data = TinyDataset(tmp_path)
    episode = data.add_episode(EpisodeSpec(views=ring(unreachable={4})))
    records = [data.pair(episode), data.pair(episode, query_object_id="cup_3", query_category="mug")]
    data.write_descriptions()
    index = data.write_index("pv_index_test.jsonl", records)
    dataset = PInVerifyDataset(tmp_path)
    env = PInVerifyEnv(dataset.read_pair_index(index), dataset, max_steps=3)
    return EpisodeService(env, dataset.load_descriptions())


def test_keys_are_unique_stable_and_do_not_reveal_the_query(service):
    first, second = service.keys
    assert first != second
    assert all("cup_3" not in key and "positive" not in key for key in service.keys)
    assert pair_key(service.env.records[0]) == first
    assert service.start(key=second).index == 1


def test_moves_before_an_episode_or_after_its_end_are_refused_without_a_step(service):
    assert service.move("back").outcome is MoveOutcome.REJECTED
    service.start(index=0)
    refused = service.move("sideways")
    assert refused.outcome is MoveOutcome.REJECTED and refused.steps_taken == 0
    service.move("front")
    service.move("front")
    forced = service.move("back")  # third step reaches the horizon of 3: forced stop, step consumed
    assert (
        forced.outcome is MoveOutcome.REJECTED and forced.steps_taken == 3 and "exhausted" in forced.message
    )
    after = service.move("back")
    assert after.outcome is MoveOutcome.REJECTED and "episode is over" in after.message


def test_bad_start_requests_name_the_problem(service):
    with pytest.raises(EpisodeRequestError, match="out of range"):
        service.start(index=5)
    with pytest.raises(EpisodeRequestError, match="unknown episode key"):
        service.start(key="x/y/z")


def test_images_are_decoded_once_per_capture(service):
    start = service.start(index=0)
    first = service.image_of(start.observation)
    assert service.image_of(start.observation) is first


def test_benchmark_camera_matrix_when_the_episode_has_no_intrinsics():
    width, height, k = camera_matrix(None)
    assert (width, height) == (360, 640)
    assert k[0] == pytest.approx(469.0, abs=0.5) and k[4] == pytest.approx(469.0, abs=0.5)
    assert (k[2], k[5]) == (179.5, 319.5)
