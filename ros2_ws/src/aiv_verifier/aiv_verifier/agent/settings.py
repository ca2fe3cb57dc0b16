"""The agent's choices, validated once, with the benchmark's reported multi-view configuration as default.

Defaults reproduce "MV-Attr + FPS" of the paper (spec §5.12): attribute query mode, attr_majority fusion with
adaptive stopping (vote_till_end), angular farthest-point NBV, ground-truth boxes, base seed 42. ``decision_mode``
``auto`` resolves like the reference: early_exit for single-view budgets, vote_till_end otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..core.fusion import available_fusions
from ..core.nbv import available_nbv_strategies
from ..core.stopping import DEFAULT_STOP_RULE, DecisionMode, available_stop_rules
from ..detection.base import BoxMode
from ..query.types import QueryMode

DECISION_MODES = ("auto", DecisionMode.VOTE_TILL_END.value, DecisionMode.EARLY_EXIT.value)
#: The agents the episode loop can run: the modular pipeline (detection, per-view verifier, tracker, fusion,
#: NBV; spec §5), the embedding baselines (spec §6) and the trained end-to-end agent (spec §7).
AGENT_KINDS = ("pipeline", "clip", "siglip", "trained")


@dataclass(frozen=True)
class AgentSettings:
    """Per-request agent configuration (the node's defaults; a goal may override mode, NBV and fusion)."""

    kind: str = "pipeline"
    """Which agent answers: pipeline (spec §5; the fields below), clip / siglip (embedding baselines, spec §6,
    ``embedding.*``) or trained (the end-to-end agent, spec §7, ``language_model.*``)."""
    query_mode: QueryMode = QueryMode.ATTRIBUTE
    fusion: str = "attr_majority"
    nbv: str = "farthest"
    decision_mode: str = "auto"
    stop_rule: str = DEFAULT_STOP_RULE
    """Named stop rule (``core.stopping``): ``reference`` (spec §5.8, the benchmark default),
    ``contradiction`` (also stop once the decision is No and an attribute is contradicted) or
    ``seen_unanimous`` (the paper's "all seen attributes agree" plus ``contradiction``)."""
    bbox_mode: BoxMode = BoxMode.GT
    base_seed: int = 42
    reverify_duplicate_views: bool = False
    """The reference re-asks the verifier after a refused move and throws the answers away; the tracker is
    not updated either way, so decisions are identical and the default skips the wasted calls."""

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "query_mode", QueryMode.parse(str(getattr(self.query_mode, "value", self.query_mode)))
        )
        object.__setattr__(
            self, "bbox_mode", BoxMode.parse(str(getattr(self.bbox_mode, "value", self.bbox_mode)))
        )
        if self.kind not in AGENT_KINDS:
            raise ValueError(f"unknown agent kind {self.kind!r}; expected one of {list(AGENT_KINDS)}")
        if self.fusion not in available_fusions():
            raise ValueError(f"unknown fusion {self.fusion!r}; expected one of {list(available_fusions())}")
        if self.nbv not in available_nbv_strategies():
            raise ValueError(f"unknown nbv {self.nbv!r}; expected one of {list(available_nbv_strategies())}")
        if self.decision_mode not in DECISION_MODES:
            raise ValueError(
                f"unknown decision_mode {self.decision_mode!r}; expected one of {list(DECISION_MODES)}"
            )
        if self.stop_rule not in available_stop_rules():
            raise ValueError(
                f"unknown stop_rule {self.stop_rule!r}; expected one of {list(available_stop_rules())}"
            )
        if isinstance(self.base_seed, bool) or not isinstance(self.base_seed, int):
            raise ValueError(f"base_seed must be an integer, got {self.base_seed!r}")

    def resolved_decision_mode(self, max_steps: int) -> DecisionMode:
        if self.decision_mode == "auto":
            return DecisionMode.EARLY_EXIT if max_steps <= 1 else DecisionMode.VOTE_TILL_END
        return DecisionMode(self.decision_mode)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> AgentSettings:
        """Build from a config mapping; unknown keys are an error naming the allowed ones."""
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown agent setting(s) {unknown}; allowed: {sorted(known)}")
        return cls(**dict(values))

    def with_overrides(self, **overrides: Any) -> AgentSettings:
        """A copy with the non-empty overrides applied (goal fields use "" for "node default")."""
        changes = {key: value for key, value in overrides.items() if value not in ("", None)}
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "query_mode": self.query_mode.value,
            "fusion": self.fusion,
            "nbv": self.nbv,
            "decision_mode": self.decision_mode,
            "stop_rule": self.stop_rule,
            "bbox_mode": self.bbox_mode.value,
            "base_seed": self.base_seed,
            "reverify_duplicate_views": self.reverify_duplicate_views,
        }
