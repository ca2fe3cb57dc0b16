"""The embedding baselines' decision rules (spec §6), as plain functions of scores.

Kept apart from the model and the session so each rule can be checked with numbers: a view's score from the
descriptions' scores (avg / max; merged is one text, so either), the cross-view score over effective views
(the repeated image after a refused move does not count twice), Yes iff strictly above the threshold, and the
stop rule (the final step, or the reference's ``clip_stop_margin``: after at least two effective views once the
running mean is more than the margin away from the threshold).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.types import Decision
from ..model_config import EMBEDDING_AGGREGATIONS, EMBEDDING_OVERLENGTH, EMBEDDING_STOP_RULES

#: The reference thresholds per score family: CLIP cosine 0.25, SigLIP / SigLIP2 sigmoid 0.5.
REFERENCE_THRESHOLDS = {"clip": 0.25, "siglip": 0.5}
#: Stop reasons (the records' vocabulary): the budget's last step, or the margin rule.
FINAL_REASON = "final"
MARGIN_REASON = "converged"


@dataclass(frozen=True)
class EmbeddingRules:
    """How an embedding agent turns scores into answers; validated once per process."""

    family: str
    threshold: float
    aggregation: str = "avg"
    stop_rule: str = "final_step"
    stop_margin: float = 0.1

    def __post_init__(self) -> None:
        if self.family not in REFERENCE_THRESHOLDS:
            raise ValueError(f"unknown score family {self.family!r}; expected clip or siglip")
        if self.aggregation not in EMBEDDING_AGGREGATIONS:
            raise ValueError(
                f"embedding.aggregation {self.aggregation!r}: expected one of {list(EMBEDDING_AGGREGATIONS)}"
            )
        if self.stop_rule not in EMBEDDING_STOP_RULES:
            raise ValueError(
                f"embedding.stop_rule {self.stop_rule!r}: expected one of {list(EMBEDDING_STOP_RULES)}"
            )
        if not self.stop_margin >= 0.0:
            raise ValueError(f"embedding.stop_margin must be >= 0, got {self.stop_margin}")

    @classmethod
    def for_family(
        cls,
        family: str,
        threshold: float = -1.0,
        aggregation: str = "avg",
        stop_rule: str = "final_step",
        stop_margin: float = 0.1,
    ) -> EmbeddingRules:
        """Rules with the family's reference threshold when ``threshold`` is negative."""
        if family not in REFERENCE_THRESHOLDS:
            raise ValueError(f"unknown score family {family!r}; expected clip or siglip")
        value = REFERENCE_THRESHOLDS[family] if threshold < 0 else float(threshold)
        return cls(family, value, aggregation, stop_rule, stop_margin)

    def answer(self, score: float) -> Decision:
        """Yes iff the score is strictly above the threshold."""
        return Decision.YES if score > self.threshold else Decision.NO

    def view_score(self, scores: Sequence[float]) -> float:
        """One view's score from its texts' scores: max for ``max``, else the mean (``merged`` has one)."""
        if not scores:
            raise ValueError("a view needs at least one text score")
        if self.aggregation == "max":
            return max(scores)
        return sum(scores) / len(scores)

    def stop_reason(self, step_count: int, max_steps: int, effective_scores: Sequence[float]) -> str:
        """Why to answer now ("" = keep looking): the final step, or the margin rule once two or more
        effective views put the running mean more than the margin from the threshold."""
        if step_count >= max_steps - 1:
            return FINAL_REASON
        if self.stop_rule == "margin" and self.stop_margin > 0 and len(effective_scores) >= 2:
            mean = cross_view_score(effective_scores, effective_scores[-1])
            if mean > self.threshold + self.stop_margin or mean < self.threshold - self.stop_margin:
                return MARGIN_REASON
        return ""


def cross_view_score(effective_scores: Sequence[float], current: float) -> float:
    """The mean over effective views; the current view's score when there is none."""
    if not effective_scores:
        return current
    return sum(effective_scores) / len(effective_scores)


def check_overlength(policy: str) -> str:
    if policy not in EMBEDDING_OVERLENGTH:
        raise ValueError(f"embedding.overlength {policy!r}: expected one of {list(EMBEDDING_OVERLENGTH)}")
    return policy


__all__ = [
    "FINAL_REASON",
    "MARGIN_REASON",
    "REFERENCE_THRESHOLDS",
    "EmbeddingRules",
    "check_overlength",
    "cross_view_score",
]
