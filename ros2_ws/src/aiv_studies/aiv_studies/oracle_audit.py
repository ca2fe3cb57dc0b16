"""Audit oracle-verifier episodes against the synthetic dataset's privileged ground truth.

The question per episode: *could a verifier have known the answer from what the agent looked at?* The audit
re-derives, independently of :mod:`.oracle`, what every per-view answer should be and why a wrong episode was
wrong, so a study (``scripts/oracle_study.py``) can tell the oracle's or the agent's bugs apart from genuine
limits of the task, and a test can assert that an oracle run is perfect on everything that was knowable.

Definitions (all from ``privileged_gt/<split>/<object_id>.json``, which also lists the absent slots, read by
:mod:`aiv_dataset.privileged_truth` exactly as the oracle reads it):

- every attribute slot of an instance's category/subtype is a :class:`~aiv_dataset.privileged_truth.TruthSlot`
  of :attr:`InstanceTruth.slots`, present or absent (value ``"none"``); ``mention`` is how the *specific*
  description states it: the phrase without its article, the bare value for the object's main colour (it is
  written into the head noun phrase), and the catalogue's absence phrase ("no logo on the fob") for an absent
  optional attribute;
- the *deciding attributes* of a same-category pair are the slots whose values differ;
- an attribute is *observable* in a capture when the target is clearly shown (mask over threshold) and either
  the target has it and the capture lists it as visible, or the target lacks it and the place it would occupy
  is in view: for a logo or print, its recorded absence surface (the capture's ``absent_in_view``, aiv-capture
  1.2), otherwise a non-view-dependent region visible through another visible attribute sharing a part
  (:meth:`InstanceTruth.absence_shown`). Absences the ground truth cannot place (an older file without
  surfaces, a view-dependent slot on a shared part) are *unlocatable*;
- a query item refers to the ground-truth attribute whose mention shares most content words with its evidence
  (Jaccard ≥ 0.5, absence claims only with absent attributes and vice versa); a description item (direct and
  merged modes) refers to every attribute whose mention it contains.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiv_dataset.privileged_truth import ABSENT, InstanceTruth, PrivilegedTruth
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.verification.gt_text import content_words as _words
from aiv_verifier.verification.gt_text import is_absence_claim, mentions

MIN_ITEM_OVERLAP = 0.5
_STOP = frozenset(
    {"a", "an", "the", "on", "of", "in", "with", "and", "its", "it", "around", "at", "to", "is"}
)

# Causes of a wrong episode (and "correct"). Oracle bugs first, then the fusion, then genuine limits.
CORRECT = "correct"
BUG_ORACLE_MISSED = "d_oracle_missed"  # deciding evidence observed, the oracle did not answer it right
BUG_POSITIVE_NO = "e_positive_no"  # positive pair: the oracle answered No on some item
# The oracle answered the observed deciding evidence right, the fusion still erred: by design for
# attr_majority (a distractor differing in one of seven attributes wins the vote), a bug for veto.
FUSION_OVERRULED = "fusion_overruled"
NOT_MENTIONED = "a_not_mentioned"  # no description mentions any deciding attribute
NOT_EXTRACTED = "b_not_extracted"  # mentioned, but no query item refers to a deciding attribute
NOT_VISITED = "c1_not_visited"  # extracted, observable only in captures the agent did not verify
NEVER_OBSERVABLE = "c2_never_observable"  # extracted, observable in no capture the env can serve
UNLOCATABLE = "c3_absence_unlocatable"  # extracted, the target lacks it and the GT cannot locate the absence
TARGET_NEVER_SHOWN = "f_target_never_shown"  # no verified view shows the target clearly
NOTHING_CHECKABLE = (
    "g_nothing_checkable"  # positive: target shown, but no item's attribute visible anywhere seen
)

ORACLE_BUG_CAUSES = frozenset({BUG_ORACLE_MISSED, BUG_POSITIVE_NO})
CAUSE_ORDER = (
    BUG_ORACLE_MISSED,
    BUG_POSITIVE_NO,
    FUSION_OVERRULED,
    NOT_MENTIONED,
    NOT_EXTRACTED,
    NOT_VISITED,
    NEVER_OBSERVABLE,
    UNLOCATABLE,
    TARGET_NEVER_SHOWN,
    NOTHING_CHECKABLE,
)


def content_words(text: str) -> frozenset[str]:
    return _words(text, _STOP)


# ---- per-item reference answers -----------------------------------------------------------------------------


def item_referents(item: Attribute, query: InstanceTruth) -> tuple[str, ...]:
    """The query's ground-truth attributes a query item speaks about (empty: none the GT knows)."""
    if item.type == "other":
        return tuple(
            a.name for a in query.slots.values() if a.mention and mentions(item.evidence_phrase, a.mention)
        )
    evidence = content_words(item.evidence_phrase)
    if not evidence:
        return ()
    negated = is_absence_claim(item.evidence_phrase)
    best, best_score = None, 0.0
    for candidate in query.slots.values():
        if not candidate.mention or candidate.present == negated:
            continue
        words = content_words(candidate.mention)
        score = len(evidence & words) / len(evidence | words)
        if score > best_score:
            best, best_score = candidate.name, score
    return (best,) if best is not None and best_score >= MIN_ITEM_OVERLAP else ()


