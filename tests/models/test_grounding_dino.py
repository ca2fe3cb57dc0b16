"""Grounding DINO from local weights: loading, refusals, and the detection → crop rules of spec §5.4.

A tiny random Grounding DINO is built from configs once per run and loaded back through the path a user's
checkpoint takes (``detector.model_dir`` → the factory → ``GroundingDinoDetector``). Random weights give random
boxes, so behaviour tests keep the whole pipeline real — processor, the model's forward, transformers'
post-processing, the project's crop — and replace only what the forward returns, through a forward hook, with
logits and boxes whose right answer is known (e.g. the box of a coloured square drawn into the frame).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiv_models.local_weights import ModelDirError, directory_fingerprint
from aiv_verifier.agent.factory import AgentFactory, ConfigError, build_detector
from aiv_verifier.agent.steps import ViewFrame
from aiv_verifier.core.crop import NO_BOX_CONFIDENCE, padded_box
from aiv_verifier.detection.base import BoxMode, crop_view
from aiv_verifier.detection.grounding_dino import GroundingDinoDetector, grounding_query
from support.offline_models import (  # noqa: F401 - no_network is a fixture
    NetworkAccessError,
    limit_torch_threads,
    no_network,
    shared_model_dir,
)

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.usefixtures("no_network")

Box = tuple[float, float, float, float]
#: Token ids Grounding DINO treats as separators ([CLS], [SEP], ".", "?"): never part of a phrase.
SEPARATOR_IDS = {0, 101, 102, 1012, 1029}


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random Grounding DINO checkpoint directory, built once per run (xdist workers share it)."""
    from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once

    return save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny"))


@pytest.fixture
def detector(tiny_dir: str) -> GroundingDinoDetector:
    limit_torch_threads()
    return GroundingDinoDetector.load(tiny_dir, device="cpu")


def _logit(probability: float) -> float:
    return math.log(probability / (1.0 - probability))


