"""When to commit to Yes/No instead of asking for another view (spec §5.8).

Kept separate from fusion because the reference evaluates the stop condition on the tracker's raw votes while
the decision itself comes from whichever fusion is configured; also, `_step_prediction` (first-view accuracy)
must be computed on every step whether or not the agent stops.
"""

from __future__ import annotations

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


def evaluate_stop(
    tracker: AttributeStateTracker,
    fusion: FusionStrategy,
    step_count: int,
    max_steps: int,
    mode: DecisionMode | str = DecisionMode.VOTE_TILL_END,
) -> StopOutcome:
    """Apply the reference stopping rule at observation ``step_count`` (0 on the first view) of ``max_steps``.

    r = T − s − 1 views remain after this one; the final observation (s ≥ T − 1) always decides.
    """
    mode = DecisionMode(mode)
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
    if final:
        reasons.append("final")

    if reasons:
        return StopOutcome(True, "+".join(reasons), step_prediction, step_prediction, debug)
    return StopOutcome(False, "continue", Decision.UNSURE, step_prediction, debug)
