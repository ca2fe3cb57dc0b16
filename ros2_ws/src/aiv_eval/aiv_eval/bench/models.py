"""``aiv-eval bench-models``: per-stage latency of the model stages and what batching buys, from one run.

Embedding models (CLIP / SigLIP / SigLIP2, :mod:`aiv_models.embedding`): text tokenize / forward, image
preprocess / forward and scoring per call, then two ratios measured in the same process on the same inputs:

- the texts of an episode embedded in one forward against one forward per text;
- a view scored as the agent does it (one image forward against texts embedded once per episode) against the
  reference's per-item way (one image + text forward for every (crop, text) pair).

The detector (``aiv_verifier.detection.grounding_dino``, when that backend is installed): preprocess, forward and
postprocess per frame.

Then, per model, a view at a time against batched forwards at ``--batch-sizes`` (:mod:`.batching`: the
detector's frames and the embedding models' crops, as ``detector.max_batch`` / ``embedding.max_batch`` batch
them with episodes in flight), with how far the batched outputs are from the one-at-a-time ones.

Model directories come from the command line; by default tiny random models are built into a temporary
directory, which times the code paths, not the published models (weights do not change speed, so a full-size
architecture in such a directory gives real figures; docs/models.md). Only ratios and timings are
printed: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_TEXTS = (
    "a blue mug with white floral patterns",
    "the mug has a curved handle on its right side",
    "a ceramic mug with a glossy finish and a small logo",
)


@dataclass
class ModelTiming:
    """One model's figures: mean ms per call of each stage, and the batched / per-item comparisons."""

    name: str
    description: str
    stages_ms: dict[str, float] = field(default_factory=dict)
    comparisons: dict[str, tuple[float, float]] = field(
        default_factory=dict
    )  # name -> (batched, per item) ms
    skipped: str = ""
    extra_lines: list[str] = field(default_factory=list)  # printed after the section (the batching rows)


def _median_ms(call: Callable[[], object], repeats: int, sync: Callable[[], None]) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        sync()
        samples.append(1000.0 * (time.perf_counter() - started))
    return statistics.median(samples)


def _sync_for(device: Any) -> Callable[[], None]:
    if getattr(device, "type", "cpu") != "cuda":
        return lambda: None
    import torch

    return lambda: torch.cuda.synchronize(device)


def _crop(seed: int = 0) -> np.ndarray:
    """A 512 x 512 crop, the size the crop stage upscales boxes to (spec §5.4)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 255, (512, 512, 3), dtype=np.uint8)


def bench_embedding(
    name: str, model_dir: str, *, device: str, dtype: str, texts: tuple[str, ...], repeats: int
) -> ModelTiming:
    from aiv_models.embedding import EmbeddingModel, TextCache

    model = EmbeddingModel.load(model_dir, device=device, dtype=dtype, parameter=f"--{name}")
    sync = _sync_for(model.device)
    image = _crop()
    cached = model.encode_texts(texts, TextCache())
    model.score_image(image, cached)  # warm-up: first calls allocate
    model.times.seconds.clear()
    model.times.calls.clear()

    def per_item_view() -> None:
        for text in texts:
            model.score_image(image, model.encode_texts([text], TextCache()))

    timing = ModelTiming(name, model.describe())
    timing.comparisons["texts of an episode (1 forward vs 1 per text)"] = (
        _median_ms(lambda: model.encode_texts(texts, TextCache()), repeats, sync),
        _median_ms(lambda: model.encode_texts(texts, TextCache(), batched=False), repeats, sync),
    )
    stage_times = {
        stage: (model.times.seconds[stage], model.times.calls[stage]) for stage in model.times.calls
    }
    model.times.seconds.clear()
    model.times.calls.clear()
    timing.comparisons["one view (1 image forward, texts cached vs image+text per text)"] = (
        _median_ms(lambda: model.score_image(image, cached), repeats, sync),
        _median_ms(per_item_view, repeats, sync),
    )
    for stage, calls in model.times.calls.items():
        if stage not in stage_times:
            stage_times[stage] = (model.times.seconds[stage], calls)
    for stage in ("text_tokenize", "text_forward", "image_preprocess", "image_forward", "score"):
        if stage in stage_times:
            seconds, calls = stage_times[stage]
            timing.stages_ms[stage] = 1000.0 * seconds / max(1, calls)
    return timing


def bench_detector(model_dir: str, *, device: str, dtype: str, repeats: int) -> ModelTiming:
    """Grounding DINO's stages per frame, or a skipped entry when the backend is not installed."""
    try:
        from aiv_verifier.detection.grounding_dino import GroundingDinoDetector
        from aiv_verifier.model_config import DetectorParams
    except ImportError as error:
        return ModelTiming(
            "detector", "", skipped=f"aiv_verifier.detection.grounding_dino not importable: {error}"
        )
    detector: Any = GroundingDinoDetector.from_params(
        DetectorParams(backend="grounding_dino", model_dir=model_dir, device=device, dtype=dtype)
    )
    frame = np.random.default_rng(1).integers(0, 255, (640, 360, 3), dtype=np.uint8)
    detector.detect(frame, "mug")  # warm-up
    totals: dict[str, list[float]] = {}
    for _ in range(repeats):
        detector.detect(frame, "mug")
        for stage, seconds in detector.last_latency.as_dict().items():
            totals.setdefault(stage, []).append(1000.0 * seconds)
    describe = detector.describe()
    text = (
        " ".join(f"{key} {value}" for key, value in describe.items())
        if isinstance(describe, dict)
        else str(describe)
    )
    timing = ModelTiming("detector", f"grounding_dino: {text}")
    timing.stages_ms = {stage: statistics.median(values) for stage, values in totals.items()}
    return timing


