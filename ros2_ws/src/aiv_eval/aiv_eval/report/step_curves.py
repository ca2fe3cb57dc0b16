"""What the answers would have been had every episode stopped after step k: the data of the steps chart.

``metrics.json`` holds end-of-episode figures only (accuracy, ASD, first-view accuracy); the per-step answers
are in the records (``results.jsonl``): ``step_predictions`` has the agent's Yes / No after each step it took.
For k = 1 .. the longest episode, an episode still looking at step k answers its step-k prediction, and one
that stopped earlier keeps its final prediction (which may be Unsure). So k = 1 is the first view's answer
and the last k is the run's final accuracy.

* **accuracy**: correct answers / scored episodes (Unsure counted as the run counts it);
* **acceptance**: YES answers / positive pairs (how many true matches the robot would accept);
* **false acceptance**: YES answers / negative pairs;
* **still looking**: episodes that take more than k steps / scored episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..records.episode import EpisodeRecord, is_prediction_correct


@dataclass(frozen=True)
class StepCurves:
    """One value per step k = 1 .. len(steps); None where the group is empty."""

    steps: tuple[int, ...]
    accuracy: tuple[float | None, ...]
    acceptance: tuple[float | None, ...]
    false_acceptance: tuple[float | None, ...]
    still_looking: tuple[float | None, ...]


def answer_at_step(record: EpisodeRecord, k: int) -> str:
    """The episode's answer had it stopped after step ``k`` (its final one once it has stopped)."""
    if k < record.steps and k <= len(record.step_predictions):
        return record.step_predictions[k - 1]
    return record.prediction


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def step_curves(records: Sequence[EpisodeRecord], unsure_as_negative: bool = True) -> StepCurves:
    """The curves of the scored episodes (infra failures are left out, as in every metric)."""
    scored = [r for r in records if r.is_ok]
    longest = max((r.steps for r in scored), default=0)
    positives = [r for r in scored if r.label == 1]
    negatives = [r for r in scored if r.label != 1]
    accuracy, acceptance, false_acceptance, still = [], [], [], []
    for k in range(1, longest + 1):
        answers = {id(r): answer_at_step(r, k) for r in scored}
        correct = sum(is_prediction_correct(answers[id(r)], r.label, unsure_as_negative) for r in scored)
        accuracy.append(_share(correct, len(scored)))
        acceptance.append(_share(sum(answers[id(r)] == "Yes" for r in positives), len(positives)))
        false_acceptance.append(_share(sum(answers[id(r)] == "Yes" for r in negatives), len(negatives)))
        still.append(_share(sum(r.steps > k for r in scored), len(scored)))
    return StepCurves(
        tuple(range(1, longest + 1)),
        tuple(accuracy),
        tuple(acceptance),
        tuple(false_acceptance),
        tuple(still),
    )


__all__ = ["StepCurves", "answer_at_step", "step_curves"]
