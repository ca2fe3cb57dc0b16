"""Per-episode result records: one :class:`EpisodeRecord` per line of ``results.jsonl``.

The record carries every field of the reference per-episode record (spec §4.2; the reference ``transcript`` is
replaced by a compact, typed one) plus the project's extras (status, retries, per-step predictions, flips, stop
reason, model-call counts, run id).

Guarantees:

* Records are frozen and validated on construction: a record that contradicts itself (e.g. ``nav_failures`` is
  not ``unreachable + trap``, ``is_correct`` disagrees with prediction and label, counts disagree with the
  transcript) cannot be built, so it can never be written.
* Serialisation is canonical: keys in a fixed order, floats rounded to :data:`.fields.FLOAT_DECIMALS` decimals at
  construction (so the in-memory value equals what is written), ``-0.0`` normalised, ASCII-only JSON without
  spaces. Two runs that made the same decisions therefore write byte-identical lines, and
  ``EpisodeRecord.from_json_dict(r.to_json_dict()) == r`` with an identical re-serialisation.

The helpers :func:`build_episode_record` and :func:`build_infra_failure_record` derive every redundant field
(key, nav-failure counts, effective views, step predictions, flips, first-view prediction, correctness) from the
index record and the transcript, which is what an evaluator should call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import pairwise
from types import MappingProxyType
from typing import Any

from aiv_dataset.constants import PAIR_TYPES
from aiv_dataset.levels import EYE_LEVEL, MAX_LEVEL, MIN_LEVEL
from aiv_dataset.vocabulary import DIRECTION_OFFSETS, SECTOR_COUNT, clean_direction
from aiv_verifier.agent.steps import LANGUAGE_MODEL_FAILED
from aiv_verifier.core.types import AttributeState

from .fields import (
    RecordError as RecordError,
)
from .fields import (
    _check_bool,
    _check_choice,
    _check_int,
    _check_keys,
    _check_relative_path,
    _check_str,
    _float_field,
    _str_tuple,
)

PREDICTIONS: tuple[str, ...] = ("Yes", "No", "Unsure")
STEP_PREDICTIONS: tuple[str, ...] = ("Yes", "No")
STATUSES: tuple[str, ...] = ("ok", "infra_failure")
FLIP_DIRECTIONS: tuple[str, ...] = ("stable_correct", "stable_wrong", "flip_to_correct", "flip_to_wrong")
STOP_REASONS: tuple[str, ...] = ("converged", "unanimous", "final", "early_exit", "budget", "failure")
"""Stop reasons; the agent joins simultaneous ones with "+" (e.g. "converged+unanimous")."""
EVIDENTIAL_STOP_REASONS: tuple[str, ...] = ("confident", "unresolvable")
"""The evidential fusion's own: a threshold reached, or no view left that could reach one."""
MOVE_OUTCOMES: tuple[str, ...] = ("moved", "stayed", "unreachable", "already_visited", "rejected", "none")
FAILED_MOVE_OUTCOMES: frozenset[str] = frozenset({"unreachable", "already_visited"})
"""Outcomes that the reference env reports as ``navigation_failed`` (spec §3.7: the agent stays; a request for
an already-visited sector is also "unreachable"). Nothing else is a navigation failure: the forced stop at the
horizon (outcome "rejected") never attempts a move in the reference, so it sets no ``navigation_failed`` and
counts in no NavFail figure; a move a server refused is not one the reference could have made either."""
OBSERVED_ANSWERS: tuple[str, ...] = ("Yes", "No", "Unsure", "")
ATTRIBUTE_STATES: tuple[str, ...] = tuple(state.value for state in AttributeState)


def direction_offset(nav_rel: str | None) -> int | None:
    """Virtual-index offset of a requested direction, normalised like the env (spec §3.6 step 1).

    Text from the first "(" on is dropped (``"back (MLLM-Reasoning)"``), then trimmed and lower-cased. Returns
    None when the direction cannot be recognised (or is None).
    """
    if nav_rel is None:
        return None
    return DIRECTION_OFFSETS.get(clean_direction(nav_rel).lower())