def observable(
    name: str, query: InstanceTruth, target: InstanceTruth, capture: Mapping[str, Any] | None
) -> bool:
    """Whether ``capture`` (of ``target``) shows whether ``target`` has query attribute ``name`` as the query."""
    if capture is None or not capture.get("mask_meets_threshold", False):
        return False
    visible = frozenset(capture.get("visible", ()))
    on_target = target.slots.get(name)
    if on_target is not None and on_target.present:
        return name in visible
    if on_target is not None:  # the target lacks it: its absence surface, else a shared part in view
        return target.absence_shown(name, capture)
    slot = query.slots[name]  # a slot the target's subtype does not have at all
    if not slot.absence_locatable:
        return False
    return any(
        other.present and other.name in visible and other.parts & slot.parts
        for other in target.slots.values()
    )


def reference_answer(
    name: str, query: InstanceTruth, target: InstanceTruth, capture: Mapping[str, Any] | None
) -> Decision:
    """What a perfect verifier answers about query attribute ``name`` from ``capture``."""
    if capture is None or not capture.get("mask_meets_threshold", False):
        return Decision.UNSURE
    if query.category != target.category:
        return Decision.NO
    if not observable(name, query, target, capture):
        return Decision.UNSURE
    on_target = target.slots.get(name)
    target_value = on_target.value if on_target is not None else ABSENT
    return Decision.YES if target_value == query.slots[name].value else Decision.NO


def reference_item_answer(
    item: Attribute, query: InstanceTruth, target: InstanceTruth, capture: Mapping[str, Any] | None
) -> Decision:
    """A perfect verifier's answer to a query item: No if any referent visibly differs, Yes if all match."""
    if capture is None or not capture.get("mask_meets_threshold", False):
        return Decision.UNSURE
    if query.category != target.category:
        return Decision.NO
    answers = [reference_answer(name, query, target, capture) for name in item_referents(item, query)]
    if Decision.NO in answers:
        return Decision.NO
    if answers and all(answer is Decision.YES for answer in answers):
        return Decision.YES
    return Decision.UNSURE


# ---- episodes ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepRecord:
    """One agent step as the audit needs it: the capture shown and the verifier's answers, if they counted."""

    step: int
    capture_tag: str
    verified: bool  # the answers went into the tracker (not a duplicate view)
    answers: Mapping[str, Decision]  # item name -> oracle answer
    oracle_truths: Mapping[str, str] = field(default_factory=dict)  # item -> GT attribute the oracle used


@dataclass(frozen=True)
class OracleEpisode:
    """One episode run with the oracle verifier, as the audit needs it.

    Not :class:`aiv_eval.records.episode.EpisodeRecord` (a results.jsonl line): this keeps the label, the query items,
    the oracle's answers per step and every capture the environment could have served.
    """

    key: str
    pair_type: str
    label: int
    prediction: Decision
    query_id: str
    target_id: str
    episode_path: str
    items: tuple[Attribute, ...]
    steps: tuple[StepRecord, ...]
    servable_tags: tuple[str, ...]  # the capture each available sector shows (all the env could serve)
    descriptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerMismatch:
    step: int
    capture_tag: str
    item: str
    evidence: str
    oracle: Decision
    reference: Decision
    referents: tuple[str, ...]
    oracle_truth: str

    def __str__(self) -> str:
        return (
            f"step {self.step} {self.capture_tag} {self.item}={self.evidence!r} -> GT {list(self.referents)}: "
            f"oracle {self.oracle.value} (used {self.oracle_truth or '-'}), reference {self.reference.value}"
        )