def _normalised(box: Box, width: int, height: int) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = box
    return ((x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height)


def force_output(
    detector: GroundingDinoDetector, boxes: Sequence[Box], scores: Sequence[float], size: tuple[int, int]
) -> Callable[[], list[str]]:
    """Make the model's forward return ``boxes`` (pixel xyxy in a ``size`` = (H, W) frame) with ``scores`` on
    every word token of the query; every other query scores ~0. Returns a getter of the captions the model saw.
    """
    height, width = size
    seen: list[str] = []

    def hook(_module: Any, _args: Any, kwargs: dict[str, Any], output: Any) -> Any:
        from transformers.models.grounding_dino.modeling_grounding_dino import (
            GroundingDinoObjectDetectionOutput,
        )

        input_ids = kwargs["input_ids"]
        seen.append(detector.processor.tokenizer.decode(input_ids[0], skip_special_tokens=True))
        queries, text_positions = output.logits.shape[1], input_ids.shape[1]
        logits = torch.full_like(output.logits, -math.inf)  # beyond the text: -inf, as the model does
        logits[:, :, :text_positions] = -30.0
        words = [i for i, token in enumerate(input_ids[0].tolist()) if token not in SEPARATOR_IDS]
        pred_boxes = torch.full_like(output.pred_boxes, 0.5)
        for query, (box, score) in enumerate(zip(boxes, scores, strict=True)):
            assert query < queries
            logits[0, query, words] = _logit(score)
            pred_boxes[0, query] = torch.tensor(_normalised(box, width, height))
        return GroundingDinoObjectDetectionOutput(logits=logits, pred_boxes=pred_boxes, input_ids=input_ids)

    handle = detector.model.register_forward_hook(hook, with_kwargs=True)
    _handles.append(handle)
    return lambda: list(seen)


_handles: list[Any] = []


@pytest.fixture(autouse=True)
def _remove_hooks() -> Iterator[None]:
    yield
    while _handles:
        _handles.pop().remove()


def frame_with_squares(
    size: tuple[int, int], squares: Sequence[tuple[Box, tuple[int, int, int]]]
) -> np.ndarray:
    image = np.full((*size, 3), 200, np.uint8)
    for (x1, y1, x2, y2), colour in squares:
        image[int(y1) : int(y2), int(x1) : int(x2)] = colour
    return image


# ---- loading -------------------------------------------------------------------------------------------


def test_loads_through_the_factory_with_identity_device_and_pil_processor(tiny_dir: str) -> None:
    limit_torch_threads()
    loaded = build_detector(
        {"detector": {"backend": "grounding_dino", "model_dir": tiny_dir, "device": "cpu"}}
    )
    assert isinstance(loaded, GroundingDinoDetector)
    assert loaded.identity.model_type == "grounding-dino"
    assert loaded.identity.fingerprint == directory_fingerprint(tiny_dir)
    assert str(loaded.device) == "cpu" and loaded.dtype == torch.float32
    assert type(loaded.processor.image_processor).__name__ == "GroundingDinoImageProcessorPil"
    assert len(loaded.processor.tokenizer) == loaded.model.config.text_config.vocab_size
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert loaded.model_calls == 0 and loaded.last_latency is None


def test_processor_and_forward_shapes(detector: GroundingDinoDetector) -> None:
    from PIL import Image

    inputs = detector.processor(
        images=Image.new("RGB", (640, 360)), text=grounding_query("Red Mug"), return_tensors="pt"
    )
    assert inputs["pixel_values"].shape == (1, 3, 64, 113)  # shortest edge 64, aspect ratio kept
    words = detector.processor.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    assert words == ["[CLS]", "red", "mug", ".", "[SEP]"]
    with torch.inference_mode():
        output = detector.model(**inputs)
    queries = detector.model.config.num_queries
    assert output.logits.shape == (1, queries, detector.model.config.max_text_len)
    assert output.pred_boxes.shape == (1, queries, 4)
    assert torch.isinf(output.logits[0, :, inputs["input_ids"].shape[1] :]).all()
    assert ((output.pred_boxes >= 0) & (output.pred_boxes <= 1)).all()


def test_random_model_detects_in_frame_pixels_and_times_every_stage(detector: GroundingDinoDetector) -> None:
    found = detector.detect_phrases(np.zeros((360, 640, 3), np.uint8), "mug")
    assert found, "the random tiny model scores most queries above 0.25"
    scores = [item.detection.score for item in found]
    assert scores == sorted(scores, reverse=True) and all(0.25 < s <= 1.0 for s in scores)
    for item in found:
        x1, y1, x2, y2 = item.detection.box_xyxy
        assert -640 < x1 < x2 < 2 * 640 and -360 < y1 < y2 < 2 * 360
    assert detector.model_calls == 1
    latency = detector.last_latency
    assert latency is not None and min(latency.as_dict().values()) > 0.0
    assert set(detector.stage_seconds) == {"preprocess", "forward", "postprocess"}


def test_bfloat16_weights_still_give_float_boxes(tiny_dir: str) -> None:
    limit_torch_threads()
    half = GroundingDinoDetector.load(tiny_dir, device="cpu", dtype="bfloat16")
    assert next(half.model.parameters()).dtype == torch.bfloat16
    force_output(half, [(100.0, 50.0, 300.0, 250.0)], [0.8], (360, 640))
    (found,) = half.detect(np.zeros((360, 640, 3), np.uint8), "mug")
    assert found.box_xyxy == pytest.approx((100.0, 50.0, 300.0, 250.0), abs=0.5)


# ---- behaviour on known forward outputs -----------------------------------------------------------------


@pytest.mark.parametrize("size", [(360, 640), (960, 1280)], ids=["360x640", "960x1280"])
def test_box_of_a_coloured_square_comes_back_in_pixels_and_is_cropped(
    detector: GroundingDinoDetector, size: tuple[int, int]
) -> None:
    height, width = size
    square: Box = (0.55 * width, 0.25 * height, 0.55 * width + 0.2 * height, 0.45 * height)
    image = frame_with_squares(size, [(square, (220, 20, 20))])
    force_output(detector, [square], [0.62], size)
    found = detector.detect_phrases(image, "red square")
    assert len(found) == 1
    assert found[0].detection.box_xyxy == pytest.approx(square, abs=1e-3 * width)
    assert found[0].detection.score == pytest.approx(0.62, abs=1e-5)
    assert found[0].phrase == "red square"
    crop, notes = crop_view(image, BoxMode.DETECTOR, detections=[found[0].detection])
    assert notes == [] and crop.confidence == pytest.approx(0.62, abs=1e-5)
    assert crop.box == padded_box(found[0].detection.box_xyxy, width, height)
    red = (crop.image[..., 0] > 150) & (crop.image[..., 1] < 100)
    assert red.mean() > 0.8  # the crop is the square (plus 3 px of background), upscaled


def test_box_threshold_keeps_scores_above_it_and_text_threshold_decides_the_phrase(tiny_dir: str) -> None:
    limit_torch_threads()
    size = (360, 640)
    boxes: list[Box] = [(10, 10, 110, 110), (200, 100, 300, 200), (400, 50, 600, 300)]
    strict = GroundingDinoDetector.load(tiny_dir, device="cpu", box_threshold=0.25, text_threshold=0.5)
    force_output(strict, boxes, [0.2, 0.3, 0.6], size)
    found = strict.detect_phrases(np.zeros((*size, 3), np.uint8), "blue box")
    assert [round(item.detection.score, 3) for item in found] == [0.6, 0.3]
    assert [item.phrase for item in found] == ["blue box", ""]  # 0.3 tokens are below the text threshold
    assert found[0].detection.box_xyxy == pytest.approx(boxes[2], abs=0.5)


def test_no_box_gives_the_full_image_with_confidence_0_1(detector: GroundingDinoDetector) -> None:
    image = np.zeros((360, 640, 3), np.uint8)
    force_output(detector, [(10, 10, 100, 100)], [0.1], (360, 640))
    assert detector.detect(image, "mug") == []
    crop, _ = crop_view(image, BoxMode.DETECTOR, detections=detector.detect(image, "mug"))
    assert crop.box is None and crop.confidence == NO_BOX_CONFIDENCE
    assert crop.image.shape == (512, 910, 3)


def test_highest_score_box_is_cropped_and_confidence_is_the_max_score(
    detector: GroundingDinoDetector,
) -> None:
    size = (360, 640)
    weak: Box = (40, 40, 140, 140)
    strong: Box = (400, 150, 520, 270)
    image = frame_with_squares(size, [(weak, (20, 20, 220)), (strong, (20, 200, 20))])
    force_output(detector, [weak, strong], [0.45, 0.71], size)
    detections = detector.detect(image, "box")
    assert [round(d.score, 3) for d in detections] == [0.71, 0.45]
    crop, _ = crop_view(image, BoxMode.DETECTOR, detections=detections)
    assert crop.confidence == pytest.approx(0.71, abs=1e-5)
    assert detections[0].box_xyxy == pytest.approx(strong, abs=0.5)
    assert crop.box == padded_box(detections[0].box_xyxy, 640, 360)


def test_session_in_detector_mode_queries_the_predicted_category_and_crops_its_box(tiny_dir: str) -> None:
    limit_torch_threads()
    config = {
        "agent": {"bbox_mode": "detector"},
        "detector": {"backend": "grounding_dino", "model_dir": tiny_dir, "device": "cpu"},
    }
    factory = AgentFactory.from_config(config)
    assert isinstance(factory.detector, GroundingDinoDetector)
    size = (360, 640)
    square: Box = (300, 120, 420, 240)
    captions = force_output(factory.detector, [square], [0.83], size)
    session = factory.new_session(
        ("a red mug with a white handle", "a red mug", "a small red mug"), episode_key="e0", max_steps=3
    )
    step = session.observe(
        ViewFrame(image=frame_with_squares(size, [(square, (220, 20, 20))]), step_count=0, current_sector=0)
    )
    category = session.query.category
    assert category and captions() == [grounding_query(category)]
    assert step.crop.box == pytest.approx(padded_box(square, 640, 360), abs=1)  # float round trip: ±1 px
    assert step.crop.confidence == pytest.approx(0.83, abs=1e-5)
    assert session.model_calls.get("detector") == 1 and session.clock.calls["detect"] == 1


# ---- refusals -------------------------------------------------------------------------------------------


def _copy(tiny_dir: str, tmp_path: Path) -> Path:
    target = tmp_path / "checkpoint"
    shutil.copytree(tiny_dir, target)
    return target


def _broken_dirs(tiny_dir: str, tmp_path: Path) -> dict[str, tuple[Path, str]]:
    cases: dict[str, tuple[Path, str]] = {"missing": (tmp_path / "nowhere", "does not exist")}
    incomplete = _copy(tiny_dir, tmp_path / "incomplete")
    (incomplete / "model.safetensors").unlink()
    cases["incomplete"] = (incomplete, "no *.safetensors")
    sharded = _copy(tiny_dir, tmp_path / "sharded")
    (sharded / "model.safetensors").rename(sharded / "model-00001-of-00002.safetensors")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (sharded / "model.safetensors.index.json").write_text(json.dumps(index))
    cases["missing-shard"] = (sharded, "model-00002-of-00002.safetensors")
    wrong = _copy(tiny_dir, tmp_path / "wrong")
    config = json.loads((wrong / "config.json").read_text())
    (wrong / "config.json").write_text(json.dumps({**config, "model_type": "clip"}))
    cases["wrong-kind"] = (wrong, "'clip'")
    pickled = _copy(tiny_dir, tmp_path / "pickled")
    (pickled / "model.safetensors").rename(pickled / "pytorch_model.bin")
    cases["pickle-only"] = (pickled, "pickle")
    no_processor = _copy(tiny_dir, tmp_path / "no-processor")
    (no_processor / "processor_config.json").unlink()
    cases["no-processor"] = (no_processor, "preprocessor_config.json")
    no_tokenizer = _copy(tiny_dir, tmp_path / "no-tokenizer")
    (no_tokenizer / "tokenizer.json").unlink()
    cases["no-tokenizer"] = (no_tokenizer, "tokenizer")
    return cases


@pytest.mark.parametrize(
    "case",
    ["missing", "incomplete", "missing-shard", "wrong-kind", "pickle-only", "no-processor", "no-tokenizer"],
)
def test_unusable_directory_is_refused_in_one_line_naming_the_path(
    tiny_dir: str, tmp_path: Path, case: str
) -> None:
    path, expected = _broken_dirs(tiny_dir, tmp_path)[case]
    with pytest.raises(ConfigError) as refused:
        build_detector({"detector": {"backend": "grounding_dino", "model_dir": str(path)}})
    message = str(refused.value)
    assert "\n" not in message and str(path) in message and expected in message
    assert "detector.model_dir" in message
    assert isinstance(refused.value.__cause__, ModelDirError)


def test_empty_model_dir_bad_device_and_missing_cuda_are_refused_in_one_line(tiny_dir: str) -> None:
    with pytest.raises(ConfigError, match=r"needs a local model directory \(detector.model_dir\)"):
        build_detector({"detector": {"backend": "grounding_dino"}})
    with pytest.raises(ModelDirError, match="'gpu0' is not a device"):
        GroundingDinoDetector.load(tiny_dir, device="gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(ModelDirError, match="no usable CUDA device"):
            GroundingDinoDetector.load(tiny_dir, device="cuda")


def test_tokenizer_that_maps_every_word_to_one_id_is_refused(tiny_dir: str, tmp_path: Path) -> None:
    from aiv_models.tiny.grounding_dino_checkpoint import make_tokenizer, make_vocab

    broken = _copy(tiny_dir, tmp_path)
    make_tokenizer(make_vocab(words=())).save_pretrained(broken)  # every word is [UNK]
    with pytest.raises(ModelDirError, match="maps every word") as refused:
        GroundingDinoDetector.load(str(broken), device="cpu")
    assert "\n" not in str(refused.value) and str(broken) in str(refused.value)


def test_network_is_blocked_and_nothing_tries_it(tiny_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[object] = []
    guarded_connect, guarded_lookup = socket.socket.connect, socket.getaddrinfo

    def counting_connect(self: socket.socket, address: object) -> None:
        attempts.append(address)
        guarded_connect(self, address)  # type: ignore[arg-type]

    def counting_lookup(host: object, *args: object, **kwargs: object) -> object:
        attempts.append(host)
        return guarded_lookup(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", counting_connect)
    monkeypatch.setattr(socket, "getaddrinfo", counting_lookup)
    with pytest.raises(NetworkAccessError):  # the no_network fixture is in force
        socket.create_connection(("192.0.2.1", 443), timeout=1)
    attempts.clear()
    limit_torch_threads()
    loaded = GroundingDinoDetector.load(tiny_dir, device="cpu")
    loaded.detect(np.zeros((120, 160, 3), np.uint8), "mug")
    assert attempts == []
