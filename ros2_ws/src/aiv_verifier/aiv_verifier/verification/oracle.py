"""Privileged oracle verifiers: answer from the synthetic dataset's ground truth instead of pixels.

They exist for studies, not deployment: with a perfect per-view verifier, what accuracy and step count do the
tracker, fusion and next-best-view strategies reach, and how fast does that degrade as per-view answers get
noisy (:class:`NoisyOracleVerifier`)? Both read ``privileged_gt/<split>/<object_id>.json`` written by the
capture pipeline (per-instance attribute values and phrases, per-capture visible attributes) through
:mod:`aiv_dataset.privileged_truth`, the one reader of those files, and need the privileged view channel
(which object is shown, from which capture). A live source that renders any pose (the robot stand-in) measures
the visible attributes and the mask-over-threshold flag on the view itself and sends them along
(:attr:`.base.PrivilegedViewInfo.visible_attributes`); the oracles then use those instead of a capture look-up,
so they also answer at poses no capture was taken from.

How a query item is judged:
- the query object is found by matching the request's descriptions against the dataset's description db
  (the verifier is never told the query id);
- a target of another category is a "No" for every item whenever the target is visible (the per-view prompt of
  the reference also asks for a category check first);
- an attribute item is mapped to the query object's ground-truth attribute with the same name, else to the one
  whose phrase shares most words with the evidence; the answer is Yes/No by comparing that attribute's value on
  the query and the target, and Unsure when the capture does not show it (trap view, hidden side, too small);
- an absence claim ("no pattern", "no logo on the fob") is mapped the same way, but only to the optional
  attributes the query object *lacks* (the ground truth lists them with the absence phrase the descriptions
  use): a target that has the attribute visibly ⇒ No;
- a target that lacks an attribute shows that absence only where the attribute's place is known to be in view:
  for a logo or print, its *absence surface* (the part and face it would be printed on, recorded by aiv-capture
  1.2 with, per capture, ``absent_in_view``: whether the capture shows that place as well as it would have
  shown the print); for other slots, another visible attribute sharing its part, provided the attribute is
  not view-dependent (the GT does not say which face of a shared part it sits on). A live render measures
  only the attributes the object has, so there absent prints stay Unsure;
- a description item (direct / merged modes) combines the attributes the description mentions (phrase without
  article, the main colour's bare value, absence phrases): any visible mismatch ⇒ No, all mentioned visible and
  matching ⇒ Yes, otherwise Unsure.

:mod:`aiv_studies.oracle_audit` re-derives these answers independently from the same ground truth (studies,
tests), read by the same reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from aiv_common.setting_fields import setting
from aiv_dataset.privileged_truth import (
    InstanceTruth,
    PrivilegedTruth,
    PrivilegedTruthError,
    TruthSlot,
)

from ..claims import OBJECT_CLAIM_KEY, OBJECT_CLAIM_VALUE
from ..core.seeding import seeded_rng
from ..core.types import Attribute, Decision
from .base import AttributeAnswer, PerViewVerifier, VerifierError, ViewInput, check_answers, unsure_for_all
from .gt_text import content_words as _words
from .gt_text import is_absence_claim, mentions

_STOP_WORDS = frozenset(
    {"a", "an", "the", "on", "of", "in", "with", "and", "its", "it", "around", "at", "to"}
)
#: Share of the evidence's content words that must appear in a ground-truth phrase to count as the same claim.
MIN_PHRASE_OVERLAP = 0.5


def _content_words(text: str) -> frozenset[str]:
    return _words(text, _STOP_WORDS)


def _match_truth_attribute(attribute: Attribute, query: InstanceTruth) -> TruthSlot | None:
    """The query attribute an item speaks about; absence claims only match attributes the query lacks."""
    pool = query.absent if is_absence_claim(attribute.evidence_phrase) else query.attributes
    if attribute.name in pool:
        return pool[attribute.name]
    evidence = _content_words(attribute.evidence_phrase)
    if not evidence:
        return None
    best, best_score = None, 0.0
    for candidate in pool.values():
        score = len(evidence & _content_words(candidate.phrase)) / len(evidence)
        if score > best_score:
            best, best_score = candidate, score
    return best if best_score >= MIN_PHRASE_OVERLAP else None


class OracleVerifier:
    """Exact answers from the synthetic ground truth (needs the privileged view channel)."""

    name: ClassVar[str] = "oracle"

    def __init__(self, library: PrivilegedTruth) -> None:
        self.library = library
        self._calls = 0

    @classmethod
    def for_dataset(cls, dataset_root: str | Path) -> OracleVerifier:
        """The oracle over ``dataset_root``'s privileged ground truth and description db, both checked now so
        that a verifier pointed at the wrong dataset is refused at start, not at its first view."""
        try:
            library = PrivilegedTruth(dataset_root)
            library.load_description_index()
        except PrivilegedTruthError as error:
            raise VerifierError(
                f"oracle verifier: {error}; the oracles need a synthetic dataset written by aiv-capture "
                "(set the verifier's dataset_root parameter to it)"
            ) from error
        return cls(library)

    @property
    def model_calls(self) -> int:
        return self._calls

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        self._calls += 1
        if not attributes:
            return []
        privileged = view.privileged
        if privileged is None:
            return unsure_for_all(attributes, "oracle: no privileged ground truth for this view")
        try:
            query_id = self.library.query_object_id(view.descriptions)
            query = self.library.find(query_id) if query_id else None
            target = self.library.find(privileged.target_object_id)
        except PrivilegedTruthError as error:
            raise VerifierError(f"oracle verifier: {error}") from error
        if query is None or target is None:
            return unsure_for_all(attributes, "oracle: query or target object not in the ground truth")
        absent_in_view: frozenset[str] = frozenset()
        if privileged.visible_attributes is not None:  # measured on this very view (a live render)
            shown, visible = privileged.mask_meets_threshold, privileged.visible_attributes
        else:
            capture = target.capture(privileged.episode_path, privileged.capture_tag)
            if capture is None:
                return unsure_for_all(
                    attributes, f"oracle: no ground truth for capture {privileged.capture_tag}"
                )
            shown = bool(capture.get("mask_meets_threshold", False))
            visible = frozenset(capture.get("visible", ()))
            absent_in_view = frozenset(capture.get("absent_in_view", ()))
        view_state = _ViewState(visible, absent_in_view)
        answers = [self._judge(item, query, target, shown, view_state) for item in attributes]
        check_answers(attributes, answers, self.name)
        return answers

    def _judge(
        self,
        item: Attribute,
        query: InstanceTruth,
        target: InstanceTruth,
        shown: bool,
        visible: _ViewState,
    ) -> AttributeAnswer:
        if not shown:
            return AttributeAnswer(
                item.name, Decision.UNSURE, "oracle: the object is not clearly visible here"
            )
        if query.category != target.category:
            return AttributeAnswer(
                item.name,
                Decision.NO,
                f"oracle: this is a {target.category}, not a {query.category}",
                1.0,
                {OBJECT_CLAIM_KEY: OBJECT_CLAIM_VALUE},
            )
        if item.type == "other":
            return self._judge_description(item, query, target, visible)
        truth = _match_truth_attribute(item, query)
        if truth is None:
            return AttributeAnswer(
                item.name, Decision.UNSURE, f"oracle: no ground truth for {item.evidence_phrase!r}"
            )
        answer = _compare(truth, target, visible)
        return AttributeAnswer(
            item.name, answer, f"oracle: {truth.name} {_explain(answer)}", 1.0, {"truth": truth.name}
        )

    def _judge_description(
        self, item: Attribute, query: InstanceTruth, target: InstanceTruth, visible: _ViewState
    ) -> AttributeAnswer:
        text = item.evidence_phrase
        mentioned = [
            truth
            for truth in (*query.attributes.values(), *query.absent.values())
            if mentions(text, truth.mention)
        ]
        if not mentioned:
            return AttributeAnswer(
                item.name, Decision.UNSURE, "oracle: the description names no known attribute"
            )
        answers = {truth.name: _compare(truth, target, visible) for truth in mentioned}
        debug: dict[str, object] = {"truth": ",".join(answers)}
        if Decision.NO in answers.values():
            wrong = sorted(name for name, answer in answers.items() if answer is Decision.NO)
            return AttributeAnswer(
                item.name, Decision.NO, f"oracle: differs in {', '.join(wrong)}", 1.0, debug
            )
        if all(answer is Decision.YES for answer in answers.values()):
            return AttributeAnswer(
                item.name, Decision.YES, "oracle: every mentioned attribute matches", 1.0, debug
            )
        hidden = sorted(name for name, answer in answers.items() if answer is Decision.UNSURE)
        return AttributeAnswer(
            item.name, Decision.UNSURE, f"oracle: cannot see {', '.join(hidden)}", 1.0, debug
        )


@dataclass(frozen=True)
class _ViewState:
    """What one view shows of the target: its visible attributes and the places of its absent prints in view
    (``absent_in_view``: empty for a live render, which measures only the attributes it has)."""

    visible: frozenset[str]
    absent_in_view: frozenset[str] = frozenset()


def _compare(truth: TruthSlot, target: InstanceTruth, view: _ViewState) -> Decision:
    """Yes/No when the capture shows the attribute (or the place where it would be), else Unsure.

    ``truth`` is the query's slot (present, or absent for an absence claim)."""
    on_target = target.attributes.get(truth.name)
    if on_target is not None:
        if truth.name not in view.visible:
            return Decision.UNSURE
        return Decision.YES if on_target.value == truth.value else Decision.NO
    # The target lacks the attribute: that shows only where its place is known to be in view, through the
    # recorded absence surface of a logo or print (its own slot), else through a part another visible
    # attribute shares with it.
    slot = target.slots.get(truth.name)
    if slot is not None and slot.has_surface:
        region_visible = truth.name in view.absent_in_view
    elif not truth.absence_locatable:
        return Decision.UNSURE
    else:
        region_visible = any(
            other.name in view.visible and other.parts & truth.parts for other in target.attributes.values()
        )
    if not region_visible:
        return Decision.UNSURE
    return Decision.NO if truth.present else Decision.YES