@dataclass(frozen=True)
class DecidingAttribute:
    name: str
    query_value: str
    target_value: str
    mention: str
    mentioned: bool
    items: tuple[str, ...]  # query items referring to it
    observed_steps: tuple[int, ...]  # verified steps whose capture makes it observable
    no_steps: tuple[int, ...]  # verified steps where a referring item got No from the oracle
    servable_tags: tuple[str, ...]  # servable captures where it is observable
    any_tags: tuple[str, ...]  # any capture of the episode (also the view type the env does not serve)
    unlocatable: bool  # the target lacks it and the GT cannot say when its place is in view

    def describe(self) -> str:
        return f"{self.name} ({self.query_value} vs {self.target_value})"


@dataclass(frozen=True)
class EpisodeAudit:
    record: OracleEpisode
    correct: bool
    cause: str
    detail: str
    deciding: tuple[DecidingAttribute, ...]
    mismatches: tuple[AnswerMismatch, ...]
    unsupported_no: tuple[AnswerMismatch, ...]  # oracle No where the reference is not No (a leak or a bug)
    evidence_observed: bool  # a verifier could have known the right answer from the verified views
    avoidable: bool  # ... from some servable capture (full budget, ideal navigation)
    avoidable_ideal_query: bool  # ... also with a perfect decomposer (every mentioned attribute extracted)
    avoidable_any_view: bool  # ... from any capture of the episode, served or not (e.g. the other view type)

    @property
    def is_oracle_bug(self) -> bool:
        return self.cause in ORACLE_BUG_CAUSES


def _verified(record: OracleEpisode) -> list[StepRecord]:
    return [step for step in record.steps if step.verified]


