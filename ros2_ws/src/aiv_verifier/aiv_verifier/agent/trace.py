"""What happened in an episode, step by step, filled by the one episode loop whatever the port.

Each entry pairs the agent's step with the outcome of the move it requested (or ``decided`` when it answered),
so the navigation statistics of spec §4.3 come from one place: failures = refused moves (unreachable or
already visited) + arrivals at trap views; effective views = steps − failures. A move that was not made keeps
the move server's words for why (``move_note``), so a robot whose navigation fails says so in the verdict's notes
(:func:`move_note_lines`), not only as a count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from aiv_dataset.vocabulary import MoveOutcome

from ..core.types import Decision
from .protocol import StepView, SummarySource

StepT = TypeVar("StepT", bound=StepView)


@dataclass(frozen=True)
class TraceEntry(Generic[StepT]):
    step: StepT
    move_result: MoveOutcome
    trap_view: bool = False  # the move arrived at a view where the target is not clearly visible
    level: int = 0  # camera height level of the view this step judged (0: eye level)
    move_note: str = ""  # why the requested move was not made, in the move server's words; "" otherwise


@dataclass
class EpisodeTrace(Generic[StepT]):
    """The completed (or failed) episode: entries in order plus how it ended.

    ``failure_reason`` is set when the episode ended without the agent's answer (also when it was
    cancelled, which ``cancelled`` tells apart: a cancel is the caller's wish, not a fault).
    """

    episode_key: str
    entries: list[TraceEntry[StepT]] = field(default_factory=list)
    failure_reason: str = ""
    cancelled: bool = False

    def add(
        self,
        step: StepT,
        move_result: MoveOutcome,
        trap_view: bool = False,
        level: int = 0,
        move_note: str = "",
    ) -> TraceEntry[StepT]:
        entry = TraceEntry(step, move_result, trap_view, level, move_note)
        self.entries.append(entry)
        return entry

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

    @property
    def move_notes(self) -> tuple[str, ...]:
        """One line per distinct reason a move was refused while the episode went on (unreachable or already
        visited; a rejected move ends the episode and is its failure reason), see :func:`move_note_lines`."""
        return move_note_lines(
            (entry.step.move.direction if entry.step.move is not None else "?", entry.move_note)
            for entry in self.entries
            if entry.move_result.navigation_failed and entry.move_note
        )


def move_note_lines(refused: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """Verdict note lines for refused moves given as (direction, the server's reason), in order: one line per
    distinct reason, naming the direction(s) it refused, e.g. "move back-left not made: Nav2 aborted the goal:
    error code 9002 (TF_ERROR)"; "moves back-left, back not made (3 times): ..." when it refused several."""
    directions: dict[str, list[str]] = {}
    for direction, note in refused:
        directions.setdefault(note, []).append(direction)
    lines = []
    for note, asked in directions.items():
        named = list(dict.fromkeys(asked))
        times = f" ({len(asked)} times)" if len(asked) > len(named) else ""
        lines.append(f"{'move' if len(named) == 1 else 'moves'} {', '.join(named)} not made{times}: {note}")
    return tuple(lines)


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
    probability: float | None = None  # evidential: P(the described object); None for the reference fusions
    unverified: tuple[str, ...] = ()  # evidential: attributes no view answered Yes or No
    move_notes: tuple[str, ...] = ()  # why moves were refused, one line per reason (EpisodeTrace.move_notes)


def summarize(agent: SummarySource, trace: EpisodeTrace[Any]) -> EpisodeSummary:
    """The episode's verdict and statistics from the loop's trace and the agent's final state."""
    predictions = tuple(entry.step.step_prediction for entry in trace.entries)
    decision = None if trace.failed else agent.final_decision
    last = trace.entries[-1].step if trace.entries else None
    stop_reason = "failure" if trace.failed else (last.stop_reason if last else "")
    evidence = agent.evidence_summary if decision is not None else None
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
        confidence=agent.confidence() if decision is not None else 0.0,
        visited_sectors=agent.visited_order,
        model_calls=dict(sorted(agent.model_calls.items())),
        probability=evidence.probability if evidence is not None else None,
        unverified=evidence.never_judged if evidence is not None else (),
        move_notes=trace.move_notes,
    )
