"""The episode port over :class:`PInVerifyEnv` in-process: the no-ROS path of evaluation and regression.

The episode itself is the verifier's one loop (:func:`aiv_verifier.agent.loop.run_episode`); this port only
turns environment observations into the agent's frames and moves into environment steps. The conversions
are exactly the ones the verifier node makes from the simulator's messages (see ``ros_port.py``), so for the
same episode, configuration and seed both paths produce the same steps and verdict.
"""

from __future__ import annotations

from aiv_dataset.vocabulary import MoveOutcome
from aiv_offline_sim.environment import Action, Observation, PInVerifyEnv
from aiv_verifier.agent.factory import NO_OVERRIDES, AgentFactory, GoalOverrides
from aiv_verifier.agent.frames import geometry_from_layout
from aiv_verifier.agent.loop import run_episode
from aiv_verifier.agent.port import FrameRequest, MoveReport
from aiv_verifier.agent.session import AgentStep, VerificationSession, ViewFrame
from aiv_verifier.agent.trace import EpisodeSummary, EpisodeTrace, summarize
from aiv_verifier.verification.base import PrivilegedViewInfo


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


class EnvPort:
    """Episode ``index`` of ``env`` as a port; constructing it resets the environment to that episode
    (``slice_start``: the first index of the evaluated slice, as the ROS evaluator sends it with StartEpisode).

    The environment's current observation is the only frame there is, so the request's stamp is not needed;
    the observation itself says the step, sector and whether the last move failed. A dataset error while
    loading an image is not a port failure: it propagates, and the evaluator records it as one.
    """

    def __init__(self, env: PInVerifyEnv, index: int, slice_start: int = 0) -> None:
        self.env = env
        self.observation = env.reset(index, slice_start=slice_start)

    def frame(self, request: FrameRequest) -> ViewFrame:
        return frame_from_observation(self.observation)

    def move(self, direction: str) -> MoveReport:
        self.observation, _, _, info = self.env.step(Action.move(direction))
        message = ""
        if info.outcome is MoveOutcome.REJECTED:  # the words the simulator node answers with
            message = f"step budget of {self.env.max_steps} exhausted; the episode ended undecided"
        return MoveReport(
            outcome=info.outcome,
            trap_view=bool(info.trap_view),
            sector=self.observation.current_sector,
            message=message,
        )

    def cancelled(self) -> bool:
        return False


def run_env_episode(
    env: PInVerifyEnv,
    index: int,
    factory: AgentFactory,
    *,
    episode_key: str,
    overrides: GoalOverrides = NO_OVERRIDES,
    category_hint: str = "",
    slice_start: int = 0,
) -> tuple[VerificationSession, EpisodeTrace[AgentStep], EpisodeSummary]:
    """Play episode ``index`` to the end with the query descriptions the env attaches to observations."""
    port = EnvPort(env, index, slice_start)
    query_texts = tuple(port.observation.query_descriptions)
    if not query_texts:
        raise ValueError(
            f"episode {episode_key!r}: no query descriptions (load the env with a description db)"
        )
    session = factory.new_session(
        query_texts,
        episode_key=episode_key,
        max_steps=port.observation.max_steps,
        category_hint=category_hint,
        overrides=overrides,
    )
    trace = run_episode(
        session,
        port,
        episode_key=episode_key,
        budget=session.max_steps,
        start_sector=port.observation.current_sector,
    )
    return session, trace, summarize(session, trace)