def audit_episode(library: PrivilegedTruth, record: OracleEpisode) -> EpisodeAudit:
    query = library.instance(record.query_id)
    target = library.instance(record.target_id)

    def capture(tag: str) -> Mapping[str, Any] | None:
        return target.capture(record.episode_path, tag)

    referents = {item.name: item_referents(item, query) for item in record.items}
    mismatches: list[AnswerMismatch] = []
    for step in _verified(record):
        cap = capture(step.capture_tag)
        for item in record.items:
            if item.name not in step.answers:
                continue
            expected = reference_item_answer(item, query, target, cap)
            got = step.answers[item.name]
            if got is not expected:
                mismatches.append(
                    AnswerMismatch(
                        step.step,
                        step.capture_tag,
                        item.name,
                        item.evidence_phrase,
                        got,
                        expected,
                        referents[item.name],
                        step.oracle_truths.get(item.name, ""),
                    )
                )
    unsupported = tuple(m for m in mismatches if m.oracle is Decision.NO)

    deciding = tuple(
        _deciding(
            record, query, target, referents, capture, tuple(target.captures.get(record.episode_path, {}))
        )
    )
    correct = (record.prediction is Decision.YES) == (record.label == 1)
    verified = _verified(record)
    shown_steps = [s for s in verified if (c := capture(s.capture_tag)) and c.get("mask_meets_threshold")]
    shown_servable = [t for t in record.servable_tags if (c := capture(t)) and c.get("mask_meets_threshold")]
    all_tags = tuple(target.captures.get(record.episode_path, {}))

    if record.pair_type == "positive" or record.label == 1:
        # Knowable: some item would be answered Yes by a perfect verifier in a verified view.
        def confirmable(tag: str) -> bool:
            cap = capture(tag)
            return any(reference_item_answer(i, query, target, cap) is Decision.YES for i in record.items)

        observed = any(confirmable(s.capture_tag) for s in verified)
        avoidable = ideal = any(confirmable(t) for t in record.servable_tags)
        any_view = any(confirmable(t) for t in all_tags)
        said_yes = any(answer is Decision.YES for s in verified for answer in s.answers.values())
        if correct:
            cause, detail = CORRECT, ""
        elif any(answer is Decision.NO for s in verified for answer in s.answers.values()):
            no_answers = sorted(
                {f"{n}@{s.step}" for s in verified for n, a in s.answers.items() if a is Decision.NO}
            )
            cause, detail = BUG_POSITIVE_NO, "oracle No on " + ", ".join(no_answers)
        elif not shown_steps:
            cause = TARGET_NEVER_SHOWN
            detail = f"shown in servable captures: {shown_servable or 'none'}"
        elif not observed:
            cause = NOTHING_CHECKABLE
            detail = f"no item confirmable in a verified view (items {[i.name for i in record.items]})"
        elif said_yes:
            cause, detail = FUSION_OVERRULED, "the oracle confirmed an item but the fusion said No"
        else:
            cause, detail = BUG_ORACLE_MISSED, "an item was confirmable but the oracle never said Yes"
    elif query.category != target.category:
        observed = bool(shown_steps)
        avoidable = ideal = bool(shown_servable)
        any_view = any((c := capture(t)) and c.get("mask_meets_threshold") for t in all_tags)
        if correct:
            cause, detail = CORRECT, ""
        elif not observed:
            cause, detail = TARGET_NEVER_SHOWN, f"shown in servable captures: {shown_servable or 'none'}"
        elif (
            any(answer is Decision.NO for s in verified for answer in s.answers.values()) or not record.items
        ):
            cause, detail = FUSION_OVERRULED, "category mismatch seen"
        else:
            cause, detail = BUG_ORACLE_MISSED, "category mismatch shown but never answered No"
    else:
        extracted = [d for d in deciding if d.items]
        observed = any(d.observed_steps for d in extracted)
        avoidable = any(d.servable_tags for d in extracted)
        ideal = any(d.servable_tags for d in deciding if d.mentioned)
        any_view = any(d.any_tags for d in extracted)
        if correct:
            cause, detail = CORRECT, ""
        elif not deciding:
            cause, detail = NOT_MENTIONED, "query and target have identical recipes"
        elif not any(d.mentioned for d in deciding):
            cause = NOT_MENTIONED
            detail = "; ".join(d.describe() for d in deciding)
        elif not extracted:
            cause = NOT_EXTRACTED
            detail = "; ".join(f"{d.describe()} stated as {d.mention!r}" for d in deciding if d.mentioned)
        elif observed:
            said_no = any(d.no_steps for d in extracted)
            cause = FUSION_OVERRULED if said_no else BUG_ORACLE_MISSED
            detail = "; ".join(
                f"{d.describe()} items {list(d.items)} observed at steps {list(d.observed_steps)}, "
                f"oracle No at {list(d.no_steps)}"
                for d in extracted
                if d.observed_steps
            )
        elif avoidable:
            cause = NOT_VISITED
            detail = "; ".join(
                f"{d.describe()} observable in {list(d.servable_tags)}" for d in extracted if d.servable_tags
            )
        elif all(d.unlocatable for d in extracted):
            cause = UNLOCATABLE
            detail = "; ".join(f"{d.describe()}: target lacks it, place not in GT" for d in extracted)
        else:
            cause = NEVER_OBSERVABLE
            detail = "; ".join(
                f"{d.describe()} items {list(d.items)}"
                + (f", observable only in unserved captures {list(d.any_tags)}" if d.any_tags else "")
                for d in extracted
            )
    return EpisodeAudit(
        record,
        correct,
        cause,
        detail,
        deciding,
        tuple(mismatches),
        unsupported,
        observed,
        avoidable,
        ideal,
        bool(any_view),
    )


