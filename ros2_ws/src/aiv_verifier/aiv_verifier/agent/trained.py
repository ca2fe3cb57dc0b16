"""The trained end-to-end agent (``agent.kind: trained``, spec §7): one vision-language call per step.

A LoRA-tuned Qwen-VL sees the scene and a crop of the candidate and answers both questions at once: does it
match (verification) and what next (STOP or MOVE <direction>). Everything around that call lives here and in
the two helper modules: the prompt (:mod:`.trained_prompt`, wording from a file), reading the reply and mapping
it to an action (:mod:`.trained_parse`), and the per-episode bookkeeping the prompt reports (visited and refused
sectors, spec §5.9, shared with the pipeline agent). The model itself is any
:class:`~aiv_verifier.core.types.LanguageModel`: the local transformers transport (base model directory plus
``language_model.adapter_dir``, applied with peft) or an OpenAI-compatible server that serves the adapter under
a model name (``language_model.model``), so this module never imports torch.

Sessions are what the one episode loop drives (:class:`~.protocol.AgentSession`), so the agent runs over every
port (simulator node, in-process evaluation, bag replay, robot) and its steps fill the same transcripts: each
step reports one row, ``verification``, holding the model's verdict for that view, and its move's reason holds
the action the model wrote.

Shared state is read-only (template, settings) apart from the model, which serves concurrent calls; a session
belongs to one episode. So several episodes may run at once on one agent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from aiv_dataset.vocabulary import target_sector
from aiv_models.chat import ChatModel, ChatRequest, ChatResult

from ..core.nbv import NbvChoice
from ..core.types import AttributeState, Decision, LanguageModel
from ..detection.base import BoxMode, Detector
from ..model_config import TrainedAgentParams
from ..query.types import QuerySpec
from ..verification.base import AttributeAnswer
from .settings import AgentSettings
from .steps import AgentStep, AttributeRow, ViewFrame
from .trained_parse import ActionKind, MappedAction, ParsedReply, map_action, parse_reply
from .trained_prompt import HistoryEntry, PromptState, TrainedPromptTemplate, user_message
from .verification_session import SessionBase

VERIFICATION_ROW = "verification"
"""The one transcript row of a trained-agent step: the model's verdict about this view."""
MODEL_CALLS_KEY = "trained_agent"


def ask(model: LanguageModel, system: str, prompt: str, images: Sequence[np.ndarray]) -> ChatResult:
    """One call. A :class:`~aiv_models.chat.ChatModel` gets the system message as its own turn; any other
    ``LanguageModel`` (the protocol has no system turn) gets the system text before the prompt. A failed call
    (a raised error included) is an empty answer with its ``error`` set (the protocol's rule: one bad call never
    ends an episode; the session counts it)."""
    try:
        if isinstance(model, ChatModel):
            return model.complete(ChatRequest.of(prompt, images, system))
        text = f"{system}\n\n{prompt}" if system else prompt
        return ChatResult(str(model.generate(text, images)))
    except Exception as error:  # any transport failure is an empty answer, as the protocol says
        return ChatResult("", f"{type(error).__name__}: {error}")


class TrainedAgent:
    """Built once per process from ``trained.*`` and the language model; starts one session per request."""

    thread_safe: ClassVar[bool] = True

    def __init__(
        self,
        template: TrainedPromptTemplate,
        model: LanguageModel,
        settings: AgentSettings,
        detector: Detector | None = None,
    ) -> None:
        if settings.bbox_mode is BoxMode.DETECTOR and detector is None:
            raise ValueError("agent.bbox_mode 'detector' needs a detector backend (detector.backend)")
        self.template = template
        self.model = model
        self.settings = settings
        self.detector = detector

    @classmethod
    def from_params(
        cls,
        params: TrainedAgentParams,
        language_model: LanguageModel,
        settings: AgentSettings,
        detector: Detector | None = None,
    ) -> TrainedAgent:
        """Read the prompt file now, so a missing or malformed one stops start-up with its name."""
        try:
            template = TrainedPromptTemplate.load(params.prompt_file)
        except FileNotFoundError as error:
            raise ValueError(f"trained.prompt_file: {error}") from error
        return cls(template, language_model, settings, detector)

    def new_session(self, query: QuerySpec, *, episode_key: str, max_steps: int) -> TrainedSession:
        return TrainedSession(self, query, episode_key=episode_key, max_steps=max_steps)


