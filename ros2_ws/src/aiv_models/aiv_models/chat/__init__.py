"""Chat models for the agent: one interface, two transports (in-process transformers, OpenAI-compatible HTTP).

Public API (stable; other packages import only these names)::

    from aiv_models.chat import ChatModel, ChatRequest, ChatResult, open_local_chat, open_http_chat

    model = open_http_chat("http://127.0.0.1:8000/v1", "Qwen/Qwen3-VL-4B-Instruct", max_concurrency=8)
    model = open_local_chat("/models/qwen3-vl-4b", adapter_dir="", device="auto", cache_dir="~/.cache/aiv-llm")
    text = model.generate("Is the mug red?", [crop])            # "" when the call failed
    results = model.complete_many([ChatRequest.of(p, [crop]) for p in prompts])  # request order, concurrent
    model.identity, model.stats()

Nothing here imports torch or transformers until a local model is opened. Decoding is greedy everywhere.
"""

from __future__ import annotations

import os

from .cache import ChatCache
from .http import OpenAIChatTransport, TransportConfigError
from .model import ChatModel
from .types import ChatRequest, ChatResult, ChatStats, ChatTransport

__all__ = [
    "ChatCache",
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "ChatStats",
    "ChatTransport",
    "OpenAIChatTransport",
    "TransportConfigError",
    "open_http_chat",
    "open_local_chat",
]


def _with_policy(
    transport: ChatTransport,
    max_new_tokens: int,
    max_concurrency: int,
    cache_dir: str | os.PathLike[str],
    cache_image_calls: bool,
) -> ChatModel:
    cache = (
        ChatCache(cache_dir, transport.identity, include_images=cache_image_calls)
        if str(cache_dir).strip()
        else None
    )
    return ChatModel(transport, max_new_tokens=max_new_tokens, max_concurrency=max_concurrency, cache=cache)


def open_http_chat(
    base_url: str,
    model: str,
    *,
    api_key_env: str = "OPENAI_API_KEY",
    connect_timeout_s: float = 5.0,
    read_timeout_s: float = 60.0,
    retries: int = 2,
    retry_backoff_s: float = 0.0,
    max_new_tokens: int = 512,
    max_concurrency: int = 8,
    cache_dir: str | os.PathLike[str] = "",
    cache_image_calls: bool = False,
) -> ChatModel:
    """A chat model served by an OpenAI-compatible server (defaults: the reference's client, spec §5.1)."""
    transport = OpenAIChatTransport(
        base_url,
        model,
        api_key_env=api_key_env,
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        retries=retries,
        retry_backoff_s=retry_backoff_s,
    )
    return _with_policy(transport, max_new_tokens, max_concurrency, cache_dir, cache_image_calls)


def open_local_chat(
    model_dir: str | os.PathLike[str],
    *,
    adapter_dir: str | os.PathLike[str] = "",
    device: str = "auto",
    dtype: str = "auto",
    max_batch: int = 1,
    batch_window_s: float = 0.01,
    max_new_tokens: int = 512,
    max_concurrency: int = 8,
    cache_dir: str | os.PathLike[str] = "",
    cache_image_calls: bool = False,
) -> ChatModel:
    """A chat model running in this process from a local checkpoint (loaded once per process and weights).

    Raises :class:`~aiv_models.local_weights.ModelDirError` (one line naming the path) for unusable directories.
    """
    from .local import load_local_chat

    transport = load_local_chat(
        model_dir,
        adapter_dir=adapter_dir,
        device=device,
        dtype=dtype,
        max_batch=max_batch,
        batch_window_s=batch_window_s,
    )
    return _with_policy(transport, max_new_tokens, max_concurrency, cache_dir, cache_image_calls)
