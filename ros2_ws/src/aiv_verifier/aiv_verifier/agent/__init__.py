"""The verification agent: the core pieces assembled into an episode loop, free of ROS."""

from aiv_models.timing import StageClock

from .episode_loop import CANCELLED_REASON, run_episode
from .factory import NO_OVERRIDES, VERIFIER_BACKENDS, AgentFactory, ConfigError, GoalOverrides, build_verifier
from .frames import geometry_from_layout
from .port import (
    EpisodePort,
    FrameRequest,
    FrameUnavailable,
    FrameUnusable,
    MoveFailed,
    MoveReport,
    PortError,
)
from .protocol import EpisodeAgent, MoveRequest, StepView, SummarySource
from .settings import AgentSettings
from .steps import AgentComponents, AgentStep, AttributeRow, ViewFrame
from .trace import EpisodeSummary, EpisodeTrace, TraceEntry, summarize
from .verification_session import VerificationSession

__all__ = [
    "CANCELLED_REASON",
    "NO_OVERRIDES",
    "VERIFIER_BACKENDS",
    "AgentComponents",
    "AgentFactory",
    "AgentSettings",
    "AgentStep",
    "AttributeRow",
    "ConfigError",
    "EpisodeAgent",
    "EpisodePort",
    "EpisodeSummary",
    "EpisodeTrace",
    "FrameRequest",
    "FrameUnavailable",
    "FrameUnusable",
    "GoalOverrides",
    "MoveFailed",
    "MoveReport",
    "MoveRequest",
    "PortError",
    "StageClock",
    "StepView",
    "SummarySource",
    "TraceEntry",
    "VerificationSession",
    "ViewFrame",
    "build_verifier",
    "geometry_from_layout",
    "run_episode",
    "summarize",
]
