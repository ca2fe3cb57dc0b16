"""The detector and embedding part of ``aiv-eval bench-models``: one view at a time against batched forwards.

A view costs the detector one frame and an embedding agent one crop (its texts are embedded once per episode).
With several episodes in flight (or the detector node's waiting frames) those views can share a forward
(``detector.max_batch``, ``embedding.max_batch``). This times, in one process on the same inputs, ``items`` views
of different content handled the reference's way -- preprocess, forward and score or postprocess, one after
another -- against the same views in batches of 1, 4, 8 and 16: each view still preprocessed on its own (a
caller does that in its own thread), one forward per batch, then each view's own scores or boxes. It prints
milliseconds per view for the whole path and for the forward alone, the speed-up, and how far the batched
outputs are from the one-at-a-time ones (detector: raw logits and normalised boxes; embedding: scores), so a
speed-up never hides a changed answer. The embedding models also time the serving path itself: N callers in
flight (as the embedding agents run episodes, each in its own thread) with ``max_batch`` 1 against ``max_batch``
N, so each crop is preprocessed in its caller's thread in both and the ratio is what gathering the forwards buys
where the work really runs. Timings are medians of ``repeats`` rounds after a warm-up at every shape;
each round times every variant once, one after the other, so a machine whose load drifts (other jobs on a
shared CPU) weighs on all variants alike rather than on whichever ran last. Nothing here asserts a speed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BATCH_SIZES = (1, 4, 8, 16)
#: The frame the detector benchmark feeds (a 640 x 360 camera image, height first).
FRAME_SHAPE = (360, 640)
#: The crop the embedding benchmark feeds (the crop stage's 512 px, spec §5.4).
CROP_SIDE = 512
#: Batch window of the in-flight rows: long enough for every caller's preprocessing to land in one batch on a
#: loaded CPU (the batch runs as soon as it is full, so a full batch never waits for the window).
IN_FLIGHT_WINDOW_S = 0.05


@dataclass
class BatchBenchResult:
    """Per-view milliseconds one at a time and per batch size, whole path and forward only, and the largest
    difference of a batched output from the one-at-a-time output."""

    name: str
    description: str
    unit: str
    alone_ms: float
    alone_forward_ms: float
    batched_ms: dict[int, float] = field(default_factory=dict)
    batched_forward_ms: dict[int, float] = field(default_factory=dict)
    differences: dict[int, str] = field(default_factory=dict)
    #: Batch size -> (ms per view with that many callers in flight, one forward each; batched up to that size).
    in_flight_ms: dict[int, tuple[float, float]] = field(default_factory=dict)
    in_flight_differences: dict[int, str] = field(default_factory=dict)

    def speed_up(self, size: int) -> float:
        return self.alone_ms / self.batched_ms[size] if self.batched_ms[size] > 0 else float("nan")

    def lines(self) -> list[str]:
        lines = [
            f"[{self.name} batching] {self.description}",
            f"  one at a time (reference): {self.alone_ms:10.2f} ms per {self.unit} "
            f"(forward {self.alone_forward_ms:.2f})",
        ]
        for size, per_view in self.batched_ms.items():
            forward = self.batched_forward_ms[size]
            forward_ratio = self.alone_forward_ms / forward if forward > 0 else float("nan")
            lines.append(
                f"  batch {size:>2}: {per_view:10.2f} ms per {self.unit}, speed-up {self.speed_up(size):5.2f}x "
                f"(forward {forward:.2f} ms, {forward_ratio:.2f}x); {self.differences[size]}"
            )
        for size, (each, batched) in self.in_flight_ms.items():
            ratio = each / batched if batched > 0 else float("nan")
            against_alone = self.alone_ms / batched if batched > 0 else float("nan")
            lines.append(
                f"  {size:>2} in flight (the serving path): one forward each {each:.2f} ms per {self.unit}, "
                f"batched {batched:.2f} ms per {self.unit}, speed-up {ratio:5.2f}x "
                f"(against one at a time: {against_alone:.2f}x); {self.in_flight_differences[size]}"
            )
        return lines


def _rounds(
    variants: dict[Any, Callable[[], object]], repeats: int, sync: Callable[[], None], per: int
) -> dict[Any, float]:
    """Median milliseconds per item of each variant, timed in ``repeats`` interleaved rounds."""
    samples: dict[Any, list[float]] = {key: [] for key in variants}
    for _ in range(repeats):
        for key, call in variants.items():
            started = time.perf_counter()
            call()
            sync()
            samples[key].append(1000.0 * (time.perf_counter() - started) / per)
    return {key: statistics.median(values) for key, values in samples.items()}


def _dtype(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def _sync(device: Any) -> Callable[[], None]:
    if getattr(device, "type", "cpu") != "cuda":
        return lambda: None
    import torch

    return lambda: torch.cuda.synchronize(device)


def _chunks(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def bench_detector_batching(
    model_dir: str,
    *,
    device: str,
    dtype: str,
    repeats: int,
    batch_sizes: Sequence[int] = BATCH_SIZES,
    text: str = "mug",
) -> BatchBenchResult:
    """Grounding DINO frames one at a time against batched (see the module doc)."""
    from aiv_verifier.detection.grounding_dino import GroundingDinoDetector

    detector = GroundingDinoDetector.load(model_dir, device=device, dtype=dtype)
    sync = _sync(detector.device)
    items = max(batch_sizes)
    rng = np.random.default_rng(5)
    images = [rng.integers(0, 255, (*FRAME_SHAPE, 3), dtype=np.uint8) for _ in range(items)]
    prepared = [detector.prepare(image, text) for image in images]

    def alone() -> None:
        for image in images:
            detector.detect_phrases(image, text)

    def alone_forward() -> None:
        for frame in prepared:
            detector.forward([frame])

    detector.detect_phrases(images[0], text)  # warm-up: the first forward allocates
    singles = [detector.forward([frame]) for frame in prepared]
    variants: dict[Any, Callable[[], object]] = {"alone": alone, "alone forward": alone_forward}
    differences: dict[int, str] = {}
    for size in batch_sizes:
        chunks = _chunks(items, size)

        def batched(chunks: list[range] = chunks) -> None:
            frames = [detector.prepare(image, text) for image in images]
            for chunk in chunks:
                detector.run_frames([frames[i] for i in chunk])

        def batched_forward(chunks: list[range] = chunks) -> list[Any]:
            return [detector.forward([prepared[i] for i in chunk]) for chunk in chunks]

        outputs = batched_forward()  # warm-up at this shape, and the outputs to compare
        logit_diff = box_diff = 0.0
        for chunk, output in zip(chunks, outputs, strict=True):
            for row, index in enumerate(chunk):
                single = singles[index]
                finite = np.isfinite(single.logits[0].numpy())  # text positions; the rest are -inf in both
                logits = np.abs(output.logits[row].numpy()[finite] - single.logits[0].numpy()[finite])
                boxes = np.abs(output.pred_boxes[row].numpy() - single.pred_boxes[0].numpy())
                logit_diff = max(logit_diff, float(logits.max()))
                box_diff = max(box_diff, float(boxes.max()))
        variants[size] = batched
        variants[("forward", size)] = batched_forward
        differences[size] = f"max |logit diff| {logit_diff:.1e}, max |box diff| {box_diff:.1e}"
    timed = _rounds(variants, repeats, sync, items)
    return _timed_result(
        "detector",
        f"grounding_dino from {model_dir} on {detector.device} ({_dtype(detector.dtype)}); {items} frames "
        f"{FRAME_SHAPE[1]}x{FRAME_SHAPE[0]} of different content, caption {prepared[0].caption!r}, "
        f"median of {repeats} interleaved rounds",
        "frame",
        timed,
        batch_sizes,
        differences,
    )


def bench_embedding_batching(
    name: str,
    model_dir: str,
    *,
    device: str,
    dtype: str,
    texts: Sequence[str],
    repeats: int,
    batch_sizes: Sequence[int] = BATCH_SIZES,
) -> BatchBenchResult:
    """CLIP / SigLIP / SigLIP2 crops one at a time against batched (see the module doc)."""
    from aiv_models.embedding import EmbeddingModel, TextCache

    model = EmbeddingModel.load(model_dir, device=device, dtype=dtype, parameter=f"--{name}")
    sync = _sync(model.device)
    items = max(batch_sizes)
    rng = np.random.default_rng(9)
    crops = [rng.integers(0, 255, (CROP_SIDE, CROP_SIDE, 3), dtype=np.uint8) for _ in range(items)]
    cached = model.encode_texts(texts, TextCache())
    prepared = [model.prepare_image(crop) for crop in crops]

    def alone() -> list[list[float]]:
        return [model.score_image(crop, cached) for crop in crops]

    def alone_forward() -> None:
        for image in prepared:
            model.encode_images([image])

    expected = alone()  # also the warm-up
    variants: dict[Any, Callable[[], object]] = {"alone": alone, "alone forward": alone_forward}
    differences: dict[int, str] = {}
    for size in batch_sizes:
        chunks = _chunks(items, size)

        def batched(chunks: list[range] = chunks) -> list[list[float]]:
            images = [model.prepare_image(crop) for crop in crops]
            scores: list[list[float]] = []
            for chunk in chunks:
                features = model.encode_images([images[i] for i in chunk])
                scores += [model.score_features(features[row : row + 1], cached) for row in range(len(chunk))]
            return scores

        def batched_forward(chunks: list[range] = chunks) -> None:
            for chunk in chunks:
                model.encode_images([prepared[i] for i in chunk])

        scores = batched()  # warm-up at this shape, and the scores to compare
        difference = float(np.abs(np.array(scores) - np.array(expected)).max()) if expected[0] else 0.0
        variants[size] = batched
        variants[("forward", size)] = batched_forward
        differences[size] = f"max |score diff| {difference:.1e}"
    timed = _rounds(variants, repeats, sync, items)
    result = _timed_result(
        name,
        f"{model.model_type} from {model_dir} on {model.device} ({_dtype(model.dtype)}); {items} crops "
        f"{CROP_SIDE}x{CROP_SIDE} of different content, {len(texts)} texts embedded once, median of {repeats} "
        "interleaved rounds",
        "crop",
        timed,
        batch_sizes,
        differences,
    )
    _measure_in_flight(
        result,
        name,
        model_dir,
        device=device,
        dtype=dtype,
        texts=texts,
        crops=crops,
        expected=expected,
        repeats=repeats,
        batch_sizes=batch_sizes,
    )
    return result


def _measure_in_flight(
    result: BatchBenchResult,
    name: str,
    model_dir: str,
    *,
    device: str,
    dtype: str,
    texts: Sequence[str],
    crops: Sequence[np.ndarray],
    expected: list[list[float]],
    repeats: int,
    batch_sizes: Sequence[int],
) -> None:
    """The serving path: ``size`` callers in flight (episodes, each in its own thread, as the embedding agents
    run them) score the crops through :meth:`EmbeddingModel.score_image`, once with ``embedding.max_batch`` 1
    (each call its own forward, behind the model's lock) and once with ``max_batch`` = ``size`` (the batcher
    gathers them). Both preprocess each crop in its caller's thread, so the ratio is what batching itself
    buys where the work really runs, and the batched scores are compared with the one-at-a-time ones."""
    from concurrent.futures import ThreadPoolExecutor

    from aiv_models.embedding import EmbeddingModel, TextCache

    variants: dict[Any, Callable[[], object]] = {}
    pools: list[ThreadPoolExecutor] = []
    try:
        for size in (size for size in batch_sizes if size > 1):
            pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"bench-{name}-{size}")
            pools.append(pool)
            for max_batch in (1, size):
                model = EmbeddingModel.load(
                    model_dir,
                    device=device,
                    dtype=dtype,
                    parameter=f"--{name}",
                    max_batch=max_batch,
                    batch_window_s=IN_FLIGHT_WINDOW_S,
                )
                cached = model.encode_texts(texts, TextCache())

                def served(
                    model: EmbeddingModel = model, cached: Any = cached, pool: ThreadPoolExecutor = pool
                ) -> list[list[float]]:
                    return list(pool.map(lambda crop: model.score_image(crop, cached), crops))

                scores = served()  # warm-up, and the scores to compare
                if max_batch > 1:
                    difference = (
                        float(np.abs(np.array(scores) - np.array(expected)).max()) if expected[0] else 0.0
                    )
                    result.in_flight_differences[size] = f"max |score diff| {difference:.1e}"
                variants[(size, max_batch)] = served
        timed = _rounds(variants, repeats, lambda: None, len(crops))
    finally:
        for pool in pools:
            pool.shutdown()
    for size in result.in_flight_differences:
        result.in_flight_ms[size] = (timed[(size, 1)], timed[(size, size)])


def _timed_result(
    name: str,
    description: str,
    unit: str,
    timed: dict[Any, float],
    batch_sizes: Sequence[int],
    differences: dict[int, str],
) -> BatchBenchResult:
    """One model's row from its interleaved rounds: one at a time, then each batch size (whole path, forward)."""
    result = BatchBenchResult(
        name, description, unit, timed["alone"], timed["alone forward"], differences=differences
    )
    for size in batch_sizes:
        result.batched_ms[size] = timed[size]
        result.batched_forward_ms[size] = timed[("forward", size)]
    return result


__all__ = [
    "BATCH_SIZES",
    "BatchBenchResult",
    "bench_detector_batching",
    "bench_embedding_batching",
]
