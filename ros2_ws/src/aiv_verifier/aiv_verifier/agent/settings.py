"""The agent's choices, validated once, with the benchmark's reported multi-view configuration as default.

Defaults reproduce "MV-Attr + FPS" of the paper (spec §5.12): attribute query mode, attr_majority fusion with
adaptive stopping (vote_till_end), angular farthest-point NBV, ground-truth boxes, base seed 42. ``decision_mode``
``auto`` resolves like the reference: early_exit for single-view budgets, vote_till_end otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any

from aiv_common.setting_fields import section, setting
from aiv_common.setting_tree import dataclass_from_mapping

from ..core.evidential import Thresholds
from ..core.fusion import EVIDENTIAL, fusion_names
from ..core.nbv import UNCERTAINTY_NBV, available_nbv_strategies
from ..core.stopping import DEFAULT_STOP_RULE, DecisionMode, available_stop_rules
from ..detection.base import BoxMode
from ..query.types import QueryMode

DECISION_MODES = ("auto", DecisionMode.VOTE_TILL_END.value, DecisionMode.EARLY_EXIT.value)
#: The agents the episode loop can run: the modular pipeline (detection, per-view verifier, tracker, fusion,
#: NBV; spec §5), the embedding baselines (spec §6) and the trained end-to-end agent (spec §7).
AGENT_KINDS = ("pipeline", "clip", "siglip", "trained")
#: What an episode whose every language-model call failed becomes: ``fail`` (an infrastructure failure: FAILED
#: on the robot path, retried and never scored in an evaluation) or ``reference`` (the reference's scoring: each
#: failed call answered "", hence Missing, and the episode scored, for parity runs).
MODEL_OUTAGE_POLICIES = ("fail", "reference")


def _values(kind: type[Enum]) -> Callable[[], tuple[str, ...]]:
    """The choices of an enum-valued setting: its members' values."""
    return lambda: tuple(str(member.value) for member in kind)


@dataclass(frozen=True)
class EvidenceSettings:
    """The evidential fusion's decision rule and the uncertainty next-best-view's visibility model."""

    accept: float = setting(
        0.95,
        "evidential fusion: answer YES once the probability that this is the described object reaches it; with a "
        "calibrated probability, 1 - accept is the share of YES answers expected to go to the wrong object "
        "(1.0 = never YES)",
        minimum=0.0,
        maximum=1.0,
    )
    reject: float = setting(
        0.05,
        "evidential fusion: answer NO once the probability falls to it; about that share of NO answers turn "
        "the right object away (0.0 = never NO; equal to accept = always decide at once)",
        minimum=0.0,
        maximum=1.0,
    )
    keep_looking_for_no: bool = setting(
        False,
        "evidential fusion: once YES can no longer be reached, keep moving while a NO still can (true) or stop "
        "UNDECIDED at once (false)",
    )
    target_share: float = setting(
        0.0,
        "prior share of candidates that are the described object (0 = the calibration file's, fitted on its "
        "datasets: a third for the benchmark's pairs); a robot that only approaches likely candidates may set "
        "it higher",
        minimum=0.0,
        maximum=1.0,
    )
    visibility_file: str = setting(
        "",
        "visibility model of the uncertainty next-best-view (written by aiv-eval visibility; '' = the shipped "
        "one)",
    )

    def __post_init__(self) -> None:
        try:
            Thresholds(self.accept, self.reject, self.keep_looking_for_no)
        except ValueError as error:
            raise ValueError(f"accept / reject: {error}") from None
        if isinstance(self.target_share, bool) or not 0.0 <= float(self.target_share) < 1.0:
            raise ValueError(f"target_share must lie in [0, 1), got {self.target_share!r}")

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(self.accept, self.reject, self.keep_looking_for_no)


