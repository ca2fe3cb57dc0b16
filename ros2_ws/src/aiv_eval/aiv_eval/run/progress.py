"""A dependency-free progress display for evaluation runs.

On a TTY the bar is redrawn in place with ``\\r`` (at most every ``tty_interval_s``); otherwise (logs, CI) a
plain line is written at most every ``log_interval_s`` seconds, plus one at the end. Rate and ETA count only
the episodes finished in *this* process (resumed ones are shown but excluded from the rate). Running accuracy
is over scored episodes (infra failures excluded). The clock is injectable, so the output is testable.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def format_duration(seconds: float | None) -> str:
    """``H:MM:SS`` (or ``M:SS`` under an hour); ``--:--`` when unknown."""
    if seconds is None or seconds != seconds or seconds == float("inf") or seconds < 0:
        return "--:--"
    total = round(seconds)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ProgressBar:
    """Progress of ``total`` episodes, ``initial`` of which were already done (resume)."""

    def __init__(
        self,
        total: int,
        *,
        initial: int = 0,
        initial_correct: int = 0,
        initial_scored: int = 0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        is_tty: bool | None = None,
        width: int = 24,
        label: str = "eval",
        tty_interval_s: float = 0.1,
        log_interval_s: float = 30.0,
    ) -> None:
        if total < 0 or initial < 0 or initial > total:
            raise ValueError(f"need 0 <= initial <= total, got {initial}/{total}")
        self.total = total
        self.done = initial
        self.initial = initial
        self.correct = initial_correct
        self.scored = initial_scored
        self.infra_failures = 0
        self.stream = stream if stream is not None else sys.stderr
        if is_tty is None:
            isatty = getattr(self.stream, "isatty", None)
            is_tty = bool(isatty and isatty())
        self.is_tty = is_tty
        self.clock = clock
        self.width = width
        self.label = label
        self.tty_interval_s = tty_interval_s
        self.log_interval_s = log_interval_s
        self.start = clock()
        self._last_emit: float | None = None
        self._last_len = 0
        self._emitted_done: int | None = None
        self._closed = False

    # ---------------------------------------------------------------------------------- state

    @property
    def elapsed(self) -> float:
        return max(0.0, self.clock() - self.start)

    @property
    def rate(self) -> float | None:
        """Episodes per second finished in this process (None before the first one)."""
        new = self.done - self.initial
        elapsed = self.elapsed
        if new <= 0 or elapsed <= 0:
            return None
        return new / elapsed

    @property
    def eta(self) -> float | None:
        rate = self.rate
        if rate is None:
            return None if self.done < self.total else 0.0
        return (self.total - self.done) / rate

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.scored if self.scored else None

    def render(self) -> str:
        """The current status line (no ``\\r`` or newline)."""
        frac = self.done / self.total if self.total else 1.0
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        rate = self.rate
        if rate is None:
            rate_s = "-- ep/s"
        elif rate >= 1.0:
            rate_s = f"{rate:.2f} ep/s"
        else:
            rate_s = f"{1.0 / rate:.1f} s/ep"
        acc = self.accuracy
        acc_s = "--" if acc is None else f"{acc:.4f}"
        parts = [
            f"{self.label} [{bar}] {self.done}/{self.total} ({100.0 * frac:.1f}%)",
            rate_s,
            f"elapsed {format_duration(self.elapsed)}",
            f"ETA {format_duration(self.eta)}",
            f"acc {acc_s}",
        ]
        if self.infra_failures:
            parts.append(f"infra failures {self.infra_failures}")
        return " | ".join(parts)

    # ---------------------------------------------------------------------------------- updates

    def update(self, *, correct: bool | None = None, infra_failure: bool = False, n: int = 1) -> None:
        """Count ``n`` finished episodes; ``correct`` (when scored) feeds the running accuracy."""
        self.done = min(self.total, self.done + n)
        if infra_failure:
            self.infra_failures += n
        elif correct is not None:
            self.scored += n
            self.correct += n if correct else 0
        self._maybe_emit(force=self.done >= self.total)

    def _maybe_emit(self, force: bool = False) -> None:
        now = self.clock()
        interval = self.tty_interval_s if self.is_tty else self.log_interval_s
        if not force and self._last_emit is not None and now - self._last_emit < interval:
            return
        if not force and self._last_emit is None and not self.is_tty and now - self.start < interval:
            return
        self._emit()

    def _emit(self) -> None:
        self._last_emit = self.clock()
        self._emitted_done = self.done
        line = self.render()
        if self.is_tty:
            pad = " " * max(0, self._last_len - len(line))
            self.stream.write("\r" + line + pad)
            self._last_len = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Write the final state (and end the TTY line). Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.is_tty:
            self._emit()
            self.stream.write("\n")
            self.stream.flush()
        elif self._emitted_done != self.done:
            self._emit()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