def prediction_value(prediction: str | None, unsure_as_negative: bool = True) -> int | None:
    """Yes→1, No→0, Unsure→0 when ``unsure_as_negative`` else None (spec §4.3); None for anything else."""
    if prediction == "Yes":
        return 1
    if prediction == "No":
        return 0
    if prediction == "Unsure" and unsure_as_negative:
        return 0
    return None


def is_prediction_correct(prediction: str | None, label: int, unsure_as_negative: bool = True) -> bool:
    """``pred == label`` under the benchmark mapping; an unmapped prediction is wrong."""
    value = prediction_value(prediction, unsure_as_negative)
    return value is not None and value == label


def count_flips(step_predictions: Sequence[str]) -> int:
    """Number of changes in the per-step prediction sequence (spec §4.3 suggestion)."""
    return sum(1 for a, b in pairwise(step_predictions) if a != b)


def derive_flip_direction(
    first_view_prediction: str | None, prediction: str, label: int, unsure_as_negative: bool = True
) -> str:
    """stable_/flip_ from first-view vs final correctness. A missing first view counts as the final one."""
    final_ok = is_prediction_correct(prediction, label, unsure_as_negative)
    first = prediction if first_view_prediction is None else first_view_prediction
    first_ok = is_prediction_correct(first, label, unsure_as_negative)
    if first_ok == final_ok:
        return "stable_correct" if final_ok else "stable_wrong"
    return "flip_to_correct" if final_ok else "flip_to_wrong"


def make_episode_key(scene_id: str, episode_id: str, query_object_id: str) -> str:
    """The unique key of an index entry: ``"{scene}/{episode}/{query_object_id}"``."""
    return f"{scene_id}/{episode_id}/{query_object_id}"


# ------------------------------------------------------------------------------------------------ parts