@dataclass(frozen=True)
class AgentSettings:
    """Per-request agent configuration (the node's defaults; a goal may override mode, NBV and fusion)."""

    kind: str = setting(
        "pipeline",
        "which agent answers: pipeline (spec §5; the agent.* fields), clip / siglip (embedding baselines, spec §6, "
        "embedding.*) or trained (the end-to-end agent, spec §7, language_model.*)",
        choices=AGENT_KINDS,
    )
    query_mode: QueryMode = setting(
        QueryMode.ATTRIBUTE,
        "how descriptions become checkable items: attribute (one item per attribute), direct (each description "
        "whole), merged (one merged description); a goal may override it",
        choices=_values(QueryMode),
    )
    fusion: str = setting(
        "attr_majority",
        "how per-view answers become a decision: attr_majority (reported, adaptive stop), majority, veto (one "
        "contradicted attribute = No), evidential (calibrated probability; YES / NO / UNDECIDED at "
        "agent.evidence.accept / reject); a goal may override it",
        choices=fusion_names,
    )
    nbv: str = setting(
        "farthest",
        "next-best-view strategy: farthest (angular FPS), random (seeded), llm (needs a language model), "
        "uncertainty (the view expected to move the evidential probability most); a goal may override it",
        choices=available_nbv_strategies,
    )
    decision_mode: str = setting(
        "auto", "auto = early_exit for a step budget of 1, else vote_till_end", choices=DECISION_MODES
    )
    stop_rule: str = setting(
        DEFAULT_STOP_RULE,
        "named stop rule: reference (spec §5.8, the benchmark default), contradiction (also stop once the "
        "decision is No and an attribute is contradicted) or seen_unanimous (the paper's 'all seen attributes "
        "agree' plus contradiction)",
        choices=available_stop_rules,
    )
    bbox_mode: BoxMode = setting(
        BoxMode.GT,
        "where object boxes come from: gt (privileged ground truth), detections (external Detection2DArray "
        "topic), detector (a detector backend)",
        choices=_values(BoxMode),
    )
    base_seed: int = setting(42, "seed of the seeded strategies (random next-best-view)")
    reverify_duplicate_views: bool = setting(
        False,
        "ask the verifier again after a refused move, as the reference does (it throws the answers away; "
        "decisions are identical either way, so the default skips the wasted calls)",
    )
    evidence: EvidenceSettings = section(
        EvidenceSettings, "the evidential fusion's thresholds and the uncertainty next-best-view's model"
    )
    model_outage: str = setting(
        "fail",
        "an episode with at least one language-model call and no successful one: fail = it ends FAILED with the "
        "cause (in an evaluation an infrastructure failure, retried and never scored); reference = each failed "
        "call answered Missing and the episode scored (parity runs). Either way an answered episode with failed "
        "calls is flagged (records: degraded)",
        choices=MODEL_OUTAGE_POLICIES,
    )

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "query_mode", QueryMode.parse(str(getattr(self.query_mode, "value", self.query_mode)))
        )
        object.__setattr__(
            self, "bbox_mode", BoxMode.parse(str(getattr(self.bbox_mode, "value", self.bbox_mode)))
        )
        if self.kind not in AGENT_KINDS:
            raise ValueError(f"unknown agent kind {self.kind!r}; expected one of {list(AGENT_KINDS)}")
        if self.fusion not in fusion_names():
            raise ValueError(f"unknown fusion {self.fusion!r}; expected one of {list(fusion_names())}")
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
        if self.model_outage not in MODEL_OUTAGE_POLICIES:
            raise ValueError(
                f"unknown model_outage {self.model_outage!r}; expected one of {list(MODEL_OUTAGE_POLICIES)}"
            )

    @property
    def uses_evidence(self) -> bool:
        """Whether sessions keep evidential opinions: the evidential fusion or the uncertainty next-best-view."""
        return self.fusion == EVIDENTIAL or self.nbv == UNCERTAINTY_NBV

    def resolved_decision_mode(self, max_steps: int) -> DecisionMode:
        if self.decision_mode == "auto":
            return DecisionMode.EARLY_EXIT if max_steps <= 1 else DecisionMode.VOTE_TILL_END
        return DecisionMode(self.decision_mode)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> AgentSettings:
        """Build from the ``agent`` section of a config; an unknown key is an error naming it."""
        return dataclass_from_mapping(cls, values, "agent")

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
            "model_outage": self.model_outage,
            **(
                {f"evidence.{item.name}": getattr(self.evidence, item.name) for item in fields(self.evidence)}
                if self.uses_evidence
                else {}
            ),
        }
