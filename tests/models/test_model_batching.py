"""Batched detector and embedding forwards (``detector.max_batch``, ``embedding.max_batch``) answer as one at a time.

Grounding DINO: the raw logits and boxes of frames run together equal those of each frame run alone within
:data:`DETECTOR_TOLERANCE` (float32; measured ~4e-6 in the logits, 0 in the boxes), frames of different content
and of two sizes; frames of different preprocessed sizes never share a forward, because the processor's padding
changes a smaller frame's answer by whole units (checked below, so the day transformers' backbone honours the
pixel mask this test says so). CLIP, SigLIP and SigLIP2: the scores of crops embedded together equal one-at-a-time
scores within :data:`EMBEDDING_TOLERANCE` (measured ~6e-8). Sessions stepped in lockstep on threads share one
forward per step and give the same steps as sessions run one after another; a whole in-process run with episodes
in flight and batching writes the same records. A failed batched forward fails every request in it, each counted
by its caller, and the batcher goes on serving.

The tiny models are the tests' own (docs/models.md): the embedding ones trained to tell colours apart (so
scores depend on the crop), Grounding DINO untrained (its outputs still depend on the frame, which a guard below
checks, so equal outputs are not the equality of constants).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from aiv_eval.run.in_flight import LockedDetector, in_flight_problem, shared_detector
from aiv_eval.run.in_process import run_in_process
from aiv_models.embedding import EmbeddingModel, TextCache
from aiv_verifier.agent.embedding import EMBEDDING_FAILED, EmbeddingAgent
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.agent.steps import ViewFrame
from aiv_verifier.detection.base import BoxMode
from aiv_verifier.detection.grounding_dino import GroundingDinoDetector
from aiv_verifier.detector_worker import NewestOnly
from aiv_verifier.model_config import EmbeddingParams
from aiv_verifier.query.types import QueryMode, QuerySpec
from support.embedding_episodes import colour_dataset, colour_spec
from support.offline_models import limit_torch_threads, no_network, shared_model_dir  # noqa: F401 - fixture
from support.tiny_embedding import (
    clip_dir_fixture,  # noqa: F401 - fixture clip_dir
    object_image,
    siglip2_dir_fixture,  # noqa: F401 - fixture siglip2_dir
    siglip_dir_fixture,  # noqa: F401 - fixture siglip_dir
)

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.usefixtures("no_network")

#: Largest difference allowed between a batched and a single-frame Grounding DINO output (logits and normalised
#: boxes, float32).
DETECTOR_TOLERANCE = 1e-4
#: Largest difference allowed between a batched and a one-at-a-time embedding score (float32).
EMBEDDING_TOLERANCE = 1e-5
#: Upper bound on a batch's gathering window in tests where the batch fills by itself (it is never waited out).
LONG_WINDOW_S = 60.0

T = TypeVar("T")


def on_threads(calls: Sequence[Callable[[], T]]) -> list[T | BaseException]:
    """Run each call on its own thread; results (or the exception raised) in call order."""
    results: list[T | BaseException] = [RuntimeError("not run")] * len(calls)

    def run(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as error:  # the caller inspects it
            results[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


# ---- Grounding DINO ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tiny_dino(tmp_path_factory: pytest.TempPathFactory) -> str:
    from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once

    return save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny"))


def _dino(directory: str, **options: Any) -> GroundingDinoDetector:
    limit_torch_threads()
    return GroundingDinoDetector.load(directory, device="cpu", dtype="float32", **options)


def _frames(sizes: Sequence[tuple[int, int]], seed: int = 7) -> list[np.ndarray]:
    """Frames of different content: noise plus a coloured block at a different place in each."""
    rng = np.random.default_rng(seed)
    frames = []
    for index, (height, width) in enumerate(sizes):
        image = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
        x, y = 40 + 60 * index, 30 + 20 * index
        image[y : y + height // 3, x : x + width // 4] = rng.integers(0, 255, 3, dtype=np.uint8)
        frames.append(image)
    return frames


def _finite(logits: Any) -> Any:
    """The text positions a frame's logits use (the others are -inf for every frame)."""
    return logits[torch.isfinite(logits)]


