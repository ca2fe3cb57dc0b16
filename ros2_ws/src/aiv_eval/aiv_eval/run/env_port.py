"""The episode port over :class:`PInVerifyEnv` in-process: the no-ROS path of evaluation and regression.

The episode itself is the verifier's one loop (:func:`aiv_verifier.agent.episode_loop.run_episode`); the episode side
is the simulator node's own core, :class:`~aiv_offline_sim.episode_service.EpisodeService`: it starts the
episode (query rules, loading and checking the files, decoding the first view), answers moves and decodes
each new view, with the same refusals and words as over ROS. This port only turns its observations into the
agent's frames, exactly as the verifier node does with the simulator's messages (see ``ros_port.py``; the focal
length too, from the intrinsics the simulator's CameraInfo carries), so for
the same episode, configuration and seed both paths produce the same steps and verdict, broken input included.

Camera height levels travel the same way: the frame's level is the observation's (over ROS: the level the last
MoveToSector result named), the episode's levels are those of the privileged layout (over ROS: the
GroundTruthView layout's), and a move report carries the level the service answered with.
"""

from __future__ import annotations

import time
from collections.abc import Hashable

import numpy as np
from aiv_dataset.levels import EYE_LEVEL
from aiv_models.timing import StageClock
from aiv_offline_sim.environment import Observation, PInVerifyEnv
from aiv_offline_sim.episode_service import EpisodeService, EpisodeStart, camera_matrix
from aiv_verifier.agent.episode_loop import run_episode
from aiv_verifier.agent.factory import NO_OVERRIDES, AgentFactory, GoalOverrides
from aiv_verifier.agent.frames import geometry_from_layout
from aiv_verifier.agent.port import FrameRequest, MoveReport
from aiv_verifier.agent.protocol import AgentSession
from aiv_verifier.agent.steps import AgentStep, ViewFrame
from aiv_verifier.agent.trace import EpisodeSummary, EpisodeTrace, summarize
from aiv_verifier.camera_model import camera_from_info
from aiv_verifier.verification.base import PrivilegedViewInfo


def focal_of(observation: Observation, image: np.ndarray) -> float | None:
    """The camera's focal length for ``image``, from the CameraInfo the simulator node publishes with it
    (the episode's intrinsics, the benchmark camera when it has none), read as the verifier node reads it."""
    width, height, k = camera_matrix(observation.camera_intrinsics)
    return camera_from_info(width, height, k).focal_for(int(image.shape[1]), int(image.shape[0]))


