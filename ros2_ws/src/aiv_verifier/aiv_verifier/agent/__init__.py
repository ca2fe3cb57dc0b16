"""The verification agent: the core pieces assembled into an episode loop, free of ROS."""

from .factory import NO_OVERRIDES, VERIFIER_BACKENDS, AgentFactory, ConfigError, GoalOverrides, build_verifier
from .frames import geometry_from_layout
from .loop import CANCELLED_REASON, run_episode
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
from .session import AgentComponents, AgentStep, AttributeRow, StageClock, VerificationSession, ViewFrame
from .settings import AgentSettings
from .trace import EpisodeSummary, EpisodeTrace, TraceEntry, summarize

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
