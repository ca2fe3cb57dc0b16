"""The embedding baselines ``agent.kind: clip | siglip`` (spec §6) as agents of the one episode loop.

Per step: bookkeeping (§5.9: a refused move's target counts as visited, the repeated image is a duplicate) →
the same crop as the pipeline (:func:`~aiv_verifier.detection.base.crop_view`: GT box, external detections or
the in-verifier detector) → one image forward scored against the episode's texts (embedded once, on the first
step) → the description aggregation, the cross-view mean over effective views and the stop rule
(:mod:`.embedding_rules`) → a move chosen like the reference CLIP policy does: the random or angular
farthest-point NBV of §5.10 (never the LLM one).

Steps are :class:`~aiv_verifier.agent.steps.AgentStep` values like the pipeline's, with one
:class:`AttributeRow` per scored text (``desc_1``.. or ``merged_desc``; the score and the running mean in
``last_reason``, this view's Yes/No in ``last_answer``, views above / not above the threshold as votes) plus,
when several texts are aggregated, one row for the view score. So transcripts, step reports, Verdicts and
debug images show the scores without knowing which agent made them. ``step_prediction`` is what the reference
records: this view's Yes/No, except at the answering step, where it is the answer itself (the cross-view
decision); the answering view's own Yes/No stays in its view-score row's ``last_answer`` (the single text's
row for ``merged``).

Several episodes may run at once on one agent (``evaluator.episodes_in_flight``): the agent's state is read-only
(rules, the seeded NBV, the detector) apart from the model, which serialises its forwards and, with
``embedding.max_batch`` above 1, embeds the crops of sessions that ask together in one forward; each session owns
its texts, its cache and its counts.
"""

from __future__ import annotations

import sys
import time
from typing import ClassVar

import numpy as np
from aiv_models.embedding import EmbeddingModel, TextCache, TextEmbeddings
from aiv_models.local_weights import ModelDirError

from ..core.nbv import NbvChoice, NbvRequest, NbvStrategy, make_nbv
from ..core.types import AttributeState, Decision
from ..detection.base import BoxMode, Detector
from ..model_config import EmbeddingParams
from ..query.types import QueryMode, QuerySpec
from .embedding_rules import MARGIN_REASON, EmbeddingRules, check_overlength, cross_view_score
from .settings import AgentSettings
from .steps import AgentStep, AttributeRow, ViewFrame
from .verification_session import SessionBase

#: The NBV strategies the reference CLIP policy uses (it has no LLM-NBV).
EMBEDDING_NBV = ("random", "farthest")
KINDS = {"clip": "clip", "siglip": "siglip"}  # agent kind -> score family it needs
MERGED_SOURCES = ("merged-cache", "merged-llm")
#: ``model_calls`` key: image calls of the episode whose forward failed.
EMBEDDING_FAILED = "embedding_image_failed"


class EmbeddingAgent:
    """The process-wide part of an embedding agent: the loaded model, the rules, the NBV and the detector."""

    #: Sessions on several threads may share the agent (the evaluator then shares one loaded model).
    thread_safe: ClassVar[bool] = True

    def __init__(
        self,
        kind: str,
        model: EmbeddingModel,
        rules: EmbeddingRules,
        nbv: NbvStrategy,
        *,
        bbox_mode: BoxMode = BoxMode.GT,
        detector: Detector | None = None,
    ) -> None:
        if bbox_mode is BoxMode.DETECTOR and detector is None:
            raise ValueError("agent.bbox_mode 'detector' needs a detector backend (detector.backend)")
        self.kind = kind
        self.model = model
        self.rules = rules
        self.nbv = nbv
        self.bbox_mode = bbox_mode
        self.detector = detector

    @classmethod
    def from_params(
        cls,
        kind: str,
        params: EmbeddingParams,
        settings: AgentSettings,
        detector: Detector | None = None,
    ) -> EmbeddingAgent:
        """Load the model of ``params`` for ``kind`` and check every knob; raises ValueError (a
        :class:`ModelDirError` for the directory) with one line naming the parameter."""
        if kind not in KINDS:
            raise ValueError(f"agent.kind {kind!r} is no embedding agent; expected clip or siglip")
        if settings.nbv not in EMBEDDING_NBV:
            raise ValueError(
                f"agent.kind {kind!r} moves like the reference CLIP policy: agent.nbv must be one of "
                f"{list(EMBEDDING_NBV)}, not {settings.nbv!r}"
            )
        check_overlength(params.overlength)
        EmbeddingRules.for_family(  # refuse bad knobs before the (slow) load
            KINDS[kind], params.threshold, params.aggregation, params.stop_rule, params.stop_margin
        )
        if settings.bbox_mode is BoxMode.DETECTOR and detector is None:
            raise ValueError("agent.bbox_mode 'detector' needs a detector backend (detector.backend)")
        model = EmbeddingModel.load(
            params.model_dir,
            device=params.device,
            dtype=params.dtype,
            overlength=params.overlength,
            max_batch=params.max_batch,
            batch_window_s=params.batch_window_s,
        )
        if model.family != KINDS[kind]:
            raise ModelDirError(
                f"agent.kind {kind!r} needs a {KINDS[kind]} checkpoint, but embedding.model_dir "
                f"{model.identity.path!r} holds a {model.model_type!r} model (use agent.kind "
                f"{'clip' if model.family == 'clip' else 'siglip'})"
            )
        rules = EmbeddingRules.for_family(
            model.family, params.threshold, params.aggregation, params.stop_rule, params.stop_margin
        )
        sys.stderr.write(f"[aiv_verifier] agent.kind {kind}: {model.describe()}\n")
        nbv = make_nbv(settings.nbv, base_seed=settings.base_seed)
        return cls(kind, model, rules, nbv, bbox_mode=settings.bbox_mode, detector=detector)

    def new_session(self, query: QuerySpec, *, episode_key: str, max_steps: int) -> EmbeddingSession:
        return EmbeddingSession(self, query, episode_key=episode_key, max_steps=max_steps)


