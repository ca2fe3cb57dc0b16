"""What the episode loop asks of the world it verifies in: a *port*.

A port gives the frame that shows the current pose, carries out a move and says whether the caller gave up.
The loop (:mod:`.episode_loop`) is written against this protocol alone, so the verifier node (ROS topics and the
MoveToSector action), the evaluator's in-process environment, bag replay and a robot adapter each add a port
and reuse the same loop, with the same rules and the same failure reasons.

Failures the loop turns into an episode's failure reason are raised as the exceptions below; anything else a
port raises is not the port's to judge and reaches the loop's caller unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from aiv_dataset.vocabulary import MoveOutcome

from .steps import ViewFrame


class PortError(RuntimeError):
    """The port cannot give what the loop asked for; the message says why (it ends up in the verdict)."""


class FrameUnavailable(PortError):
    """The frame for the requested stamp did not come in time."""


class FrameUnusable(PortError):
    """The frame came but cannot be judged (e.g. an image encoding the agent cannot read)."""


class MoveFailed(PortError):
    """The move produced no answer: no server, no acknowledgement, no result in time, or the server left."""


class MoveCancelled(MoveFailed):
    """The caller gave up while the move was under way; the port has asked the mover to stop."""


@dataclass(frozen=True)
class FrameRequest:
    """Which frame the loop wants, with what the loop knows about the pose it shows.

    ``stamp`` names the frame (what the start or the last move result named; None: the newest one). The
    other fields are the loop's own bookkeeping, for ports whose frames do not carry it: ``step_count`` is
    the step about to be taken, ``sector`` where the last move result said the camera is, and
    ``navigation_failed`` whether the last move was refused (so this frame repeats the previous view),
    ``level`` the camera height level the last move result named (0: eye level, or nothing said).
    """

    stamp: int | None
    step_count: int
    sector: int
    navigation_failed: bool
    level: int = 0


@dataclass(frozen=True)
class MoveReport:
    """What a move did: the outcome, whether it arrived at a trap view, and (when the port knows) the
    sector the camera is in now and the stamp of the frame that shows it (None: keep the previous one).
    ``message`` explains a ``REJECTED`` outcome. ``level`` is the camera height level now (None: the port
    does not say, the previous one stands). ``warning`` is the move server's own note on the move (MoveToSector's
    ``visibility_warning``: why an ``UNREACHABLE`` or ``ALREADY_VISITED`` move was not made, e.g. the Nav2 error
    a robot's navigation aborted with; "" when it says nothing)."""

    outcome: MoveOutcome
    trap_view: bool = False
    sector: int | None = None
    frame_stamp: int | None = None
    message: str = ""
    level: int | None = None
    warning: str = ""

    @property
    def not_made_because(self) -> str:
        """Why the move was not made, in the server's words ("" when it was made, or nothing was said):
        the warning of a refused move (unreachable, already visited), the message of a rejected one."""
        if self.outcome is MoveOutcome.REJECTED:
            return self.message or self.warning
        if self.outcome.navigation_failed:
            return self.warning
        return ""


class EpisodePort(Protocol):
    """One episode's connection to the world: frames in, moves out."""

    def frame(self, request: FrameRequest) -> ViewFrame:
        """The frame ``request`` names, as the agent's input; raises :class:`FrameUnavailable` or
        :class:`FrameUnusable`."""
        ...

    def move(self, direction: str) -> MoveReport:
        """Carry out one move; raises :class:`MoveFailed` when there is no answer at all."""
        ...

    def cancelled(self) -> bool:
        """Whether the caller asked to stop; checked before every step (a port also stops a move under way, and
        raises :class:`MoveCancelled` from :meth:`move`)."""
        ...