def layout_levels(observation: Observation, levels: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The levels a verifier learns the episode has, as the verifier node does: those of the privileged layout's
    captures (its GroundTruthView's), else ``levels`` (the verifier's ``height_levels`` parameter: the levels
    the move server is said to offer), else the eye level alone."""
    view = observation.privileged
    if view is not None and view.layout:
        return tuple(sorted({entry.level for entry in view.layout}))
    return levels or (EYE_LEVEL,)


def view_key(observation: Observation) -> Hashable:
    """What names the image shown without privileged output: the sector (one capture per sector at eye level,
    today's key), the (sector, level) view at another level."""
    if observation.current_level == EYE_LEVEL:
        return observation.current_sector
    return (observation.current_sector, observation.current_level)


def frame_from_observation(
    observation: Observation, image: np.ndarray | None = None, levels: tuple[int, ...] = ()
) -> ViewFrame:
    """The agent's view of an environment observation (privileged fields only when the env provides them);
    ``image`` is the decoded frame when the caller already has it, ``levels`` the episode's levels to report
    when the observation's layout does not say them (see :func:`layout_levels`)."""
    view = observation.privileged
    if image is None:
        image = observation.load_image()
    focal_px = focal_of(observation, image)
    if view is None:
        return ViewFrame(
            image=image,
            step_count=observation.step_count,
            current_sector=observation.current_sector,
            navigation_failed=observation.navigation_failed,
            image_key=view_key(observation),
            focal_px=focal_px,
            current_level=observation.current_level,
            levels=layout_levels(observation, levels),
        )
    layout = [
        (entry.virtual_sector, entry.view_type, entry.camera_position, entry.level) for entry in view.layout
    ]
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
        focal_px=focal_px,
        current_level=observation.current_level,
        levels=layout_levels(observation, levels),
    )


class EnvPort:
    """One started episode of an :class:`EpisodeService` as a port (see :meth:`open` to start one).

    The service's current observation is the only frame there is, so the request's stamp is not needed; the
    observation itself says the step, sector and whether the last move failed. A move the service refuses,
    or whose view cannot be shown, is a ``REJECTED`` report with the simulator's message, as over ROS.
    ``clock`` gets the wall time of each frame (``inprocess.frame``) and move (``inprocess.move``): the work
    the ROS path does in the simulator and the verifier's port, for ``aiv-eval bench``'s breakdown. ``levels``
    is the verifier's ``height_levels`` parameter as a tuple (empty: not set): the levels each frame reports
    when there is no privileged layout to learn them from, as the verifier node does.
    """

    def __init__(
        self,
        service: EpisodeService,
        start: EpisodeStart,
        clock: StageClock | None = None,
        levels: tuple[int, ...] = (),
    ) -> None:
        self.service = service
        self.start = start
        self.observation = start.observation
        self.clock = StageClock() if clock is None else clock
        self.levels = levels

    @classmethod
    def open(
        cls, env: PInVerifyEnv, index: int, slice_start: int = 0, levels: tuple[int, ...] = ()
    ) -> EnvPort:
        """Start episode ``index`` of ``env`` (its description db supplies the query); raises
        :class:`~aiv_offline_sim.episode_service.EpisodeRequestError` when the simulator would refuse it."""
        service = EpisodeService(env, env.descriptions)
        return cls(service, service.start(index=index, slice_start=slice_start), levels=levels)

    def frame(self, request: FrameRequest) -> ViewFrame:
        started = time.perf_counter()
        frame = frame_from_observation(self.observation, self.service.image_of(self.observation), self.levels)
        self.clock.add("inprocess.frame", started)
        return frame

    def move(self, direction: str) -> MoveReport:
        started = time.perf_counter()
        reply = self.service.move(direction)
        self.clock.add("inprocess.move", started)
        if reply.observation is not None:
            self.observation = reply.observation
        return MoveReport(
            outcome=reply.outcome,
            trap_view=reply.trap_view,
            sector=reply.sector if reply.sector >= 0 else None,
            message=reply.message,
            level=reply.level,
            warning=reply.warning,  # as over ROS (the simulator's visibility_warning)
        )

    def cancelled(self) -> bool:
        return False


def play_episode(
    port: EnvPort,
    factory: AgentFactory,
    *,
    episode_key: str,
    overrides: GoalOverrides = NO_OVERRIDES,
    category_hint: str = "",
) -> tuple[AgentSession, EpisodeTrace[AgentStep], EpisodeSummary]:
    """Play a started episode to the end with the query the service handed out."""
    session = factory.new_session(
        port.start.descriptions,
        episode_key=episode_key,
        max_steps=port.start.max_steps,
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


def run_env_episode(
    env: PInVerifyEnv,
    index: int,
    factory: AgentFactory,
    *,
    episode_key: str,
    overrides: GoalOverrides = NO_OVERRIDES,
    category_hint: str = "",
    slice_start: int = 0,
) -> tuple[AgentSession, EpisodeTrace[AgentStep], EpisodeSummary]:
    """Start episode ``index`` of ``env`` and play it to the end (research tools and tests)."""
    port = EnvPort.open(env, index, slice_start)
    return play_episode(
        port, factory, episode_key=episode_key, overrides=overrides, category_hint=category_hint
    )
