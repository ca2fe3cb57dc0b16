"""One verification episode as a sequence of ``observe(frame) -> step`` calls (spec §5.4-5.10).

The session is the only place where the core pieces are put together: bookkeeping (§5.9) → crop (§5.4) →
per-view verification (§5.5) → tracker (§5.6) → fusion and stopping (§5.7-5.8) → next-best-view (§5.10). It is
one implementation of the agent protocol (:mod:`.protocol`); the one episode loop (:mod:`.episode_loop`) drives it
frame by frame over every port, which is what makes the ROS node's and the in-process evaluator's decisions
identical: a port adds no logic of its own beyond turning messages or environment observations into
:class:`ViewFrame` values.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace

from aiv_models.timing import StageClock

from ..claims import attribute_claim_kind, is_object_claim, view_hint
from ..core.crop import CropResult
from ..core.evidential import (
    ClaimAnswer,
    ClaimItem,
    EvidenceLedger,
    EvidenceSummary,
    EvidentialPolicy,
    view_quality,
    view_weight,
)
from ..core.nbv import NbvChoice, NbvRequest
from ..core.nbv_prompt import attribute_statuses
from ..core.policy_bookkeeping import EpisodeBookkeeping, StepBookkeeping
from ..core.stopping import DecisionMode, evaluate_stop
from ..core.tracker import AttributeStateTracker
from ..core.types import Attribute, AttributeState, Decision, ViewJudgement
from ..core.visibility import claim_vertical
from ..detection.base import BoxMode, Detector, crop_view
from ..query.types import QueryMode, QuerySpec
from ..verification.base import AttributeAnswer, check_answers
from .settings import AgentSettings
from .steps import (
    LANGUAGE_MODEL_FAILED,
    AgentComponents,
    AgentStep,
    AttributeRow,
    ViewFrame,
    view_input,
)

#: Longest model error quoted in a failure reason.
_ERROR_CHARS = 200


def _failed_calls(debug: Mapping[str, object]) -> int:
    value = debug.get(LANGUAGE_MODEL_FAILED, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _one_line(text: str, limit: int = _ERROR_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class SessionBase:
    """What every agent's session does alike, whatever judges the views (pipeline, embeddings, trained model):
    the step-order checks, the view bookkeeping of spec §5.9, the crop of a view from the configured box source,
    per-stage timings, model-call counts and the summary facts (:class:`~.protocol.SummarySource`).

    A subclass sets ``self._finished`` when its step answers and appends its :class:`AgentStep` to ``steps``.
    """

    def __init__(
        self,
        query: QuerySpec,
        *,
        episode_key: str,
        max_steps: int,
        bbox_mode: BoxMode,
        detector: Detector | None,
        model_outage: str = "fail",
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.query = query
        self.episode_key = episode_key
        self.max_steps = max_steps
        self.bbox_mode = bbox_mode
        self.detector = detector
        self.bookkeeping = EpisodeBookkeeping()
        self.clock = StageClock()
        self.steps: list[AgentStep] = []
        self.model_calls: dict[str, int] = {}
        self._finished = False
        self.model_outage_policy = model_outage
        self._language_calls = 0  # every language-model call of the episode, failed or not
        self._last_model_error = ""
        # Query understanding ran for this request (an answer from a cache made no call): its calls count too.
        self._count_language(
            len(query.dialogues), [str(item["error"]) for item in query.dialogues if item.get("error")]
        )

    @property
    def finished(self) -> bool:
        return self._finished

    def _begin_step(self, frame: ViewFrame) -> StepBookkeeping:
        """Refuse a frame out of order or after the answer, then book the view (duplicate, failed move)."""
        if self._finished:
            raise RuntimeError(f"episode {self.episode_key!r} already decided; start a new session")
        if frame.step_count != len(self.steps):
            raise ValueError(
                f"episode {self.episode_key!r}: got step_count {frame.step_count}, expected {len(self.steps)}"
            )
        return self.bookkeeping.begin_step(
            frame.current_sector,
            frame.navigation_failed,
            frame.target_visible,
            frame.image_key,
            frame.current_level,
        )

    def _with_levels(self, request: NbvRequest, frame: ViewFrame) -> NbvRequest:
        """The NBV request with what it says about height levels: the current view's level, the episode's
        levels and the used and watched views (all at eye level in a one-level episode, where no strategy
        reads them)."""
        return replace(
            request,
            current_level=frame.current_level,
            levels=frame.episode_levels,
            visited_views=self.bookkeeping.visited_views,
            failed_views=self.bookkeeping.failed_views,
            view_visibility=self.bookkeeping.view_visibility,
        )

    def _crop(self, frame: ViewFrame) -> tuple[CropResult, list[str]]:
        """The view's crop (spec §5.4) and notes on discarded boxes; a detector backend is asked for the
        predicted category (``bbox_mode: detector``)."""
        detections = frame.detections
        if self.bbox_mode is BoxMode.DETECTOR:
            if self.detector is None:
                raise RuntimeError("bbox_mode 'detector' needs a detector backend")
            stage = time.perf_counter()
            # No category predicted (possible in GT-box configurations): the reference queries "object".
            detections = tuple(self.detector.detect(frame.image, self.query.category or "object"))
            self.clock.add("detect", stage)
            self._count("detector", 1)
        return crop_view(
            frame.image,
            self.bbox_mode,
            gt_box=frame.gt_box,
            detections=detections,
            single_view=self.max_steps <= 1,
        )

    def _count(self, name: str, calls: int) -> None:
        if calls:
            self.model_calls[name] = self.model_calls.get(name, 0) + calls

    def _count_language(self, calls: int, errors: list[str]) -> None:
        """Book ``calls`` language-model calls, of which ``len(errors)`` failed (with these errors)."""
        self._language_calls += calls
        self._count(LANGUAGE_MODEL_FAILED, len(errors))
        if errors:
            self._last_model_error = errors[-1]

    def model_outage(self) -> str:
        """Why the answer must not stand, or "": the episode made language-model calls and every one failed
        (``agent.model_outage: fail``). The one episode loop asks this once the agent has answered."""
        if self.model_outage_policy != "fail" or not self._language_calls:
            return ""
        failed = self.model_calls.get(LANGUAGE_MODEL_FAILED, 0)
        if failed < self._language_calls:
            return ""
        return (
            f"the language model answered none of the episode's {self._language_calls} call(s) (last error: "
            f"{_one_line(self._last_model_error) or 'unknown'}); the answer would rest on no model output "
            "(agent.model_outage: reference would score it)"
        )

    @property
    def final_decision(self) -> Decision | None:
        return self.steps[-1].decision if self._finished else None

    @property
    def evidence_summary(self) -> EvidenceSummary | None:
        """The evidential probability and per-claim opinions now (None: this agent keeps none)."""
        return None

    @property
    def visited_order(self) -> tuple[int, ...]:
        order: list[int] = []
        for step in self.steps:
            if not step.duplicate_view and step.sector not in order:
                order.append(step.sector)
        return tuple(order)


class VerificationSession(SessionBase):
    """Drives one episode. Create one per request; feed frames until a step says ``stopped``."""

    def __init__(
        self,
        query: QuerySpec,
        components: AgentComponents,
        settings: AgentSettings,
        *,
        episode_key: str,
        max_steps: int,
    ) -> None:
        super().__init__(
            query,
            episode_key=episode_key,
            max_steps=max_steps,
            bbox_mode=settings.bbox_mode,
            detector=components.detector,
            model_outage=settings.model_outage,
        )
        self.components = components
        self.settings = settings
        self.decision_mode = settings.resolved_decision_mode(max_steps)
        self.tracker = AttributeStateTracker(query.attribute_names)
        self.evidence: EvidenceLedger | None = None
        if components.evidence is not None:
            self.evidence = components.evidence.new_ledger(
                [
                    ClaimItem(
                        attribute.name,
                        attribute_claim_kind(attribute),
                        view_hint(attribute.evidence_phrase),
                        claim_vertical(attribute.name, attribute.evidence_phrase),
                    )
                    for attribute in query.attributes
                ]
            )

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return self.query.attributes

    def observe(self, frame: ViewFrame) -> AgentStep:
        """Process one view and say what to do next: answer (Yes/No) or move (Unsure + a direction)."""
        started = time.perf_counter()
        book = self._begin_step(frame)
        crop, notes = self._crop(frame)
        self.clock.add("crop", started)

        answers: tuple[AttributeAnswer, ...] = ()
        if not book.is_duplicate or self.settings.reverify_duplicate_views:
            answers = self._verify(frame, crop)
        if not book.is_duplicate:
            judgements = [
                ViewJudgement(answer.attribute, answer.answer, answer.reason, crop.confidence)
                for answer in answers
            ]
            self.tracker.update_from_judgements(book.view_id, judgements)
            if self.evidence is not None:
                self._record_evidence(frame, crop, answers)

        stage = time.perf_counter()
        fusion = self.components.fusion
        if isinstance(fusion, EvidentialPolicy) and self.evidence is not None:
            outcome = fusion.decide(self.evidence, frame.step_count, self.max_steps)
        else:
            assert not isinstance(fusion, EvidentialPolicy)
            outcome = evaluate_stop(
                self.tracker,
                fusion,
                frame.step_count,
                self.max_steps,
                self.decision_mode,
                self.settings.stop_rule,
            )
        self.clock.add("fuse", stage)
        move = None
        if not outcome.stop:
            move = self._choose_move(frame, book.failed_direction)
            self.bookkeeping.set_pending_move(move.target_index, move.direction, move.target_level)
        remaining = self.max_steps - frame.step_count - 1
        summary = self.evidence.summary() if self.evidence is not None else None
        step = AgentStep(
            step=frame.step_count,
            sector=frame.current_sector,
            capture_tag=frame.capture_tag,
            duplicate_view=book.is_duplicate,
            crop=crop,
            crop_notes=tuple(notes),
            decision=outcome.decision,
            step_prediction=outcome.step_prediction,
            stop_reason=outcome.reason if outcome.stop else "",
            move=move,
            attributes=self._rows(remaining, answers, book.is_duplicate, summary),
            answers=answers,
            abstained=outcome.stop and outcome.decision is Decision.UNSURE,
            evidence=summary,
            level=frame.current_level,
        )
        self.steps.append(step)
        self._finished = outcome.stop
        return step

    def _record_evidence(
        self, frame: ViewFrame, crop: CropResult, answers: tuple[AttributeAnswer, ...]
    ) -> None:
        """File the view's answers as evidence under its pose (sector and capture): a pose seen again replaces
        its earlier answers (weights: :func:`~aiv_verifier.core.evidential.view_weight`). A view at another
        height level than the eye level is filed with its level too (:func:`~aiv_verifier.core.nbv_uncertainty.
        pose_level`)."""
        assert self.evidence is not None
        pose: tuple[object, ...] = (frame.current_sector, frame.capture_tag)
        if frame.current_level != 0:
            pose = (*pose, frame.current_level)
        self.evidence.record(
            pose,
            [
                ClaimAnswer(answer.attribute, answer.answer, is_object_claim(answer.debug))
                for answer in answers
            ],
            quality=view_quality(crop.box),
            weight=view_weight(crop.box, crop.confidence),
        )

    def _verify(self, frame: ViewFrame, crop: CropResult) -> tuple[AttributeAnswer, ...]:
        if not self.attributes:
            return ()
        verifier = self.components.verifier
        view = view_input(frame, crop, self.query, self.episode_key, frame.step_count)
        stage = time.perf_counter()
        before = verifier.model_calls
        answers = verifier.verify(view, self.attributes)
        self.clock.add("verify", stage)
        self._count("verifier", verifier.model_calls - before)
        check_answers(self.attributes, answers, verifier.name)
        # Failed language-model calls (answered "" ⇒ Missing, spec §5.1) are counted per episode, not hidden.
        errors = [
            str(answer.debug.get("error", ""))
            for answer in answers
            for _ in range(_failed_calls(answer.debug))
        ]
        if getattr(verifier, "uses_language_model", False):
            self._count_language(verifier.model_calls - before, errors)
        else:
            self._count(LANGUAGE_MODEL_FAILED, len(errors))
        return tuple(answers)

    def _choose_move(self, frame: ViewFrame, failed_direction: str | None) -> NbvChoice:
        mode = "direct" if self.query.mode is not QueryMode.ATTRIBUTE else "attribute"
        request = NbvRequest(
            episode_key=self.episode_key,
            step=frame.step_count,
            current_sector=frame.current_sector,
            visited=self.bookkeeping.visited,
            failed=self.bookkeeping.failed,
            geometry=frame.geometry,
            scene_image=frame.image,
            descriptions=self.query.descriptions,
            object_category=self.query.category,
            query_mode=mode,
            attributes=attribute_statuses(self.attributes, self.tracker),
            sector_visibility=self.bookkeeping.sector_visibility,
            failed_direction=failed_direction,
            evidence=self.evidence,
            evidence_policy=self.components.evidence,
        )
        request = self._with_levels(request, frame)
        stage = time.perf_counter()
        choice = self.components.nbv.choose(request)
        self.clock.add("nbv", stage)
        if self.components.nbv.name == "llm":
            self._count("llm_nbv", 1)
            error = choice.debug.get("error")
            self._count_language(1, [str(error)] if error else [])
        return choice

    def _rows(
        self,
        remaining: int,
        answers: tuple[AttributeAnswer, ...],
        duplicate: bool,
        summary: EvidenceSummary | None,
    ) -> tuple[AttributeRow, ...]:
        asked = {answer.attribute: answer for answer in answers}
        opinions = {claim.name: claim for claim in summary.claims} if summary is not None else {}
        rows = []
        for attribute, record in zip(self.attributes, self.tracker.snapshot(remaining), strict=True):
            answer = asked.get(attribute.name)
            claim = opinions.get(attribute.name)
            opinion = claim.opinion if claim is not None else None
            rows.append(
                AttributeRow(
                    name=attribute.name,
                    type=attribute.type,
                    evidence_phrase=attribute.evidence_phrase,
                    weight=attribute.weight,
                    state=record.final_decision,
                    reconciled_state=record.reconciled_state,
                    votes_matched=record.matched_votes,
                    votes_contradicted=record.contradicted_votes,
                    weight_matched=record.weights.get(AttributeState.MATCHED, 0.0),
                    weight_contradicted=record.weights.get(AttributeState.CONTRADICTED, 0.0),
                    weight_missing=record.weights.get(AttributeState.MISSING, 0.0),
                    converged=bool(record.converged),
                    last_answer="" if answer is None or duplicate else answer.answer.value,
                    last_reason="" if answer is None or duplicate else answer.reason,
                    belief=opinion.belief if opinion is not None else math.nan,
                    disbelief=opinion.disbelief if opinion is not None else math.nan,
                    uncertainty=opinion.uncertainty if opinion is not None else math.nan,
                    claim_kind=claim.kind if claim is not None else "",
                )
            )
        return tuple(rows)

    # ---- episode summary -------------------------------------------------------------------------------

    @property
    def evidence_summary(self) -> EvidenceSummary | None:
        """The evidential probability and per-claim opinions now (None without a ledger: the reference fusions
        with a geometric next-best-view)."""
        return self.evidence.summary() if self.evidence is not None else None

    @property
    def step_predictions(self) -> tuple[Decision, ...]:
        return tuple(step.step_prediction for step in self.steps)

    def confidence(self) -> float:
        """How sure the verdict is. Reference fusions: the share of decisive attribute decisions that agree with
        it (0 when none is decisive; a vote count, not a probability). Evidential fusion: the probability that
        the verdict is right (P for YES, 1 - P for NO, 0 for UNDECIDED)."""
        decision = self.final_decision
        if decision is None:
            return 0.0
        summary = self.evidence_summary
        if summary is not None:
            if decision is Decision.YES:
                return summary.probability
            return 1.0 - summary.probability if decision is Decision.NO else 0.0
        states = [self.tracker.final_decision(name) for name in self.tracker.attribute_names]
        decisive = [state for state in states if state is not AttributeState.MISSING]
        if not decisive:
            return 0.0
        agreeing = AttributeState.MATCHED if decision is Decision.YES else AttributeState.CONTRADICTED
        return sum(state is agreeing for state in decisive) / len(decisive)


def answer_text(decision: Decision | None) -> str:
    return "" if decision is None else decision.value


__all__ = [
    "AgentComponents",
    "AgentStep",
    "AttributeRow",
    "DecisionMode",
    "StageClock",
    "VerificationSession",
    "ViewFrame",
    "answer_text",
]
