"""Tiny CLIP / SigLIP / SigLIP2 checkpoints that tell red from blue, trained once per test run.

A random model scores every crop alike, so a test would pass whether or not the image reaches the model. These
are trained (cross-entropy for CLIP, sigmoid BCE for SigLIP, AdamW lr 3e-3, batches of 12 fresh images) until
held-out images score above the family's threshold exactly for the matching colour text and below it for the
others, with a margin (docs/models.md: ~10 steps, under a second each). The fixture builds each
directory once per run under a file lock, so both xdist workers share it; tests load it through the product's
path (:class:`aiv_models.embedding.EmbeddingModel`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (205, 35, 30),
    "blue": (35, 60, 205),
    "green": (40, 170, 50),
}
TEMPLATES = ("a {} object", "a {} mug", "the {} object")
THRESHOLDS = {"clip": 0.25, "siglip": 0.5, "siglip2": 0.5}
MARGIN = 0.05
DONE_MARKER = "TRAINED"


def object_image(
    rng: np.random.Generator, colour: str | None, size: tuple[int, int] | None = None
) -> np.ndarray:
    """An object of ``colour`` (None: background only) filling most of a noisy grey frame, with a few small
    distractor squares; ``size`` = (width, height), random 24-160 px (sometimes up to 640) when None."""
    if size is None:
        top = 640 if rng.random() < 0.2 else 160
        size = (int(rng.integers(24, top)), int(rng.integers(24, top)))
    width, height = size
    grey = rng.integers(90, 170)
    image = np.clip(grey + rng.normal(0, 12, (height, width, 3)), 0, 255)
    if colour is not None:
        fw, fh = rng.uniform(0.55, 0.95, 2)
        x0 = int(rng.uniform(0, 1 - fw) * width)
        y0 = int(rng.uniform(0, 1 - fh) * height)
        x1, y1 = x0 + max(1, int(fw * width)), y0 + max(1, int(fh * height))
        base = np.array(COLOURS[colour], dtype=float) + rng.normal(0, 12, 3)
        image[y0:y1, x0:x1] = np.clip(base + rng.normal(0, 8, (y1 - y0, x1 - x0, 3)), 0, 255)
    for _ in range(int(rng.integers(0, 3))):
        side = max(1, int(min(width, height) * rng.uniform(0.05, 0.15)))
        x, y = int(rng.integers(0, max(1, width - side))), int(rng.integers(0, max(1, height - side)))
        image[y : y + side, x : x + side] = rng.integers(0, 255, 3)
    return image.astype(np.uint8)


def _texts() -> tuple[list[str], np.ndarray]:
    """Every template x colour text and each text's colour index."""
    names = list(COLOURS)
    texts = [template.format(colour) for template in TEMPLATES for colour in names]
    return texts, np.array([names.index(text.split()[1]) for text in texts])


def _pooled(output: Any) -> Any:
    pooled = getattr(output, "pooler_output", None)
    return output if pooled is None else pooled


def _features(model: Any, processor: Any, family: str, images: list[np.ndarray], texts: list[str]) -> Any:
    """Normalised image and text features, prepared exactly as aiv_models.embedding prepares them."""
    import torch
    from PIL import Image

    if family == "clip":
        text_kwargs: dict[str, Any] = {"padding": True}
    else:
        text_kwargs = {
            "padding": "max_length",
            "max_length": model.config.text_config.max_position_embeddings,
        }
    image_kwargs: dict[str, Any] = {}
    if family == "siglip2":
        image_kwargs = {
            "max_num_patches": processor.image_processor.max_num_patches,
            "patch_size": processor.image_processor.patch_size,
        }
    text_inputs = processor.tokenizer(texts, return_tensors="pt", **text_kwargs)
    pictures = [Image.fromarray(image).convert("RGB") for image in images]
    image_inputs = processor.image_processor(pictures, return_tensors="pt", **image_kwargs)
    image_features = torch.nn.functional.normalize(_pooled(model.get_image_features(**image_inputs)), dim=-1)
    text_features = torch.nn.functional.normalize(_pooled(model.get_text_features(**text_inputs)), dim=-1)
    return image_features, text_features


def _scores(model: Any, family: str, cosine: Any) -> Any:
    import torch

    if family == "clip":
        return cosine
    return torch.sigmoid(cosine * model.logit_scale.exp() + model.logit_bias)


