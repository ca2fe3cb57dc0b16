"""Episode transcripts in the results format, from either driver.

The in-process path has the session's :class:`AgentStep` objects; the ROS path has the Verdict's StepReport
messages. Both are mapped here onto the same :class:`TranscriptStep` values, field by field, so a ROS run and
an in-process run of the same configuration write byte-identical ``results.jsonl`` lines (float32 message
fields are absorbed by the record's 4-decimal rounding). The messages are read by field name with the codes
of :mod:`aiv_verifier.verdict_codes`, so this module loads no ROS code (the in-process path imports it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiv_dataset.levels import EYE_LEVEL
from aiv_dataset.vocabulary import MoveOutcome
from aiv_verifier.agent.steps import AgentStep
from aiv_verifier.agent.trace import EpisodeTrace
from aiv_verifier.verdict_codes import ACTION_DECIDE, DECISION_YES, STATES_BY_CODE

from .episode import AttributeObservation, TranscriptStep

_OUTCOMES = {
    result.value: ("none" if result is MoveOutcome.DECIDED else result.value) for result in MoveOutcome
}


def trace_level(entry: Any) -> int:
    """The camera height level of the view a trace entry judged: the entry's ``level`` (the one episode loop
    records it), else its step's, else eye level (a trace written before levels existed)."""
    for holder in (entry, getattr(entry, "step", None)):
        level = getattr(holder, "level", None)
        if isinstance(level, int) and not isinstance(level, bool):
            return level
    return EYE_LEVEL


def transcript_from_trace(
    trace: EpisodeTrace[AgentStep], crop_files: Sequence[str | None] | None = None
) -> list[TranscriptStep]:
    steps = []
    for position, entry in enumerate(trace.entries):
        step = entry.step
        steps.append(
            TranscriptStep(
                step=step.step + 1,
                sector=step.sector,
                capture_tag=step.capture_tag,
                duplicate_view=step.duplicate_view,
                detection_confidence=float(step.crop.confidence),
                decision=step.decision.value,
                step_prediction=step.step_prediction.value,
                nav_rel=step.move.direction if step.move else None,
                nbv_reason=step.move.reason if step.move else "",
                outcome=_OUTCOMES[entry.move_result.value],
                trap_view=entry.trap_view,
                attributes=tuple(
                    AttributeObservation(
                        name=row.name,
                        expected=row.evidence_phrase,
                        observed=row.last_answer,
                        state=row.state.value,
                        reconciled_state=row.reconciled_state.value,
                        votes_matched=float(row.votes_matched),
                        votes_contradicted=float(row.votes_contradicted),
                    )
                    for row in step.attributes
                ),
                crop_file=crop_files[position] if crop_files else None,
                level=trace_level(entry),
            )
        )
    return steps


def transcript_from_reports(
    reports: Sequence[Any], crop_files: Sequence[str | None] | None = None
) -> list[TranscriptStep]:
    """From ``Verdict.transcript`` (aiv_interfaces/StepReport messages, read by field name and code)."""
    steps = []
    for position, report in enumerate(reports):
        deciding = report.action == ACTION_DECIDE
        belief = "Yes" if report.belief == DECISION_YES else "No"
        decision = "Unsure" if getattr(report, "abstained", False) else belief
        steps.append(
            TranscriptStep(
                step=int(report.step) + 1,
                sector=int(report.sector),
                capture_tag=report.capture_tag,
                duplicate_view=bool(report.duplicate_view),
                detection_confidence=float(report.detection_confidence),
                decision=decision if deciding else "Unsure",
                step_prediction=belief,
                nav_rel=None if deciding else report.move_direction,
                nbv_reason=report.move_reason,
                outcome=_OUTCOMES.get(report.move_outcome, "none"),
                trap_view=bool(report.trap_view),
                attributes=tuple(
                    AttributeObservation(
                        name=item.name,
                        expected=item.evidence_phrase,
                        observed=item.last_answer,
                        state=STATES_BY_CODE[int(item.state)].value,
                        reconciled_state=STATES_BY_CODE[int(item.reconciled_state)].value,
                        votes_matched=float(item.votes_matched),
                        votes_contradicted=float(item.votes_contradicted),
                    )
                    for item in report.attributes
                ),
                crop_file=crop_files[position] if crop_files else None,
                level=int(getattr(report, "level", EYE_LEVEL)),
            )
        )
    return steps
