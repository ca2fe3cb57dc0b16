"""What the ``verifier`` node counts while it serves, for its diagnostics.

Kept apart from the node (and free of ROS) because the counting has rules of its own: camera callbacks and
the goal thread update the counts concurrently, an image stamped ahead of the clock is counted every time
but warned about at most once per period (a camera with a wrong clock would otherwise flood the log), and
the per-stage timings of every served request add up into mean latencies.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

#: Seconds between two warnings about images stamped too far ahead of the clock (each one is counted).
STAMP_AHEAD_WARNING_PERIOD_S = 10.0


class ServiceStats:
    """Requests served, answered and failed, bad messages, images stamped ahead, and stage timings."""

    def __init__(
        self,
        warning_period_s: float = STAMP_AHEAD_WARNING_PERIOD_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self._period_s = warning_period_s
        self._monotonic = monotonic
        self.counts = {"served": 0, "answered": 0, "failed": 0, "bad_messages": 0, "stamps_ahead": 0}
        self.last_error = ""
        self.stage_seconds: dict[str, float] = {}
        self.stage_calls: dict[str, int] = {}
        self._warned_at: float | None = None
        self._unreported = 0

    def bad_message(self, text: str) -> None:
        """Count a message that could not be used; ``text`` becomes the last error."""
        with self._lock:
            self.counts["bad_messages"] += 1
            self.last_error = text

    def stamp_ahead(self) -> int | None:
        """Count an image stamped ahead of the clock; the number of such images to report when a warning is
        due (the first one, then at most once per period), else None."""
        now = self._monotonic()
        with self._lock:
            self.counts["stamps_ahead"] += 1
            self._unreported += 1
            if self._warned_at is not None and now - self._warned_at < self._period_s:
                return None
            self._warned_at, count = now, self._unreported
            self._unreported = 0
            return count

    def request_ended(self, failed: bool, failure_reason: str, clock: Any | None) -> None:
        """Count one served request; ``clock`` (a StageClock, None for a refused request) adds its timings."""
        with self._lock:
            self.counts["served"] += 1
            self.counts["failed" if failed else "answered"] += 1
            if failure_reason:
                self.last_error = failure_reason
            if clock is not None:
                for stage, seconds in clock.seconds.items():
                    self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds
                    self.stage_calls[stage] = self.stage_calls.get(stage, 0) + clock.calls.get(stage, 0)

    def diagnostics(self) -> tuple[bool, str, list[tuple[str, str]]]:
        """(whether anything went wrong, a one-line summary, key-value pairs with the mean stage latencies)."""
        with self._lock:
            counts, last_error = dict(self.counts), self.last_error
            stages = {
                stage: self.stage_seconds[stage] / max(1, self.stage_calls.get(stage, 0))
                for stage in self.stage_seconds
            }
        troubles = bool(counts["bad_messages"] or counts["failed"] or counts["stamps_ahead"])
        summary = (
            f"{counts['answered']} answered, {counts['failed']} failed, {counts['bad_messages']} bad messages, "
            f"{counts['stamps_ahead']} images stamped ahead of the clock"
        )
        values = [
            ("last_error", last_error),
            ("stamps_ahead", str(counts["stamps_ahead"])),
            ("bad_messages", str(counts["bad_messages"])),
            *(
                (f"latency_ms.{stage}", f"{seconds * 1000.0:.2f}")
                for stage, seconds in sorted(stages.items())
            ),
        ]
        return troubles, summary, values


def add_stage_times(into: Any, other: Any) -> None:
    """Add the seconds and calls of one StageClock to another (the ROS path's stages to the agent's)."""
    for stage, seconds in other.seconds.items():
        into.seconds[stage] = into.seconds.get(stage, 0.0) + seconds
        into.calls[stage] = into.calls.get(stage, 0) + other.calls.get(stage, 0)
