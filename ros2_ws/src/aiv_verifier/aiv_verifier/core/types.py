"""Value types shared by every part of the decision core.

They are deliberately plain (frozen dataclasses and string-valued enums) so that the ROS nodes, the in-process
evaluator and the logs can all convert them to messages or JSON without knowing about the algorithms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

import numpy as np

ATTRIBUTE_TYPES: frozenset[str] = frozenset(
    {"color", "pattern", "part", "logo_text", "material", "relation", "count", "shape", "other"}
)
"""The attribute kinds the extraction prompt may emit (spec §5.3)."""

ATTRIBUTE_WEIGHTS: frozenset[int] = frozenset({1, 2, 3})
"""3 = most discriminative. The reported fusion ignores weights; they are kept for logs and other fusions."""


@dataclass(frozen=True)
class Attribute:
    """One verifiable property of the query object, e.g. ``scarf_color = "red"``.

    ``evidence_phrase`` is the value quoted from the descriptions; it is what a per-view check looks for and
    what the LLM-NBV status lines show.
    """

    name: str
    type: str
    weight: int
    evidence_phrase: str

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("attribute name must be non-empty")
        if self.type not in ATTRIBUTE_TYPES:
            raise ValueError(f"attribute {self.name!r}: type {self.type!r} not in {sorted(ATTRIBUTE_TYPES)}")
        if self.weight not in ATTRIBUTE_WEIGHTS:
            raise ValueError(f"attribute {self.name!r}: weight {self.weight!r} not in {{1, 2, 3}}")


class AttributeState(str, Enum):
    """Per-attribute evidence state.

    The same three values serve both tracker accumulators: the reconciled state (spec: Matched / Contradictory
    / Missing) and the raw final decision (spec: Matched / Contradicted / Missing).
    """

    MATCHED = "Matched"
    CONTRADICTED = "Contradictory"
    MISSING = "Missing"


class Decision(str, Enum):
    """A Yes/No/Unsure verdict; used for episode decisions and for one view's answer about one attribute."""

    YES = "Yes"
    NO = "No"
    UNSURE = "Unsure"

    def committed(self) -> Decision:
        """The verdict with Unsure counted as No (the benchmark's `unsure_as_negative` mapping)."""
        return Decision.NO if self is Decision.UNSURE else self

    def to_state(self) -> AttributeState:
        """Map a per-view answer to the tracker state it contributes: Yes→Matched, No→Contradicted, else
        Missing.
        """
        if self is Decision.YES:
            return AttributeState.MATCHED
        if self is Decision.NO:
            return AttributeState.CONTRADICTED
        return AttributeState.MISSING


def decision_from_answer_text(answer: str | None) -> Decision:
    """Interpret a model's free-text answer field by its prefix, exactly like the reference parser.

    Lower-cased text starting with "yes" is Yes, starting with "no" is No (so "none" also counts as No, as in
    the reference), anything else, including empty text, is Unsure.
    """
    text = (answer or "").strip().lower()
    if text.startswith("yes"):
        return Decision.YES
    if text.startswith("no"):
        return Decision.NO
    return Decision.UNSURE


@dataclass(frozen=True)
class ViewJudgement:
    """What one view says about one attribute, with the detection confidence that weights it."""

    attribute: str
    answer: Decision
    reason: str
    confidence: float

    @property
    def state(self) -> AttributeState:
        return self.answer.to_state()


class LanguageModel(Protocol):
    """Anything that answers a text prompt about zero or more images (local MLLM, HTTP server, test double).

    Implementations should return an empty string rather than raise when the backend fails; callers in the
    core also treat a raised exception like an empty answer so one bad call never ends an episode.
    """

    def generate(self, prompt: str, images: Sequence[np.ndarray]) -> str: ...