def test_batched_logits_and_boxes_equal_single_frames(tiny_dino: str) -> None:
    detector = _dino(tiny_dino)
    frames = [detector.prepare(image, "red mug") for image in _frames([(360, 640)] * 4)]
    assert len({frame.group for frame in frames}) == 1
    together = detector.forward(frames)
    assert together.logits.shape[0] == 4 and detector.forwards == 1
    alone = [detector.forward([frame]) for frame in frames]
    for index, single in enumerate(alone):
        assert _finite(together.logits[index] - single.logits[0]).abs().max().item() <= DETECTOR_TOLERANCE
        assert (together.pred_boxes[index] - single.pred_boxes[0]).abs().max().item() <= DETECTOR_TOLERANCE
    # Guard: the outputs depend on the frame, so the equality above is not that of constants.
    spread = (alone[0].logits[0] - alone[1].logits[0])[torch.isfinite(alone[0].logits[0])].abs().max()
    assert spread.item() > 100 * DETECTOR_TOLERANCE


def test_padding_frames_of_another_size_would_change_the_answer(tiny_dino: str) -> None:
    """Why frames of different preprocessed sizes never share a forward: padded to the larger frame (the
    processor's pixel_mask notwithstanding), a frame's logits move far beyond rounding."""
    from PIL import Image

    detector = _dino(tiny_dino)
    small, large = _frames([(360, 640), (400, 900)])
    pictures = [Image.fromarray(small), Image.fromarray(large)]
    padded = detector.processor(images=pictures, text=["mug."] * 2, return_tensors="pt")
    alone = detector.processor(images=pictures[:1], text=["mug."], return_tensors="pt")
    assert padded["pixel_values"].shape[-1] > alone["pixel_values"].shape[-1]
    assert not bool(padded["pixel_mask"][0].all())  # the small frame is padded and masked
    with torch.inference_mode():
        batched, single = detector.model(**padded), detector.model(**alone)
    moved = _finite(batched.logits[0] - single.logits[0]).abs().max().item()
    assert moved > 1000 * DETECTOR_TOLERANCE
    frames = [detector.prepare(image, "mug") for image in (small, large)]
    assert frames[0].group != frames[1].group
    with pytest.raises(ValueError, match="share their caption and preprocessed size"):
        detector.forward(frames)


def test_concurrent_detect_calls_share_forwards_per_size_and_answer_as_alone(tiny_dino: str) -> None:
    sizes = [(360, 640), (480, 640)] * 3  # two preprocessed sizes, three frames each
    images = _frames(sizes)
    reference = _dino(tiny_dino)
    expected = [reference.detect_phrases(image, "red mug") for image in images]
    assert reference.forwards == 6 and any(expected)
    batched = _dino(tiny_dino, max_batch=3, batch_window_s=LONG_WINDOW_S)
    results = on_threads([lambda image=image: batched.detect_phrases(image, "red mug") for image in images])
    assert batched.forwards == 2 and batched.model_calls == 6  # one forward per size, each full
    assert batched.describe()["forwards"] == "2" and batched.describe()["max_batch"] == "3"
    for got, want in zip(results, expected, strict=True):
        assert not isinstance(got, BaseException)
        assert [item.phrase for item in got] == [item.phrase for item in want]
        for found, alone in zip(got, want, strict=True):
            assert found.detection.score == pytest.approx(alone.detection.score, abs=DETECTOR_TOLERANCE)
            assert found.detection.box_xyxy == pytest.approx(alone.detection.box_xyxy, abs=0.01)
    assert batched.last_latency is not None and batched.last_latency.batch == 3


