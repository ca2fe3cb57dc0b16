"""Privileged oracle verifiers: answer from the synthetic dataset's ground truth instead of pixels.

They exist for studies, not deployment: with a perfect per-view verifier, what accuracy and step count do the
tracker, fusion and next-best-view strategies reach, and how fast does that degrade as per-view answers get
noisy (:class:`NoisyOracleVerifier`)? Both read ``privileged_gt/<split>/<object_id>.json`` written by the
capture pipeline (per-instance attribute values and phrases, per-capture visible attributes) and need the
privileged view channel (which object is shown, from which capture). A live source that renders any pose (the
robot stand-in) measures the visible attributes and the mask-over-threshold flag on the view itself and sends
them along (:attr:`.base.PrivilegedViewInfo.visible_attributes`); the oracles then use those instead of a
capture look-up, so they also answer at poses no capture was taken from.

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
  another visible attribute shares its part, and the attribute is neither view-dependent (the GT does not say
  which face of a shared part it sits on) nor a decal (the GT does not record where an absent decal would be);
- a description item (direct / merged modes) combines the attributes the description mentions (phrase without
  article, the main colour's bare value, absence phrases): any visible mismatch ⇒ No, all mentioned visible and
  matching ⇒ Yes, otherwise Unsure.

:mod:`.oracle_audit` re-derives these answers independently from the same ground truth (studies, tests).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..claims import OBJECT_CLAIM_KEY, OBJECT_CLAIM_VALUE
from ..core.seeding import seeded_rng
from ..core.types import Attribute, Decision
from .base import AttributeAnswer, PerViewVerifier, VerifierError, ViewInput, check_answers, unsure_for_all
from .gt_text import ABSENT, PRIVILEGED_GT_DIR, description_mention, is_absence_claim, mentions
from .gt_text import content_words as _words

_STOP_WORDS = frozenset(
    {"a", "an", "the", "on", "of", "in", "with", "and", "its", "it", "around", "at", "to"}
)
#: Share of the evidence's content words that must appear in a ground-truth phrase to count as the same claim.
MIN_PHRASE_OVERLAP = 0.5


def _content_words(text: str) -> frozenset[str]:
    return _words(text, _STOP_WORDS)


@dataclass(frozen=True)
class TruthAttribute:
    """One attribute slot of an instance; ``value`` is :data:`ABSENT` for an optional attribute it lacks.

    ``phrase`` is the GT phrase (the absence phrase for an absent one); ``mention`` how the specific description
    words it (phrase without article, the bare value for the main colour, the absence phrase).
    """

    name: str
    value: str
    phrase: str
    parts: frozenset[str]
    view_dependent: bool = False
    mention: str = ""

    @property
    def present(self) -> bool:
        return self.value != ABSENT

    @property
    def absence_locatable(self) -> bool:
        """Whether a capture can show that an instance lacks it (its place is known from a shared part)."""
        return not self.view_dependent and not any(part.startswith("decal:") for part in self.parts)


@dataclass(frozen=True)
class InstanceTruth:
    """Ground truth of one synthetic instance (only what the oracles need)."""

    object_id: str
    category: str
    attributes: Mapping[str, TruthAttribute]
    captures: Mapping[
        str, Mapping[str, Any]
    ]  # episode_path -> capture tag -> {visible, mask_meets_threshold}
    absent: Mapping[str, TruthAttribute] = field(default_factory=dict)  # optional attributes it lacks

    def capture(self, episode_path: str, capture_tag: str) -> Mapping[str, Any] | None:
        return self.captures.get(episode_path, {}).get(capture_tag)


class GroundTruthLibrary:
    """Lazy, cached access to the per-instance ground truth and to description → object id resolution."""

    def __init__(self, dataset_root: str | Path) -> None:
        self.root = Path(dataset_root)
        gt_dir = self.root / PRIVILEGED_GT_DIR
        if not gt_dir.is_dir():
            raise VerifierError(
                f"oracle verifier: {gt_dir} does not exist; the oracles need a synthetic dataset written by "
                "aiv-capture (set the verifier's dataset_root parameter to it)"
            )
        self._paths = {path.stem: path for path in sorted(gt_dir.glob("*/*.json"))}
        self._cache: dict[str, InstanceTruth] = {}
        self._by_descriptions = self._load_description_index()

    def _load_description_index(self) -> dict[tuple[str, ...], str]:
        from aiv_dataset.layout import PInVerifyDataset

        db = PInVerifyDataset(self.root).load_descriptions()
        if db is None:
            raise VerifierError(f"oracle verifier: no description db under {self.root}")
        index: dict[tuple[str, ...], str] = {}
        for object_id in db:
            index.setdefault(_normalised(db.descriptions_for(object_id)), object_id)
        return index

    def query_object_id(self, descriptions: Sequence[str]) -> str | None:
        return self._by_descriptions.get(_normalised(descriptions))

    def instance(self, object_id: str) -> InstanceTruth | None:
        if object_id in self._cache:
            return self._cache[object_id]
        path = self._paths.get(object_id)
        if path is None:
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            items = list(data["attributes"])
            main_colour = next((str(item["name"]) for item in items if item["type"] == "color"), None)
            attributes = {}
            for item in items:
                name, value, phrase = str(item["name"]), str(item["value"]), str(item["phrase"])
                attributes[name] = TruthAttribute(
                    name,
                    value,
                    phrase,
                    frozenset(item.get("parts", ())),
                    bool(item.get("view_dependent", False)),
                    description_mention(name, value, phrase, main_colour),
                )
            truth = InstanceTruth(
                object_id=object_id,
                category=str(data["object_category"]),
                attributes=attributes,
                captures=data.get("captures", {}),
                absent=_absent_attributes(data, path),
            )
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise VerifierError(f"oracle verifier: cannot read ground truth {path}: {error}") from error
        self._cache[object_id] = truth
        return truth


def _absent_attributes(data: Mapping[str, Any], path: Path) -> dict[str, TruthAttribute]:
    """The optional attributes an instance lacks, as the generator recorded them in ``absent_attributes``.

    The phrase is the absence phrase the specific description uses ("no logo on the back"); reading it from
    the file keeps the verifier free of the generator. A file without the field comes from an older
    aiv-capture and cannot answer absence claims, so it is refused instead of silently judged without them.
    """
    if "absent_attributes" not in data:
        raise VerifierError(
            f"oracle verifier: ground truth {path} has no 'absent_attributes' (written by an older aiv-capture); "
            "regenerate the dataset with aiv-capture"
        )
    absent = {}
    for item in data["absent_attributes"]:
        if not item["optional"]:
            continue
        name, phrase = str(item["name"]), str(item["phrase"])
        absent[name] = TruthAttribute(
            name,
            ABSENT,
            phrase,
            frozenset(item.get("parts", ())),
            bool(item.get("view_dependent", False)),
            phrase,
        )
    return absent


def _normalised(descriptions: Sequence[str]) -> tuple[str, ...]:
    return tuple(" ".join(text.split()) for text in descriptions)


def _match_truth_attribute(attribute: Attribute, query: InstanceTruth) -> TruthAttribute | None:
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

    def __init__(self, library: GroundTruthLibrary) -> None:
        self.library = library
        self._calls = 0

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
        query_id = self.library.query_object_id(view.descriptions)
        query = self.library.instance(query_id) if query_id else None
        target = self.library.instance(privileged.target_object_id)
        if query is None or target is None:
            return unsure_for_all(attributes, "oracle: query or target object not in the ground truth")
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
        answers = [self._judge(item, query, target, shown, visible) for item in attributes]
        check_answers(attributes, answers, self.name)
        return answers

    def _judge(
        self,
        item: Attribute,
        query: InstanceTruth,
        target: InstanceTruth,
        shown: bool,
        visible: frozenset[str],
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
        self, item: Attribute, query: InstanceTruth, target: InstanceTruth, visible: frozenset[str]
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


def _compare(truth: TruthAttribute, target: InstanceTruth, visible: frozenset[str]) -> Decision:
    """Yes/No when the capture shows the attribute (or the part where it would be), else Unsure.

    ``truth`` is the query's slot (present, or absent for an absence claim)."""
    on_target = target.attributes.get(truth.name)
    if on_target is not None:
        if truth.name not in visible:
            return Decision.UNSURE
        return Decision.YES if on_target.value == truth.value else Decision.NO
    # The target lacks the attribute: that shows only where its place is known to be in view.
    if not truth.absence_locatable:
        return Decision.UNSURE
    region_visible = any(
        other.name in visible and other.parts & truth.parts for other in target.attributes.values()
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


def _holds(truth: TruthAttribute, target: InstanceTruth) -> bool:
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

    error_rate: float = 0.0
    unsure_rate: float = 0.0
    seed: int = 42

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
