"""What happened in an episode, step by step, in a form both drivers (ROS node, in-process) fill alike.

Each entry pairs the agent's step with the outcome of the move it requested (or ``decided`` when it answered),
so the navigation statistics of spec §4.3 come from one place: failures = refused moves (unreachable or
already visited) + arrivals at trap views; effective views = steps − failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..core.types import Decision
from .session import AgentStep, VerificationSession


class MoveResult(str, Enum):
    """Outcome of the move a step requested; ``decided`` for the answering step."""

    MOVED = "moved"
    STAYED = "stayed"
    UNREACHABLE = "unreachable"
    ALREADY_VISITED = "already_visited"
    REJECTED = "rejected"
    DECIDED = "decided"

    @property
    def navigation_failed(self) -> bool:
        return self in (MoveResult.UNREACHABLE, MoveResult.ALREADY_VISITED)


@dataclass(frozen=True)
class TraceEntry:
    step: AgentStep
    move_result: MoveResult
    trap_view: bool = False  # the move arrived at a view where the target is not clearly visible


@dataclass
class EpisodeTrace:
    """The completed (or failed) episode: entries in order plus how it ended."""

    episode_key: str
    entries: list[TraceEntry] = field(default_factory=list)
    failure_reason: str = ""

    def add(self, step: AgentStep, move_result: MoveResult, trap_view: bool = False) -> None:
        self.entries.append(TraceEntry(step, move_result, trap_view))

    @property
    def failed(self) -> bool:
        return bool(self.failure_reason)

    @property
    def steps(self) -> int:
        return len(self.entries)

    @property
    def nav_fail_unreachable(self) -> int:
        return sum(entry.move_result.navigation_failed for entry in self.entries)

    @property
    def nav_fail_trap(self) -> int:
        return sum(entry.trap_view for entry in self.entries)

    @property
    def effective_views(self) -> int:
        return self.steps - self.nav_fail_unreachable - self.nav_fail_trap


@dataclass(frozen=True)
class EpisodeSummary:
    """The verdict of an episode with everything the evaluator scores and logs."""

    episode_key: str
    decision: Decision | None  # None when the episode failed for infrastructure reasons
    steps: int
    nav_fail_unreachable: int
    nav_fail_trap: int
    effective_views: int
    first_view_prediction: Decision | None
    step_predictions: tuple[Decision, ...]
    stop_reason: str
    failure_reason: str
    confidence: float
    visited_sectors: tuple[int, ...]
    model_calls: dict[str, int]


def summarize(session: VerificationSession, trace: EpisodeTrace) -> EpisodeSummary:
    predictions = tuple(entry.step.step_prediction for entry in trace.entries)
    decision = None if trace.failed else session.final_decision
    last = trace.entries[-1].step if trace.entries else None
    stop_reason = "failure" if trace.failed else (last.stop_reason if last else "")
    return EpisodeSummary(
        episode_key=trace.episode_key,
        decision=decision,
        steps=trace.steps,
        nav_fail_unreachable=trace.nav_fail_unreachable,
        nav_fail_trap=trace.nav_fail_trap,
        effective_views=trace.effective_views,
        first_view_prediction=predictions[0] if predictions else None,
        step_predictions=predictions,
        stop_reason=stop_reason,
        failure_reason=trace.failure_reason,
        confidence=session.confidence() if decision is not None else 0.0,
        visited_sectors=session.visited_order,
        model_calls=dict(sorted(session.model_calls.items())),
    )
