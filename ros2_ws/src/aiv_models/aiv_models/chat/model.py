"""The chat interface the agent uses: one transport, bounded concurrency, a persistent cache, counters.

:class:`ChatModel` is what every language-model user holds (MLLM verifier, LLM query understanding, LLM-NBV, the
trained agent, the orchestration benchmark):

- ``generate(prompt, images) -> str``: the core's ``LanguageModel`` protocol (a failed call answers "");
- ``generate_checked(prompt, images) -> (text, error)``: the same with why it is empty (LLM-NBV, query path);
- ``complete(request) -> ChatResult``: the same with the error, attempts, time and cache flag;
- ``complete_many(requests) -> list[ChatResult]``: issued concurrently, at most ``max_concurrency`` calls of this
  model in flight process-wide (across views and episodes in flight), results in request order;
- ``identity``: what answers (weights fingerprint, or server URL + model name, plus adapter);
- ``stats()``: calls, failures, retries, cache hits since construction (diagnostics).

Concurrency is bounded by one semaphore around the transport call, not by a shared thread pool, so a caller that
itself runs inside a worker thread (episodes in flight) can call ``complete_many`` without deadlock. Greedy
decoding and the in-process model's lock make concurrent answers identical to sequential ones.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .cache import ChatCache
from .types import ChatRequest, ChatResult, ChatStats, ChatTransport


class ChatModel:
    """A chat transport with the agent's call policy (see the module docstring). Thread-safe."""

    def __init__(
        self,
        transport: ChatTransport,
        *,
        max_new_tokens: int = 512,
        max_concurrency: int = 8,
        cache: ChatCache | None = None,
    ) -> None:
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.transport = transport
        self.max_new_tokens = int(max_new_tokens)
        self.max_concurrency = int(max_concurrency)
        self.cache = cache
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._stats_lock = threading.Lock()
        self._stats = ChatStats()

    def __repr__(self) -> str:
        return f"ChatModel({self.transport!r}, max_concurrency={self.max_concurrency})"

    @property
    def identity(self) -> dict[str, str]:
        """What answers: recorded with runs and used as the cache key (never holds a secret)."""
        return dict(self.transport.identity)

    # -- calls ---------------------------------------------------------------------------------------------

    def generate(self, prompt: str, images: Sequence[np.ndarray] = ()) -> str:
        """The ``LanguageModel`` protocol: the answer text, "" when the call failed (see :meth:`complete`)."""
        return self.complete(ChatRequest(prompt, tuple(images))).text

    def generate_checked(self, prompt: str, images: Sequence[np.ndarray] = ()) -> tuple[str, str]:
        """``(text, error)``: the answer and why it is empty ("" on success); used where a failure is counted."""
        result = self.complete(ChatRequest(prompt, tuple(images)))
        return result.text, result.error

    def complete(self, request: ChatRequest) -> ChatResult:
        """One call: from the cache when it holds the answer, else through the transport (never raises)."""
        max_new_tokens = request.max_new_tokens or self.max_new_tokens
        started = time.perf_counter()
        cached = self._cached(request, max_new_tokens)
        if cached is not None:
            result = ChatResult(cached, "", 0, time.perf_counter() - started, cached=True)
        else:
            with self._slots:
                try:
                    result = self.transport.complete(request, max_new_tokens)
                except Exception as error:  # a transport bug must still answer "" rather than end an episode
                    result = ChatResult(
                        "", f"{type(error).__name__}: {error}", 1, time.perf_counter() - started
                    )
            if not result.failed and self.cache is not None:
                self.cache.put(request, max_new_tokens, result.text)
        self._record(result)
        return result

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        """All requests, concurrently where the transport runs calls in parallel; results in request order."""
        items = list(requests)
        if len(items) <= 1 or not self.transport.parallel:
            return [self.complete(request) for request in items]
        with ThreadPoolExecutor(
            max_workers=min(len(items), self.max_concurrency), thread_name_prefix="chat"
        ) as pool:
            return list(pool.map(self.complete, items))

    def generate_many(self, requests: Sequence[ChatRequest]) -> list[str]:
        """:meth:`complete_many`, answer texts only ("" for a failed call)."""
        return [result.text for result in self.complete_many(requests)]

    def _cached(self, request: ChatRequest, max_new_tokens: int) -> str | None:
        if self.cache is None:
            return None
        try:
            return self.cache.get(request, max_new_tokens)
        except Exception:  # an image the cache cannot hash goes to the transport, which reports it
            return None

    # -- accounting ----------------------------------------------------------------------------------------

    def _record(self, result: ChatResult) -> None:
        with self._stats_lock:
            stats = self._stats
            stats.calls += 1
            stats.seconds += result.seconds
            if result.cached:
                stats.cache_hits += 1
            stats.retries += max(0, result.attempts - 1)
            if result.failed:
                stats.failed += 1
                stats.last_error = result.error
                kind = result.error.split(":", 1)[0][:60]
                stats.errors[kind] = stats.errors.get(kind, 0) + 1

    def stats(self) -> ChatStats:
        """A snapshot of the counters (a copy: safe to read while calls continue)."""
        with self._stats_lock:
            current = self._stats
            return ChatStats(
                current.calls,
                current.failed,
                current.retries,
                current.cache_hits,
                current.seconds,
                current.last_error,
                dict(current.errors),
            )

    def close(self) -> None:
        self.transport.close()

    def describe(self) -> Mapping[str, object]:
        """Identity, limits and counters in one record (logs, diagnostics)."""
        return {
            "identity": self.identity,
            "max_concurrency": self.max_concurrency,
            "max_new_tokens": self.max_new_tokens,
            "stats": self.stats().as_record(),
        }
