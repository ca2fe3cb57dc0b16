"""The agent's language model from ``language_model.*`` parameters, and the calls its users make on it.

:func:`language_model_from_params` builds an :class:`aiv_models.chat.ChatModel` (in-process transformers or an
OpenAI-compatible server) that satisfies the core's ``LanguageModel`` protocol (``generate(prompt, images) ->
str``) and adds what the verifier, the query path and LLM-NBV need beyond it:

- :func:`complete_many` / :func:`generate_many`: several calls at once, bounded by
  ``language_model.max_concurrency`` and returned in request order (the calls of one view);
- :func:`complete_one`: one call with its error, so a failed call can be counted, not only answered "";
- :func:`language_model_identity`: what answers (weights fingerprint, or server URL + model name + adapter).

They also accept any plain ``LanguageModel`` (test doubles, other implementations): calls then run one after the
other, and an exception counts as a failed call with an empty answer, as the reference's client did.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from aiv_models.chat import ChatModel, ChatRequest, ChatResult, open_http_chat, open_local_chat

from .core.types import LanguageModel
from .model_config import LANGUAGE_MODEL_TRANSPORTS, LanguageModelParams

__all__ = [
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "complete_many",
    "complete_one",
    "generate_many",
    "language_model_from_params",
    "language_model_identity",
]


def language_model_from_params(params: LanguageModelParams) -> ChatModel:
    """The chat model ``params`` describe; raises ValueError (or ``ModelDirError``, a ValueError) naming the
    parameter when it cannot be built. Transport ``none`` is the caller's business (no model)."""
    if params.transport == "local":
        if not params.model_dir.strip():
            raise ValueError(
                "language_model.transport 'local' needs language_model.model_dir (a local Qwen-VL checkpoint)"
            )
        return open_local_chat(
            params.model_dir,
            adapter_dir=params.adapter_dir,
            device=params.device,
            dtype=params.dtype,
            max_batch=params.max_batch,
            batch_window_s=params.batch_window_s,
            max_new_tokens=params.max_new_tokens,
            max_concurrency=params.max_concurrency,
            cache_dir=params.cache_dir,
            cache_image_calls=params.cache_image_calls,
        )
    if params.transport == "openai":
        if not params.base_url.strip():
            raise ValueError(
                "language_model.transport 'openai' needs language_model.base_url, e.g. http://127.0.0.1:8000/v1"
            )
        model = open_http_chat(
            params.base_url,
            params.model,
            api_key_env=params.api_key_env,
            connect_timeout_s=params.connect_timeout_s,
            read_timeout_s=params.read_timeout_s,
            retries=params.retries,
            max_new_tokens=params.max_new_tokens,
            max_concurrency=params.max_concurrency,
            cache_dir=params.cache_dir,
            cache_image_calls=params.cache_image_calls,
        )
        check = getattr(model.transport, "check_server", None)
        problem = check() if params.check_server and callable(check) else ""
        if problem:
            raise ValueError(
                f"language_model: {problem}; start the server first, fix language_model.base_url / "
                "language_model.model, or set language_model.check_server: false to start anyway"
            )
        return model
    raise ValueError(
        f"language_model.transport {params.transport!r} builds no model; expected one of "
        f"{list(LANGUAGE_MODEL_TRANSPORTS)}"
    )


def complete_one(model: LanguageModel, prompt: str, images: Sequence[np.ndarray] = ()) -> ChatResult:
    """One call with its error ("" answer and ``error`` set when it failed); never raises."""
    return complete_many(model, [ChatRequest(prompt, tuple(images))])[0]


def complete_many(model: LanguageModel, requests: Sequence[ChatRequest]) -> list[ChatResult]:
    """All requests (concurrently on a :class:`ChatModel`), results in request order; never raises."""
    if isinstance(model, ChatModel):
        return model.complete_many(requests)
    results = []
    for request in requests:
        try:
            text = model.generate(request.prompt, list(request.images))
        except Exception as error:  # the protocol's contract: a failed call is an empty answer
            results.append(ChatResult("", f"{type(error).__name__}: {error}"))
            continue
        if isinstance(text, str):
            results.append(ChatResult(text))
        else:
            results.append(ChatResult("", f"model returned {type(text).__name__}, expected str"))
    return results


def generate_many(model: LanguageModel, requests: Sequence[ChatRequest]) -> list[str]:
    """:func:`complete_many`, answer texts only."""
    return [result.text for result in complete_many(model, requests)]


def language_model_identity(model: LanguageModel) -> dict[str, str]:
    """What answers: the chat model's identity, or the class name of another implementation."""
    if isinstance(model, ChatModel):
        return model.identity
    return {"transport": "custom", "class": type(model).__name__}