class TrainedSession(SessionBase):
    """One episode of the trained agent (an :class:`~.protocol.AgentSession`)."""

    def __init__(self, agent: TrainedAgent, query: QuerySpec, *, episode_key: str, max_steps: int) -> None:
        super().__init__(
            query,
            episode_key=episode_key,
            max_steps=max_steps,
            bbox_mode=agent.settings.bbox_mode,
            detector=agent.detector,
            model_outage=agent.settings.model_outage,
        )
        self.agent = agent
        self.history: list[HistoryEntry] = []
        self.prompts: list[str] = []  # the user message of every step, for debugging and tests
        self.replies: list[str] = []

    def observe(self, frame: ViewFrame) -> AgentStep:
        """Ask the model about this view and say what to do: answer (Yes/No) or move (Unsure + direction)."""
        started = time.perf_counter()
        book = self._begin_step(frame)
        crop, notes = self._crop(frame)
        self.clock.add("crop", started)
        remaining = self.max_steps - frame.step_count - 1
        state = PromptState(
            descriptions=self.query.descriptions,
            category=self.query.category,
            current_sector=frame.current_sector,
            visited=self.bookkeeping.visited,
            remaining_steps=remaining,
            history=tuple(self.history),
            failed_direction=book.failed_direction,
            target_visible=frame.target_visible,
        )
        prompt = user_message(self.agent.template, state)
        stage = time.perf_counter()
        result = ask(self.agent.model, self.agent.template.system, prompt, [frame.image, crop.image])
        reply = result.text
        self.clock.add("model", stage)
        self._count(MODEL_CALLS_KEY, 1)
        self._count_language(1, [result.error] if result.failed else [])
        self.prompts.append(prompt)
        self.replies.append(reply)
        parsed = parse_reply(reply)
        mapped = map_action(parsed, remaining)
        move = self._move(frame.current_sector, parsed, mapped)
        step = AgentStep(
            step=frame.step_count,
            sector=frame.current_sector,
            capture_tag=frame.capture_tag,
            duplicate_view=book.is_duplicate,
            crop=crop,
            crop_notes=tuple(notes),
            decision=mapped.decision,
            step_prediction=mapped.step_prediction,
            stop_reason=_stop_reason(mapped),
            move=move,
            attributes=(_verification_row(mapped.verification),),
            answers=(AttributeAnswer(VERIFICATION_ROW, mapped.verification, reply),),
            level=frame.current_level,
        )
        self.steps.append(step)
        self._finished = step.stopped
        return step

    def _move(self, sector: int, parsed: ParsedReply, mapped: MappedAction) -> NbvChoice | None:
        if mapped.kind is not ActionKind.MOVE or mapped.direction is None:
            return None
        target = target_sector(sector, mapped.direction)
        self.bookkeeping.set_pending_move(target, mapped.direction)
        self.history.append(HistoryEntry(sector, mapped.verification.value, target, parsed.action))
        return NbvChoice(mapped.direction, target, f"model action {parsed.action!r}")

    # ---- episode summary -------------------------------------------------------------------------------

    def confidence(self) -> float:
        """1.0 when the answer is the model's own Yes/No, 0.0 when an Unsure or an unreadable action was
        counted as No."""
        if not self._finished:
            return 0.0
        last = self.steps[-1]
        verification = last.answers[0].answer if last.answers else Decision.UNSURE
        return 1.0 if verification is last.decision else 0.0


def _stop_reason(mapped: MappedAction) -> str:
    """In the records' stop-reason vocabulary: "final" when the budget made this the answering step, else
    "early_exit" (the model chose STOP, or wrote an action it cannot carry out, which answers No)."""
    if mapped.kind is ActionKind.MOVE:
        return ""
    return "final" if mapped.final_step else "early_exit"


def _verification_row(verification: Decision) -> AttributeRow:
    state = verification.to_state()
    return AttributeRow(
        name=VERIFICATION_ROW,
        type="other",
        evidence_phrase="",
        weight=1,
        state=state,
        reconciled_state=state,
        votes_matched=1.0 if state is AttributeState.MATCHED else 0.0,
        votes_contradicted=1.0 if state is AttributeState.CONTRADICTED else 0.0,
        weight_matched=0.0,
        weight_contradicted=0.0,
        weight_missing=0.0,
        converged=False,
        last_answer=verification.value,
        last_reason="",
    )


__all__ = ["MODEL_CALLS_KEY", "VERIFICATION_ROW", "TrainedAgent", "TrainedSession", "ask"]
