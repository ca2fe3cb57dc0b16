"""Recent camera frames and their side channels, matched by header stamp, with blocking waits.

After a move, the verifier must judge the frame that shows the *new* pose, not whatever arrived last; the move
result names that frame's stamp and the waiter blocks until the image (and, when the agent needs them, the
ground-truth view and detections with the same stamp) are in. Topic callbacks and the action thread run
concurrently, so everything is guarded by one condition variable. Only the newest ``capacity`` stamps are
kept; a frame is a few hundred kB and nothing older is ever asked for.

A lossy camera link (a best-effort driver over Wi-Fi) drops frames, and the one a move result names may be
among them. A wait given a window (``window_ns``, the verifier's ``frame_stamp_window_s``) then takes the first
frame stamped within that window after the named one: the robot adapter names a frame taken after the robot
stopped, and any later frame of the window shows the same pose. Frames of one publisher arrive in stamp order,
so the named frame, when it comes, is always the one taken. The benchmark's simulator sends each view once,
reliably, and keeps the default window of 0 (that exact frame only).

A request that names no stamp gets "the newest frame": the image that *arrived* last, not the one with the
largest stamp. Stamps are not a reliable order: a camera whose clock jumps ahead once, a bag played in a loop
or a simulated clock that restarts would otherwise leave one stale frame as the newest for good. When the
cache is given the reader's clock (``clock_ns``, e.g. a node's ROS clock, which follows ``use_sim_time``) and
a bound (``max_ahead_ns``), an image stamped further ahead of that clock than the bound is not taken as the
newest frame; it is still kept under its stamp, so a request that names that stamp gets it. The bound is
checked again when a request takes the newest frame: after the clock goes back (a looped bag, a restarted
simulation) the frame that arrived last before the restart is now far ahead of the clock, and a request waits
for a frame of the new timeline instead of judging that stale one. The cache itself knows nothing of ROS.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

NANOS_PER_SECOND = 1_000_000_000


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
    decode_s: float = 0.0
    """Seconds spent turning the camera message into ``image`` (the ROS path's per-frame cost, for timings)."""
    arrival_s: float = 0.0
    """Seconds from the image's stamp to its message reaching the reader (building, serialising, transport
    and deserialising on one clock; 0 when unknown)."""
    detections_by_query: dict[str, Any] = field(default_factory=dict)
    """The newest detections per text query they were computed for ("" = the detector did not say);
    ``detections`` is the newest of them all."""

    def detections_for(self, query: str | None) -> Any:
        """The detections computed for ``query``, else those of a detector that does not say (""); None when
        neither came. ``query`` None: the newest detections, whatever their query."""
        if query is None:
            return self.detections
        found = self.detections_by_query.get(query)
        return self.detections_by_query.get("") if found is None else found

    @property
    def has_image(self) -> bool:
        return self.image is not None or bool(self.image_error)


@dataclass(frozen=True)
class StampAhead:
    """An image stamped implausibly far ahead of the reader's clock (kept, but never the newest frame)."""

    stamp_ns: int
    ahead_ns: int

    @property
    def ahead_s(self) -> float:
        return self.ahead_ns / NANOS_PER_SECOND


class FrameCache:
    """Frames by stamp, the latest arrival as the newest frame; see the module docstring.

    ``clock_ns`` returns the reader's current time in nanoseconds, or None while it has none (a simulated
    clock before its first tick): then no stamp is judged. ``max_ahead_ns`` is how far ahead of that time an
    image's stamp may be and still be taken as the newest frame; both or neither must be given.
    """

    def __init__(
        self,
        capacity: int = 16,
        *,
        clock_ns: Callable[[], int | None] | None = None,
        max_ahead_ns: int | None = None,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"frame cache capacity must be >= 1, got {capacity}")
        if (clock_ns is None) != (max_ahead_ns is None):
            raise ValueError(
                "give the frame cache both a clock and a bound on stamps ahead of it, or neither"
            )
        if max_ahead_ns is not None and max_ahead_ns <= 0:
            raise ValueError(f"the bound on stamps ahead of the clock must be > 0 ns, got {max_ahead_ns}")
        self.capacity = capacity
        self._clock_ns = clock_ns
        self._max_ahead_ns = max_ahead_ns
        self._entries: OrderedDict[int, FrameEntry] = OrderedDict()
        self._condition = threading.Condition()
        self._newest: int | None = None  # stamp of the image that arrived last and may be the newest frame
        self._ahead_count = 0
        self._last_ahead: StampAhead | None = None
        self._interrupted = ""  # why every wait ends now (the node is stopping or was deactivated); "" = wait

    def interrupt(self, reason: str) -> None:
        """End every wait under way and every later one at once with FrameTimeout(``reason``), until
        :meth:`resume`: a node that stops serving must not leave a request waiting out its frame timeout."""
        with self._condition:
            self._interrupted = reason
            self._condition.notify_all()

    def resume(self) -> None:
        """Let waits wait again (the node serves again)."""
        with self._condition:
            self._interrupted = ""

    @property
    def stamps_ahead(self) -> int:
        """How many images so far were stamped too far ahead of the clock to be taken as the newest frame."""
        with self._condition:
            return self._ahead_count

    def _entry(self, stamp_ns: int) -> FrameEntry:
        entry = self._entries.get(stamp_ns)
        if entry is None:
            entry = FrameEntry(stamp_ns, received_at=time.monotonic())
            self._entries[stamp_ns] = entry
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return entry

    def _too_far_ahead(self, stamp_ns: int) -> StampAhead | None:
        if self._clock_ns is None or self._max_ahead_ns is None:
            return None
        now = self._clock_ns()
        if now is None:
            return None
        ahead = stamp_ns - now
        return StampAhead(stamp_ns, ahead) if ahead > self._max_ahead_ns else None

    def put_image(
        self,
        stamp_ns: int,
        image: np.ndarray | None,
        error: str = "",
        *,
        decode_s: float = 0.0,
        arrival_s: float = 0.0,
    ) -> StampAhead | None:
        """Store an image (or why it cannot be decoded) under its stamp; ``decode_s`` and ``arrival_s`` are kept
        with it for the per-stage timings (see :class:`FrameEntry`).

        Returns None when it is the newest frame now; a :class:`StampAhead` when its stamp is too far ahead of
        the clock, in which case it is kept for requests naming its stamp and the newest frame stays as it was.
        """
        ahead = self._too_far_ahead(stamp_ns)  # the clock is read outside the lock
        with self._condition:
            entry = self._entry(stamp_ns)
            entry.image, entry.image_error = image, error
            entry.decode_s, entry.arrival_s = decode_s, arrival_s
            if ahead is None:
                self._newest = stamp_ns
            else:
                self._ahead_count += 1
                self._last_ahead = ahead
            self._condition.notify_all()
        return ahead

    def put_ground_truth(self, stamp_ns: int, message: Any) -> None:
        with self._condition:
            self._entry(stamp_ns).ground_truth = message
            self._condition.notify_all()

    def image_size(self, stamp_ns: int) -> tuple[int, int] | None:
        """(width, height) of the decoded image stamped ``stamp_ns``; None when it is not (or no longer) here."""
        with self._condition:
            entry = self._entries.get(stamp_ns)
            if entry is None or entry.image is None:
                return None
            height, width = entry.image.shape[:2]
            return int(width), int(height)

    def put_detections(self, stamp_ns: int, detections: Any, query: str = "") -> None:
        """Store the detections of one frame, computed for the text ``query`` ("" = not said)."""
        with self._condition:
            entry = self._entry(stamp_ns)
            entry.detections = detections
            entry.detections_by_query[query] = detections
            self._condition.notify_all()

    def wait(
        self,
        stamp_ns: int | None,
        timeout_s: float,
        *,
        need_ground_truth: bool = False,
        need_detections: bool = False,
        window_ns: int = 0,
    ) -> FrameEntry:
        """The complete entry for ``stamp_ns`` (None: the newest frame), or FrameTimeout naming what is missing.

        With ``stamp_ns`` None the newest frame is re-read while waiting: if another image arrives before the
        newest one is complete, the wait moves on to that one. With a ``window_ns`` the earliest image stamped
        from ``stamp_ns`` to ``stamp_ns + window_ns`` is the one waited on (see the module docstring).
        """
        if window_ns < 0:
            raise ValueError(f"window_ns must be >= 0, got {window_ns}")

        def usable(entry: FrameEntry | None) -> FrameEntry | None:
            if entry is None or not entry.has_image:
                return None
            if entry.image_error:
                return entry
            if need_ground_truth and entry.ground_truth is None:
                return None
            if need_detections and entry.detections is None:
                return None
            return entry

        def ready() -> FrameEntry | None:
            if stamp_ns is not None:
                # The earliest complete frame of the window: a side channel of the named frame that was
                # dropped too does not hold the wait up when a later frame of the window is complete.
                for key in self._window(stamp_ns, window_ns):
                    if (entry := usable(self._entries.get(key))) is not None:
                        return entry
                return None
            newest = self._newest
            if newest is not None and self._too_far_ahead(newest) is not None:
                return None  # the clock went back after it arrived: not the newest frame any more
            return usable(self._entries.get(newest)) if newest is not None else None

        return self._wait_for(
            ready,
            timeout_s,
            lambda: self._missing(stamp_ns, timeout_s, need_ground_truth, need_detections, window_ns),
        )

    def _window(self, stamp_ns: int, window_ns: int) -> list[int]:
        """The stamps a wait for ``stamp_ns`` may take, earliest first: that one, and with a window every
        stamp in it that has an entry."""
        if window_ns == 0:
            return [stamp_ns]
        return sorted(stamp for stamp in self._entries if stamp_ns <= stamp <= stamp_ns + window_ns)

    def _first_image_from(self, stamp_ns: int, window_ns: int) -> int:
        """The earliest stamp of the window that has an image (``stamp_ns`` when none has)."""
        images = [
            key
            for key in self._window(stamp_ns, window_ns)
            if (entry := self._entries.get(key)) is not None and entry.has_image
        ]
        return images[0] if images else stamp_ns

    def wait_detections(
        self, stamp_ns: int, timeout_s: float, *, need_ground_truth: bool = False, query: str | None = None
    ) -> FrameEntry:
        """The entry of ``stamp_ns`` once its detections are in, or of the first newer frame that has them.

        A detector that works on the newest frame only (a slow model) skips frames; when it skipped this one,
        the next frame it did detect is as good a view (the camera has not moved since this frame's pose),
        so that frame is judged instead of failing. FrameTimeout when no such frame comes within ``timeout_s``.

        ``query`` (None: any): only detections computed for this text query, or by a detector that does not
        say (""), count. Boxes the detector computed for an earlier request's query, for this very frame or
        still in flight, are ignored; the returned entry is a copy whose ``detections`` are the accepted ones.
        """

        def ready() -> FrameEntry | None:
            candidates = [
                entry
                for stamp, entry in self._entries.items()
                if stamp >= stamp_ns
                and entry.image is not None
                and entry.detections_for(query) is not None
                and (entry.ground_truth is not None or not need_ground_truth)
            ]
            if not candidates:
                return None
            entry = min(candidates, key=lambda entry: entry.stamp_ns)
            return entry if query is None else replace(entry, detections=entry.detections_for(query))

        return self._wait_for(ready, timeout_s, lambda: self._no_detections(stamp_ns, timeout_s, query))

    def _wait_for(
        self, ready: Callable[[], FrameEntry | None], timeout_s: float, missing: Callable[[], str]
    ) -> FrameEntry:
        """Block until ``ready()`` (evaluated under the lock, again after every change) gives an entry, or raise
        FrameTimeout with ``missing()`` once ``timeout_s`` has passed."""
        deadline = time.monotonic() + timeout_s
        with self._condition:
            while True:
                entry = ready()
                if entry is not None:
                    return entry
                if self._interrupted:
                    raise FrameTimeout(self._interrupted)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise FrameTimeout(missing())
                self._condition.wait(remaining)

    def _no_detections(self, stamp_ns: int, timeout_s: float, query: str | None) -> str:
        text = (
            f"no detections for the frame stamped {stamp_ns} ns (or a newer one)"
            + ("" if query is None else f" computed for the query {query!r}")
            + f" within {timeout_s:.1f} s (detections_timeout_s): is the detector running and fast enough?"
        )
        others = sorted(
            {
                other
                for stamp, entry in self._entries.items()
                if stamp >= stamp_ns
                for other in entry.detections_by_query
                if other != query
            }
        )
        if query is not None and others:
            text += (
                f" Detections came for {', '.join(map(repr, others))} only: is the detector listening on the "
                "verifier's detection_query_topic?"
            )
        return text

    def _missing(
        self, stamp_ns: int | None, timeout_s: float, need_gt: bool, need_det: bool, window_ns: int = 0
    ) -> str:
        wanted = "any frame" if stamp_ns is None else f"the frame stamped {stamp_ns} ns"
        if stamp_ns is not None and window_ns:
            wanted += f" (or up to {window_ns / NANOS_PER_SECOND:g} s later)"
        key = self._newest if stamp_ns is None else self._first_image_from(stamp_ns, window_ns)
        entry = self._entries.get(key) if key is not None else None
        if entry is None or not entry.has_image:
            text = f"no image for {wanted} within {timeout_s:.1f} s"
            if stamp_ns is None and self._last_ahead is not None and self._newest is None:
                text += f"; {self._ahead_summary()}"
            return text
        if stamp_ns is None:
            wanted = f"the newest frame (stamped {entry.stamp_ns} ns)"
        elif entry.stamp_ns != stamp_ns:
            wanted = f"the frame stamped {entry.stamp_ns} ns (the first one from {stamp_ns} ns on)"
        missing = [
            name
            for name, need, have in (
                ("ground-truth view", need_gt, entry.ground_truth is not None),
                ("detections", need_det, entry.detections is not None),
            )
            if need and not have
        ]
        return f"{wanted}: image arrived but no {' and '.join(missing)} within {timeout_s:.1f} s"

    def _ahead_summary(self) -> str:
        assert self._last_ahead is not None and self._max_ahead_ns is not None
        bound_s = self._max_ahead_ns / NANOS_PER_SECOND
        return (
            f"{self._ahead_count} image(s) came stamped more than {bound_s:g} s ahead of this node's clock "
            f"(the last one by {self._last_ahead.ahead_s:.3f} s) and are never taken as the newest frame; "
            "check the camera's clock (or use_sim_time) or name the frame's stamp in the request"
        )
