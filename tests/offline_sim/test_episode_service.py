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


BAD_QUERIES = {
    "blank_q": ["", "   ", "\t\n"],
    "nul_q": ["a red mug", "a red\x00 mug with a white handle", "mug"],
    "long_q": ["a red mug " * 10_000, "a red mug", "mug"],
}


def _service_with_queries(tmp_path, *, seed_policy: str = "per_episode_fixed") -> EpisodeService:
    data = TinyDataset(tmp_path)
    episode = data.add_episode(EpisodeSpec())
    records = [data.pair(episode)] + [
        data.pair(episode, query_object_id=object_id, query_category="mug") for object_id in BAD_QUERIES
    ]
    data.write_descriptions(texts=BAD_QUERIES)
    index = data.write_index("pv_index_test.jsonl", records)
    dataset = PInVerifyDataset(tmp_path)
    env = PInVerifyEnv(dataset.read_pair_index(index), dataset, seed_policy=seed_policy)
    return EpisodeService(env, dataset.load_descriptions())


def test_queries_that_cannot_cross_ros_or_be_verified_are_refused_before_anything_is_published(tmp_path):
    service = _service_with_queries(tmp_path)
    with pytest.raises(EpisodeRequestError, match="no descriptions: give at least one non-empty") as blank:
        service.start(index=1)
    assert service.keys[1] in str(blank.value)
    with pytest.raises(EpisodeRequestError, match=r"description 2 contains a NUL character \(at offset 5\)"):
        service.start(index=2)
    assert not service.env.started  # nothing was loaded, so nothing is published
    # Length and count limits are the verifier's parameters: the simulator hands the long query out.
    assert len(service.start(index=3).descriptions[0]) == 100_000
    assert service.start(index=0).descriptions == tuple(TinyDataset.descriptions_of("mug_a", "mug"))


def test_slice_start_reaches_the_seed_of_the_slice_index_policy(tmp_path):
    service = _service_with_queries(tmp_path, seed_policy="seed_plus_slice_index")
    assert service.start(index=3, slice_start=3).observation.episode_seed == 42
    assert service.start(index=3, slice_start=1).observation.episode_seed == 44
    assert service.start(index=3).observation.episode_seed == 45
    with pytest.raises(EpisodeRequestError, match="index 0 lies before slice_start 3"):
        service.start(index=0, slice_start=3)
    with pytest.raises(EpisodeRequestError, match="slice_start -1 is negative"):
        service.start(index=0, slice_start=-1)


def test_images_are_decoded_once_per_capture(service):
    start = service.start(index=0)
    first = service.image_of(start.observation)
    assert service.image_of(start.observation) is first


def test_benchmark_camera_matrix_when_the_episode_has_no_intrinsics():
    width, height, k = camera_matrix(None)
    assert (width, height) == (360, 640)
    assert k[0] == pytest.approx(469.0, abs=0.5) and k[4] == pytest.approx(469.0, abs=0.5)
    assert (k[2], k[5]) == (179.5, 319.5)
