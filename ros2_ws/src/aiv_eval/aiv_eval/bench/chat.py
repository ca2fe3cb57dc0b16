"""The local chat model's part of ``aiv-eval bench-models``: a view's attribute calls one at a time vs batched.

What a robot waits for is a view: the MLLM verifier asks one question per attribute on the same crop. This times
``calls_per_view`` such calls (a 512-px crop, prompts of different lengths) decoded one ``generate`` at a time --
the reference's pattern -- against the same calls in left-padded batches of 1, 4, 8 and 16 (16: the calls of two
views, e.g. two episodes in flight), all in one process on the same inputs, and reports per-view milliseconds,
the speed-up, and how many batched answers have exactly the token ids of the one-at-a-time answers (float32:
all; bfloat16 can differ, and this says how often). ``forced_tokens`` makes every call generate exactly that many
tokens (random weights stop at a random end-of-sequence otherwise), so the figures describe the reference's
``max_new_tokens`` budget. From the same numbers: model seconds per MV-Attr episode (6 views x 4 attributes)
sequential, and batched with as many episodes in flight as a batch holds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ATTRIBUTE_QUESTIONS = (
    "Is the main colour of the object blue?",
    "Does the object have white floral patterns on its body?",
    "Is there a handle on the right side of the object? Answer only about the handle.",
    "Is the object made of glossy ceramic?",
    "Is there a small logo printed on the front of the object, near the rim?",
    "Is the rim of the object white?",
    "Is the object a mug?",
    "Is the inside of the object a different colour from the outside, for example white inside and blue outside?",
)
BATCH_SIZES = (1, 4, 8, 16)
#: The MV-Attr episode the paper times (spec §8): six views, four attribute calls each.
EPISODE_VIEWS, EPISODE_ATTRIBUTES = 6, 4


@dataclass
class ChatBenchResult:
    description: str
    one_at_a_time_ms: float  # per view
    batched_ms: dict[int, float] = field(default_factory=dict)  # batch size -> per view
    agreement: dict[int, tuple[int, int]] = field(default_factory=dict)  # batch size -> (same ids, calls)
    prompt_tokens: tuple[int, int] = (0, 0)  # shortest, longest
    calls_per_view: int = 8

    def episode_seconds(self) -> dict[str, float]:
        """Model seconds per MV-Attr episode: sequential, and per batch size with episodes in flight."""
        per_call_alone = self.one_at_a_time_ms / self.calls_per_view / 1000.0
        out = {"one at a time": EPISODE_VIEWS * EPISODE_ATTRIBUTES * per_call_alone}
        for size, per_view_ms in self.batched_ms.items():
            per_call = per_view_ms / self.calls_per_view / 1000.0
            out[f"batch {size}"] = EPISODE_VIEWS * EPISODE_ATTRIBUTES * per_call
        return out

    def lines(self) -> list[str]:
        lines = [
            f"[chat] {self.description}; {self.calls_per_view} attribute calls per view, prompts of "
            f"{self.prompt_tokens[0]}-{self.prompt_tokens[1]} tokens",
            f"  one at a time (reference): {self.one_at_a_time_ms:10.1f} ms per view",
        ]
        for size, per_view in self.batched_ms.items():
            same, total = self.agreement[size]
            lines.append(
                f"  batch {size:>2}: {per_view:10.1f} ms per view, speed-up "
                f"{self.one_at_a_time_ms / per_view:5.2f}x, token ids equal to one at a time: {same}/{total}"
            )
        for label, seconds in self.episode_seconds().items():
            lines.append(
                f"  MV-Attr episode ({EPISODE_VIEWS} views x {EPISODE_ATTRIBUTES}), {label}: {seconds:.2f} s"
            )
        return lines


def _requests(calls: int) -> list[Any]:
    from aiv_models.chat import ChatRequest

    crop = np.random.default_rng(3).integers(0, 255, (512, 512, 3), dtype=np.uint8)
    return [ChatRequest(ATTRIBUTE_QUESTIONS[i % len(ATTRIBUTE_QUESTIONS)], (crop,)) for i in range(calls)]


def _timed(call: Any, sync: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = call()
    sync()
    return 1000.0 * (time.perf_counter() - started), value


def bench_chat(
    model_dir: str,
    *,
    device: str,
    dtype: str,
    repeats: int,
    forced_tokens: int,
    calls_per_view: int = 8,
    batch_sizes: Sequence[int] = BATCH_SIZES,
) -> ChatBenchResult:
    from aiv_models.chat.local import LocalChatTransport

    transport = LocalChatTransport(model_dir, device=device, dtype=dtype)
    sync = _sync(transport.device)
    view = _requests(calls_per_view)
    generate = transport.generate_ids

    def one_at_a_time() -> list[list[int]]:
        return [generate([request], forced_tokens, min_new_tokens=forced_tokens)[0] for request in view]

    one_at_a_time()  # warm-up: the first forward allocates
    alone_ms: list[float] = []
    alone_ids: list[list[int]] = []
    for _ in range(repeats):
        ms, alone_ids = _timed(one_at_a_time, sync)
        alone_ms.append(ms)
    lengths = [int(transport.encode([request])["input_ids"].shape[1]) for request in view]
    result = ChatBenchResult(
        f"{transport.weights.model_type} from {model_dir} on {transport.device} ({transport.dtype})",
        float(np.median(alone_ms)),
        prompt_tokens=(min(lengths), max(lengths)),
        calls_per_view=calls_per_view,
    )
    for size in batch_sizes:
        views = max(1, math.ceil(size / calls_per_view))  # a batch larger than a view holds several views
        calls = view * views

        def batched(size: int = size, calls: list[Any] = calls) -> list[list[int]]:
            ids: list[list[int]] = []
            for start in range(0, len(calls), size):
                ids += generate(calls[start : start + size], forced_tokens, min_new_tokens=forced_tokens)
            return ids

        batched()  # warm-up at this shape
        samples = []
        ids: list[list[int]] = []
        for _ in range(repeats):
            ms, ids = _timed(batched, sync)
            samples.append(ms / views)
        result.batched_ms[size] = float(np.median(samples))
        expected = alone_ids * views
        result.agreement[size] = (sum(a == b for a, b in zip(ids, expected, strict=True)), len(expected))
    return result


def _sync(device: Any) -> Any:
    if getattr(device, "type", "cpu") != "cuda":
        return lambda: None
    import torch

    return lambda: torch.cuda.synchronize(device)


__all__ = ["ATTRIBUTE_QUESTIONS", "BATCH_SIZES", "ChatBenchResult", "bench_chat"]
