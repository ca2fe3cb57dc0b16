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
- **Thread-safe.** The calls of one view are issued concurrently; a lock serialises ``generate`` (one forward at
  a time per model), so concurrent and sequential calls give identical greedy answers.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..local_weights import ModelIdentity, check_adapter_dir, check_model_dir, offline_hub
from .images import to_pil
from .processor import QWEN_VL_MODEL_TYPES, load_image_text_processor
from .types import ChatRequest, ChatResult

WHAT = "language model"


class LocalChatTransport:
    """A local image-text-to-text model; build it with :func:`load_local_chat` (one per process and weights)."""

    parallel = False

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        adapter_dir: str | os.PathLike[str] = "",
        device: str = "auto",
        dtype: str = "auto",
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
        self.processor = load_image_text_processor(self.weights.path)
        self.model = self._load_model()

    def _load_model(self) -> Any:
        from transformers import AutoModelForImageTextToText

        model: Any = AutoModelForImageTextToText.from_pretrained(
            self.weights.path, local_files_only=True, dtype=self.dtype, use_safetensors=True
        )
        if self.adapter is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, self.adapter.path, is_trainable=False)
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

    def encode(self, request: ChatRequest) -> Any:
        """The model inputs of a request (token ids, pixel values, image grids) on the model's device."""
        text = self.processor.apply_chat_template(
            self.messages(request), add_generation_prompt=True, tokenize=False
        )
        images = [to_pil(image) for image in request.images] or None
        inputs = self.processor(text=[text], images=images, return_tensors="pt")
        inputs.pop("mm_token_type_ids", None)  # not a generate() argument of every Qwen-VL version
        return inputs.to(self.device)

    def complete(self, request: ChatRequest, max_new_tokens: int) -> ChatResult:
        import torch

        started = time.perf_counter()
        try:
            with self._lock, torch.inference_mode():
                inputs = self.encode(request)
                if "pixel_values" in inputs:
                    inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
                output = self.model.generate(
                    **inputs,
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    repetition_penalty=1.0,
                )
                new_tokens = output[:, inputs["input_ids"].shape[1] :]
                text = self.processor.batch_decode(new_tokens, skip_special_tokens=True)[0]
        except Exception as error:  # one failed call answers "" (then Missing), it does not end an episode
            return ChatResult("", f"{type(error).__name__}: {error}", 1, time.perf_counter() - started)
        return ChatResult(str(text), "", 1, time.perf_counter() - started)

    def close(self) -> None:
        """Nothing to release per caller: the process keeps the model (see :func:`load_local_chat`)."""


_LOADED: dict[tuple[str, str, str, str], LocalChatTransport] = {}
_LOADING = threading.Lock()


def load_local_chat(
    model_dir: str | os.PathLike[str],
    *,
    adapter_dir: str | os.PathLike[str] = "",
    device: str = "auto",
    dtype: str = "auto",
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
    key = (resolved, adapter, device.strip().lower(), dtype.strip().lower())
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = LocalChatTransport(resolved, adapter_dir=adapter, device=device, dtype=dtype)
        return _LOADED[key]
