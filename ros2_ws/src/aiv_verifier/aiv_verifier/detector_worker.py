"""The ``detector`` node's model thread: it runs Grounding DINO on the newest camera frames, off the executor.

Why a thread and a mailbox: a forward takes far longer than a camera period (grounding-dino-tiny: ~15-20 s per
frame on a CPU, well under 1 s on a GPU), and a camera callback that ran the model would block every other
callback of the node. The callback only files the message in :class:`NewestOnly` (one frame, or
``detector.max_batch`` frames); a frame pushed out before the model took it is dropped and counted. With a
batch above 1, once a frame waits the worker gives others ``detector.batch_window_s`` to arrive and detects all
waiting frames in one forward (cheap on a GPU); a failed batched forward counts each of its frames as a failure.

The worker knows nothing of topics or lifecycles: it hands each frame's boxes to the ``publish`` callback the
node gives it, and the node decides whether an inactive detector publishes them (it does not).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiv_common.image_conversion import ImageConversionError, imgmsg_to_rgb
from sensor_msgs.msg import CompressedImage, Image

from .compressed_image import compressed_to_rgb
from .detection.grounding_dino import (
    STAGES,
    GroundingDinoDetector,
    PhraseDetection,
    StageLatency,
    grounding_query,
)

#: What the worker hands over per detected frame: the camera message, its decoded image, the boxes, the query run.
PublishBoxes = Callable[[Any, np.ndarray, list[PhraseDetection], str], None]


class NewestOnly:
    """A mailbox between the camera callback and the model thread holding the newest ``capacity`` items: a newer
    item pushes out the oldest waiting one (which is then dropped and counted), so the model always works on the
    newest frames. Capacity 1 is a one-frame mailbox."""

    def __init__(self, capacity: int = 1) -> None:
        if capacity < 1:
            raise ValueError(f"mailbox capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self._condition = threading.Condition()
        self._items: list[Any] = []
        self._closed = False
        self.dropped = 0

    def put(self, item: Any) -> None:
        with self._condition:
            self._items.append(item)
            while len(self._items) > self.capacity:
                self._items.pop(0)
                self.dropped += 1
            self._condition.notify_all()

    def put_if_empty(self, item: Any) -> None:
        with self._condition:
            if not self._items:
                self._items.append(item)
                self._condition.notify_all()

    def take(self) -> Any:
        """The oldest waiting item, blocking until there is one; None once closed."""
        items = self.take_all(1, 0.0)
        return items[0] if items else None

    def take_all(self, most: int, window_s: float) -> list[Any]:
        """Up to ``most`` waiting items, oldest first: block until one waits, then give others up to
        ``window_s`` to arrive; empty once closed."""
        with self._condition:
            while not self._items and not self._closed:
                self._condition.wait()
            deadline = time.monotonic() + window_s
            while (
                not self._closed
                and len(self._items) < most
                and (remaining := deadline - time.monotonic()) > 0
            ):
                self._condition.wait(remaining)
            if self._closed:
                return []
            taken, self._items = self._items[:most], self._items[most:]
            return taken

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def clear(self) -> None:
        """Drop every waiting item (not counted as dropped: nobody will ask for them)."""
        with self._condition:
            self._items.clear()


@dataclass
class DetectorStats:
    received: int = 0
    detected: int = 0
    bad_messages: int = 0
    failures: int = 0
    last_error: str = ""
    last_count: int = 0
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    last_stage_seconds: dict[str, float] = field(default_factory=dict)


class DetectionWorker:
    """The model thread and what it shares with the node's callbacks (the query, the last frame, the counters).

    :meth:`start` (configure) starts a thread with a new mailbox, :meth:`stop` (cleanup, shutdown) ends it; the
    counters live as long as the node. ``warn`` logs a frame that could not be detected.
    """

    def __init__(self, publish: PublishBoxes, warn: Callable[[str], object]) -> None:
        self._publish = publish
        self._warn = warn
        self.stats = DetectorStats()
        self.lock = threading.Lock()
        self.query = ""
        #: The frame the model took last: run again when the query changes and no newer frame waits.
        self.last_frame: Any = None
        self.mailbox = NewestOnly(1)
        self.detector: GroundingDinoDetector | None = None
        self.max_batch = 1
        self.batch_window_s = 0.0
        self._thread: threading.Thread | None = None

    def start(
        self, detector: GroundingDinoDetector, query: str, max_batch: int, batch_window_s: float
    ) -> None:
        self.detector = detector
        self.query = query
        self.max_batch = max_batch
        self.batch_window_s = batch_window_s
        self.mailbox = NewestOnly(max_batch)
        self._thread = threading.Thread(target=self._work, name="detector-model", daemon=True)
        self._thread.start()

    def stop(self, join_s: float) -> None:
        """Close the mailbox and wait up to ``join_s`` for a forward under way (the thread is a daemon)."""
        self.mailbox.close()
        if self._thread is not None:
            self._thread.join(timeout=join_s)
            self._thread = None

    def offer(self, message: Image | CompressedImage) -> None:
        """A camera frame for the model (the newest ones win)."""
        with self.lock:
            self.stats.received += 1
        self.mailbox.put(message)

    def set_query(self, text: str) -> None:
        """The newest query wins; a changed caption re-runs the last frame when no newer frame waits."""
        with self.lock:
            changed, self.query = grounding_query(text) != grounding_query(self.query), text
            last = self.last_frame
        if changed and last is not None:
            self.mailbox.put_if_empty(last)  # boxes for the new query even if the camera sends no new frame

    def clear(self) -> None:
        """Forget waiting frames and the last one (a deactivated detector re-runs nothing)."""
        self.mailbox.clear()
        with self.lock:
            self.last_frame = None

    def snapshot(self) -> tuple[DetectorStats, str]:
        """A consistent copy of the counters and the current query."""
        with self.lock:
            stats = DetectorStats(**{**vars(self.stats), "stage_seconds": dict(self.stats.stage_seconds)})
            return stats, self.query

    def _work(self) -> None:
        mailbox = self.mailbox  # this thread's: a reconfigured node has a new mailbox and a new thread
        while messages := mailbox.take_all(self.max_batch, self.batch_window_s):
            with self.lock:
                self.last_frame, query = messages[-1], self.query
            self._detect(messages, query)

    def _detect(self, messages: list[Image | CompressedImage], query: str) -> None:
        """Detect the waiting frames (one forward per batch); hand each frame's boxes on under its header."""
        frames: list[tuple[Any, np.ndarray]] = []
        for message in messages:
            decode: Callable[[Any], np.ndarray] = (
                (lambda m: compressed_to_rgb(m.format, m.data))
                if isinstance(message, CompressedImage)
                else imgmsg_to_rgb
            )
            try:
                frames.append((message, decode(message)))
            except (ImageConversionError, ValueError) as error:
                self._note_error(
                    "bad_messages",
                    f"frame at {message.header.stamp.sec}.{message.header.stamp.nanosec:09d}: {error}",
                )
        if not frames:
            return
        try:
            detector = self.detector
            if detector is None:
                return
            results = detector.detect_phrases_batch([image for _, image in frames], query)
        except Exception as error:  # a model failure (e.g. out of GPU memory) must not end the node: counted
            for _ in frames:  # every frame of a failed forward is a failed detection
                self._note_error("failures", f"detection failed: {type(error).__name__}: {error}")
            return
        for (message, image), (found, latency) in zip(frames, results, strict=True):
            self._record(found, latency)
            self._publish(message, image, found, query)

    def _record(self, found: list[PhraseDetection], latency: StageLatency) -> None:
        with self.lock:
            self.stats.detected += 1
            self.stats.last_count = len(found)
            self.stats.last_stage_seconds = latency.as_dict()
            for stage, seconds in self.stats.last_stage_seconds.items():
                self.stats.stage_seconds[stage] += seconds

    def _note_error(self, counter: str, text: str) -> None:
        with self.lock:
            setattr(self.stats, counter, getattr(self.stats, counter) + 1)
            self.stats.last_error = text
        self._warn(text)
