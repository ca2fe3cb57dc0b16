"""A tiny Qwen2.5-VL trained once per test session to judge colours, so VLM tests check behaviour, not only shapes.

A random model answers garbage, and a test on garbage passes whether or not the image reaches the model
(docs/models.md). This module builds the real architecture at toy size (aiv_models.tiny.qwen_vl_checkpoint) and
trains it on CPU, with teacher forcing on the project's real verification prompts, to answer ``{"answer": "Yes"}``
when the crop's object has the colour (red or blue) the prompt asks about and ``{"answer": "No"}`` otherwise.
Training stops on a greedy-generate check over held-out images (not a fixed step count); ~30-40 s on one core.

The session fixture :func:`tiny_vlm_dir` trains it once per run: xdist workers share the directory through
``shared_model_dir`` and a file lock, and a finished directory carries a ``TRAINED`` marker.

Scenes: an object (ellipse or rectangle) of one of :data:`COLOURS` filling most of the frame, on a grey or noisy
background with small distractor shapes of other colours, 64-640 px, so the 512-px crops the agent sends are in
distribution (the processor also caps every image at 112×112 pixels).
"""

from __future__ import annotations

import functools
import os
import random
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from filelock import FileLock

from support.offline_models import limit_torch_threads, shared_model_dir

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (205, 30, 35),
    "blue": (35, 60, 210),
}
CATEGORIES = ("mug", "bag", "ball", "hat", "book", "toy")
YES = '{"answer": "Yes"}'
NO = '{"answer": "No"}'
MARKER = "TRAINED"
MAX_STEPS = 1500
CHECK_EVERY = 25
LEARNING_RATE = 1.5e-3
#: Curriculum: while red dominates both the images and the questions, "Yes" correlates with each cue alone, so
#: the model first learns to read the image colour and the asked colour, and then their match. On balanced data
#: the answer is an XOR of the two cues and training sits on a plateau (measured), so the share of red eases
#: from 0.85 to 0.65 and stays there: the label is a function of both cues, so the skew does not bias the
#: learned rule; the held-out check is on balanced data.
SKEW_START, SKEW_END, SKEW_STEPS = 0.85, 0.65, 300


def p_red(step: int) -> float:
    return max(SKEW_END, SKEW_START - (SKEW_START - SKEW_END) * step / SKEW_STEPS)


def scene(rng: random.Random, colour: str, size: tuple[int, int] | None = None) -> np.ndarray:
    """An H×W×3 image of one object of ``colour`` with small distractors of other colours."""
    width, height = size or (rng.randint(64, 640), rng.randint(64, 640))
    if rng.random() < 0.5:
        grey = rng.randint(90, 200)
        image = np.full((height, width, 3), grey, np.uint8)
    else:
        image = np.asarray(
            np.random.default_rng(rng.randint(0, 2**31)).integers(60, 200, (height, width, 3)), np.uint8
        )
    ys, xs = np.mgrid[0:height, 0:width]
    others = [name for name in COLOURS if name != colour]
    for _ in range(rng.randint(0, 3)):
        cx, cy, r = (
            rng.uniform(0, width),
            rng.uniform(0, height),
            rng.uniform(0.03, 0.08) * min(width, height),
        )
        image[(xs - cx) ** 2 + (ys - cy) ** 2 < r * r] = COLOURS[rng.choice(others)]
    cx, cy = width * rng.uniform(0.4, 0.6), height * rng.uniform(0.4, 0.6)
    rx, ry = width * rng.uniform(0.25, 0.45), height * rng.uniform(0.25, 0.45)
    if rng.random() < 0.5:
        mask = ((xs - cx) / rx) ** 2 + ((ys - cy) / ry) ** 2 < 1.0
    else:
        mask = (abs(xs - cx) < rx) & (abs(ys - cy) < ry)
    jitter = np.array([rng.randint(-20, 20) for _ in range(3)])
    image[mask] = np.clip(np.array(COLOURS[colour]) + jitter, 0, 255).astype(np.uint8)
    return image


def prompt_for(rng: random.Random, asked: str) -> str:
    """A real verification prompt (attribute or description template) asking about colour ``asked``."""
    from aiv_verifier.core.types import Attribute
    from aiv_verifier.verification.base import ViewInput
    from aiv_verifier.verification.mllm import attribute_prompt

    category = rng.choice(CATEGORIES)
    descriptions = (f"a {asked} {category}", f"the {asked} {category}", f"{asked} {category}")
    view = ViewInput(
        np.zeros((1, 1, 3), np.uint8), np.zeros((1, 1, 3), np.uint8), None, 1.0, category, descriptions
    )
    if rng.random() < 0.75:
        name = rng.choice(("color", "color", f"{category}_color", "body_color"))
        item = Attribute(name, "color", 2, asked)
    else:
        item = Attribute(f"desc_{rng.randint(1, 3)}", "other", 2, rng.choice(descriptions))
    return attribute_prompt(_verify_prompts(), view, item)


