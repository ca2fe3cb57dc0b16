"""Run the agent against :class:`PInVerifyEnv` in-process: the no-ROS path of evaluation and regression.

It performs exactly the conversions the verifier node performs on messages (see ``frames.py``), so for the
same episode, configuration and seed both paths produce the same steps and verdict.
"""

from __future__ import annotations

from aiv_offline_sim.environment import Action, Observation, PInVerifyEnv, StepOutcome
from aiv_verifier.agent.factory import NO_OVERRIDES, AgentFactory, GoalOverrides
from aiv_verifier.agent.frames import geometry_from_layout
from aiv_verifier.agent.session import VerificationSession, ViewFrame
from aiv_verifier.agent.trace import EpisodeSummary, EpisodeTrace, MoveResult, summarize
from aiv_verifier.core.types import Decision
from aiv_verifier.verification.base import PrivilegedViewInfo

_MOVE_RESULTS = {
    StepOutcome.MOVED: MoveResult.MOVED,
    StepOutcome.STAYED: MoveResult.STAYED,
    StepOutcome.UNREACHABLE: MoveResult.UNREACHABLE,
    StepOutcome.ALREADY_VISITED: MoveResult.ALREADY_VISITED,
    StepOutcome.REJECTED: MoveResult.REJECTED,
    StepOutcome.DECIDED: MoveResult.DECIDED,
}


def frame_from_observation(observation: Observation) -> ViewFrame:
    """The agent's view of an environment observation (privileged fields only when the env provides them)."""
    view = observation.privileged
    image = observation.load_image()
    if view is None:
        return ViewFrame(
            image=image,
            step_count=observation.step_count,
            current_sector=observation.current_sector,
            navigation_failed=observation.navigation_failed,
            image_key=observation.current_sector,
        )
    layout = [(entry.virtual_sector, entry.view_type, entry.camera_position) for entry in view.layout]
    return ViewFrame(
        image=image,
        step_count=observation.step_count,
        current_sector=observation.current_sector,
        navigation_failed=observation.navigation_failed,
        image_key=view.capture_tag,
        capture_tag=view.capture_tag,
        gt_box=view.mask_bbox_xyxy,
        target_visible=view.mask_meets_threshold,
        privileged=PrivilegedViewInfo(
            episode_path=view.truth.episode_path,
            capture_tag=view.capture_tag,
            target_object_id=view.truth.target_object_id,
            mask_meets_threshold=view.mask_meets_threshold,
        ),
        geometry=geometry_from_layout(layout, view.goal_position),
    )


def run_env_episode(
    env: PInVerifyEnv,
    index: int,
    factory: AgentFactory,
    *,
    episode_key: str,
    overrides: GoalOverrides = NO_OVERRIDES,
    category_hint: str = "",
) -> tuple[VerificationSession, EpisodeTrace, EpisodeSummary]:
    """Play episode ``index`` to the end with the query descriptions the env attaches to observations."""
    observation = env.reset(index)
    query_texts = tuple(observation.query_descriptions)
    if not query_texts:
        raise ValueError(
            f"episode {episode_key!r}: no query descriptions (load the env with a description db)"
        )
    session = factory.new_session(
        query_texts,
        episode_key=episode_key,
        max_steps=observation.max_steps,
        category_hint=category_hint,
        overrides=overrides,
    )
    trace = EpisodeTrace(episode_key)
    while True:
        step = session.observe(frame_from_observation(observation))
        if step.stopped:
            action = Action.yes() if step.decision is Decision.YES else Action.no()
        else:
            assert step.move is not None
            action = Action.move(step.move.direction)
        observation, _, done, info = env.step(action)
        trace.add(step, _MOVE_RESULTS[info.outcome], bool(info.trap_view))
        if step.stopped or done:
            break
    return session, trace, summarize(session, trace)