@dataclass(frozen=True)
class AttributeObservation:
    """One attribute's row at one step: this view's answer and the tracker's states after the update."""

    name: str
    expected: str
    observed: str
    state: str
    reconciled_state: str
    votes_matched: float
    votes_contradicted: float

    def __post_init__(self) -> None:
        owner = "attribute"
        _check_str(owner, "name", self.name)
        if not self.name:
            raise RecordError("attribute.name must be non-empty")
        _check_str(owner, "expected", self.expected)
        _check_choice(owner, "observed", self.observed, OBSERVED_ANSWERS)
        _check_choice(owner, "state", self.state, ATTRIBUTE_STATES)
        _check_choice(owner, "reconciled_state", self.reconciled_state, ATTRIBUTE_STATES)
        object.__setattr__(self, "votes_matched", _float_field(owner, "votes_matched", self.votes_matched, 0))
        object.__setattr__(
            self, "votes_contradicted", _float_field(owner, "votes_contradicted", self.votes_contradicted, 0)
        )

    def to_json_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> AttributeObservation:
        _check_keys("attribute", data, [f.name for f in fields(cls)])
        return cls(**{f.name: data[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class TranscriptStep:
    """One env step as the evaluator logs it (compact; the reference logs raw action/info dicts).

    ``step`` is 1-based like the reference transcript. ``outcome`` is the result of this step's move request
    ("none" when the step decided Yes/No or no move was requested); ``trap_view`` is true when the move (or a
    "front" stay) arrived at a trap view.

    ``level`` is the camera height level of the view this step judged (0 = eye level, +1 above, -1 below;
    :mod:`aiv_dataset.levels`). It is written to JSON, right after ``sector``, only when it is not 0, and read
    back as 0 when absent: a one-level run's records stay byte for byte what they were before levels existed.
    """

    step: int
    sector: int
    capture_tag: str
    duplicate_view: bool
    detection_confidence: float
    decision: str
    step_prediction: str
    nav_rel: str | None
    nbv_reason: str
    outcome: str
    trap_view: bool
    attributes: tuple[AttributeObservation, ...] = ()
    crop_file: str | None = None
    level: int = EYE_LEVEL

    def __post_init__(self) -> None:
        owner = f"transcript[step {self.step!r}]"
        _check_int(owner, "step", self.step, 1)
        _check_int(owner, "sector", self.sector, 0)
        if self.sector >= SECTOR_COUNT:
            raise RecordError(
                f"{owner}.sector must be a virtual sector 0..{SECTOR_COUNT - 1}, got {self.sector}"
            )
        _check_int(owner, "level", self.level, None)
        if not MIN_LEVEL <= self.level <= MAX_LEVEL:
            raise RecordError(
                f"{owner}.level must be a camera height level {MIN_LEVEL}..{MAX_LEVEL}, got {self.level}"
            )
        _check_str(owner, "capture_tag", self.capture_tag)
        _check_bool(owner, "duplicate_view", self.duplicate_view)
        object.__setattr__(
            self,
            "detection_confidence",
            _float_field(owner, "detection_confidence", self.detection_confidence, 0.0, 1.0),
        )
        _check_choice(owner, "decision", self.decision, PREDICTIONS)
        _check_choice(owner, "step_prediction", self.step_prediction, STEP_PREDICTIONS)
        if self.nav_rel is not None:
            _check_str(owner, "nav_rel", self.nav_rel)
        _check_str(owner, "nbv_reason", self.nbv_reason)
        _check_choice(owner, "outcome", self.outcome, MOVE_OUTCOMES)
        _check_bool(owner, "trap_view", self.trap_view)
        if self.decision != "Unsure" and self.outcome != "none":
            raise RecordError(f"{owner}: a {self.decision} decision ends the episode; outcome must be 'none'")
        if self.trap_view and self.outcome not in ("moved", "stayed"):
            raise RecordError(f"{owner}: trap_view needs outcome 'moved' or 'stayed', got {self.outcome!r}")
        attrs = []
        for item in self.attributes:
            if isinstance(item, Mapping):
                item = AttributeObservation.from_json_dict(item)
            if not isinstance(item, AttributeObservation):
                raise RecordError(f"{owner}.attributes must hold AttributeObservation items")
            attrs.append(item)
        names = [a.name for a in attrs]
        if len(set(names)) != len(names):
            raise RecordError(f"{owner}.attributes has duplicate names: {names}")
        object.__setattr__(self, "attributes", tuple(attrs))
        if self.crop_file is not None:
            _check_str(owner, "crop_file", self.crop_file)
            _check_relative_path(owner, "crop_file", self.crop_file)

    @property
    def failed_move(self) -> bool:
        """The reference's ``info.navigation_failed`` for this step."""
        return self.outcome in FAILED_MOVE_OUTCOMES

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "level":
                continue
            out[f.name] = getattr(self, f.name)
            if f.name == "sector" and self.level != EYE_LEVEL:
                out["level"] = self.level
        out["attributes"] = [a.to_json_dict() for a in self.attributes]
        return out

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> TranscriptStep:
        names = [f.name for f in fields(cls) if f.name != "level" or "level" in data]
        _check_keys("transcript step", data, names)
        kwargs = {name: data[name] for name in names}
        attrs = kwargs["attributes"]
        if not isinstance(attrs, list):
            raise RecordError("transcript step.attributes must be a list")
        kwargs["attributes"] = tuple(AttributeObservation.from_json_dict(a) for a in attrs)
        return cls(**kwargs)


@dataclass(frozen=True)
class ClaimOpinion:
    """One claim's evidential opinion at the end of an episode."""

    name: str
    kind: str
    belief: float
    disbelief: float
    uncertainty: float

    def __post_init__(self) -> None:
        owner = "evidence.claim"
        _check_str(owner, "name", self.name)
        _check_str(owner, "kind", self.kind)
        for name in ("belief", "disbelief", "uncertainty"):
            object.__setattr__(self, name, _float_field(owner, name, getattr(self, name), 0.0, 1.0))

    def to_json_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> ClaimOpinion:
        _check_keys("evidence.claim", data, [f.name for f in fields(cls)])
        return cls(**{f.name: data[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class EpisodeEvidence:
    """What the evidential fusion concluded: the probability that the object was the described one, the claims
    no view answered Yes or No, and every claim's opinion."""

    probability: float
    unverified: tuple[str, ...] = ()
    claims: tuple[ClaimOpinion, ...] = ()

    def __post_init__(self) -> None:
        owner = "evidence"
        object.__setattr__(
            self, "probability", _float_field(owner, "probability", self.probability, 0.0, 1.0)
        )
        object.__setattr__(self, "unverified", _str_tuple(owner, "unverified", self.unverified))
        claims = tuple(
            item if isinstance(item, ClaimOpinion) else ClaimOpinion.from_json_dict(item)
            for item in self.claims
        )
        object.__setattr__(self, "claims", claims)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "probability": self.probability,
            "unverified": list(self.unverified),
            "claims": [claim.to_json_dict() for claim in self.claims],
        }

    @classmethod
    def from_json_dict(cls, data: Any) -> EpisodeEvidence:
        _check_keys("evidence", data, ["probability", "unverified", "claims"])
        if not isinstance(data["claims"], list) or not isinstance(data["unverified"], list):
            raise RecordError("evidence.claims and evidence.unverified must be lists")
        return cls(data["probability"], tuple(data["unverified"]), tuple(data["claims"]))


#: Record fields written only when set (a reference run's records stay as they were, byte for byte).
OPTIONAL_RECORD_FIELDS = frozenset({"evidence", "degraded"})


# ------------------------------------------------------------------------------------------------ record


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode's result. Field order is the serialisation order (reference fields first, then extras).

    An ``infra_failure`` record (the episode could not be run: a node died, a service timed out, the model
    server answered none of its calls) has prediction "Unsure", ``is_correct`` False, ``flip_direction`` None
    and stop_reason "failure"; metrics exclude it from every score and count it under ``infra_failures``. Its
    transcript may be partial.

    ``degraded`` flags a scored episode some of whose language-model calls failed (``model_calls`` holds
    ``language_model_failed``): its answer rests on part of the model's output. It is derived from
    ``model_calls`` (so records written before the field existed read the same) and written only when true.
    """

    # --- reference fields (spec §4.2)
    episode_key: str
    episode_index: int
    episode_id: str
    scene_id: str
    object_id: str
    target_object_id: str
    target_object_category: str
    query_object_category: str
    prediction: str
    label: int
    pair_type: str
    query_descriptions: tuple[str, ...]
    steps: int
    is_correct: bool
    nav_failures: int
    nav_fail_unreachable: int
    nav_fail_trap: int
    effective_views: int
    first_view_prediction: str | None
    # --- extras
    status: str = "ok"
    failure_reason: str = ""
    attempts: int = 1
    step_predictions: tuple[str, ...] = ()
    prediction_flips: int = 0
    flip_direction: str | None = None
    stop_reason: str = "final"
    category: str = ""
    query_mode: str = ""
    model_calls: Mapping[str, int] = field(default_factory=dict)
    transcript: tuple[TranscriptStep, ...] = ()
    run_id: str = ""
    evidence: EpisodeEvidence | None = None  # evidential runs only; absent from the JSON otherwise
    degraded: bool = False  # derived: an ok record with failed model calls; absent from the JSON when false

    # Frozen dataclasses hash all fields; model_calls is a mapping, so records are compared, not hashed.
    __hash__ = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        owner = f"record {self.episode_key!r}" if isinstance(self.episode_key, str) else "record"
        for name in (
            "episode_key",
            "episode_id",
            "scene_id",
            "object_id",
            "target_object_id",
            "target_object_category",
            "query_object_category",
            "failure_reason",
            "category",
            "query_mode",
            "run_id",
        ):
            _check_str(owner, name, getattr(self, name))
        for name in ("scene_id", "episode_id", "object_id", "target_object_id"):
            if not getattr(self, name):
                raise RecordError(f"{owner}.{name} must be non-empty")
        expected_key = make_episode_key(self.scene_id, self.episode_id, self.object_id)
        if self.episode_key != expected_key:
            raise RecordError(f"{owner}.episode_key must be {expected_key!r} (scene/episode/query_object_id)")
        _check_int(owner, "episode_index", self.episode_index, 0)
        _check_choice(owner, "prediction", self.prediction, PREDICTIONS)
        _check_choice(owner, "label", self.label, (0, 1))
        _check_choice(owner, "pair_type", self.pair_type, PAIR_TYPES)
        if (self.pair_type == "positive") != (self.label == 1):
            raise RecordError(f"{owner}: label {self.label} contradicts pair_type {self.pair_type!r}")
        if (self.object_id == self.target_object_id) != (self.label == 1):
            raise RecordError(
                f"{owner}: label {self.label} contradicts query/target ids (label = same instance)"
            )
        object.__setattr__(
            self, "query_descriptions", _str_tuple(owner, "query_descriptions", self.query_descriptions)
        )
        for name in ("steps", "nav_failures", "nav_fail_unreachable", "nav_fail_trap", "effective_views"):
            _check_int(owner, name, getattr(self, name), 0)
        _check_bool(owner, "is_correct", self.is_correct)
        if self.first_view_prediction is not None:
            _check_choice(owner, "first_view_prediction", self.first_view_prediction, PREDICTIONS)
        if self.nav_failures != self.nav_fail_unreachable + self.nav_fail_trap:
            raise RecordError(f"{owner}: nav_failures must equal nav_fail_unreachable + nav_fail_trap")
        if self.effective_views != self.steps - self.nav_fail_unreachable - self.nav_fail_trap:
            raise RecordError(
                f"{owner}: effective_views must equal steps - nav_fail_unreachable - nav_fail_trap"
            )

        _check_choice(owner, "status", self.status, STATUSES)
        _check_int(owner, "attempts", self.attempts, 1)
        object.__setattr__(
            self, "step_predictions", _str_tuple(owner, "step_predictions", self.step_predictions)
        )
        for p in self.step_predictions:
            _check_choice(owner, "step_predictions[]", p, STEP_PREDICTIONS)
        _check_int(owner, "prediction_flips", self.prediction_flips, 0)
        if self.flip_direction is not None:
            _check_choice(owner, "flip_direction", self.flip_direction, FLIP_DIRECTIONS)
        _check_str(owner, "stop_reason", self.stop_reason)
        for part in self.stop_reason.split("+"):
            _check_choice(owner, "stop_reason", part, STOP_REASONS + EVIDENTIAL_STOP_REASONS)
        if not isinstance(self.model_calls, Mapping):
            raise RecordError(f"{owner}.model_calls must be a mapping of str to int")
        calls = {}
        for k in sorted(self.model_calls):
            _check_str(owner, "model_calls key", k)
            _check_int(owner, f"model_calls[{k!r}]", self.model_calls[k], 0)
            calls[k] = self.model_calls[k]
        object.__setattr__(self, "model_calls", MappingProxyType(calls))
        steps = []
        for item in self.transcript:
            if isinstance(item, Mapping):
                item = TranscriptStep.from_json_dict(item)
            if not isinstance(item, TranscriptStep):
                raise RecordError(f"{owner}.transcript must hold TranscriptStep items")
            steps.append(item)
        object.__setattr__(self, "transcript", tuple(steps))
        if isinstance(self.evidence, Mapping):
            object.__setattr__(self, "evidence", EpisodeEvidence.from_json_dict(self.evidence))
        if self.evidence is not None and not isinstance(self.evidence, EpisodeEvidence):
            raise RecordError(f"{owner}.evidence must be an EpisodeEvidence or null")
        if [s.step for s in steps] != list(range(1, len(steps) + 1)):
            raise RecordError(f"{owner}.transcript steps must be numbered 1..{len(steps)} in order")
        if self.step_predictions and self.prediction_flips != count_flips(self.step_predictions):
            raise RecordError(f"{owner}.prediction_flips must equal the changes in step_predictions")
        if not self.step_predictions and self.prediction_flips != 0:
            raise RecordError(f"{owner}.prediction_flips must be 0 without step_predictions")

        if self.status == "infra_failure":
            self._check_infra_failure(owner)
        else:
            self._check_ok(owner)
        _check_bool(owner, "degraded", self.degraded)
        degraded = self.is_ok and calls.get(LANGUAGE_MODEL_FAILED, 0) > 0
        if self.degraded and not degraded:
            raise RecordError(
                f"{owner}: degraded needs status 'ok' and failed model calls (model_calls {LANGUAGE_MODEL_FAILED!r})"
            )
        object.__setattr__(self, "degraded", degraded)

    def _check_infra_failure(self, owner: str) -> None:
        if not self.failure_reason:
            raise RecordError(f"{owner}: an infra_failure record needs a failure_reason")
        if self.prediction != "Unsure" or self.is_correct:
            raise RecordError(
                f"{owner}: an infra_failure record has prediction 'Unsure' and is_correct false"
            )
        if self.flip_direction is not None:
            raise RecordError(f"{owner}: an infra_failure record has flip_direction None")
        if self.stop_reason != "failure":
            raise RecordError(f"{owner}: an infra_failure record has stop_reason 'failure'")

    def _check_ok(self, owner: str) -> None:
        if self.failure_reason:
            raise RecordError(f"{owner}: failure_reason must be empty when status is 'ok'")
        if self.steps < 1:
            raise RecordError(f"{owner}: a completed episode takes at least one step")
        if self.prediction == "Unsure":
            if self.label == 1 and self.is_correct:
                raise RecordError(f"{owner}: an Unsure prediction cannot be correct on a positive pair")
        elif self.is_correct != (prediction_value(self.prediction) == self.label):
            raise RecordError(
                f"{owner}: is_correct contradicts prediction {self.prediction} and label {self.label}"
            )
        if self.flip_direction is None:
            raise RecordError(f"{owner}: flip_direction is required when status is 'ok'")
        final_part_ok = self.flip_direction in ("stable_correct", "flip_to_correct")
        if final_part_ok != self.is_correct:
            raise RecordError(f"{owner}: flip_direction {self.flip_direction!r} contradicts is_correct")
        first = self.prediction if self.first_view_prediction is None else self.first_view_prediction
        if first != "Unsure":
            first_ok = prediction_value(first) == self.label
            first_part_ok = self.flip_direction in ("stable_correct", "flip_to_wrong")
            if first_ok != first_part_ok:
                raise RecordError(
                    f"{owner}: flip_direction {self.flip_direction!r} contradicts the first view"
                )
        if self.step_predictions:
            if len(self.step_predictions) != self.steps:
                raise RecordError(f"{owner}: step_predictions must have one entry per step ({self.steps})")
            if self.first_view_prediction != self.step_predictions[0]:
                raise RecordError(f"{owner}: first_view_prediction must be the first step prediction")
        if self.transcript:
            if len(self.transcript) != self.steps:
                raise RecordError(f"{owner}: transcript must have one entry per step ({self.steps})")
            if self.nav_fail_unreachable != sum(1 for s in self.transcript if s.failed_move):
                raise RecordError(
                    f"{owner}: nav_fail_unreachable disagrees with the transcript's failed moves"
                )
            if self.nav_fail_trap != sum(1 for s in self.transcript if s.trap_view):
                raise RecordError(f"{owner}: nav_fail_trap disagrees with the transcript's trap views")
            if (
                self.step_predictions
                and tuple(s.step_prediction for s in self.transcript) != self.step_predictions
            ):
                raise RecordError(f"{owner}: step_predictions disagree with the transcript")
            if self.transcript[-1].decision != self.prediction:
                raise RecordError(f"{owner}: the last transcript decision must be the prediction")

    # -------------------------------------------------------------------------------------------- properties

    @property
    def is_ok(self) -> bool:
        return self.status == "ok"

    @property
    def scene_episode(self) -> str:
        """The reference's ``"scene/episode"`` string (used in correct/wrong episode lists)."""
        return f"{self.scene_id}/{self.episode_id}"

    # -------------------------------------------------------------------------------------------- JSON

    def to_json_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict in the canonical key order."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in OPTIONAL_RECORD_FIELDS:
                if value is not None and value is not False:
                    out[f.name] = value.to_json_dict() if isinstance(value, EpisodeEvidence) else value
                continue
            if f.name == "transcript":
                value = [s.to_json_dict() for s in value]
            elif f.name == "model_calls":
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    def to_json_line(self) -> str:
        """The canonical one-line serialisation (no trailing newline)."""
        return dumps_canonical(self.to_json_dict())

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> EpisodeRecord:
        """Strict inverse of :meth:`to_json_dict`: every key required, unknown keys refused."""
        names = [f.name for f in fields(cls)]
        required = [name for name in names if name not in OPTIONAL_RECORD_FIELDS]
        present = [name for name in OPTIONAL_RECORD_FIELDS if name in data]
        _check_keys("record", data, required + present)
        kwargs = {n: data[n] for n in required + present}
        for name in ("query_descriptions", "step_predictions", "transcript"):
            if not isinstance(kwargs[name], list):
                raise RecordError(f"record.{name} must be a list")
        if not isinstance(kwargs["model_calls"], dict):
            raise RecordError("record.model_calls must be an object")
        kwargs["transcript"] = tuple(TranscriptStep.from_json_dict(s) for s in kwargs["transcript"])
        if "evidence" in kwargs:
            kwargs["evidence"] = EpisodeEvidence.from_json_dict(kwargs["evidence"])
        return cls(**kwargs)

    @classmethod
    def from_json_line(cls, line: str) -> EpisodeRecord:
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(f"not valid JSON: {exc}") from exc
        return cls.from_json_dict(data)


def dumps_canonical(data: Any) -> str:
    """Compact, ASCII-only JSON that keeps the given key order; NaN/Infinity refused."""
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


# ------------------------------------------------------------------------------------------------ builders


def _identity(index_record: Mapping[str, Any]) -> dict[str, Any]:
    """The identity fields of a record from one line of the benchmark index (spec §2.4)."""

    def pick(*names: str) -> Any:
        for n in names:
            if index_record.get(n) not in (None, ""):
                return index_record[n]
        raise RecordError(f"index record lacks {names[0]!r}: {dict(index_record)!r}")

    scene = str(pick("scene", "scene_key", "scene_id"))
    episode = str(pick("episode", "episode_id"))
    query = str(pick("query_object_id", "object_id"))
    target_category = str(pick("target_object_category"))
    return {
        "episode_key": make_episode_key(scene, episode, query),
        "episode_id": episode,
        "scene_id": scene,
        "object_id": query,
        "target_object_id": str(pick("target_object_id")),
        "target_object_category": target_category,
        "query_object_category": str(index_record.get("query_object_category") or target_category),
        "label": int(pick("label")),
        "pair_type": str(pick("pair_type")),
    }


def _as_steps(transcript: Iterable[TranscriptStep | Mapping[str, Any]]) -> tuple[TranscriptStep, ...]:
    return tuple(s if isinstance(s, TranscriptStep) else TranscriptStep.from_json_dict(s) for s in transcript)


def build_episode_record(
    *,
    episode_index: int,
    index_record: Mapping[str, Any],
    query_descriptions: Sequence[str],
    prediction: str,
    transcript: Iterable[TranscriptStep | Mapping[str, Any]],
    stop_reason: str,
    run_id: str,
    unsure_as_negative: bool = True,
    attempts: int = 1,
    category: str = "",
    query_mode: str = "",
    model_calls: Mapping[str, int] | None = None,
    evidence: EpisodeEvidence | None = None,
) -> EpisodeRecord:
    """A completed episode's record, every redundant field derived from the transcript.

    ``steps`` = transcript length; unreachable = steps whose outcome is a failed move; trap = steps with
    ``trap_view``; ``first_view_prediction`` = the first step prediction (the final prediction when the
    transcript is empty, as the reference); flips and flip direction per spec §4.3.
    """
    steps = _as_steps(transcript)
    if not steps:
        raise RecordError("a completed episode needs a non-empty transcript")
    ident = _identity(index_record)
    step_predictions = tuple(s.step_prediction for s in steps)
    unreachable = sum(1 for s in steps if s.failed_move)
    trap = sum(1 for s in steps if s.trap_view)
    first_view = step_predictions[0]
    return EpisodeRecord(
        **ident,
        episode_index=episode_index,
        prediction=prediction,
        query_descriptions=tuple(query_descriptions),
        steps=len(steps),
        is_correct=is_prediction_correct(prediction, ident["label"], unsure_as_negative),
        nav_failures=unreachable + trap,
        nav_fail_unreachable=unreachable,
        nav_fail_trap=trap,
        effective_views=len(steps) - unreachable - trap,
        first_view_prediction=first_view,
        status="ok",
        failure_reason="",
        attempts=attempts,
        step_predictions=step_predictions,
        prediction_flips=count_flips(step_predictions),
        flip_direction=derive_flip_direction(first_view, prediction, ident["label"], unsure_as_negative),
        stop_reason=stop_reason,
        category=category,
        query_mode=query_mode,
        model_calls=dict(model_calls or {}),
        transcript=steps,
        run_id=run_id,
        evidence=evidence,
    )


def build_infra_failure_record(
    *,
    episode_index: int,
    index_record: Mapping[str, Any],
    query_descriptions: Sequence[str],
    failure_reason: str,
    run_id: str,
    attempts: int = 1,
    transcript: Iterable[TranscriptStep | Mapping[str, Any]] = (),
    category: str = "",
    query_mode: str = "",
    model_calls: Mapping[str, int] | None = None,
) -> EpisodeRecord:
    """The record of an episode that could not be completed (excluded from scores; may be retried)."""
    steps = _as_steps(transcript)
    ident = _identity(index_record)
    unreachable = sum(1 for s in steps if s.failed_move)
    trap = sum(1 for s in steps if s.trap_view)
    step_predictions = tuple(s.step_prediction for s in steps)
    return EpisodeRecord(
        **ident,
        episode_index=episode_index,
        prediction="Unsure",
        query_descriptions=tuple(query_descriptions),
        steps=len(steps),
        is_correct=False,
        nav_failures=unreachable + trap,
        nav_fail_unreachable=unreachable,
        nav_fail_trap=trap,
        effective_views=len(steps) - unreachable - trap,
        first_view_prediction=step_predictions[0] if step_predictions else None,
        status="infra_failure",
        failure_reason=failure_reason or "unknown failure",
        attempts=attempts,
        step_predictions=step_predictions,
        prediction_flips=count_flips(step_predictions),
        flip_direction=None,
        stop_reason="failure",
        category=category,
        query_mode=query_mode,
        model_calls=dict(model_calls or {}),
        transcript=steps,
        run_id=run_id,
    )