@functools.lru_cache(maxsize=1)
def _verify_prompts() -> Any:
    from aiv_verifier.verification.mllm import VerifyPrompts

    return VerifyPrompts.load()


def example(rng: random.Random, p_red: float = 0.5) -> tuple[np.ndarray, str, str]:
    """(image, prompt, answer): object colour and asked colour drawn independently, red with ``p_red``."""
    colour = "red" if rng.random() < p_red else "blue"
    asked = "red" if rng.random() < p_red else "blue"
    return scene(rng, colour), prompt_for(rng, asked), YES if asked == colour else NO


def corpus(rng: random.Random, count: int = 60) -> list[str]:
    return [prompt_for(rng, rng.choice(list(COLOURS))) for _ in range(count)]


def train_tiny_vlm(directory: Path, seed: int = 0) -> Path:
    """Build, train until the held-out greedy check passes, and save into ``directory``."""
    import torch
    from aiv_models.chat.local import LocalChatTransport
    from aiv_models.chat.types import ChatRequest
    from aiv_models.tiny.qwen_vl_checkpoint import build_tiny_qwen_vl, save_tiny_qwen_vl

    limit_torch_threads()
    rng = random.Random(seed)
    build_tiny_qwen_vl(directory, family="qwen2_5_vl", corpus=corpus(rng), hidden=64, seed=seed)
    transport = LocalChatTransport(directory, device="cpu", dtype="float32")
    model, processor = transport.model, transport.processor
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    held_out = [example(random.Random(10_000 + i)) for i in range(32)]
    answer_ids = {text: processor.tokenizer(text + "<|im_end|>")["input_ids"] for text in (YES, NO)}
    for step in range(1, MAX_STEPS + 1):
        batch = [example(rng, p_red(step)) for _ in range(8)]
        texts = [
            processor.apply_chat_template(
                transport.messages(ChatRequest(prompt, (image,))), add_generation_prompt=True, tokenize=False
            )
            + answer
            + "<|im_end|>"
            for image, prompt, answer in batch
        ]
        from aiv_models.chat.images import to_pil

        inputs = processor(
            text=texts, images=[to_pil(image) for image, _, _ in batch], return_tensors="pt", padding=True
        )
        inputs.pop("mm_token_type_ids", None)
        labels = torch.full_like(inputs["input_ids"], -100)
        for row, (_, _, answer) in enumerate(batch):
            length = int(inputs["attention_mask"][row].sum())
            n = len(answer_ids[answer])
            labels[row, length - n : length] = inputs["input_ids"][row, length - n : length]
        loss = model(**inputs, labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        if step >= SKEW_STEPS // 2 and step % CHECK_EVERY == 0 and _passes(transport, held_out):
            model.eval()
            save_tiny_qwen_vl(directory, model, processor.tokenizer, processor.image_processor)
            return directory
    raise AssertionError(f"the tiny VLM did not learn the colour check in {MAX_STEPS} steps")


def _passes(transport: object, held_out: Sequence[tuple[np.ndarray, str, str]]) -> bool:
    from aiv_models.chat.types import ChatRequest

    model = transport.model  # type: ignore[attr-defined]
    model.eval()
    try:
        for image, prompt, answer in held_out:
            result = transport.complete(ChatRequest(prompt, (image,)), 8)  # type: ignore[attr-defined]
            if result.failed:
                raise AssertionError(f"tiny VLM generate failed: {result.error}")
            if result.text != answer:
                return False
        return True
    finally:
        model.train()


def recipe_fingerprint() -> str:
    """What the trained model depends on: this recipe, the model builder and the verification prompts.

    Without xdist the shared directory outlives one run, so a marker from another recipe means: train again.
    """
    import hashlib

    import aiv_models.tiny.qwen_vl_checkpoint as builder
    from aiv_verifier.verification.mllm import DEFAULT_PROMPTS, PROMPTS_DIR

    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(Path(builder.__file__).read_bytes())
    for name in sorted(DEFAULT_PROMPTS.values()):
        digest.update((PROMPTS_DIR / name).read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="session")
def tiny_vlm_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The trained tiny VLM's directory, trained once per test run and shared by xdist workers."""
    directory, lock = shared_model_dir(tmp_path_factory, "tiny-vlm")
    root = Path(directory)
    recipe = recipe_fingerprint()
    with FileLock(lock):
        marker = root / MARKER
        if not marker.is_file() or marker.read_text(encoding="utf-8").strip() != recipe:
            if root.exists():
                shutil.rmtree(root)
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            train_tiny_vlm(root)
            marker.write_text(recipe + "\n", encoding="utf-8")
    yield root
