"""In-process transformers transport: a Qwen-VL style image-text-to-text checkpoint from a local directory.

Why it is built this way:

- **Local weights only.** The directory is checked with :func:`~aiv_models.local_weights.check_model_dir`
  (safetensors only, fails fast naming the path) and loaded with ``local_files_only=True`` after
  :func:`~aiv_models.local_weights.offline_hub`, so nothing tries the hub. An optional LoRA adapter
  (``check_adapter_dir``) is applied with peft on top.
- **Image-only processor.** The model's own processor class needs torchvision; :mod:`.processor` supplies the
  image processor + tokenizer pair that runs without it.
- **bf16 on a GPU, fp32 on a CPU** (:mod:`aiv_models.torch_runtime`), greedy decoding (no sampling, repetition
  penalty 1.0), as the reference served its models.
- **Loaded once per process.** :func:`load_local_chat` keeps one instance per (weights, adapter, device, dtype):
  the verifier, query understanding and NBV share it; loading a 4B model twice would double GPU memory.
- **Batched.** With ``max_batch`` above 1, calls that arrive together (the attribute calls of one view, the calls
  of episodes in flight) are gathered for up to ``batch_window_s`` and decoded in one left-padded ``generate``
  (:class:`~aiv_models.batching.RequestBatcher`); the transport then says ``parallel`` so the chat model issues a
  view's calls concurrently. Greedy answers equal one-at-a-time answers in float32 (tested token for token on a
  trained tiny VLM with prompts of different lengths); in bfloat16 a padded batch can change a token, so
  ``aiv-eval bench-models --vlm`` reports the agreement. ``max_batch`` 1 is the reference's one call at a time:
  a lock serialises ``generate``. A failed batched forward fails every call in it, each counted as failed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..batching import RequestBatcher
from ..local_weights import (
    ModelIdentity,
    check_adapter_dir,
    check_model_dir,
    check_tokenizer_files,
    load_failure,
    offline_hub,
)
from .images import to_pil
from .processor import QWEN_VL_MODEL_TYPES, load_image_text_processor
from .types import ChatRequest, ChatResult

WHAT = "language model"


class LocalChatTransport:
    """A local image-text-to-text model; build it with :func:`load_local_chat` (one per process and weights)."""

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        adapter_dir: str | os.PathLike[str] = "",
        device: str = "auto",
        dtype: str = "auto",
        max_batch: int = 1,
        batch_window_s: float = 0.01,
    ) -> None:
        self.weights: ModelIdentity = check_model_dir(
            model_dir,
            what=WHAT,
            model_types=QWEN_VL_MODEL_TYPES,
            example="Qwen/Qwen3-VL-4B-Instruct",
            parameter="language_model.model_dir",
        )
        self.adapter: ModelIdentity | None = (
            check_adapter_dir(adapter_dir, what=WHAT, parameter="language_model.adapter_dir")
            if str(adapter_dir).strip()
            else None
        )
        offline_hub()
        from ..torch_runtime import resolve_device, resolve_dtype

        self.device = resolve_device(device, "language_model.device")
        self.dtype = resolve_dtype(dtype, self.device, "language_model.dtype")
        self._lock = threading.Lock()
        check_tokenizer_files(self.weights.path, what=WHAT, parameter="language_model.model_dir")
        try:
            self.processor = load_image_text_processor(self.weights.path)
        except Exception as error:  # a damaged tokenizer or processor file: one line, not a traceback
            raise load_failure(
                error, what=WHAT, path=self.weights.path, parameter="language_model.model_dir"
            ) from None
        self.model = self._load_model()
        self.max_batch = max_batch
        self._batcher: RequestBatcher[ChatRequest, str] | None = (
            RequestBatcher(
                self.generate_texts, max_batch=max_batch, window_s=batch_window_s, name="chat-batcher"
            )
            if max_batch > 1
            else None
        )

    @property
    def parallel(self) -> bool:
        """Whether callers should issue calls concurrently: only when they can be batched."""
        return self._batcher is not None

    def _load_model(self) -> Any:
        from transformers import AutoModelForImageTextToText

        try:
            model: Any = AutoModelForImageTextToText.from_pretrained(
                self.weights.path, local_files_only=True, dtype=self.dtype, use_safetensors=True
            )
        except (
            Exception
        ) as error:  # whatever a damaged file raises (SafetensorError is none of the usual ones)
            raise load_failure(
                error, what=WHAT, path=self.weights.path, parameter="language_model.model_dir"
            ) from None
        if self.adapter is not None:
            from peft import PeftModel

            try:
                model = PeftModel.from_pretrained(model, self.adapter.path, is_trainable=False)
            except Exception as error:
                raise load_failure(
                    error,
                    what=f"{WHAT} adapter",
                    path=self.adapter.path,
                    parameter="language_model.adapter_dir",
                ) from None
        return model.to(self.device).eval()

    @property
    def identity(self) -> Mapping[str, str]:
        return {
            "transport": "local",
            "model_type": self.weights.model_type,
            "weights": self.weights.fingerprint,
            "adapter": self.adapter.fingerprint if self.adapter is not None else "",
        }

    def messages(self, request: ChatRequest) -> list[dict[str, Any]]:
        """The chat-template messages of a request: optional system turn, then images first, then the text."""
        turns: list[dict[str, Any]] = []
        if request.system:
            turns.append({"role": "system", "content": [{"type": "text", "text": request.system}]})
        content: list[dict[str, Any]] = [{"type": "image"} for _ in request.images]
        content.append({"type": "text", "text": request.prompt})
        turns.append({"role": "user", "content": content})
        return turns

    def encode(self, requests: Sequence[ChatRequest]) -> Any:
        """The model inputs of a batch (left-padded token ids, pixel values, image grids) on the model's device."""
        texts = [
            self.processor.apply_chat_template(
                self.messages(request), add_generation_prompt=True, tokenize=False
            )
            for request in requests
        ]
        # One PIL image per distinct crop: the processor then resizes and patches it once for all its calls.
        pictures: dict[int, Any] = {}
        for request in requests:
            for image in request.images:
                if id(image) not in pictures:
                    pictures[id(image)] = to_pil(image)
        images = [pictures[id(image)] for request in requests for image in request.images] or None
        # Left padding: every prompt of a batch ends where generation starts.
        inputs = self.processor(
            text=texts, images=images, return_tensors="pt", padding=True, padding_side="left"
        )
        inputs.pop("mm_token_type_ids", None)  # not a generate() argument of every Qwen-VL version
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
        return inputs.to(self.device)

    def generate_ids(
        self, requests: Sequence[ChatRequest], max_new_tokens: int, *, min_new_tokens: int = 0
    ) -> list[list[int]]:
        """Greedy new token ids of each request, from one ``generate`` over the batch (padding after EOS cut).

        ``min_new_tokens`` forces answers to a length (benchmarks of random weights, which end at random)."""
        import torch

        with torch.inference_mode():
            inputs = self.encode(requests)
            output = self.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                min_new_tokens=min_new_tokens or None,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                repetition_penalty=1.0,
            )
        new_tokens = output[:, inputs["input_ids"].shape[1] :].tolist()
        eos = self.model.generation_config.eos_token_id
        stops = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        cut = []
        for row in new_tokens:
            end = next((i + 1 for i, token in enumerate(row) if token in stops), len(row))
            cut.append(row[:end])
        return cut

    def generate_texts(self, requests: Sequence[ChatRequest], max_new_tokens: int) -> list[str]:
        """The answer texts of a batch (see :meth:`generate_ids`)."""
        ids = self.generate_ids(requests, max_new_tokens)
        return [str(text) for text in self.processor.batch_decode(ids, skip_special_tokens=True)]

    def complete(self, request: ChatRequest, max_new_tokens: int) -> ChatResult:
        started = time.perf_counter()
        try:
            if self._batcher is not None:
                text = self._batcher.submit(request, group=max_new_tokens)
            else:
                with self._lock:
                    text = self.generate_texts([request], max_new_tokens)[0]
        except Exception as error:  # one failed call answers "" (then Missing), it does not end an episode
            return ChatResult("", f"{type(error).__name__}: {error}", 1, time.perf_counter() - started)
        return ChatResult(text, "", 1, time.perf_counter() - started)

    def close(self) -> None:
        """Nothing to release per caller: the process keeps the model (see :func:`load_local_chat`)."""


