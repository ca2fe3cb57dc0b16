"""The CLIP / SigLIP / SigLIP2 scoring path (aiv_models.embedding) on tiny trained checkpoints, offline.

Scores must be the reference's numbers (CLIP cosine, SigLIP sigmoid of the full model's ``logits_per_image``),
a view must cost one image forward with every text scored together, texts must be embedded once per episode,
over-length text must be handled as configured with one warning, and a tokenizer that cannot tell texts apart
or a directory that cannot be used must be refused at load with one line.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
from aiv_models.embedding import EmbeddingModel, TextCache
from aiv_models.local_weights import ModelDirError
from support.offline_models import limit_torch_threads, no_network  # noqa: F401 - fixture
from support.tiny_embedding import (
    THRESHOLDS,
    clip_dir_fixture,  # noqa: F401 - fixture clip_dir
    object_image,
    siglip2_dir_fixture,  # noqa: F401 - fixture siglip2_dir
    siglip_dir_fixture,  # noqa: F401 - fixture siglip_dir
)

pytestmark = pytest.mark.usefixtures("no_network")

FAMILIES = ("clip", "siglip", "siglip2")


@pytest.fixture
def model_dirs(request: pytest.FixtureRequest) -> dict[str, Path]:
    return {family: request.getfixturevalue(f"{family}_dir") for family in FAMILIES}


def _load(directory: Path, **kwargs: str) -> EmbeddingModel:
    limit_torch_threads()
    return EmbeddingModel.load(directory, device="cpu", **kwargs)


def _red_and_blue() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return object_image(rng, "red", (60, 90)), object_image(rng, "blue", (90, 60))


@pytest.mark.parametrize("family", FAMILIES)
def test_scores_follow_the_reference_formula_and_the_image(family: str, model_dirs: dict[str, Path]) -> None:
    import torch
    from PIL import Image

    model = _load(model_dirs[family])
    texts = ["a red object", "a blue object", ""]
    red, blue = _red_and_blue()
    embedded = model.encode_texts(texts)
    assert embedded.texts == ("a red object", "a blue object", "an object")  # empty text as the reference
    scores = model.score_image(red, embedded)

    # Direct computation with the full model forward, as the reference calls it (one pair at a time).
    processor, network = model.processor, model.model
    if family == "clip":
        text_kwargs: dict = {"padding": True}
    else:
        text_kwargs = {
            "padding": "max_length",
            "max_length": network.config.text_config.max_position_embeddings,
        }
    image_kwargs = {}
    if family == "siglip2":
        image_kwargs = {"max_num_patches": 16, "patch_size": 8}
    for text, score in zip(embedded.texts, scores, strict=True):
        inputs = processor(
            text=[text], images=[Image.fromarray(red)], return_tensors="pt", **text_kwargs, **image_kwargs
        )
        with torch.inference_mode():
            logits = network(**inputs).logits_per_image[0, 0]
            # CLIP: logits = exp(scale) * cosine; SigLIP: learned scale and bias inside logits_per_image.
            clip = family == "clip"
            expected = float(logits / network.logit_scale.exp()) if clip else float(torch.sigmoid(logits))
        assert score == pytest.approx(expected, abs=1e-5)

    # The image reaches the model: each colour's text wins on its own crop, across the threshold.
    threshold = THRESHOLDS[family]
    assert scores[0] > threshold > scores[1]
    blue_scores = model.score_image(blue, embedded)
    assert blue_scores[1] > threshold > blue_scores[0]


@pytest.mark.parametrize("family", FAMILIES)
def test_one_view_is_one_image_forward_and_all_texts_are_one_text_forward(
    family: str, model_dirs: dict[str, Path]
) -> None:
    model = _load(model_dirs[family])
    calls = {"text": 0, "vision": 0}
    model.model.text_model.register_forward_hook(lambda *_: calls.__setitem__("text", calls["text"] + 1))
    model.model.vision_model.register_forward_hook(
        lambda *_: calls.__setitem__("vision", calls["vision"] + 1)
    )
    cache = TextCache()
    embedded = model.encode_texts(["a red mug", "the red object", "a red object"], cache)
    assert calls == {"text": 1, "vision": 0}
    red, blue = _red_and_blue()
    model.score_image(red, embedded)
    model.score_image(blue, embedded)
    assert calls == {"text": 1, "vision": 2}
    # Asking again within the episode (same cache) embeds nothing; a new text alone is one more forward.
    model.encode_texts(["a red object", "a red mug"], cache)
    assert calls["text"] == 1
    model.encode_texts(["a blue object", "a red object"], cache)
    assert calls["text"] == 2 and len(cache) == 4
    # The per-item baseline of the benchmark: one forward per text.
    model.encode_texts(["a green object", "a green mug"], TextCache(), batched=False)
    assert calls["text"] == 4


def test_over_length_text_scores_zero_or_is_truncated_with_one_warning(
    clip_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    long_text = "a red object " * 40  # 120+ tokens; the tiny text model takes 77, as CLIP
    red, _ = _red_and_blue()
    reference = _load(clip_dir)
    with caplog.at_level(logging.WARNING, logger="aiv_models.embedding"):
        first = reference.score_image(red, reference.encode_texts(["a red object", long_text]))
        again = reference.score_image(red, reference.encode_texts([long_text]))
    # The reference's one call for the view's texts fails on the long one: every text scores 0.0.
    assert first == [0.0, 0.0] and again == [0.0]
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name == "aiv_models.embedding" and r.levelno >= logging.WARNING  # (another test may log INFO)
    ]
    assert len(warnings) == 1 and "as in the reference whose call fails" in warnings[0]

    per_text = _load(clip_dir, overlength="zero_text")  # not the reference: only the long text scores 0.0
    kept = per_text.score_image(red, per_text.encode_texts(["a red object", long_text]))
    assert kept[1] == 0.0 and kept[0] > THRESHOLDS["clip"]

    caplog.clear()
    truncating = _load(clip_dir, overlength="truncate")
    with caplog.at_level(logging.WARNING, logger="aiv_models.embedding"):
        cut = truncating.score_image(red, truncating.encode_texts([long_text]))
    assert cut[0] != 0.0 and cut[0] > THRESHOLDS["clip"]  # the first 77 tokens still say red
    assert len([r for r in caplog.records if "it is cut to 77 tokens" in r.getMessage()]) == 1


def _break_tokenizer(source: Path, target: Path) -> Path:
    """A copy of a CLIP checkpoint whose tokenizer knows no word: every text becomes unknown tokens."""
    from transformers import CLIPTokenizer

    shutil.copytree(source, target)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"):
        (target / name).unlink(missing_ok=True)
    CLIPTokenizer(vocab={"<|startoftext|>": 0, "<|endoftext|>": 1}, merges=[]).save_pretrained(target)
    return target


def test_a_tokenizer_that_maps_every_text_to_one_id_is_refused_and_would_blind_the_model(
    clip_dir: Path, tmp_path: Path
) -> None:
    broken = _break_tokenizer(clip_dir, tmp_path / "broken")
    with pytest.raises(ModelDirError, match="no distinct word tokens") as refused:
        _load(broken)
    assert "\n" not in str(refused.value)
    # Why the check exists: with such a tokenizer, "red" and "blue" score the same on any crop.
    good = _load(clip_dir)
    blind = EmbeddingModel(good.model, _processor_with(broken), good.identity, good.device, good.dtype)
    red, _ = _red_and_blue()
    scores = blind.score_image(red, blind.encode_texts(["a red object", "a blue object"]))
    assert scores[0] == pytest.approx(scores[1], abs=1e-6)


def _processor_with(directory: Path):
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(directory, local_files_only=True)


def test_unusable_directories_are_refused_with_one_line(clip_dir: Path, tmp_path: Path) -> None:
    pickled = tmp_path / "pickled"
    shutil.copytree(clip_dir, pickled)
    (pickled / "model.safetensors").rename(pickled / "pytorch_model.bin")
    cases = {
        "": "needs a local model directory (embedding.model_dir)",
        str(tmp_path / "missing"): "does not exist",
        str(pickled): "only pickle weights",
    }
    for path, message in cases.items():
        with pytest.raises(ModelDirError, match=r"embedding\.model_dir") as refused:
            EmbeddingModel.load(path)
        assert message in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ModelDirError, match="overlength"):
        EmbeddingModel.load(clip_dir, overlength="wrap")


def test_device_and_stage_latency_are_reported(clip_dir: Path) -> None:
    model = _load(clip_dir)
    red, _ = _red_and_blue()
    model.score_image(red, model.encode_texts(["a red object"]))
    assert "on cpu in float32" in model.describe() and str(clip_dir) in model.describe()
    assert set(model.times.seconds) == {
        "text_tokenize",
        "text_forward",
        "image_preprocess",
        "image_forward",
        "score",
    }
    assert model.text_forwards == 1 and model.image_forwards == 1


def test_weights_load_on_the_calling_thread(clip_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers' loader would convert tensors in a thread pool; a CI worker once hung for good inside it, so
    the package asks for the sequential loader (``HF_DEACTIVATE_ASYNC_LOAD``) unless the user set it."""
    import transformers.core_model_loading as loading

    monkeypatch.delenv("HF_DEACTIVATE_ASYNC_LOAD", raising=False)
    pools: list[object] = []

    class CountingPool(loading.ThreadPoolExecutor):  # type: ignore[name-defined,misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            pools.append(self)
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loading, "ThreadPoolExecutor", CountingPool)
    model = _load(clip_dir)
    assert model.encode_texts(["a red object"]).texts == ("a red object",)
    assert pools == []
