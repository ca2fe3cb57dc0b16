"""What the episode loop and the episode summary ask of an agent, and nothing more.

The loop (:mod:`.episode_loop`) only feeds frames and reads whether a step answered or which way it wants to move, so
any agent that can do that can be driven over every port (simulator, in-process environment, bag, robot):
:class:`~aiv_verifier.agent.verification_session.VerificationSession` with its per-view verifiers is one; an agent that
scores whole views with embeddings or a trained end-to-end policy are others. The summary the evaluator and
the Verdict need at the end (:func:`~aiv_verifier.agent.trace.summarize`) reads a few more facts, named
separately in :class:`SummarySource` so the loop never depends on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar

from aiv_models.timing import StageClock

from ..core.evidential import EvidenceSummary
from ..core.types import Decision
from ..query.types import QuerySpec
from .steps import AgentStep, ViewFrame


class MoveRequest(Protocol):
    """A move an agent asks for: one of the benchmark's relative direction names (or free text a port
    normalises, as the reference environment does)."""

    @property
    def direction(self) -> str: ...


class StepView(Protocol):
    """One step's result as the loop and the summary read it.

    ``decision`` is Yes/No when the agent answers and Unsure while it wants to look further; then ``move``
    says where. ``step_prediction`` is the answer it would give if forced now (first-view accuracy, flips);
    ``stop_reason`` says why an answering step stopped ("" otherwise).
    """

    @property
    def stopped(self) -> bool: ...

    @property
    def decision(self) -> Decision: ...

    @property
    def step_prediction(self) -> Decision: ...

    @property
    def stop_reason(self) -> str: ...

    @property
    def move(self) -> MoveRequest | None: ...


StepT_co = TypeVar("StepT_co", bound=StepView, covariant=True)


class EpisodeAgent(Protocol[StepT_co]):
    """One episode of an agent, already started from the query (descriptions, budget): it judges each frame
    it is given and says whether to answer or where to move next."""

    def observe(self, frame: ViewFrame) -> StepT_co: ...


class SummarySource(Protocol):
    """What the episode summary reads from the agent once the loop has ended."""

    @property
    def final_decision(self) -> Decision | None: ...

    @property
    def visited_order(self) -> tuple[int, ...]: ...

    @property
    def model_calls(self) -> Mapping[str, int]: ...

    @property
    def evidence_summary(self) -> EvidenceSummary | None: ...

    def confidence(self) -> float: ...


class AgentSession(SummarySource, Protocol):
    """One request's agent as the nodes, the evaluator and bag replay hold it: the loop's agent (it answers
    with :class:`AgentStep` values, so transcripts, step reports and debug images read every agent alike), the
    summary's facts, and what the verdict reports (the interpreted query, the steps, stage timings)."""

    @property
    def query(self) -> QuerySpec: ...

    @property
    def steps(self) -> list[AgentStep]: ...

    @property
    def clock(self) -> StageClock: ...

    @property
    def max_steps(self) -> int: ...

    def observe(self, frame: ViewFrame) -> AgentStep: ...
