"""Gather model calls that arrive together and run them as one batch.

Why: a GPU answers a batch of requests in little more time than one (autoregressive decoding is bound by the
per-token loop, not by arithmetic), but a robot's verifier issues its calls from several threads -- the attribute
calls of one view, the calls of several episodes in flight. :class:`RequestBatcher` lets each caller block on its
own call while one worker thread runs whatever arrived within ``window_s`` of the first request (at most
``max_batch`` of them, and only requests with the same ``group`` key together) through ``run_batch``.

Failures: when ``run_batch`` raises, every request of that batch gets the exception, so each caller counts its own
failed call; the worker keeps serving. A batch of one is the one-at-a-time path, so the answers of a caller that
happens to be alone come from the same code.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")


@dataclass(eq=False)  # identity: removing one from the queue must not compare requests (tensors cannot)
class _Pending(Generic[RequestT, ResultT]):
    request: RequestT
    group: Hashable
    future: Future[ResultT] = field(default_factory=Future)


@dataclass
class BatchStats:
    """How the batches came out: calls, forwards and the largest batch (for diagnostics and benchmarks)."""

    calls: int = 0
    batches: int = 0
    largest: int = 0

    @property
    def mean_size(self) -> float:
        return self.calls / self.batches if self.batches else 0.0


class RequestBatcher(Generic[RequestT, ResultT]):
    """Runs ``run_batch(requests, group)`` on batches of concurrent :meth:`submit` calls (see the module doc)."""

    def __init__(
        self,
        run_batch: Callable[[Sequence[RequestT], Any], Sequence[ResultT]],
        *,
        max_batch: int,
        window_s: float,
        name: str = "batcher",
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        if window_s < 0:
            raise ValueError(f"window_s must be >= 0, got {window_s}")
        self.run_batch = run_batch
        self.max_batch = max_batch
        self.window_s = window_s
        self.stats = BatchStats()
        self._queue: list[_Pending[RequestT, ResultT]] = []
        self._ready = threading.Condition()
        self._worker = threading.Thread(target=self._serve, name=name, daemon=True)
        self._worker.start()

    def submit(self, request: RequestT, group: Hashable = None) -> ResultT:
        """The result of ``request`` (blocks until its batch ran); re-raises the batch's exception."""
        pending: _Pending[RequestT, ResultT] = _Pending(request, group)
        with self._ready:
            self._queue.append(pending)
            self._ready.notify_all()
        return pending.future.result()

    def _take_batch(self) -> list[_Pending[RequestT, ResultT]]:
        """Wait for a first request, then up to ``window_s`` for more of its group; remove and return them."""
        with self._ready:
            while not self._queue:
                self._ready.wait()
            group = self._queue[0].group
            deadline = time.monotonic() + self.window_s
            while (
                sum(1 for item in self._queue if item.group == group) < self.max_batch
                and (remaining := deadline - time.monotonic()) > 0
            ):
                self._ready.wait(remaining)
            batch = [item for item in self._queue if item.group == group][: self.max_batch]
            for item in batch:
                self._queue.remove(item)
            return batch

    def _serve(self) -> None:
        while True:
            batch = self._take_batch()
            try:
                results = list(self.run_batch([item.request for item in batch], batch[0].group))
                if len(results) != len(batch):
                    raise RuntimeError(f"a batch of {len(batch)} requests gave {len(results)} results")
            except BaseException as error:  # every caller of the batch learns of the failure
                for item in batch:
                    item.future.set_exception(error)
            else:
                for item, result in zip(batch, results, strict=True):
                    item.future.set_result(result)
            self.stats.calls += len(batch)
            self.stats.batches += 1
            self.stats.largest = max(self.stats.largest, len(batch))