def test_the_nodes_batch_call_keeps_frame_order_across_sizes(tiny_dino: str) -> None:
    images = _frames([(360, 640), (480, 640), (360, 640), (480, 640), (360, 640)])
    reference = _dino(tiny_dino)
    expected = [reference.detect_phrases(image, "mug") for image in images]
    detector = _dino(tiny_dino, max_batch=2)
    results = detector.detect_phrases_batch(images, "mug")
    assert detector.forwards == 3  # three frames of one size in batches of at most 2, two of the other
    assert [latency.batch for _, latency in results] == [2, 2, 2, 2, 1]
    for (found, _), want in zip(results, expected, strict=True):
        assert [item.detection.score for item in found] == pytest.approx(
            [item.detection.score for item in want], abs=DETECTOR_TOLERANCE
        )


def test_a_failed_batched_forward_fails_every_frame_and_the_next_batch_runs(tiny_dino: str) -> None:
    detector = _dino(tiny_dino, max_batch=3, batch_window_s=LONG_WINDOW_S)

    def broken(*_: object) -> None:
        raise RuntimeError("out of device memory")

    handle = detector.model.register_forward_pre_hook(broken)
    images = _frames([(360, 640)] * 3)
    try:
        results = on_threads([lambda image=image: detector.detect(image, "mug") for image in images])
    finally:
        handle.remove()
    assert all(
        isinstance(result, RuntimeError) and "out of device memory" in str(result) for result in results
    )
    assert detector.forwards == 0 and detector.model_calls == 0
    results = on_threads([lambda image=image: detector.detect(image, "mug") for image in images])
    assert not any(isinstance(result, BaseException) for result in results)
    assert detector.forwards == 1 and detector.model_calls == 3


def test_batching_parameters_are_refused_in_one_line(tiny_dino: str) -> None:
    with pytest.raises(ValueError, match=r"detector\.max_batch = 0"):
        _dino(tiny_dino, max_batch=0)
    with pytest.raises(ValueError, match=r"detector\.batch_window_s = -1"):
        _dino(tiny_dino, batch_window_s=-1.0)


def test_the_node_mailbox_keeps_the_newest_frames_up_to_its_batch() -> None:
    mailbox = NewestOnly(3)
    for frame in range(5):
        mailbox.put(frame)
    assert mailbox.dropped == 2
    assert mailbox.take_all(3, 0.0) == [2, 3, 4]
    mailbox.put_if_empty("again")
    mailbox.put_if_empty("not this")
    assert mailbox.take_all(3, 0.0) == ["again"]
    one = NewestOnly()
    one.put("old")
    one.put("new")
    assert one.take() == "new" and one.dropped == 1
    one.close()
    assert one.take() is None and one.take_all(3, 0.0) == []


def test_a_thread_safe_detector_is_shared_as_it_is(tiny_dino: str) -> None:
    detector = _dino(tiny_dino)
    assert shared_detector(detector, 4) is detector
    assert shared_detector(None, 4) is None

    class Plain:
        name = "plain"
        model_calls = 0

        def detect(self, image: np.ndarray, text: str) -> list[Any]:
            return []

    assert isinstance(shared_detector(Plain(), 4), LockedDetector)  # type: ignore[arg-type]


# ---- CLIP / SigLIP / SigLIP2 -----------------------------------------------------------------------------


FAMILIES = ("clip", "siglip", "siglip2")


def _crops(count: int, seed: int = 3) -> list[np.ndarray]:
    """Crops of different colours and sizes (24 to 640 px)."""
    rng = np.random.default_rng(seed)
    colours = ("red", "blue", "green", None)
    sizes = [(512, 512), (40, 90), (640, 200), (33, 33), (300, 480), (128, 64), (24, 600), (200, 200)]
    return [object_image(rng, colours[index % 4], sizes[index % len(sizes)]) for index in range(count)]


def _model(directory: Path, **options: Any) -> EmbeddingModel:
    limit_torch_threads()
    return EmbeddingModel.load(directory, device="cpu", dtype="float32", **options)


