"""When to commit to Yes/No instead of asking for another view (spec §5.8).

Kept separate from fusion because the reference evaluates the stop condition on the tracker's raw votes while
the decision itself comes from whichever fusion is configured; also, `_step_prediction` (first-view accuracy)
must be computed on every step whether or not the agent stops.

Stop rules are selectable by name (:func:`available_stop_rules`); ``reference`` is the spec's rule exactly and
the default. The others only ever *add* reasons to stop on top of the reference conditions, so a run with them
stops no later than the reference run would on the same evidence:

``reference``      final step, every attribute converged, or every attribute decided and all alike (§5.8).
``contradiction``  also stops as soon as the fused decision is No *and* at least one attribute's raw votes say
                   Contradicted. A verifier whose No answers are trustworthy (the classical one says No only on
                   strong evidence) has then found what it was looking for; waiting for the reference's
                   numerical convergence (C − M ≥ remaining steps) would walk up to five more views for an
                   answer that no later Yes can overturn under ``veto`` and rarely does under ``attr_majority``.
                   This is the "converged contradiction" of a verifier that cannot see some attributes at all
                   (materials, hidden sides), which keeps the reference's unanimity from ever holding.
``seen_unanimous`` the paper's wording of unanimity (§5.8 ⚠): stops when every attribute that has a decisive
                   vote agrees and at least half of the attributes are decided, plus the ``contradiction``
                   condition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .fusion import FusionStrategy
from .tracker import AttributeStateTracker
from .types import AttributeState, Decision


class DecisionMode(str, Enum):
    """``vote_till_end`` for multi-view runs (adaptive for attr_majority), ``early_exit`` for single-view
    runs.
    """

    VOTE_TILL_END = "vote_till_end"
    EARLY_EXIT = "early_exit"


@dataclass(frozen=True)
class StopOutcome:
    """Result of one stopping check.

    ``decision`` is Yes/No when stopping and Unsure otherwise; ``step_prediction`` is the forced Yes/No the
    agent would give now (fusion decision, Unsure counted as No). ``reason`` is a short token such as
    ``"unanimous"``, ``"converged+unanimous"``, ``"final"``, ``"early_exit"`` or ``"continue"``; ``debug``
    carries the numbers.
    """

    stop: bool
    reason: str
    decision: Decision
    step_prediction: Decision
    debug: dict[str, Any] = field(default_factory=dict)


def is_unanimous(tracker: AttributeStateTracker) -> bool:
    """Every attribute has a decisive raw vote and they all agree (the code's reading of "unanimous").

    The paper says "all *seen* attributes"; the reference code needs *all* attributes seen, and so does this.
    An empty attribute list is vacuously unanimous.
    """
    decisions = {tracker.final_decision(name) for name in tracker.attribute_names}
    return AttributeState.MISSING not in decisions and len(decisions) <= 1


#: Minimum share of attributes with a decisive vote before ``seen_unanimous`` may stop on agreement.
SEEN_UNANIMOUS_MIN_DECIDED = 0.5

#: An extra stop condition: (tracker, fused decision) -> reason token, or "" to keep going.
ExtraStopCondition = Callable[[AttributeStateTracker, Decision], str]


def _contradiction(tracker: AttributeStateTracker, fused: Decision) -> str:
    """The fused decision is No and some attribute is Contradicted on its raw votes."""
    if fused is not Decision.NO:
        return ""
    for name in tracker.attribute_names:
        if tracker.final_decision(name) is AttributeState.CONTRADICTED:
            return "contradiction"
    return ""


def _seen_unanimous(tracker: AttributeStateTracker, fused: Decision) -> str:
    """Every decided attribute agrees (at least half of them decided), or a backed contradiction."""
    reason = _contradiction(tracker, fused)
    if reason:
        return reason
    names = tracker.attribute_names
    decided = [tracker.final_decision(name) for name in names]
    decided = [state for state in decided if state is not AttributeState.MISSING]
    if decided and len(set(decided)) == 1 and len(decided) >= SEEN_UNANIMOUS_MIN_DECIDED * len(names):
        return "seen_unanimous"
    return ""


_STOP_RULES: dict[str, ExtraStopCondition | None] = {
    "reference": None,
    "contradiction": _contradiction,
    "seen_unanimous": _seen_unanimous,
}

DEFAULT_STOP_RULE = "reference"


def available_stop_rules() -> tuple[str, ...]:
    """Names a configuration may give as ``agent.stop_rule`` (``reference`` first: the default)."""
    return tuple(_STOP_RULES)


def check_stop_rule(name: str) -> str:
    """``name`` if it is a known stop rule; ValueError listing the known ones otherwise."""
    if name not in _STOP_RULES:
        raise ValueError(f"unknown stop rule {name!r}; available: {list(_STOP_RULES)}")
    return name


def evaluate_stop(
    tracker: AttributeStateTracker,
    fusion: FusionStrategy,
    step_count: int,
    max_steps: int,
    mode: DecisionMode | str = DecisionMode.VOTE_TILL_END,
    stop_rule: str = DEFAULT_STOP_RULE,
) -> StopOutcome:
    """Apply the stopping rule at observation ``step_count`` (0 on the first view) of ``max_steps``.

    r = T − s − 1 views remain after this one; the final observation (s ≥ T − 1) always decides.
    ``stop_rule`` names the rule (module docstring); the extra conditions of the non-reference rules apply
    only to fusions with adaptive stopping, like the reference's own.
    """
    mode = DecisionMode(mode)
    extra = _STOP_RULES[check_stop_rule(stop_rule)]
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    if step_count < 0:
        raise ValueError(f"step_count must be >= 0, got {step_count}")

    fused = fusion.fuse(tracker)
    step_prediction = fused.decision.committed()
    remaining = max_steps - step_count - 1
    final = step_count >= max_steps - 1
    debug: dict[str, Any] = {
        "mode": mode.value,
        "step_count": step_count,
        "max_steps": max_steps,
        "remaining_steps": remaining,
        "final": final,
        "fusion": fused.debug,
    }

    if mode is DecisionMode.EARLY_EXIT:
        return StopOutcome(True, "early_exit", step_prediction, step_prediction, debug)

    reasons: list[str] = []
    if fusion.stops_on_convergence:
        converged = tracker.all_converged(remaining)
        unanimous = is_unanimous(tracker)
        debug["converged"] = converged
        debug["unanimous"] = unanimous
        if converged:
            reasons.append("converged")
        if unanimous:
            reasons.append("unanimous")
        if extra is not None and not reasons:
            extra_reason = extra(tracker, fused.decision.committed())
            if extra_reason:
                reasons.append(extra_reason)
        debug["stop_rule"] = stop_rule
    if final:
        reasons.append("final")

    if reasons:
        return StopOutcome(True, "+".join(reasons), step_prediction, step_prediction, debug)
    return StopOutcome(False, "continue", Decision.UNSURE, step_prediction, debug)
