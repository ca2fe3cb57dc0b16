"""Conversions between aiv_interfaces messages (and vision_msgs detections) and the agent's plain types.

Kept apart from the node so they can be unit-tested without spinning anything. The codes these messages carry
(decisions, actions, attribute states, the ``calls:`` timings) are defined in :mod:`.verdict_codes`, which loads
no message module: the evaluator reads a Verdict back with them, and the in-process evaluation never imports
this module.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

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
from aiv_models.timing import StageClock

from .agent.frames import LayoutTuple, geometry_from_layout
from .agent.steps import AgentStep, AttributeRow
from .agent.trace import EpisodeSummary, TraceEntry
from .core.crop import Detection
from .core.sector_geometry import SectorGeometry
from .verdict_codes import (
    ACTION_DECIDE,
    ACTION_MOVE,
    CALLS_STAGE_PREFIX,
    DECISION_FAILED,
    DECISION_UNDECIDED,
    STATE_CODES,
    decision_code,
)
from .verification.base import PrivilegedViewInfo


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
    """The capture layout the ground truth carries, each view with its height level."""
    layout: list[LayoutTuple] = [
        (
            int(entry.sector),
            entry.view_type,
            (float(entry.position.x), float(entry.position.y), float(entry.position.z))
            if entry.has_position
            else None,
            int(entry.level),
        )
        for entry in message.layout
    ]
    goal = message.goal_position
    return geometry_from_layout(layout, (float(goal.x), float(goal.y), float(goal.z)))


#: Type names of the two detection messages the verifier reads (as ``ros2 topic info`` and the graph name them).
AIV_DETECTIONS_TYPE = "aiv_interfaces/msg/Detection2DArray"
VISION_DETECTIONS_TYPE = "vision_msgs/msg/Detection2DArray"


class BadDetections(ValueError):
    """A detections message the verifier refuses as a whole; the text says which box and why, in one line."""


@dataclass(frozen=True)
class ReceivedBox:
    """One box as a detector sent it, before any check: pixel corners (xyxy), score and class / phrase."""

    xyxy: tuple[float, float, float, float]
    score: float
    label: str = ""

    def problem(self, image_size: tuple[int, int] | None) -> str | None:
        """Why this box is unusable in an image of ``image_size`` (width, height; None = size unknown), or None.

        A box that only overhangs the border is kept (Grounding DINO's boxes are not clipped; the crop clamps
        them); one that lies wholly outside the image, or is flipped (negative size), says the detector's
        coordinates are not this image's pixels.
        """
        x_min, y_min, x_max, y_max = self.xyxy
        shown = f"[{x_min:g}, {y_min:g}, {x_max:g}, {y_max:g}] (xyxy) score {self.score:g}"
        if not all(math.isfinite(value) for value in (*self.xyxy, self.score)):
            return f"box {shown} has a non-finite value"
        if not 0.0 <= self.score <= 1.0:
            return f"box {shown}: score outside [0, 1]"
        if x_max < x_min or y_max < y_min:
            return f"box {shown} has a negative size ({x_max - x_min:g} x {y_max - y_min:g})"
        if image_size is not None:
            width, height = image_size
            if x_max <= 0 or y_max <= 0 or x_min >= width or y_min >= height:
                return f"box {shown} lies outside the {width}x{height} image"
        return None


def received_boxes(message: Any) -> tuple[str, tuple[ReceivedBox, ...]]:
    """The one conversion of a detections message into plain boxes: ``(query, boxes)``.

    ``aiv_interfaces/Detection2DArray``: corners as sent, its ``query``. ``vision_msgs/Detection2DArray``, read
    the way isaac_ros_grounding_dino fills it: ``bbox.center.position`` and ``bbox.size_x/size_y`` in pixels
    (centre + size), the best of ``results[i].hypothesis`` (``class_id`` = the prompt phrase, ``score``);
    vision_msgs has no query field, so its query is "" (a detector that does not say). The header stamp is the
    image's in both. BadDetections for a vision_msgs detection without any hypothesis (it has no score).
    """
    if isinstance(message, Detection2DArray):
        return message.query, tuple(
            ReceivedBox(
                (float(item.x_min), float(item.y_min), float(item.x_max), float(item.y_max)),
                float(item.score),
                item.label,
            )
            for item in message.detections
        )
    boxes = []
    for position, item in enumerate(message.detections):
        if not item.results:
            raise BadDetections(f"detection {position} has no hypothesis (results is empty): no score")
        best = max(item.results, key=lambda result: float(result.hypothesis.score)).hypothesis
        centre_x, centre_y = float(item.bbox.center.position.x), float(item.bbox.center.position.y)
        half_x, half_y = float(item.bbox.size_x) / 2.0, float(item.bbox.size_y) / 2.0
        boxes.append(
            ReceivedBox(
                (centre_x - half_x, centre_y - half_y, centre_x + half_x, centre_y + half_y),
                float(best.score),
                best.class_id,
            )
        )
    return "", tuple(boxes)


def offered_detections_type(offered: Iterable[str]) -> str | None:
    """``detections_type: auto``: which type to read, from the types the topic's publishers offer: ``aiv`` or
    ``vision_msgs``; ``aiv`` when both are offered; None when neither (no publisher yet: keep what is read)."""
    types = set(offered)
    if AIV_DETECTIONS_TYPE in types:
        return "aiv"
    if VISION_DETECTIONS_TYPE in types:
        return "vision_msgs"
    return None


def checked_detections(
    message: Any, image_size: tuple[int, int] | None = None
) -> tuple[tuple[Detection, ...], str]:
    """The boxes of a detections message of either type (:func:`received_boxes`) as the agent's Detections,
    and the query they were computed for; BadDetections (one line) when any box is unusable
    (:meth:`ReceivedBox.problem`): the whole message is refused, never a part of it."""
    query, boxes = received_boxes(message)
    for position, box in enumerate(boxes):
        problem = box.problem(image_size)
        if problem is not None:
            raise BadDetections(f"detection {position}: {problem}")
    return tuple(Detection(box.xyxy, box.score) for box in boxes), query


def detections_from_message(message: Any) -> tuple[tuple[Detection, ...], list[str]]:
    """Boxes of a recorded detections message and why it was refused: all of them, or none with one note
    (the verifier's rule, :func:`checked_detections`, without an image size)."""
    try:
        return checked_detections(message)[0], []
    except BadDetections as error:
        return (), [str(error)]


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


def step_report(
    step: AgentStep,
    image_stamp,
    move_result: MoveOutcome | None,
    trap_view: bool,
    level: int | None = None,
    move_note: str = "",
) -> StepReport:
    """Feedback / transcript entry of one step; ``move_result`` None while the move is still pending.
    ``level`` is the view's height level (None: the step's own), ``move_note`` why the move was not made
    (:attr:`~aiv_verifier.agent.trace.TraceEntry.move_note`)."""
    report = StepReport(
        step=int(step.step),
        sector=int(step.sector),
        level=int(step.level if level is None else level),
        capture_tag=step.capture_tag,
        duplicate_view=bool(step.duplicate_view),
        detection_confidence=float(step.crop.confidence),
        action=ACTION_DECIDE if step.stopped else ACTION_MOVE,
        move_direction=step.move.direction if step.move else "",
        move_reason=step.move.reason if step.move else "",
        stop_reason=step.stop_reason,
        attributes=[attribute_message(row) for row in step.attributes],
        belief=decision_code(step.step_prediction),
        abstained=bool(step.abstained),
        probability=step.evidence.probability if step.evidence is not None else math.nan,
        move_outcome=move_result.value if move_result is not None else "",
        move_note=move_note,
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
        step_report(entry.step, stamp, entry.move_result, entry.trap_view, entry.level, entry.move_note)
        for entry, stamp in zip(entries, stamps, strict=True)
    ]


def timing_messages(clock: StageClock, model_calls: dict[str, int]) -> list[StageTiming]:
    """Per-stage wall time; backend call counts travel as extra zero-time stages named ``calls:<backend>``."""
    timings = [
        StageTiming(stage=stage, seconds=float(seconds), calls=int(clock.calls.get(stage, 0)))
        for stage, seconds in sorted(clock.seconds.items())
    ]
    timings += [
        StageTiming(stage=f"{CALLS_STAGE_PREFIX}{name}", seconds=0.0, calls=int(count))
        for name, count in sorted(model_calls.items())
    ]
    return timings


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
    notes: Sequence[str] = (),
) -> Verdict:
    """The Verdict of a finished (or failed) episode. Its ``notes`` are ``notes`` (the query's) followed by one
    line per reason a move was refused (``summary.move_notes``: a robot's navigation error, say)."""
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
        else DECISION_UNDECIDED,
        step_predictions=[decision_code(value) for value in summary.step_predictions],
        visited_sectors=[int(sector) for sector in summary.visited_sectors],
        stop_reason=summary.stop_reason,
        failure_reason=summary.failure_reason,
        attributes=[attribute_message(row) for row in attributes],
        query_mode=query_mode,
        category=category,
        notes=[*notes, *summary.move_notes],
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
        decision=DECISION_FAILED,
        first_view_decision=DECISION_UNDECIDED,
        stop_reason=stop_reason,
        failure_reason=reason,
        probability=math.nan,
    )
    verdict.header.stamp = stamp
    return verdict


def cancelled_verdict(request_id: str, reason: str, stamp, reports: Sequence[StepReport]) -> Verdict:
    """A cancelled request's verdict: no answer, but the steps taken before the cancel."""
    verdict = failure_verdict(request_id, "canceled", reason, stamp)
    verdict.transcript = list(reports)
    verdict.steps = len(reports)
    verdict.visited_sectors = list(
        dict.fromkeys(int(report.sector) for report in reports if report.sector >= 0)
    )
    return verdict


def published_request(goal: Any, request_id: str, episode_key: str) -> Any:
    """A copy of a VerifyInstance goal with the request id and episode key the verifier serves it under, as a
    session recorder must replay it."""
    published = type(goal)()
    for name in type(goal).get_fields_and_field_types():
        setattr(published, name, getattr(goal, name))
    published.request_id = request_id
    published.episode_key = episode_key
    return published
