"""Wall time and call counts per stage, shared by the model backends and the agents' sessions.

Timings are reported (diagnostics, step reports, benchmarks) and never influence a decision or a record.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

__all__ = ["StageClock"]


@dataclass
class StageClock:
    """Wall seconds and calls per named stage, accumulated since construction."""

    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    def add(self, stage: str, started: float) -> None:
        """Count one call of ``stage`` that began at ``started`` (a ``time.perf_counter()`` value)."""
        self.seconds[stage] = self.seconds.get(stage, 0.0) + (time.perf_counter() - started)
        self.calls[stage] = self.calls.get(stage, 0) + 1
