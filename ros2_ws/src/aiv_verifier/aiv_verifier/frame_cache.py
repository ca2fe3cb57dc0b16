"""Recent camera frames and their side channels, matched by header stamp, with blocking waits.

After a move, the verifier must judge the frame that shows the *new* pose, not whatever arrived last; the move
result names that frame's stamp and the waiter blocks until the image (and, when the agent needs them, the
ground-truth view and detections with the same stamp) are in. Topic callbacks and the action thread run
concurrently, so everything is guarded by one condition variable. Only the newest ``capacity`` stamps are
kept; a frame is a few hundred kB and nothing older is ever asked for.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np


class FrameTimeout(TimeoutError):
    """The wanted frame (or one of its side channels) did not arrive in time; the message says what is missing."""


@dataclass
class FrameEntry:
    stamp_ns: int
    image: np.ndarray | None = None
    image_error: str = ""
    ground_truth: Any = None
    detections: Any = None
    received_at: float = 0.0

    @property
    def has_image(self) -> bool:
        return self.image is not None or bool(self.image_error)


class FrameCache:
    def __init__(self, capacity: int = 16) -> None:
        if capacity < 1:
            raise ValueError(f"frame cache capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._entries: OrderedDict[int, FrameEntry] = OrderedDict()
        self._condition = threading.Condition()
        self._newest: int | None = None

    def _entry(self, stamp_ns: int) -> FrameEntry:
        entry = self._entries.get(stamp_ns)
        if entry is None:
            entry = FrameEntry(stamp_ns, received_at=time.monotonic())
            self._entries[stamp_ns] = entry
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return entry

    def put_image(self, stamp_ns: int, image: np.ndarray | None, error: str = "") -> None:
        with self._condition:
            entry = self._entry(stamp_ns)
            entry.image, entry.image_error = image, error
            if self._newest is None or stamp_ns >= self._newest:
                self._newest = stamp_ns
            self._condition.notify_all()

    def put_ground_truth(self, stamp_ns: int, message: Any) -> None:
        with self._condition:
            self._entry(stamp_ns).ground_truth = message
            self._condition.notify_all()

    def put_detections(self, stamp_ns: int, detections: Any) -> None:
        with self._condition:
            self._entry(stamp_ns).detections = detections
            self._condition.notify_all()

    def wait(
        self,
        stamp_ns: int | None,
        timeout_s: float,
        *,
        need_ground_truth: bool = False,
        need_detections: bool = False,
    ) -> FrameEntry:
        """The complete entry for ``stamp_ns`` (None: the newest frame), or FrameTimeout naming what is missing."""
        deadline = time.monotonic() + timeout_s

        def ready() -> FrameEntry | None:
            key = self._newest if stamp_ns is None else stamp_ns
            entry = self._entries.get(key) if key is not None else None
            if entry is None or not entry.has_image:
                return None
            if entry.image_error:
                return entry
            if need_ground_truth and entry.ground_truth is None:
                return None
            if need_detections and entry.detections is None:
                return None
            return entry

        with self._condition:
            while True:
                entry = ready()
                if entry is not None:
                    return entry
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise FrameTimeout(self._missing(stamp_ns, timeout_s, need_ground_truth, need_detections))
                self._condition.wait(remaining)

    def _missing(self, stamp_ns: int | None, timeout_s: float, need_gt: bool, need_det: bool) -> str:
        wanted = "any frame" if stamp_ns is None else f"the frame stamped {stamp_ns} ns"
        entry = self._entries.get(stamp_ns) if stamp_ns is not None else None
        if entry is None or not entry.has_image:
            return f"no image for {wanted} within {timeout_s:.1f} s"
        missing = [
            name
            for name, need, have in (
                ("ground-truth view", need_gt, entry.ground_truth is not None),
                ("detections", need_det, entry.detections is not None),
            )
            if need and not have
        ]
        return f"{wanted}: image arrived but no {' and '.join(missing)} within {timeout_s:.1f} s"
