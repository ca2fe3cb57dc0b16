"""The episode environment's value types: actions, observations, step reports, the truth of a pair, errors.

They are what the environment hands out and takes in (:mod:`.environment` holds the rules that make them), kept
apart so that the rules module stays readable and so that code that only reads observations or step reports
(the simulator node, the in-process port, tests) needs no environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from aiv_dataset.errors import DatasetError
from aiv_dataset.images import ImageRef
from aiv_dataset.levels import EYE_LEVEL
from aiv_dataset.meta import CameraIntrinsics, Viewpoint
from aiv_dataset.vocabulary import MoveOutcome

TRAP_WARNING = "Target not clearly visible from this view (trap view)."


class EpisodeEnvError(RuntimeError):
    """Base class of environment misuse errors."""


def one_level_refusal(direction: str) -> str:
    """Why ``up`` / ``down`` is refused in a one-level episode (the simulator answers with these words)."""
    return f"this episode has one camera height level; {direction!r} needs a dataset with height levels"


class EpisodeNotStartedError(EpisodeEnvError):
    """``step`` was called before ``reset``."""


class EpisodeFinishedError(EpisodeEnvError):
    """``step`` was called after the episode ended (decision or forced stop)."""


class InvalidActionError(EpisodeEnvError, ValueError):
    """The action cannot be interpreted (wrong type, or unknown name in strict mode)."""


@dataclass(frozen=True)
class Action:
    """One agent step: a decision and, when the decision is "Unsure", a relative direction."""

    decision: str = "Unsure"
    nav_rel: str | None = "front"

    @classmethod
    def yes(cls) -> Action:
        return cls("Yes", None)

    @classmethod
    def no(cls) -> Action:
        return cls("No", None)

    @classmethod
    def move(cls, direction: str) -> Action:
        return cls("Unsure", direction)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Action:
        """The reference dict form ``{"decision": ..., "nav_rel": ...}``; other keys (policy logs) ignored."""
        return cls(data.get("decision", "Unsure"), data.get("nav_rel", "front"))


@dataclass(frozen=True)
class EpisodeTruth:
    """Ground truth of the current pair — for the evaluator, never for the agent."""

    episode_index: int
    episode_path: str
    scene: str
    episode: str
    label: int
    pair_type: str
    query_object_id: str
    query_object_category: str
    target_object_id: str
    target_object_category: str


@dataclass(frozen=True)
class LayoutEntry:
    """Where one observable capture sits in the episode's virtual frame (what geometric NBV needs)."""

    virtual_sector: int
    view_type: str
    capture_tag: str
    camera_position: tuple[float, float, float] | None
    level: int = EYE_LEVEL  # camera height level of the capture (0 = eye level)


@dataclass(frozen=True)
class PrivilegedView:
    """Ground truth about the current view, for agents that opt in (GT-box mode, reference warnings)."""

    capture_tag: str
    raw_sector: int | None
    view_type: str
    mask_bbox_xyxy: tuple[float, float, float, float] | None
    mask_area_px: int | None
    mask_meets_threshold: bool
    visited_visibility: Mapping[int, bool]  # virtual sector -> mask flag of its shown capture, visited only
    camera_position: tuple[float, float, float] | None
    goal_position: tuple[float, float, float]
    viewpoints: tuple[
        Viewpoint, ...
    ]  # the episode's capture list in file order (reference ``meta.captures``)
    truth: EpisodeTruth
    layout: tuple[LayoutEntry, ...] = ()  # observable captures in file order with their virtual sector
    level: int = EYE_LEVEL  # height level of the current view
    # (sector, level) -> mask flag of its shown capture, for every visited view (``visited_visibility`` is the
    # current level's part of it, keyed by sector as in a one-level episode)
    visited_view_visibility: Mapping[tuple[int, int], bool] = field(default_factory=dict)

    @property
    def trap_view(self) -> bool:
        return not self.mask_meets_threshold


@dataclass(frozen=True)
class Observation:
    """What the agent may see after ``reset``/``step`` (spec §3.4, minus ``meta``)."""

    episode_index: int
    episode_seed: int
    rgb_path: str | None
    image: ImageRef | None
    current_sector: int
    step_count: int
    max_steps: int
    available_sectors: tuple[int, ...]  # sectors with a view at the current level
    navigation_failed: bool
    failed_direction: str | None
    query_descriptions: tuple[str, ...] = ()
    camera_intrinsics: CameraIntrinsics | None = None
    privileged: PrivilegedView | None = None
    current_level: int = EYE_LEVEL
    levels: tuple[int, ...] = (EYE_LEVEL,)  # sorted height levels this episode has views at

    @property
    def remaining_steps(self) -> int:
        return self.max_steps - self.step_count

    def load_image(self) -> np.ndarray:
        """Decode the current RGB frame (H x W x 3 uint8)."""
        if self.image is None:
            raise DatasetError("the current capture has no rgb image", path=self.rgb_path)
        return self.image.load()


@dataclass(frozen=True)
class StepInfo:
    """What a step did, for the caller. ``to_reference_dict`` gives the reference ``info`` dict."""

    step: int
    decision: str
    outcome: MoveOutcome
    trap_view: bool = False
    requested_direction: str | None = None
    direction: str | None = None
    from_sector: int = 0
    to_sector: int = 0
    target_sector: int | None = None
    visibility_warning: str | None = None
    from_level: int = EYE_LEVEL
    to_level: int = EYE_LEVEL
    # Set when the request was refused without taking a step (``up`` in a one-level episode): the reason.
    refusal: str | None = None

    @property
    def navigation_failed(self) -> bool:
        return self.outcome.navigation_failed

    @property
    def forced_stop(self) -> bool:
        return self.outcome is MoveOutcome.REJECTED and self.refusal is None

    def to_reference_dict(self) -> dict[str, Any]:
        info: dict[str, Any] = {}
        if self.navigation_failed:
            info["navigation_failed"] = True
        if self.trap_view:
            info["trap_view"] = True
        info["decision"] = self.decision
        return info


class LoadedEpisode(NamedTuple):
    """What an episode's files say, checked (see :meth:`PInVerifyEnv.load_episode`)."""

    views: tuple[Viewpoint, ...]
    goal: tuple[float, ...] | None
    intrinsics: CameraIntrinsics | None


class StepResult(NamedTuple):
    """Gym-style 4-tuple: unpack as ``obs, reward, done, info``."""

    observation: Observation
    reward: float
    done: bool
    info: StepInfo


def compose_warning(outcome: MoveOutcome, direction: str | None, trap_view: bool) -> str | None:
    """Readable feedback for a step: failed moves first (the agent did not move), then trap arrivals."""
    place = "The view" if direction is not None and direction in ("up", "down") else "Sector"
    if outcome is MoveOutcome.UNREACHABLE:
        return f"{place} {direction} is unreachable; the agent has not moved."
    if outcome is MoveOutcome.ALREADY_VISITED:
        return f"{place} {direction} was already visited; the agent has not moved."
    if trap_view:
        return TRAP_WARNING
    return None