def _default_dirs(root: Path, want_detector: bool) -> dict[str, str]:
    """Tiny random checkpoints (CLIP, SigLIP2, a Qwen-VL and, when its builder exists, Grounding DINO) in ``root``."""
    from aiv_models.tiny.embedding_checkpoints import build_tiny_embedding_dirs
    from aiv_models.tiny.qwen_vl_checkpoint import build_tiny_qwen_vl

    dirs = {
        family: str(path) for family, path in build_tiny_embedding_dirs(root, ("clip", "siglip2")).items()
    }
    dirs["vlm"] = str(build_tiny_qwen_vl(root / "qwen_vl", family="qwen3_vl"))
    if want_detector:
        try:
            from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino
        except ImportError:
            return dirs
        dirs["detector"] = str(save_grounding_dino(root / "grounding_dino"))
    return dirs


def format_report(timings: list[ModelTiming], header: str) -> str:
    lines = [header]
    for timing in timings:
        if timing.skipped:
            lines.append(f"[{timing.name}] skipped: {timing.skipped}")
            continue
        lines.append(f"[{timing.name}] {timing.description}")
        for stage, ms in timing.stages_ms.items():
            lines.append(f"  stage {stage:<18} {ms:10.3f} ms/call")
        for label, (batched, per_item) in timing.comparisons.items():
            ratio = per_item / batched if batched > 0 else float("nan")
            lines.append(
                f"  batched vs per-item: {label}: {batched:.3f} ms vs {per_item:.3f} ms, speed-up {ratio:.2f}x"
            )
        lines.extend(timing.extra_lines)
    return "\n".join(lines)


