"""The one episode loop: an agent (:mod:`.protocol`) against a port (:mod:`.port`), step by step.

Every way of running an episode -- the verifier node over ROS, the evaluator in-process, later bag replay and
a robot -- goes through :func:`run_episode`, so the rules of an episode exist once: one frame per step, the
agent answers or names a move, the move's outcome is recorded with the step (with the server's reason when the
move was not made), a refused move ends the episode, the budget bounds it, and each way it can end without an
answer has one failure reason. An answer that rests on no model output (every language-model call of the episode
failed: the agent's ``model_outage``) is one of them.
"""

from __future__ import annotations

from collections.abc import Callable

from aiv_dataset.vocabulary import MoveOutcome

from .port import EpisodePort, FrameRequest, FrameUnavailable, FrameUnusable, MoveCancelled, MoveFailed
from .protocol import EpisodeAgent
from .steps import ViewFrame
from .trace import EpisodeTrace, StepT, TraceEntry

#: Failure reason of an episode its caller cancelled.
CANCELLED_REASON = "the request was canceled"

#: Called after every step whose outcome is known (the answering step included), e.g. to publish feedback.
StepHook = Callable[[ViewFrame, TraceEntry[StepT]], None]


def run_episode(
    agent: EpisodeAgent[StepT],
    port: EpisodePort,
    *,
    episode_key: str,
    budget: int,
    start_stamp: int | None = None,
    start_sector: int = 0,
    start_level: int = 0,
    on_step: StepHook[StepT] | None = None,
) -> EpisodeTrace[StepT]:
    """Play one episode to its end and return the trace; a failure is the trace's ``failure_reason``.

    ``budget`` is the most steps the loop takes, every move counted alike (``up`` / ``down`` as planar ones);
    ``start_stamp`` / ``start_sector`` / ``start_level`` describe the first view (None: the port's newest
    frame). The loop follows the (sector, level) each move result names, for ports whose frames do not. An
    exception from the agent ends the episode as a failure rather than propagating, because a backend bug must
    cost one episode, not the process serving it.
    """
    trace: EpisodeTrace[StepT] = EpisodeTrace(episode_key)
    stamp, sector, navigation_failed = start_stamp, start_sector, False
    level = start_level
    for step_count in range(budget):
        if port.cancelled():
            trace.cancelled = True
            trace.failure_reason = CANCELLED_REASON
            return trace
        try:
            frame = port.frame(FrameRequest(stamp, step_count, sector, navigation_failed, level))
        except FrameUnavailable as error:
            trace.failure_reason = f"frame timeout at step {step_count}: {error}"
            return trace
        except FrameUnusable as error:
            trace.failure_reason = f"step {step_count}: the frame cannot be used: {error}"
            return trace
        try:
            step = agent.observe(frame)
        except Exception as error:
            trace.failure_reason = f"agent error at step {step_count}: {error!r}"
            return trace
        seen_level = frame.current_level
        if step.stopped:
            _report(on_step, frame, trace.add(step, MoveOutcome.DECIDED, level=seen_level))
            outage = _model_outage(agent)
            if outage:  # the step stays in the transcript; the answer does not stand
                trace.failure_reason = f"step {step_count}: {outage}"
            return trace
        if step.move is None:
            trace.failure_reason = f"agent error at step {step_count}: neither an answer nor a move"
            return trace
        direction = step.move.direction
        try:
            report = port.move(direction)
        except MoveCancelled as error:
            # The view was judged and the move asked for: the step stays in the transcript, its move refused.
            _report(
                on_step, frame, trace.add(step, MoveOutcome.REJECTED, level=seen_level, move_note=str(error))
            )
            trace.cancelled = True
            trace.failure_reason = (
                f"{CANCELLED_REASON} during the move {direction!r} of step {step_count} ({error})"
            )
            return trace
        except MoveFailed as error:
            trace.failure_reason = f"step {step_count}: move {direction!r} failed: {error}"
            return trace
        entry = trace.add(step, report.outcome, report.trap_view, seen_level, report.not_made_because)
        _report(on_step, frame, entry)
        if report.outcome is MoveOutcome.REJECTED:
            trace.failure_reason = f"step {step_count}: the move server refused: {report.message}"
            return trace
        navigation_failed = report.outcome.navigation_failed
        if report.frame_stamp is not None:
            stamp = report.frame_stamp
        if report.sector is not None:
            sector = report.sector
        if report.level is not None:
            level = report.level
    trace.failure_reason = f"the step budget of {budget} ran out without a decision"
    return trace


def _model_outage(agent: object) -> str:
    """Why the agent's answer must not stand ("" when it may); an agent that calls a language model says so
    (:meth:`~aiv_verifier.agent.verification_session.SessionBase.model_outage`), any other has nothing to say."""
    check = getattr(agent, "model_outage", None)
    return str(check()) if callable(check) else ""


def _report(on_step: StepHook[StepT] | None, frame: ViewFrame, entry: TraceEntry[StepT]) -> None:
    if on_step is not None:
        on_step(frame, entry)