def _deciding(
    record: OracleEpisode,
    query: InstanceTruth,
    target: InstanceTruth,
    referents: Mapping[str, tuple[str, ...]],
    capture: Any,
    all_tags: tuple[str, ...],
) -> Iterable[DecidingAttribute]:
    if query.category != target.category:
        return
    texts = record.descriptions
    for name, slot in query.slots.items():
        other = target.slots.get(name)
        target_value = other.value if other is not None else ABSENT
        if slot.value == target_value:
            continue
        items = tuple(item for item, names in referents.items() if name in names)
        observed = tuple(
            s.step
            for s in _verified(record)
            if items and observable(name, query, target, capture(s.capture_tag))
        )
        no_steps = tuple(
            s.step for s in _verified(record) if any(s.answers.get(item) is Decision.NO for item in items)
        )
        servable = tuple(t for t in record.servable_tags if observable(name, query, target, capture(t)))
        anywhere = tuple(t for t in all_tags if observable(name, query, target, capture(t)))
        lacks = other is None or not other.present
        yield DecidingAttribute(
            name=name,
            query_value=slot.value,
            target_value=target_value,
            mention=slot.mention,
            mentioned=bool(slot.mention) and any(mentions(text, slot.mention) for text in texts),
            items=items,
            observed_steps=observed,
            no_steps=no_steps,
            servable_tags=servable,
            any_tags=anywhere,
            unlocatable=lacks
            and not (other or slot).absence_locatable
            and not (other is not None and other.has_surface),
        )


# ---- running the oracle in-process ---------------------------------------------------------------------------


def run_oracle_episodes(
    dataset_root: str | Path,
    *,
    fusion: str = "veto",
    query_mode: str = "attribute",
    nbv: str = "farthest",
    max_steps: int = 6,
    index_file: str = "val/pv_index_all.jsonl",
    limit: int | None = None,
    verifier: str = "oracle",
    seed: int = 42,
    seed_policy: str = "per_episode_fixed",
    view_priority: str = "far",
    extra: Mapping[str, Any] | None = None,
) -> list[OracleEpisode]:
    """Play the index's pairs with the oracle verifier in-process (as ``aiv-eval run --mode inprocess`` with
    GT boxes does) and keep what the audit needs. ``extra``: further flat agent parameters."""
    from aiv_dataset.layout import PInVerifyDataset
    from aiv_eval import make_episode_key
    from aiv_eval.run.env_port import run_env_episode
    from aiv_offline_sim.environment import PInVerifyEnv
    from aiv_verifier.agent.factory import AgentFactory
    from aiv_verifier.verifier_parameters import config_parameter_defaults, factory_config

    flat = dict(config_parameter_defaults())
    flat.update(
        {
            "verifier.backend": verifier,
            "verifier.dataset_root": str(dataset_root),
            "agent.fusion": fusion,
            "agent.query_mode": query_mode,
            "agent.nbv": nbv,
            "agent.bbox_mode": "gt",
            **(extra or {}),
        }
    )
    dataset = PInVerifyDataset(str(dataset_root))
    pairs = dataset.read_pair_index(index_file)
    env = PInVerifyEnv(
        pairs,
        dataset,
        max_steps=max_steps,
        seed=seed,
        seed_policy=seed_policy,
        view_priority=view_priority,
        privileged=True,
        descriptions=dataset.load_descriptions(),
    )
    factory = AgentFactory.from_config(factory_config(flat))
    records = []
    for index, pair in enumerate(pairs[:limit] if limit is not None else pairs):
        key = make_episode_key(pair.scene, pair.episode, pair.query_object_id)
        session, _, _ = run_env_episode(env, index, factory, episode_key=key)
        smap = env.sector_map
        servable = []
        for sector in smap.available:
            capture_index = smap.capture_for(sector, env.view_priority)
            if capture_index is not None:
                servable.append(smap.captures[capture_index].name)
        steps = tuple(
            StepRecord(
                step.step,
                step.capture_tag,
                bool(step.answers) and not step.duplicate_view,
                {answer.attribute: answer.answer for answer in step.answers},
                {a.attribute: str(a.debug.get("truth", "")) for a in step.answers if a.debug.get("truth")},
            )
            for step in session.steps
        )
        records.append(
            OracleEpisode(
                key=key,
                pair_type=pair.pair_type,
                label=int(pair.label),
                prediction=session.final_decision or Decision.NO,
                query_id=pair.query_object_id,
                target_id=pair.target_object_id,
                episode_path=pair.episode_path,
                items=tuple(session.query.attributes),
                steps=steps,
                servable_tags=tuple(servable),
                descriptions=tuple(session.query.descriptions),
            )
        )
    return records


def audit_run(dataset_root: str | Path, records: Sequence[OracleEpisode]) -> list[EpisodeAudit]:
    library = PrivilegedTruth(dataset_root)
    return [audit_episode(library, record) for record in records]
