"""Several episodes in flight in one process (``evaluator.episodes_in_flight``), results in index order.

With a model behind HTTP an episode spends most of its time waiting for answers; a batching server answers
several requests in about the time of one, so running episodes side by side multiplies throughput. Each
episode keeps its own environment, port and agent session (they are per-thread in the in-process driver);
what the episodes share must be thread-safe:

- the language model (:class:`aiv_models.chat.ChatModel`: a semaphore bounds calls in flight, the in-process
  transport serialises its forwards behind a lock);
- the in-verifier detector: one that says it is thread-safe (``thread_safe``: Grounding DINO, which serialises
  its forwards and, with ``detector.max_batch`` above 1, runs the frames of episodes that ask together in one
  forward) is shared as it is; any other goes through :class:`LockedDetector`, one call at a time;
- the pipeline's per-view verifier is *not* shared: it counts its model calls on the instance (the classical
  verifier also keeps the last view's timing there), so each worker thread builds its own agent factory;
- a model agent that says it is thread-safe (the embedding agents, the trained agent) is built once and shared
  by the worker threads' factories: one embedding model per process, whose ``embedding.max_batch`` embeds the
  crops of episodes in flight in one forward; each session keeps its own texts and counts.

Over ROS one simulator + verifier pair serves one episode at a time; ``evaluator.pairs`` names several pairs,
each in its own namespace, and the evaluator runs one episode per pair at once (:mod:`.pairs`), so the ROS mode
refuses a value above 1 here.

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
IN_FLIGHT_KINDS = ("pipeline", "trained", "clip", "siglip")


def in_flight_problem(episodes_in_flight: int, agent_kind: str, mode: str) -> str | None:
    """Why ``episodes_in_flight`` cannot be used with this agent kind and evaluation mode (None: it can)."""
    if episodes_in_flight <= 1:
        return None
    if mode != "inprocess":
        return (
            f"evaluator.episodes_in_flight={episodes_in_flight} runs only in-process (--mode inprocess): over ROS "
            "one simulator + verifier pair serves one episode at a time; run namespaced pairs side by side instead "
            "(evaluator.pairs)"
        )
    if agent_kind not in IN_FLIGHT_KINDS:
        return (
            f"evaluator.episodes_in_flight={episodes_in_flight} needs agent.kind {' or '.join(IN_FLIGHT_KINDS)}; "
            f"the {agent_kind!r} agent is not known to be shareable across threads"
        )
    return None


def run_in_flight(
    items: Sequence[T],
    work: Callable[[T], R],
    in_flight: int,
    *,
    ahead: int = 0,
    stopping: threading.Event | None = None,
) -> Iterator[tuple[T, R]]:
    """``(item, work(item))`` in the order of ``items``, with up to ``in_flight`` calls running at once.

    ``ahead`` lets that many more items be started beyond ``in_flight`` while the oldest one is still running
    (their results wait for its turn): a worker that finished a short item takes the next one instead of
    waiting for a long one ahead of it. Over ROS each worker is a simulator + verifier pair, so without it a
    pair would stand idle behind another pair's six-step episode.

    An exception from ``work`` is raised here when its item's turn comes (earlier results have been yielded);
    once a call has raised, no item after it is started, and the calls still running finish before this
    returns. ``stopping`` is set when this generator ends early for any reason (an exception, the caller
    giving up): calls that are waiting on something can watch it and return at once.
    """
    if in_flight < 1:
        raise ValueError(f"in_flight must be >= 1, got {in_flight}")
    if ahead < 0:
        raise ValueError(f"ahead must be >= 0, got {ahead}")
    first_failure: list[int] = []  # position of the first item whose call raised (list: set from workers)
    lock = threading.Lock()

    def guarded(position: int, item: T) -> R:
        with lock:
            if first_failure and position > first_failure[0]:  # its exception is raised before this is wanted
                raise _NotStarted()
        try:
            return work(item)
        except BaseException:
            with lock:
                first_failure[:] = [min([position, *first_failure])]
            raise

    pending: deque[tuple[T, Future[R]]] = deque()
    source: Iterator[tuple[int, T]] = enumerate(items)
    pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="episode")
    finished = False
    try:
        for position, item in _take(source, in_flight + ahead):
            pending.append((item, pool.submit(guarded, position, item)))
        while pending:
            item, future = pending.popleft()
            result = future.result()
            for position, following in _take(source, 1):
                pending.append((following, pool.submit(guarded, position, following)))
            yield item, result
        finished = True
    finally:
        if not finished and stopping is not None:
            stopping.set()
        pool.shutdown(wait=True, cancel_futures=True)


class _NotStarted(RuntimeError):
    """An item left unstarted after an earlier one failed (never seen: the earlier failure is raised first)."""


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


def shared_detector(detector: Detector | None, in_flight: int) -> Detector | None:
    """The detector the worker threads share: as it is when it is thread-safe (or only one episode runs),
    else behind :class:`LockedDetector`."""
    if detector is None or in_flight <= 1 or getattr(detector, "thread_safe", False):
        return detector
    return LockedDetector(detector)


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


__all__ = [
    "IN_FLIGHT_KINDS",
    "LockedDetector",
    "PerThread",
    "in_flight_problem",
    "run_in_flight",
    "shared_detector",
]