@pytest.mark.parametrize("family", FAMILIES)
def test_crops_embedded_together_score_as_one_at_a_time(request: pytest.FixtureRequest, family: str) -> None:
    model = _model(request.getfixturevalue(f"{family}_dir"))
    texts = model.encode_texts(["a red mug", "a blue object", "the green object"], TextCache())
    crops = _crops(8)
    prepared = [model.prepare_image(crop) for crop in crops]
    assert len({item.group for item in prepared}) == 1  # every crop has one input shape, whatever its size
    together = model.encode_images(prepared)
    assert model.image_forwards == 1
    alone = [model.score_image(crop, texts) for crop in crops]
    batched = [model.score_features(together[i : i + 1], texts) for i in range(len(crops))]
    assert np.abs(np.array(batched) - np.array(alone)).max() <= EMBEDDING_TOLERANCE
    # Guard: the trained model's scores follow the crop (red crops favour the red text, and so on).
    assert np.ptp(np.array(alone), axis=0).min() > 100 * EMBEDDING_TOLERANCE


@pytest.mark.parametrize("family", ["clip", "siglip2"])
def test_concurrent_score_calls_share_one_forward(request: pytest.FixtureRequest, family: str) -> None:
    directory = request.getfixturevalue(f"{family}_dir")
    reference = _model(directory)
    model = _model(directory, max_batch=4, batch_window_s=LONG_WINDOW_S)
    texts = model.encode_texts(["a red mug", "a blue object"], TextCache())
    crops = _crops(4, seed=11)
    results = on_threads([lambda crop=crop: model.score_image(crop, texts) for crop in crops])
    assert model.image_forwards == 1
    expected = [reference.score_image(crop, texts) for crop in crops]
    assert np.abs(np.array(results, dtype=float) - np.array(expected)).max() <= EMBEDDING_TOLERANCE


def _agent(directory: Path, **params: Any) -> EmbeddingAgent:
    limit_torch_threads()
    settings = AgentSettings(kind="clip", bbox_mode=BoxMode.GT)
    return EmbeddingAgent.from_params("clip", EmbeddingParams(model_dir=str(directory), **params), settings)


def _query(colour: str) -> QuerySpec:
    texts = (f"a {colour} mug", f"the {colour} object", f"a {colour} object")
    return QuerySpec(texts, QueryMode.DIRECT, "mug", "hint", (), "descriptions")


def _frame(episode: int, step: int, sector: int) -> ViewFrame:
    rng = np.random.default_rng(1000 * episode + step)
    image = object_image(rng, None, (96, 96))
    image[20:76, 20:76] = object_image(rng, ("red", "blue")[(episode + step) % 2], (56, 56))
    return ViewFrame(image=image, step_count=step, current_sector=sector, gt_box=(20.0, 20.0, 76.0, 76.0))


SESSIONS = (("red", "a"), ("blue", "b"), ("red", "c"), ("blue", "d"))
STEPS = 3


def _play(agent: EmbeddingAgent, index: int, before_step: Callable[[], object] = lambda: None) -> list[Any]:
    colour, key = SESSIONS[index]
    session = agent.new_session(_query(colour), episode_key=key, max_steps=STEPS)
    steps, sector = [], 0
    for step in range(STEPS):
        before_step()
        taken = session.observe(_frame(index, step, sector))
        steps.append(taken)
        sector = taken.move.target_index if taken.move is not None else sector
    return [session.model_calls, session.effective_view_scores, steps]


def test_sessions_in_lockstep_share_a_forward_per_step_and_match_sessions_one_after_another(
    clip_dir: Path,
) -> None:
    sequential = _agent(clip_dir)
    expected = [_play(sequential, index) for index in range(len(SESSIONS))]
    assert sequential.model.image_forwards == len(SESSIONS) * STEPS
    batched = _agent(clip_dir, max_batch=len(SESSIONS), batch_window_s=LONG_WINDOW_S)
    barrier = threading.Barrier(len(SESSIONS))
    results = on_threads(
        [lambda index=index: _play(batched, index, barrier.wait) for index in range(len(SESSIONS))]
    )
    assert batched.model.image_forwards == STEPS  # the four sessions' crops of a step in one forward
    for got, want in zip(results, expected, strict=True):
        assert not isinstance(got, BaseException)
        calls, scores, steps = got
        assert calls == want[0] == {"embedding_image": STEPS, "embedding_text": 1}
        assert scores == pytest.approx(want[1], abs=EMBEDDING_TOLERANCE)
        for step, alone in zip(steps, want[2], strict=True):
            assert (step.decision, step.step_prediction, step.stop_reason) == (
                alone.decision,
                alone.step_prediction,
                alone.stop_reason,
            )
            assert (step.move.direction if step.move else None) == (
                alone.move.direction if alone.move else None
            )
            assert [row.last_answer for row in step.attributes] == [
                row.last_answer for row in alone.attributes
            ]


