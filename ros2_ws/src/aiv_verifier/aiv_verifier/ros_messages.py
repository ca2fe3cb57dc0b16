"""Conversions between aiv_interfaces messages and the agent's plain types.

Kept apart from the node so they can be unit-tested without spinning anything and reused by the evaluator,
which rebuilds the same episode records from a Verdict that the in-process path builds from the session.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aiv_dataset.vocabulary import MoveOutcome
from aiv_interfaces.msg import AttributeState as AttributeStateMsg
from aiv_interfaces.msg import (
    Detection2D,
    Detection2DArray,
    GroundTruthView,
    StageTiming,
    StepReport,
    Verdict,
)

from .agent.frames import geometry_from_layout
from .agent.session import AgentStep, AttributeRow, StageClock
from .agent.trace import EpisodeSummary, TraceEntry
from .core.crop import Detection
from .core.sector_geometry import SectorGeometry
from .core.types import AttributeState, Decision
from .verification.base import PrivilegedViewInfo

STATE_CODES = {
    AttributeState.MISSING: AttributeStateMsg.STATE_MISSING,
    AttributeState.MATCHED: AttributeStateMsg.STATE_MATCHED,
    AttributeState.CONTRADICTED: AttributeStateMsg.STATE_CONTRADICTED,
}
STATES_BY_CODE = {code: state for state, code in STATE_CODES.items()}
DECISION_CODES = {Decision.NO: Verdict.DECISION_NO, Decision.YES: Verdict.DECISION_YES}


def decision_code(decision: Decision | None) -> int:
    """Verdict code of a decision; Unsure maps to UNDECIDED, None (no answer) to FAILED."""
    if decision is None:
        return Verdict.DECISION_FAILED
    return DECISION_CODES.get(decision, Verdict.DECISION_UNDECIDED)


def decision_from_code(code: int) -> Decision | None:
    """Inverse of :func:`decision_code`: FAILED gives None, UNDECIDED gives Unsure."""
    if code == Verdict.DECISION_YES:
        return Decision.YES
    if code == Verdict.DECISION_NO:
        return Decision.NO
    if code == Verdict.DECISION_UNDECIDED:
        return Decision.UNSURE
    return None


def privileged_from_ground_truth(message: GroundTruthView) -> PrivilegedViewInfo:
    return PrivilegedViewInfo(
        episode_path=message.episode_path,
        capture_tag=message.capture_tag,
        target_object_id=message.target_object_id,
        mask_meets_threshold=bool(message.mask_meets_threshold),
        visible_attributes=frozenset(message.visible_attributes) if message.has_visible_attributes else None,
    )


def gt_box_from_ground_truth(message: GroundTruthView) -> tuple[float, float, float, float] | None:
    if not message.has_box:
        return None
    box = message.box
    return (float(box.x_min), float(box.y_min), float(box.x_max), float(box.y_max))


def geometry_from_ground_truth(message: GroundTruthView) -> SectorGeometry | None:
    layout = [
        (
            int(entry.sector),
            entry.view_type,
            (float(entry.position.x), float(entry.position.y), float(entry.position.z))
            if entry.has_position
            else None,
        )
        for entry in message.layout
    ]
    goal = message.goal_position
    return geometry_from_layout(layout, (float(goal.x), float(goal.y), float(goal.z)))


def detections_from_message(message: Detection2DArray) -> tuple[tuple[Detection, ...], list[str]]:
    """Boxes of an external detector; entries with a score outside [0, 1] or non-finite values are dropped."""
    kept: list[Detection] = []
    notes: list[str] = []
    for position, item in enumerate(message.detections):
        values = (item.x_min, item.y_min, item.x_max, item.y_max, item.score)
        if not all(math.isfinite(float(value)) for value in values):
            notes.append(f"detection {position}: non-finite value")
            continue
        if not 0.0 <= float(item.score) <= 1.0:
            notes.append(f"detection {position}: score {item.score} outside [0, 1]")
            continue
        kept.append(
            Detection(
                (float(item.x_min), float(item.y_min), float(item.x_max), float(item.y_max)),
                float(item.score),
            )
        )
    return tuple(kept), notes


def attribute_message(row: AttributeRow) -> AttributeStateMsg:
    return AttributeStateMsg(
        name=row.name,
        type=row.type,
        evidence_phrase=row.evidence_phrase,
        weight=int(row.weight),
        state=STATE_CODES[row.state],
        reconciled_state=STATE_CODES[row.reconciled_state],
        votes_matched=float(row.votes_matched),
        votes_contradicted=float(row.votes_contradicted),
        weight_matched=float(row.weight_matched),
        weight_contradicted=float(row.weight_contradicted),
        weight_missing=float(row.weight_missing),
        converged=bool(row.converged),
        uncertainty=float(row.uncertainty),
        belief=float(row.belief),
        disbelief=float(row.disbelief),
        claim_kind=row.claim_kind,
        last_answer=row.last_answer,
        last_reason=row.last_reason,
    )


def step_report(step: AgentStep, image_stamp, move_result: MoveOutcome | None, trap_view: bool) -> StepReport:
    """Feedback / transcript entry of one step; ``move_result`` None while the move is still pending."""
    report = StepReport(
        step=int(step.step),
        sector=int(step.sector),
        capture_tag=step.capture_tag,
        duplicate_view=bool(step.duplicate_view),
        detection_confidence=float(step.crop.confidence),
        action=StepReport.ACTION_DECIDE if step.stopped else StepReport.ACTION_MOVE,
        move_direction=step.move.direction if step.move else "",
        move_reason=step.move.reason if step.move else "",
        stop_reason=step.stop_reason,
        attributes=[attribute_message(row) for row in step.attributes],
        belief=decision_code(step.step_prediction),
        abstained=bool(step.abstained),
        probability=step.evidence.probability if step.evidence is not None else math.nan,
        move_outcome=move_result.value if move_result is not None else "",
        trap_view=bool(trap_view),
        has_crop_box=step.crop.box is not None,
    )
    if image_stamp is not None:
        report.image_stamp = image_stamp
    if step.crop.box is not None:
        left, top, right, bottom = step.crop.box
        report.crop_box = Detection2D(
            x_min=float(left),
            y_min=float(top),
            x_max=float(right),
            y_max=float(bottom),
            score=float(step.crop.confidence),
        )
    return report


def transcript_messages(entries: Sequence[TraceEntry[AgentStep]], stamps: Sequence) -> list[StepReport]:
    return [
        step_report(entry.step, stamp, entry.move_result, entry.trap_view)
        for entry, stamp in zip(entries, stamps, strict=True)
    ]


def timing_messages(clock: StageClock, model_calls: dict[str, int]) -> list[StageTiming]:
    """Per-stage wall time; backend call counts travel as extra zero-time stages named ``calls:<backend>``."""
    timings = [
        StageTiming(stage=stage, seconds=float(seconds), calls=int(clock.calls.get(stage, 0)))
        for stage, seconds in sorted(clock.seconds.items())
    ]
    timings += [
        StageTiming(stage=f"calls:{name}", seconds=0.0, calls=int(count))
        for name, count in sorted(model_calls.items())
    ]
    return timings


def model_calls_from_timings(timings: Sequence[StageTiming]) -> dict[str, int]:
    return {
        item.stage.split(":", 1)[1]: int(item.calls) for item in timings if item.stage.startswith("calls:")
    }


def verdict_message(
    summary: EpisodeSummary,
    *,
    request_id: str,
    query_mode: str,
    category: str,
    attributes: Sequence[AttributeRow],
    elapsed_s: float,
    clock: StageClock,
    transcript: Sequence[StepReport],
    stamp,
) -> Verdict:
    verdict = Verdict(
        request_id=request_id,
        decision=decision_code(summary.decision),
        confidence=float(summary.confidence),
        probability=summary.probability if summary.probability is not None else math.nan,
        unverified_attributes=list(summary.unverified),
        steps=int(summary.steps),
        effective_views=int(summary.effective_views),
        nav_fail_unreachable=int(summary.nav_fail_unreachable),
        nav_fail_trap=int(summary.nav_fail_trap),
        first_view_decision=decision_code(summary.first_view_prediction)
        if summary.first_view_prediction is not None
        else Verdict.DECISION_UNDECIDED,
        step_predictions=[decision_code(value) for value in summary.step_predictions],
        visited_sectors=[int(sector) for sector in summary.visited_sectors],
        stop_reason=summary.stop_reason,
        failure_reason=summary.failure_reason,
        attributes=[attribute_message(row) for row in attributes],
        query_mode=query_mode,
        category=category,
        elapsed_s=float(elapsed_s),
        timings=timing_messages(clock, summary.model_calls),
        transcript=list(transcript),
    )
    verdict.header.stamp = stamp
    return verdict


def failure_verdict(request_id: str, stop_reason: str, reason: str, stamp) -> Verdict:
    """A verdict that carries no answer: a refused goal, a timeout, a cancel or a backend error."""
    verdict = Verdict(
        request_id=request_id,
        decision=Verdict.DECISION_FAILED,
        first_view_decision=Verdict.DECISION_UNDECIDED,
        stop_reason=stop_reason,
        failure_reason=reason,
        probability=math.nan,
    )
    verdict.header.stamp = stamp
    return verdict