_LOADED: dict[tuple[str, str, str, str, int, float], LocalChatTransport] = {}
_LOADING = threading.Lock()


def load_local_chat(
    model_dir: str | os.PathLike[str],
    *,
    adapter_dir: str | os.PathLike[str] = "",
    device: str = "auto",
    dtype: str = "auto",
    max_batch: int = 1,
    batch_window_s: float = 0.01,
) -> LocalChatTransport:
    """The process's one instance of these weights (+ adapter) on this device and dtype, loaded on first use.

    The directories are checked on every call (a missing directory fails fast even when another instance is
    loaded); the key uses the resolved paths, so two spellings of one directory share the model.
    """
    resolved = check_model_dir(
        model_dir,
        what=WHAT,
        model_types=QWEN_VL_MODEL_TYPES,
        example="Qwen/Qwen3-VL-4B-Instruct",
        parameter="language_model.model_dir",
    ).path
    adapter = (
        check_adapter_dir(adapter_dir, what=WHAT, parameter="language_model.adapter_dir").path
        if str(adapter_dir).strip()
        else ""
    )
    key = (resolved, adapter, device.strip().lower(), dtype.strip().lower(), max_batch, batch_window_s)
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = LocalChatTransport(
                resolved,
                adapter_dir=adapter,
                device=device,
                dtype=dtype,
                max_batch=max_batch,
                batch_window_s=batch_window_s,
            )
        return _LOADED[key]
