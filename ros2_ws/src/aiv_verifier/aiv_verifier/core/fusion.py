"""Episode-level fusion of per-attribute evidence into Yes/No (spec §5.7), selectable by name.

Two reference strategies are provided: ``attr_majority`` (what the paper's multi-view numbers use; raw vote
decisions) and ``majority`` (reconciled states; single-view default and the shipped multi-view configs).
New strategies register themselves with :func:`register_fusion` so configs can name them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from .tracker import AttributeStateTracker
from .types import AttributeState, Decision


@dataclass(frozen=True)
class FusionResult:
    """The fused verdict and a JSON-friendly explanation of how it was reached."""

    decision: Decision
    debug: dict[str, Any] = field(default_factory=dict)


class FusionStrategy(Protocol):
    """Turns the tracker's current evidence into an episode decision.

    ``stops_on_convergence`` tells the stopping rule whether the adaptive stop (convergence / unanimity of the
    raw votes) applies; strategies without it stop only at the final step under ``vote_till_end``.
    """

    name: ClassVar[str]
    stops_on_convergence: ClassVar[bool]

    def fuse(self, tracker: AttributeStateTracker) -> FusionResult: ...


def _count_vote(states: dict[str, AttributeState]) -> tuple[int, int, int]:
    matched = sum(state is AttributeState.MATCHED for state in states.values())
    contradicted = sum(state is AttributeState.CONTRADICTED for state in states.values())
    missing = len(states) - matched - contradicted
    return matched, contradicted, missing


def _vote_debug(fusion: str, evidence: str, states: dict[str, AttributeState], rule: str) -> dict[str, Any]:
    """The debug record every counting fusion logs: which evidence, the counts, per-attribute states, the rule."""
    matched, contradicted, missing = _count_vote(states)
    return {
        "fusion": fusion,
        "evidence": evidence,
        "n_matched": matched,
        "n_contradicted": contradicted,
        "n_missing": missing,
        "per_attribute": {name: state.value for name, state in states.items()},
        "rule": rule,
    }


class AttributeMajorityFusion:
    """The paper's reported multi-view fusion: count raw per-attribute decisions, Missing abstains.

    More Matched than Contradicted attributes is Yes; anything else (more contradictions, a tie, or nothing
    seen at all) is No. It never returns Unsure; whether to act on it early is the stopping rule's business.
    """

    name: ClassVar[str] = "attr_majority"
    stops_on_convergence: ClassVar[bool] = True

    def fuse(self, tracker: AttributeStateTracker) -> FusionResult:
        decisions = {name: tracker.final_decision(name) for name in tracker.attribute_names}
        matched, contradicted, _ = _count_vote(decisions)
        if matched > contradicted:
            decision, rule = Decision.YES, "more attributes matched than contradicted"
        elif contradicted > matched:
            decision, rule = Decision.NO, "more attributes contradicted than matched"
        else:
            decision, rule = Decision.NO, "tie between matched and contradicted attributes counts as No"
        return FusionResult(decision, _vote_debug(self.name, "raw vote decisions", decisions, rule))


class MajorityFusion:
    """Legacy majority vote over reconciled (Eq. 3) states: Yes only on a strict Matched majority."""

    name: ClassVar[str] = "majority"
    stops_on_convergence: ClassVar[bool] = False

    def fuse(self, tracker: AttributeStateTracker) -> FusionResult:
        states = {name: tracker.reconciled_state(name) for name in tracker.attribute_names}
        matched, contradicted, _ = _count_vote(states)
        if matched > contradicted:
            decision, rule = Decision.YES, "more attributes matched than contradicted"
        else:
            decision, rule = (
                Decision.NO,
                "no strict majority of matched attributes (ties and all-missing are No)",
            )
        return FusionResult(decision, _vote_debug(self.name, "reconciled states", states, rule))


class VetoFusion:
    """Beyond the reference: any attribute whose raw votes say Contradicted vetoes the match.

    An instance-level question ("is this *the* object?") is answered No by one clearly different property, which
    attribute counting cannot express: a same-category distractor that differs in one of seven attributes still
    wins 6 to 1 under ``attr_majority``. Yes needs at least one Matched and no Contradicted attribute; nothing
    seen is No. It uses the same raw-vote accumulator and the same adaptive stopping as ``attr_majority``, so the
    two can be compared on identical evidence. Not the benchmark default.
    """

    name: ClassVar[str] = "veto"
    stops_on_convergence: ClassVar[bool] = True

    def fuse(self, tracker: AttributeStateTracker) -> FusionResult:
        decisions = {name: tracker.final_decision(name) for name in tracker.attribute_names}
        matched, contradicted, _ = _count_vote(decisions)
        if contradicted:
            decision, rule = Decision.NO, "at least one attribute is contradicted"
        elif matched:
            decision, rule = Decision.YES, "no attribute contradicted and at least one matched"
        else:
            decision, rule = Decision.NO, "nothing decisive seen counts as No"
        return FusionResult(decision, _vote_debug(self.name, "raw vote decisions", decisions, rule))


_FUSION_REGISTRY: dict[str, Callable[[], FusionStrategy]] = {}


def register_fusion(name: str, factory: Callable[[], FusionStrategy]) -> None:
    """Make a fusion available to :func:`make_fusion` under ``name``; re-registering a name is an error."""
    if name in _FUSION_REGISTRY:
        raise ValueError(f"fusion {name!r} is already registered")
    _FUSION_REGISTRY[name] = factory


def available_fusions() -> tuple[str, ...]:
    return tuple(sorted(_FUSION_REGISTRY))


#: The evidential fusion (:mod:`.evidential`) decides and stops on calibrated evidence rather than on the
#: tracker's votes, so it is no :class:`FusionStrategy`: the agent factory builds it with its calibration.
EVIDENTIAL = "evidential"


def fusion_names() -> tuple[str, ...]:
    """Every name ``agent.fusion`` accepts: the registered vote fusions and ``evidential``."""
    return (*available_fusions(), EVIDENTIAL)


def make_fusion(name: str) -> FusionStrategy:
    """Build the fusion a config names; an unknown name lists the known ones."""
    if name == EVIDENTIAL:
        raise ValueError("the evidential fusion needs a calibration: build it with the agent factory")
    try:
        factory = _FUSION_REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown fusion {name!r}; available: {list(available_fusions())}") from None
    return factory()


register_fusion(AttributeMajorityFusion.name, AttributeMajorityFusion)
register_fusion(MajorityFusion.name, MajorityFusion)
register_fusion(VetoFusion.name, VetoFusion)