def test_a_failed_batched_forward_fails_each_sessions_call(clip_dir: Path) -> None:
    agent = _agent(clip_dir, max_batch=3, batch_window_s=LONG_WINDOW_S)

    def broken(*_: object) -> None:
        raise RuntimeError("device lost")

    handle = agent.model.model.vision_model.register_forward_pre_hook(broken)
    sessions = [agent.new_session(_query("red"), episode_key=f"f{i}", max_steps=2) for i in range(3)]
    try:
        results = on_threads([lambda i=i: sessions[i].observe(_frame(i, 0, 0)) for i in range(len(sessions))])
    finally:
        handle.remove()
    assert all(isinstance(result, RuntimeError) and "device lost" in str(result) for result in results)
    assert all(session.model_calls.get(EMBEDDING_FAILED) == 1 for session in sessions)
    assert all("embedding_image" not in session.model_calls for session in sessions)
    assert agent.model.image_forwards == 0
    # The batcher keeps serving: the next calls run.
    fresh = [agent.new_session(_query("red"), episode_key=f"g{i}", max_steps=2) for i in range(3)]
    results = on_threads([lambda i=i: fresh[i].observe(_frame(i, 0, 0)) for i in range(len(fresh))])
    assert not any(isinstance(result, BaseException) for result in results)
    assert agent.model.image_forwards == 1


@pytest.fixture(scope="module")
def colour_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return colour_dataset(tmp_path_factory.mktemp("colours"))


def _records(run_dir: Path) -> Iterator[dict[str, Any]]:
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("run_id")  # a batched run is a run of its own (its identity names max_batch)
        yield record


def test_episodes_in_flight_with_batching_write_the_records_of_one_at_a_time(
    tmp_path: Path, colour_root: Path, clip_dir: Path
) -> None:
    assert in_flight_problem(4, "clip", "inprocess") is None
    assert in_flight_problem(4, "siglip", "inprocess") is None
    quiet = "evaluator.save_crops=false"
    alone = run_in_process(colour_spec(tmp_path, colour_root, clip_dir, "alone", quiet)).run_dir
    in_flight = run_in_process(
        colour_spec(tmp_path, colour_root, clip_dir, "flight", quiet, "evaluator.episodes_in_flight=4")
    ).run_dir
    assert (alone / "results.jsonl").read_bytes() == (in_flight / "results.jsonl").read_bytes()
    batched = run_in_process(
        colour_spec(
            tmp_path,
            colour_root,
            clip_dir,
            "batched",
            quiet,
            "evaluator.episodes_in_flight=4",
            "verifier.embedding.max_batch=4",
            "verifier.embedding.batch_window_s=0.05",
        )
    ).run_dir
    expected = list(_records(alone))
    assert [record["status"] for record in expected] == ["ok"] * 4
    assert list(_records(batched)) == expected


def test_the_batcher_takes_requests_that_cannot_be_compared() -> None:
    """Requests are tensors and arrays, whose ``==`` is elementwise: the queue must remove its own entries by
    identity (comparing them raised inside the worker, which then served nothing more)."""
    from aiv_models.batching import RequestBatcher

    batcher: RequestBatcher[np.ndarray, float] = RequestBatcher(
        lambda arrays, _group: [float(array.sum()) for array in arrays], max_batch=3, window_s=LONG_WINDOW_S
    )
    arrays = [np.full(4, index, dtype=float) for index in range(3)]
    results = on_threads([lambda array=array: batcher.submit(array) for array in arrays])
    assert results == [0.0, 4.0, 8.0] and batcher.stats.batches == 1
