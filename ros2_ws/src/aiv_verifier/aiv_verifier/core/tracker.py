"""Per-attribute evidence tracker with the two accumulators of spec §5.6.

The paper describes one rule (confidence-reconciled states, Eq. 3) while the reference code decides and stops
on another (raw confidence sums). Both are kept side by side over the same history so that the reported fusion
(raw sums) and the legacy fusion / prompts / logs (reconciled states) see exactly what the reference saw.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .types import AttributeState, ViewJudgement

TAU_CONF = 0.3
"""Below this detection confidence an observation is down-weighted in the reconciled state."""
LOW_CONFIDENCE_FACTOR = 0.2
"""Multiplier applied to confidences below ``TAU_CONF`` (a c = 0.1 trap view weighs 0.02)."""
MATCHED_THRESHOLD = 0.3
"""Reconciled weight that Matched evidence must exceed."""


@dataclass(frozen=True)
class ViewEvidence:
    """One tracker entry: which view, what it said about the attribute, how much the detection is trusted.

    (Named apart from the environment's ``Observation``, a whole frame, and the evaluation records'
    ``AttributeObservation``, an attribute's row at one step of a transcript.)
    """

    view_id: int
    state: AttributeState
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"view_id": self.view_id, "state": self.state.value, "confidence": self.confidence}


@dataclass(frozen=True)
class AttributeRecord:
    """Everything the tracker knows about one attribute at one moment; safe to log or copy into a message.

    ``converged`` is None when the snapshot was taken without a remaining-step count.
    """

    name: str
    reconciled_state: AttributeState
    final_decision: AttributeState
    matched_votes: float
    contradicted_votes: float
    weights: Mapping[AttributeState, float]
    history: tuple[ViewEvidence, ...]
    converged: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reconciled_state": self.reconciled_state.value,
            "final_decision": self.final_decision.value,
            "matched_votes": self.matched_votes,
            "contradicted_votes": self.contradicted_votes,
            "weights": {state.value: weight for state, weight in self.weights.items()},
            "history": [entry.to_dict() for entry in self.history],
            "converged": self.converged,
        }


def reconciled_weight(confidence: float) -> float:
    """Eq. 3 weight c̃: trusted observations count fully, low-visibility ones count a fifth."""
    return confidence if confidence >= TAU_CONF else LOW_CONFIDENCE_FACTOR * confidence


def reconcile(weights: Mapping[AttributeState, float]) -> AttributeState:
    """Paper Eq. 3 decision: contradiction must beat both other weights; a match must exceed 0.3."""
    matched = weights[AttributeState.MATCHED]
    contradicted = weights[AttributeState.CONTRADICTED]
    missing = weights[AttributeState.MISSING]
    if contradicted > matched and contradicted > missing:
        return AttributeState.CONTRADICTED
    if matched > MATCHED_THRESHOLD:
        return AttributeState.MATCHED
    return AttributeState.MISSING


def vote_decision(matched_votes: float, contradicted_votes: float) -> AttributeState:
    """Raw-sum decision used by attr_majority: no votes is Missing, a strict lead is Matched, ties reject."""
    if matched_votes == 0 and contradicted_votes == 0:
        return AttributeState.MISSING
    if matched_votes > contradicted_votes:
        return AttributeState.MATCHED
    return AttributeState.CONTRADICTED


def votes_converged(matched_votes: float, contradicted_votes: float, remaining_steps: int) -> bool:
    """Whether ``remaining_steps`` more views (each worth at most 1.0) can no longer flip the raw decision.

    A Matched lead survives only if it is strictly larger than r (r contradicting views could tie it, and ties
    reject); a Contradicted lead (or tie) survives if r matching views can at most reach a tie.
    """
    if matched_votes == 0 and contradicted_votes == 0:
        return False
    if matched_votes > contradicted_votes:
        return remaining_steps < matched_votes - contradicted_votes
    return remaining_steps <= contradicted_votes - matched_votes


class AttributeStateTracker:
    """Accumulates (view_id, state, confidence) per attribute and answers both reference questions about it.

    ``view_id`` is the 0-based count of distinct images seen before the one being recorded; the caller (policy
    bookkeeping) owns that count because only it knows whether an image repeats. Steps that follow a failed
    move must not be recorded at all (spec §5.5).
    """

    def __init__(self, attribute_names: Sequence[str]) -> None:
        names = list(attribute_names)
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"attribute names must be unique; repeated: {duplicates}")
        self._histories: dict[str, list[ViewEvidence]] = {name: [] for name in names}

    @property
    def attribute_names(self) -> tuple[str, ...]:
        return tuple(self._histories)

    @property
    def next_view_id(self) -> int:
        """The view_id the next distinct image should get, counted from what has been recorded."""
        seen = {entry.view_id for history in self._histories.values() for entry in history}
        return len(seen)

    def update(self, view_id: int, states: Mapping[str, AttributeState], confidence: float) -> None:
        """Record one view's states for some or all attributes, all with that view's detection confidence."""
        for name, state in states.items():
            self.update_attribute(name, view_id, state, confidence)

    def update_from_judgements(self, view_id: int, judgements: Iterable[ViewJudgement]) -> None:
        """Record per-attribute judgements of one view, each weighted by its own confidence."""
        for judgement in judgements:
            self.update_attribute(judgement.attribute, view_id, judgement.state, judgement.confidence)

    def update_attribute(self, name: str, view_id: int, state: AttributeState, confidence: float) -> None:
        """Append one observation; a confidence outside [0, 1] would break the convergence argument."""
        if name not in self._histories:
            raise KeyError(f"unknown attribute {name!r}; tracked: {list(self._histories)}")
        if view_id < 0:
            raise ValueError(f"view_id must be >= 0, got {view_id}")
        if not 0.0 <= confidence <= 1.0:
            raise ValueError(f"confidence must lie in [0, 1], got {confidence}")
        self._histories[name].append(ViewEvidence(view_id, AttributeState(state), float(confidence)))

    def history(self, name: str) -> tuple[ViewEvidence, ...]:
        return tuple(self._histories[name])

    def reconciled_weights(self, name: str) -> dict[AttributeState, float]:
        """w_σ of Eq. 3 for σ in (Matched, Contradictory, Missing)."""
        weights = dict.fromkeys(AttributeState, 0.0)
        for entry in self._histories[name]:
            weights[entry.state] += reconciled_weight(entry.confidence)
        return weights

    def reconciled_state(self, name: str) -> AttributeState:
        return reconcile(self.reconciled_weights(name))

    def vote_sums(self, name: str) -> tuple[float, float]:
        """(M_a, C_a): raw confidence sums of Matched and Contradicted entries; Missing ones do not vote."""
        matched = contradicted = 0.0
        for entry in self._histories[name]:
            if entry.state is AttributeState.MATCHED:
                matched += entry.confidence
            elif entry.state is AttributeState.CONTRADICTED:
                contradicted += entry.confidence
        return matched, contradicted

    def final_decision(self, name: str) -> AttributeState:
        return vote_decision(*self.vote_sums(name))

    def is_converged(self, name: str, remaining_steps: int) -> bool:
        return votes_converged(*self.vote_sums(name), remaining_steps)

    def all_converged(self, remaining_steps: int) -> bool:
        """True when no attribute can still change its raw decision; vacuously true without attributes."""
        return all(self.is_converged(name, remaining_steps) for name in self._histories)

    def snapshot(self, remaining_steps: int | None = None) -> list[AttributeRecord]:
        """Immutable per-attribute records in attribute order, for fusion debug output, logs and messages."""
        records = []
        for name in self._histories:
            matched, contradicted = self.vote_sums(name)
            weights = self.reconciled_weights(name)
            records.append(
                AttributeRecord(
                    name=name,
                    reconciled_state=reconcile(weights),
                    final_decision=vote_decision(matched, contradicted),
                    matched_votes=matched,
                    contradicted_votes=contradicted,
                    weights=MappingProxyType(weights),
                    history=self.history(name),
                    converged=(
                        None
                        if remaining_steps is None
                        else votes_converged(matched, contradicted, remaining_steps)
                    ),
                )
            )
        return records


__all__ = [
    "LOW_CONFIDENCE_FACTOR",
    "MATCHED_THRESHOLD",
    "TAU_CONF",
    "AttributeRecord",
    "AttributeStateTracker",
    "ViewEvidence",
    "reconcile",
    "reconciled_weight",
    "vote_decision",
    "votes_converged",
]