def claim_truth(item: Attribute, query: InstanceTruth, target: InstanceTruth) -> bool | None:
    """Whether a query item holds for ``target``, whatever any view shows (None: no ground truth says).

    This is the label the calibration of per-view answers needs (``aiv-eval calibrate``): another category's
    object fails every item (as the oracle answers it), an item holds when the target has the query's value
    (or, for an absence claim, lacks the attribute), and a description holds when every attribute it
    mentions does.
    """
    if query.category != target.category:
        return False
    if item.type == "other":
        mentioned = [
            truth
            for truth in (*query.attributes.values(), *query.absent.values())
            if mentions(item.evidence_phrase, truth.mention)
        ]
        if not mentioned:
            return None
        return all(_holds(truth, target) for truth in mentioned)
    truth = _match_truth_attribute(item, query)
    return None if truth is None else _holds(truth, target)


def _holds(truth: TruthSlot, target: InstanceTruth) -> bool:
    on_target = target.attributes.get(truth.name)
    if on_target is None:
        return not truth.present
    return on_target.value == truth.value


def _explain(answer: Decision) -> str:
    return {Decision.YES: "matches", Decision.NO: "differs", Decision.UNSURE: "is not visible"}[answer]


@dataclass(frozen=True)
class NoiseModel:
    """Per-answer corruption: first an answer becomes Unsure with ``unsure_rate``, else a Yes/No is flipped
    with ``error_rate``. Draws are seeded by (seed, episode, step, attribute) so runs repeat exactly.
    """

    error_rate: float = setting(
        0.0, "noisy oracle: share of Yes/No answers flipped (after the Unsure draw)", minimum=0.0, maximum=1.0
    )
    unsure_rate: float = setting(
        0.0, "noisy oracle: share of answers turned Unsure first", minimum=0.0, maximum=1.0
    )
    seed: int = setting(42, "seed of the noisy oracle's per-answer draws")

    def __post_init__(self) -> None:
        for label, rate in (("error_rate", self.error_rate), ("unsure_rate", self.unsure_rate)):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"noisy oracle: {label} must lie in [0, 1], got {rate}")


class NoisyOracleVerifier:
    """The oracle with controlled per-view errors and abstentions, for accuracy-vs-noise studies."""

    name: ClassVar[str] = "noisy_oracle"

    def __init__(self, oracle: PerViewVerifier, noise: NoiseModel) -> None:
        self.oracle = oracle
        self.noise = noise

    @property
    def model_calls(self) -> int:
        return self.oracle.model_calls

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        answers = self.oracle.verify(view, attributes)
        return [self._corrupt(view, answer) for answer in answers]

    def _corrupt(self, view: ViewInput, answer: AttributeAnswer) -> AttributeAnswer:
        rng = seeded_rng(self.noise.seed, view.episode_key, view.step, answer.attribute, "noisy-oracle")
        if rng.random() < self.noise.unsure_rate:
            return AttributeAnswer(
                answer.attribute, Decision.UNSURE, f"{answer.reason} [noise: abstained]", 0.0
            )
        if answer.answer is not Decision.UNSURE and rng.random() < self.noise.error_rate:
            flipped = Decision.NO if answer.answer is Decision.YES else Decision.YES
            return AttributeAnswer(
                answer.attribute, flipped, f"{answer.reason} [noise: flipped]", answer.certainty, answer.debug
            )
        return answer
