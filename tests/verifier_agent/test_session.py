"""The episode loop: how the session wires crop, verification, tracker, stopping and NBV (spec §5.4-5.10).

The per-view verifier here is a scripted backend (answers fixed per step), which is what lets each rule be
pinned exactly; the real backends have their own tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pytest
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.agent.steps import AgentComponents, ViewFrame
from aiv_verifier.agent.verification_session import VerificationSession
from aiv_verifier.core.fusion import make_fusion
from aiv_verifier.core.nbv import make_nbv
from aiv_verifier.core.types import Attribute, AttributeState, Decision
from aiv_verifier.query.types import QueryMode, QuerySpec
from aiv_verifier.verification.base import AttributeAnswer, ViewInput

Y, N, U = Decision.YES, Decision.NO, Decision.UNSURE
IMAGE = np.full((64, 36, 3), 120, dtype=np.uint8)
BOX = (4.0, 10.0, 30.0, 50.0)


class ScriptedVerifier:
    """Answers step k with ``script[k]`` (one Decision per attribute) and records what it was shown."""

    name: ClassVar[str] = "scripted"

    def __init__(self, script: Sequence[Sequence[Decision]]) -> None:
        self.script = list(script)
        self.views: list[ViewInput] = []

    @property
    def model_calls(self) -> int:
        return len(self.views)

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        self.views.append(view)
        answers = self.script[view.step]
        return [
            AttributeAnswer(a.name, d, f"scripted {d.value}")
            for a, d in zip(attributes, answers, strict=True)
        ]


def spec(*names: str) -> QuerySpec:
    attributes = tuple(Attribute(name, "color", 2, f"{name} phrase") for name in names)
    return QuerySpec(("a red mug",), QueryMode.ATTRIBUTE, "mug", "hint", attributes, "rules")


def session(
    script, names=("a", "b"), *, fusion="attr_majority", nbv="random", max_steps=6
) -> VerificationSession:
    components = AgentComponents(ScriptedVerifier(script), make_fusion(fusion), make_nbv(nbv))
    settings = AgentSettings(fusion=fusion, nbv=nbv)
    return VerificationSession(spec(*names), components, settings, episode_key="ep-1", max_steps=max_steps)


def frame(step: int, sector: int, *, box=BOX, failed=False) -> ViewFrame:
    return ViewFrame(IMAGE, step, sector, navigation_failed=failed, image_key=f"s{sector}", gt_box=box)


def test_first_view_unanimous_yes_stops_at_once() -> None:
    s = session([[Y, Y]])
    step = s.observe(frame(0, 2))
    assert step.stopped and step.decision is Y and step.stop_reason == "unanimous"
    assert step.move is None and s.finished
    assert step.crop.confidence == 1.0 and step.crop.box is not None
    assert [row.state for row in step.attributes] == [AttributeState.MATCHED] * 2
    with pytest.raises(RuntimeError):
        s.observe(frame(1, 3))


def test_mixed_first_view_moves_on_and_predicts_by_majority() -> None:
    s = session([[Y, U], [Y, N]])
    first = s.observe(frame(0, 2))
    assert not first.stopped and first.decision is U and first.move is not None
    assert first.step_prediction is Y  # one Matched, one Missing => attr_majority Yes
    assert first.move.target_index != 2
    second = s.observe(frame(1, first.move.target_index))
    # tie 1 Matched vs 1 Contradicted => No; r = 4 remaining, nothing converged, not unanimous
    assert second.step_prediction is N and not second.stopped


def test_tie_on_one_attribute_counts_as_contradicted() -> None:
    s = session([[Y, U], [N, U], [U, U]])
    s.observe(frame(0, 0))
    step = s.observe(frame(1, 1))
    assert not step.stopped
    assert step.attributes[0].state is AttributeState.CONTRADICTED
    assert step.attributes[0].votes_matched == step.attributes[0].votes_contradicted == 1.0


def test_trap_view_without_box_weighs_point_one() -> None:
    s = session([[N]], names=("a",), max_steps=6)
    step = s.observe(frame(0, 0, box=None))
    assert step.crop.confidence == pytest.approx(0.1) and step.crop.box is None
    row = step.attributes[0]
    # Raw votes: C = 0.1 > M = 0 => Contradicted; the reconciled weight is 0.2 * 0.1 = 0.02 but still > 0.
    assert row.state is AttributeState.CONTRADICTED and row.votes_contradicted == pytest.approx(0.1)
    assert row.weight_contradicted == pytest.approx(0.02)
    assert row.reconciled_state is AttributeState.CONTRADICTED
    assert step.stopped and step.decision is N  # the single attribute is unanimous


def test_final_step_always_decides() -> None:
    script = [[U, U]] * 3
    s = session(script, max_steps=3)
    s.observe(frame(0, 0))
    step1 = s.observe(frame(1, 1))
    assert not step1.stopped
    last = s.observe(frame(2, 2))
    assert last.stopped and last.stop_reason == "final" and last.decision is N  # all Missing => tie => No


def test_convergence_with_remaining_steps() -> None:
    # Two attributes: "a" Yes in every view, "b" Unsure then Yes. With T = 3 after view 2 (s = 1, r = 1):
    # a has M - C = 2 > r = 1 => converged; b has M - C = 1, not > 1 => not converged, but all decided Yes.
    s = session([[Y, U], [Y, Y], [Y, Y]], max_steps=3)
    s.observe(frame(0, 0))
    step = s.observe(frame(1, 3))
    assert step.stopped and step.decision is Y
    assert step.stop_reason == "unanimous"
    assert [row.converged for row in step.attributes] == [True, False]


def test_duplicate_view_after_failed_move_does_not_update_tracker() -> None:
    s = session([[Y, U], [Y, U], [Y, N]])
    first = s.observe(frame(0, 0))
    assert first.move is not None
    refused = first.move.target_index
    dup = s.observe(frame(1, 0, failed=True))
    assert dup.duplicate_view and dup.answers == ()
    assert dup.attributes[0].votes_matched == 1.0  # unchanged by the repeated image
    assert refused in s.bookkeeping.failed and refused in s.bookkeeping.visited
    assert dup.move is not None and dup.move.target_index not in (0, refused)
    assert len(s.components.verifier.views) == 1  # the wasted reference call is skipped by default


def test_majority_fusion_only_stops_at_the_end() -> None:
    s = session([[Y, Y]] * 3, fusion="majority", max_steps=3)
    first = s.observe(frame(0, 0))
    assert not first.stopped and first.step_prediction is Y
    s.observe(frame(1, 1))
    assert s.observe(frame(2, 2)).stop_reason == "final"


def test_single_view_budget_uses_early_exit_and_full_confidence() -> None:
    s = session([[Y, U]], max_steps=1, fusion="majority")
    step = s.observe(frame(0, 0, box=None))
    assert step.stopped and step.stop_reason == "early_exit"
    assert step.crop.confidence == 1.0  # single-view runs trust the only view


def test_step_count_must_follow_the_session() -> None:
    s = session([[Y, U]])
    with pytest.raises(ValueError, match="expected 0"):
        s.observe(frame(3, 0))


def test_model_calls_and_confidence() -> None:
    s = session([[Y, N], [Y, N], [Y, N]], max_steps=3)
    assert not s.observe(frame(0, 0)).stopped  # decisive but split: neither unanimous nor converged (r = 2)
    second = s.observe(frame(1, 1))
    # r = 1: a has M - C = 2 > 1, b has C - M = 2 >= 1 => both converged, the split can no longer change.
    assert second.stopped and second.stop_reason == "converged"
    assert s.model_calls == {"verifier": 2}
    assert s.final_decision is N  # 1 Matched vs 1 Contradicted => tie => No
    assert s.confidence() == pytest.approx(0.5)
    assert s.visited_order == (0, 1)


def test_settings_reject_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown fusion"):
        AgentSettings(fusion="weighted-votes")
    with pytest.raises(ValueError, match="unknown nbv"):
        AgentSettings(nbv="teleport")
    with pytest.raises(ValueError, match="query mode"):
        AgentSettings(query_mode="holistic")
    with pytest.raises(ValueError, match="bbox_mode"):
        AgentSettings(bbox_mode="mask")
    with pytest.raises(ValueError, match=r"unknown parameter.*agent\.stop_early"):
        AgentSettings.from_mapping({"nbv": "random", "stop_early": True})
    assert AgentSettings().with_overrides(nbv="", fusion="majority").fusion == "majority"