def session_texts(query: QuerySpec, aggregation: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(row names, texts)`` an episode scores: the descriptions, or for ``merged`` one text (the cached or
    LLM-merged description when the query interpreter made one, else the descriptions joined by spaces)."""
    if aggregation == "merged":
        if query.mode is QueryMode.MERGED and query.attribute_source in MERGED_SOURCES and query.attributes:
            merged = query.attributes[0].evidence_phrase
        else:
            merged = " ".join(text.strip() for text in query.descriptions if text.strip())
        return ("merged_desc",), (merged,)
    texts = query.descriptions or ("",)
    return tuple(f"desc_{i + 1}" for i in range(len(texts))), tuple(texts)


class EmbeddingSession(SessionBase):
    """One episode of an embedding agent; satisfies :class:`~aiv_verifier.agent.protocol.AgentSession`."""

    def __init__(self, agent: EmbeddingAgent, query: QuerySpec, *, episode_key: str, max_steps: int) -> None:
        super().__init__(
            query,
            episode_key=episode_key,
            max_steps=max_steps,
            bbox_mode=agent.bbox_mode,
            detector=agent.detector,
        )
        self.agent = agent
        self.rules = agent.rules
        self.names, self.texts = session_texts(query, self.rules.aggregation)
        self.cache = TextCache()
        self._embedded: TextEmbeddings | None = None
        self._effective: list[list[float]] = []  # per effective view: the texts' scores
        self._last_scores: list[float] | None = None

    @property
    def effective_view_scores(self) -> tuple[float, ...]:
        """The view score of every effective view so far (a repeated image after a refused move is not one)."""
        return tuple(self.rules.view_score(scores) for scores in self._effective)

    # ---- one step --------------------------------------------------------------------------------------

    def observe(self, frame: ViewFrame) -> AgentStep:
        started = time.perf_counter()
        book = self._begin_step(frame)
        crop, notes = self._crop(frame)
        self.clock.add("crop", started)

        duplicate = book.is_duplicate and self._last_scores is not None
        if duplicate and self._last_scores is not None:
            scores = self._last_scores  # the same image again: same scores, no forward, not counted again
        else:
            scores = self._score(crop.image)
            self._effective.append(scores)
        self._last_scores = scores

        rules = self.rules
        view = rules.view_score(scores)
        effective_views = [rules.view_score(item) for item in self._effective]
        cross = cross_view_score(effective_views, view)
        reason = rules.stop_reason(frame.step_count, self.max_steps, effective_views)
        move = None
        if not reason:
            move = self._choose_move(frame)
            self.bookkeeping.set_pending_move(move.target_index, move.direction, move.target_level)
        step = AgentStep(
            step=frame.step_count,
            sector=frame.current_sector,
            capture_tag=frame.capture_tag,
            duplicate_view=book.is_duplicate,
            crop=crop,
            crop_notes=tuple(notes),
            decision=rules.answer(cross) if reason else Decision.UNSURE,
            # As the reference: the answering step records the cross-view decision, the others this view's
            # own answer (which the view-score row's last_answer keeps for every view it scores).
            step_prediction=rules.answer(cross) if reason else rules.answer(view),
            stop_reason=reason,
            move=move,
            attributes=self._rows(
                scores, view, cross, duplicate=book.is_duplicate, converged=reason == MARGIN_REASON
            ),
            answers=(),
            level=frame.current_level,
        )
        self.steps.append(step)
        self._finished = bool(reason)
        return step

    def _score(self, crop: np.ndarray) -> list[float]:
        model = self.agent.model
        if self._embedded is None:
            stage = time.perf_counter()
            self._embedded = model.encode_texts(self.texts, self.cache)
            self.clock.add("embed_text", stage)
            self._count("embedding_text", self._embedded.forwards)
        stage = time.perf_counter()
        try:
            scores = model.score_image(crop, self._embedded)
        except Exception:  # a failed (batched) forward: this crop's call failed; the loop ends the episode
            self._count(EMBEDDING_FAILED, 1)
            raise
        self.clock.add("embed_image", stage)
        self._count("embedding_image", 1)
        return scores

    def _choose_move(self, frame: ViewFrame) -> NbvChoice:
        request = NbvRequest(
            episode_key=self.episode_key,
            step=frame.step_count,
            current_sector=frame.current_sector,
            visited=self.bookkeeping.visited,
            failed=self.bookkeeping.failed,
            geometry=frame.geometry,
            descriptions=self.query.descriptions,
            object_category=self.query.category,
            query_mode="direct",
        )
        request = self._with_levels(request, frame)
        stage = time.perf_counter()
        choice = self.agent.nbv.choose(request)
        self.clock.add("nbv", stage)
        return choice

    # ---- rows ------------------------------------------------------------------------------------------

    def _rows(
        self, scores: list[float], view: float, cross: float, *, duplicate: bool, converged: bool
    ) -> tuple[AttributeRow, ...]:
        rules = self.rules
        embedded = self._embedded
        over = embedded.overlength if embedded is not None else (False,) * len(self.texts)
        zeroed = embedded.zeroed if embedded is not None else over
        rows = []
        for index, (name, text) in enumerate(zip(self.names, self.texts, strict=True)):
            history = [item[index] for item in self._effective]
            mean = cross_view_score(history, scores[index])
            note = ""
            if over[index]:
                note = " (over-length text: scored 0.0)"
            elif zeroed[index]:
                note = " (scored 0.0: another description is over-length, the reference's call fails)"
            reason = (
                f"{rules.family} score {scores[index]:.4f} "
                f"{'>' if scores[index] > rules.threshold else '<='} {rules.threshold:g}; "
                f"mean over {len(history)} view(s) {mean:.4f}{note}"
            )
            rows.append(
                self._row(name, "other", text, history, mean, scores[index], reason, duplicate, converged)
            )
        if len(self.texts) > 1:
            history = [rules.view_score(item) for item in self._effective]
            reason = (
                f"view {rules.aggregation} {view:.4f} {'>' if view > rules.threshold else '<='} "
                f"{rules.threshold:g}; cross-view mean over {len(history)} effective view(s) {cross:.4f}"
            )
            summary = f"{rules.aggregation} of {len(self.texts)} description scores"
            rows.append(
                self._row(
                    f"{rules.aggregation}_score",
                    "score",
                    summary,
                    history,
                    cross,
                    view,
                    reason,
                    duplicate,
                    converged,
                )
            )
        return tuple(rows)

    def _row(
        self,
        name: str,
        kind: str,
        text: str,
        history: list[float],
        mean: float,
        current: float,
        reason: str,
        duplicate: bool,
        converged: bool,
    ) -> AttributeRow:
        rules = self.rules
        above = float(sum(value > rules.threshold for value in history))
        state = AttributeState.MATCHED if mean > rules.threshold else AttributeState.CONTRADICTED
        return AttributeRow(
            name=name,
            type=kind,
            evidence_phrase=text,
            weight=1,
            state=state,
            reconciled_state=state,
            votes_matched=above,
            votes_contradicted=float(len(history)) - above,
            weight_matched=above,
            weight_contradicted=float(len(history)) - above,
            weight_missing=0.0,
            converged=converged,
            last_answer="" if duplicate else rules.answer(current).value,
            last_reason="" if duplicate else reason,
        )

    # ---- episode summary -------------------------------------------------------------------------------

    def confidence(self) -> float:
        """Share of the scored texts whose cross-view mean agrees with the verdict (0 before an answer)."""
        decision = self.final_decision
        if decision is None or not self._effective:
            return 0.0
        agreeing = 0
        for index in range(len(self.texts)):
            mean = cross_view_score([item[index] for item in self._effective], 0.0)
            agreeing += self.rules.answer(mean) is decision
        return agreeing / len(self.texts)


__all__ = ["EMBEDDING_NBV", "MARGIN_REASON", "EmbeddingAgent", "EmbeddingSession", "session_texts"]