def parse_batch_sizes(text: str) -> tuple[int, ...]:
    """``--batch-sizes`` ("1,4,8,16") as integers; ValueError naming the option when it is not that."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(
            f"--batch-sizes {text!r}: expected comma-separated integers, e.g. 1,4,8,16"
        ) from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--batch-sizes {text!r}: every batch size must be at least 1")
    return sizes


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def run_bench_models(args: argparse.Namespace) -> int:
    from .batching import bench_detector_batching, bench_embedding_batching

    texts = tuple(args.text) if args.text else DEFAULT_TEXTS
    repeats = int(args.repeats)
    if repeats < 1:
        raise ValueError("--repeats must be at least 1")
    batch_repeats = int(args.batch_repeats)
    if batch_repeats < 0:
        raise ValueError("--batch-repeats must be at least 0 (0: no batching rows)")
    batch_sizes = parse_batch_sizes(str(args.batch_sizes))
    threads = int(args.threads)
    if threads < 0:
        raise ValueError("--threads must be at least 0 (0: torch's default)")
    if threads:
        import torch

        torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory(prefix="aiv-bench-models-") as scratch:
        given = {"clip": args.clip, "siglip": args.siglip, "detector": args.detector, "vlm": args.vlm}
        if not any(given.values()):
            dirs = _default_dirs(Path(scratch), want_detector=not args.no_detector)
            source = f"tiny random models built in {scratch}"
        else:
            dirs = {name: value for name, value in given.items() if value}
            source = "model directories from the command line"
        timings = []
        for name in ("clip", "siglip", "siglip2"):
            if name in dirs:
                timing = bench_embedding(
                    name, dirs[name], device=args.device, dtype=args.dtype, texts=texts, repeats=repeats
                )
                if batch_repeats:
                    timing.extra_lines = bench_embedding_batching(
                        name,
                        dirs[name],
                        device=args.device,
                        dtype=args.dtype,
                        texts=texts,
                        repeats=batch_repeats,
                        batch_sizes=batch_sizes,
                    ).lines()
                timings.append(timing)
        if args.no_detector:
            timings.append(ModelTiming("detector", "", skipped="--no-detector"))
        elif "detector" in dirs:
            timing = bench_detector(dirs["detector"], device=args.device, dtype=args.dtype, repeats=repeats)
            if batch_repeats and not timing.skipped:
                timing.extra_lines = bench_detector_batching(
                    dirs["detector"],
                    device=args.device,
                    dtype=args.dtype,
                    repeats=batch_repeats,
                    batch_sizes=batch_sizes,
                ).lines()
            timings.append(timing)
        else:
            timings.append(ModelTiming("detector", "", skipped="no detector directory (--detector DIR)"))
        header = (
            f"aiv-eval bench-models: {source}; {len(texts)} texts, median of {repeats} repeats, "
            f"device {args.device}, dtype {args.dtype}, torch threads {_torch_threads()}"
        )
        report = format_report(timings, header)
        if "vlm" in dirs:
            from .chat import bench_chat

            chat = bench_chat(
                dirs["vlm"],
                device=args.device,
                dtype=args.dtype,
                repeats=repeats,
                forced_tokens=int(args.vlm_tokens),
            )
            report += "\n" + "\n".join(chat.lines())
        print(report)
    return 0


def add_bench_models_subcommand(sub: Any) -> None:
    """Register ``bench-models`` on the ``aiv-eval`` sub-parsers."""
    parser = sub.add_parser(
        "bench-models",
        help="per-stage latency of the model stages and batched vs per-item speed-up (one run)",
    )
    parser.add_argument("--clip", help="CLIP checkpoint directory")
    parser.add_argument("--siglip", help="SigLIP / SigLIP2 checkpoint directory")
    parser.add_argument("--detector", help="Grounding DINO checkpoint directory")
    parser.add_argument("--no-detector", action="store_true", help="do not time the detector")
    parser.add_argument(
        "--vlm", help="Qwen-VL checkpoint directory (the local chat model: batched vs one at a time)"
    )
    parser.add_argument(
        "--vlm-tokens", type=int, default=8, help="tokens each chat call generates, forced (default 8)"
    )
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N (default auto)")
    parser.add_argument("--dtype", default="auto", help="auto | float32 | bfloat16 | float16 (default auto)")
    parser.add_argument("--repeats", type=int, default=10, help="timed calls per figure (median; default 10)")
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch CPU threads (0 = torch's default; 1 steadies CPU timings on a busy machine)",
    )
    parser.add_argument(
        "--batch-sizes",
        default="1,4,8,16",
        help="detector / embedding batch sizes compared with one view at a time (default 1,4,8,16)",
    )
    parser.add_argument(
        "--batch-repeats",
        type=int,
        default=5,
        help="timed rounds per detector / embedding batching figure (median; default 5; 0 = no batching rows)",
    )
    parser.add_argument(
        "--text", action="append", help="a description to embed (repeat; default: 3 built in)"
    )
    parser.set_defaults(func=run_bench_models)


__all__ = [
    "DEFAULT_TEXTS",
    "ModelTiming",
    "add_bench_models_subcommand",
    "bench_detector",
    "bench_embedding",
    "format_report",
    "run_bench_models",
]