def separates(model: Any, processor: Any, family: str, seed: int = 1234, count: int = 30) -> bool:
    """Whether every held-out image scores above threshold + margin for each text of its colour and below
    threshold - margin for every other text."""
    import torch

    rng = np.random.default_rng(seed)
    names = list(COLOURS)
    colours = [names[i % len(names)] for i in range(count)]
    texts, text_colour = _texts()
    with torch.inference_mode():
        images, features = _features(model, processor, family, [object_image(rng, c) for c in colours], texts)
        scores = _scores(model, family, images @ features.T).numpy()
    threshold = THRESHOLDS[family]
    match = np.array([names.index(c) for c in colours])[:, None] == text_colour[None, :]
    return bool((scores[match] > threshold + MARGIN).all() and (scores[~match] < threshold - MARGIN).all())


def train_tiny(model: Any, processor: Any, family: str, *, seed: int = 0, max_steps: int = 300) -> int:
    """Train until :func:`separates` holds (checked every 5 steps); returns the steps taken."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    names = list(COLOURS)
    texts, text_colour = _texts()
    labels_of_text = torch.as_tensor(text_colour)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(1, max_steps + 1):
        model.train()
        colours = [names[i % len(names)] for i in range(12)]
        image_labels = torch.as_tensor([names.index(c) for c in colours])
        images, features = _features(model, processor, family, [object_image(rng, c) for c in colours], texts)
        cosine = images @ features.T
        target = (image_labels[:, None] == labels_of_text[None, :]).float()
        if family == "clip":
            threshold = THRESHOLDS["clip"]
            logits = cosine * model.logit_scale.exp()
            loss = sum(
                torch.nn.functional.cross_entropy(
                    logits[:, t * len(names) : (t + 1) * len(names)], image_labels
                )
                for t in range(len(TEMPLATES))
            )
            # Cross-entropy only ranks the texts; the verdict needs the cosine itself across 0.25.
            hinge = torch.relu(threshold + 2 * MARGIN - cosine) * target
            hinge = hinge + torch.relu(cosine - threshold + 2 * MARGIN) * (1 - target)
            loss = loss + hinge.mean() * 10
        else:
            logits = cosine * model.logit_scale.exp() + model.logit_bias
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 5 == 0:
            model.eval()
            if separates(model, processor, family):
                return step
    raise AssertionError(f"tiny {family} did not learn red / blue / green in {max_steps} steps")


def build_trained_dir(
    directory: str | os.PathLike[str], family: str, seed: int = 0, *, patch_size: int | None = None
) -> Path:
    """Build, train and save a tiny ``family`` checkpoint into ``directory`` (idempotent: a finished directory
    is reused); ``patch_size`` 16 gives SigLIP2 its processor's default patches (16 px, up to 256)."""
    import torch
    from aiv_models.tiny.embedding_checkpoints import save_model_dir, tiny_embedding_model

    from support.offline_models import limit_torch_threads

    target = Path(directory)
    if (target / DONE_MARKER).is_file():
        return target
    limit_torch_threads()
    torch.manual_seed(seed)
    model, processor = tiny_embedding_model(family, patch_size=patch_size)
    steps = train_tiny(model, processor, family, seed=seed)
    model.eval()
    save_model_dir(model, processor, target)
    (target / DONE_MARKER).write_text(f"{steps} steps\n", encoding="utf-8")
    return target


def shared_trained_dir(tmp_path_factory: Any, family: str, *, patch_size: int | None = None) -> Path:
    """The run-wide trained tiny ``family`` directory, built by whichever xdist worker gets the lock first."""
    from filelock import FileLock

    from support.offline_models import shared_model_dir

    name = f"embedding-{family}" + (f"-p{patch_size}" if patch_size else "")
    directory, lock = shared_model_dir(tmp_path_factory, name)
    with FileLock(lock):
        return build_trained_dir(directory, family, patch_size=patch_size)


try:
    import pytest

    @pytest.fixture(scope="session", name="clip_dir")
    def clip_dir_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A trained tiny CLIP checkpoint directory (once per run)."""
        return shared_trained_dir(tmp_path_factory, "clip")

    @pytest.fixture(scope="session", name="siglip_dir")
    def siglip_dir_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A trained tiny SigLIP checkpoint directory (once per run)."""
        return shared_trained_dir(tmp_path_factory, "siglip")

    @pytest.fixture(scope="session", name="siglip2_dir")
    def siglip2_dir_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A trained tiny SigLIP2 checkpoint directory (once per run)."""
        return shared_trained_dir(tmp_path_factory, "siglip2")

    @pytest.fixture(scope="session", name="siglip2_p16_dir")
    def siglip2_p16_dir_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A trained tiny SigLIP2 at its processor's default patches (16 px, up to 256), as real checkpoints."""
        return shared_trained_dir(tmp_path_factory, "siglip2", patch_size=16)

except ImportError:  # pragma: no cover - pytest is always present where fixtures are used
    pass
