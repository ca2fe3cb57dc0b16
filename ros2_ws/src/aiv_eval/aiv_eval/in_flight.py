"""Several episodes in flight in one process (``evaluator.episodes_in_flight``), results in index order.

With a model behind HTTP an episode spends most of its time waiting for answers; a batching server answers
several requests in about the time of one, so running episodes side by side multiplies throughput. Each
episode keeps its own environment, port and agent session (they are per-thread in the in-process driver);
what the episodes share must be thread-safe:

- the language model (:class:`aiv_models.chat.ChatModel`: a semaphore bounds calls in flight, the in-process
  transport serialises its forwards behind a lock);
- the in-verifier detector: not known to be thread-safe, so calls go through :class:`LockedDetector`;
- the pipeline's per-view verifier is *not* shared: it counts its model calls on the instance (the classical
  verifier also keeps the last view's timing there), so each worker thread builds its own agent factory;
- the embedding agents build their model per agent, so they are refused with more than one episode in flight
  rather than loading one model per worker.

Over ROS one simulator + verifier pair serves one episode at a time; several namespaced pairs run side by side
instead (README), so the ROS mode refuses a value above 1.

Results are handed back strictly in submission order, whatever order episodes finish in, so the caller writes
the same results file as one episode at a time; at most ``in_flight`` episodes run or wait finished at once.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ClassVar, TypeVar

import numpy as np
from aiv_verifier.core.crop import Detection
from aiv_verifier.detection.base import Detector

T = TypeVar("T")
R = TypeVar("R")

#: Agent kinds whose episodes may share one process-wide agent factory's models across threads.
IN_FLIGHT_KINDS = ("pipeline", "trained")


def in_flight_problem(episodes_in_flight: int, agent_kind: str, mode: str) -> str | None:
    """Why ``episodes_in_flight`` cannot be used with this agent kind and evaluation mode (None: it can)."""
    if episodes_in_flight <= 1:
        return None
    if mode != "inprocess":
        return (
            f"evaluator.episodes_in_flight={episodes_in_flight} runs only in-process (--mode inprocess): over ROS "
            "one simulator + verifier pair serves one episode at a time; run namespaced pairs side by side instead"
        )
    if agent_kind not in IN_FLIGHT_KINDS:
        return (
            f"evaluator.episodes_in_flight={episodes_in_flight} needs agent.kind {' or '.join(IN_FLIGHT_KINDS)}; "
            f"the {agent_kind!r} agent builds its model per agent and is not shared across threads"
        )
    return None


def run_in_flight(items: Sequence[T], work: Callable[[T], R], in_flight: int) -> Iterator[tuple[T, R]]:
    """``(item, work(item))`` in the order of ``items``, with up to ``in_flight`` calls running at once.

    An exception from ``work`` is raised here when its item's turn comes (earlier results have been yielded);
    nothing further is started then, and the calls still running finish before this returns.
    """
    if in_flight < 1:
        raise ValueError(f"in_flight must be >= 1, got {in_flight}")
    pending: deque[tuple[T, Future[R]]] = deque()
    source: Iterator[T] = iter(items)
    pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="episode")
    try:
        for item in _take(source, in_flight):
            pending.append((item, pool.submit(work, item)))
        while pending:
            item, future = pending.popleft()
            result = future.result()
            for following in _take(source, 1):
                pending.append((following, pool.submit(work, following)))
            yield item, result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _take(source: Iterator[T], count: int) -> Iterable[T]:
    for _ in range(count):
        try:
            yield next(source)
        except StopIteration:
            return


class PerThread:
    """One value per worker thread, built on first use by ``build`` (environment, port, agent factory)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._local = threading.local()

    def get(self) -> Any:
        value = getattr(self._local, "value", None)
        if value is None:
            value = self._local.value = self._build()
        return value


class LockedDetector:
    """A detector shared by episodes in flight, one call at a time (its thread-safety is not known)."""

    name: ClassVar[str] = "locked"

    def __init__(self, inner: Detector) -> None:
        self.inner = inner
        self._lock = threading.Lock()

    @property
    def model_calls(self) -> int:
        return self.inner.model_calls

    def detect(self, image: np.ndarray, text: str) -> list[Detection]:
        with self._lock:
            return list(self.inner.detect(image, text))


__all__ = ["IN_FLIGHT_KINDS", "LockedDetector", "PerThread", "in_flight_problem", "run_in_flight"]
