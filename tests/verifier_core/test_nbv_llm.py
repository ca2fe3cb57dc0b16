"""LLM next-best-view: prompt slots, answer parsing and every fallback (spec §5.10)."""

import math
import random

import numpy as np
import pytest
from aiv_verifier.core.nbv import LlmNbv, NbvRequest, make_nbv
from aiv_verifier.core.nbv_prompt import (
    PROMPT_SLOTS,
    AttributeStatus,
    attribute_statuses,
    description_status_text,
    load_prompt_template,
    parse_direction_response,
    visited_direction_names,
)
from aiv_verifier.core.sector_geometry import SectorCapture, SectorGeometry
from aiv_verifier.core.tracker import AttributeStateTracker
from aiv_verifier.core.types import Attribute, AttributeState

GOAL = (0.0, 0.0, 0.0)


def at(sector: int, degrees: float) -> SectorCapture:
    angle = math.radians(degrees)
    return SectorCapture(sector, "far", (1.5 * math.cos(angle), 1.3, 1.5 * math.sin(angle)))


RING = SectorGeometry.from_records([at(k, 60.0 * k) for k in range(6)], GOAL)
SCENE = np.full((640, 360, 3), 7, dtype=np.uint8)
STATUSES = (
    AttributeStatus("body_color", "navy blue", AttributeState.MATCHED),
    AttributeStatus("logo_text", "NIKE", AttributeState.CONTRADICTED),
    AttributeStatus("strap_color", "black", AttributeState.MISSING),
)


class ScriptedModel:
    """Returns a fixed answer (or raises) and records what it was asked."""

    def __init__(self, response: str = "", error: Exception | None = None) -> None:
        self.response = response
        self.error = error
        self.calls: list[tuple[str, list[np.ndarray]]] = []

    def generate(self, prompt, images):
        self.calls.append((prompt, list(images)))
        if self.error is not None:
            raise self.error
        return self.response


def make_request(**overrides) -> NbvRequest:
    fields = {
        "episode_key": "00813-svBbv1Pavdk/43",
        "step": 1,
        "current_sector": 2,
        "visited": frozenset({2, 3}),
        "geometry": RING,
        "scene_image": SCENE,
        "descriptions": ("a navy backpack", "blue bag with a nike logo", "backpack, black straps"),
        "object_category": "backpack",
        "attributes": STATUSES,
    }
    fields.update(overrides)
    return NbvRequest(**fields)


def answer(direction: str) -> str:
    return (
        f'Let me think. {{"per_direction_analysis": "x", "chosen_direction": "{direction}", "why": "y"}} done'
    )


def test_attribute_prompt_fills_every_slot():
    model = ScriptedModel(answer("back"))
    choice = LlmNbv(model).choose(make_request())
    prompt, images = model.calls[0]
    assert len(images) == 1 and images[0] is SCENE
    for description in ("a navy backpack", "blue bag with a nike logo", "backpack, black straps"):
        assert description in prompt
    assert "Object category: backpack" in prompt
    assert "[VERIFIED] body_color: 'navy blue'" in prompt
    assert "[CONTRADICTED] logo_text: expected 'NIKE'" in prompt
    assert "[UNVERIFIED] strap_color: 'black'" in prompt
    assert "['front', 'front-left']" in prompt  # visited: current + sector 3
    assert "['front-right', 'back', 'back-left', 'back-right']" in prompt  # front-left is used up
    assert "front-left: walk" not in prompt and "back-right: about 120 degrees" in prompt
    assert not any("{" + slot + "}" in prompt for slot in PROMPT_SLOTS)
    assert '"chosen_direction": "<one direction' in prompt  # JSON braces in the template survive
    assert "Visibility warning" not in prompt and "Navigation failure" not in prompt
    # back from sector 2 is sector 5
    assert (choice.direction, choice.target_index, choice.debug["fallback"]) == ("back", 5, False)
    assert choice.reason == "llm: model chose back"


def test_visibility_and_failure_warnings_are_inserted():
    model = ScriptedModel(answer("back"))
    request = make_request(
        visited=frozenset({2, 3, 1}),
        failed=frozenset({1}),
        sector_visibility={2: True, 3: False},
        failed_direction="front-right",
    )
    LlmNbv(model).choose(request)
    prompt = model.calls[0][0]
    assert "- front: target visible" in prompt
    assert "- front-left: target NOT visible (trap view)" in prompt
    assert 'the last move towards "front-right" was impossible' in prompt
    assert "['back', 'back-left', 'back-right']" in prompt


def test_direct_mode_uses_the_direct_template_and_description_counts():
    model = ScriptedModel(answer("back-left"))
    statuses = (
        AttributeStatus("desc_1", "a navy backpack", AttributeState.MATCHED),
        AttributeStatus("desc_2", "blue bag", AttributeState.MISSING),
        AttributeStatus("desc_3", "black straps", AttributeState.MISSING),
    )
    choice = LlmNbv(model).choose(make_request(query_mode="direct", attributes=statuses))
    prompt = model.calls[0][0]
    assert "Description status:" in prompt
    assert "match what has been seen: 1 of 3; contradicted: 0; still unclear: 2." in prompt
    assert "More views are needed" in prompt
    assert choice.target_index == (2 + 2) % 6
    assert "Warning:" in description_status_text((AttributeStatus("d", "x", AttributeState.CONTRADICTED),))


@pytest.mark.parametrize(
    ("response", "canonical"),
    [
        ('{"chosen_direction": "FRONT RIGHT"}', "front-right"),
        ('{"chosen_direction": "Back Left side"}', "back-left"),
        ('{"chosen_direction": "go round the back"}', "back"),
        ('{"chosen_direction": "back_left"}', "left"),  # underscores are not hyphens: "left" is tried first
        ('{"per_direction_analysis": {"back": "clear"}, "chosen_direction": "back-right"}', "back-right"),
        ('{"chosen_direction": null}', "front"),
        ('{"why": "no choice given"}', "front"),
        ("I would go left.", "front"),  # no JSON at all
        ('{"a": 1} and then {"chosen_direction": "back"}', "front"),  # first "{" .. last "}" is not JSON
        ('{"chosen_direction": "upwards"}', None),
    ],
)
def test_response_parsing(response, canonical):
    assert parse_direction_response(response).canonical == canonical


@pytest.mark.parametrize(
    "response",
    [
        answer("front-left"),  # visited
        answer("left"),  # bare side is not a direction
        answer("front"),  # staying is never allowed
        "not json at all",
        '{"why": "missing key"}',
        "",
    ],
)
def test_unusable_answers_fall_back_to_a_seeded_allowed_direction(response):
    strategy = LlmNbv(ScriptedModel(response))
    first = strategy.choose(make_request())
    second = strategy.choose(make_request())
    assert first.debug["fallback"] is True
    assert first.direction in ["front-right", "back", "back-left", "back-right"]
    assert (first.direction, first.target_index) == (second.direction, second.target_index)
    assert "at random" in first.reason


def test_fallback_depends_on_episode_and_step_and_leaves_the_global_rng_alone():
    strategy = LlmNbv(ScriptedModel("garbage"))
    state = random.getstate()
    picks = {
        strategy.choose(make_request(episode_key=f"ep{index}", step=index % 3)).direction
        for index in range(30)
    }
    assert random.getstate() == state
    assert len(picks) >= 3


def test_model_failure_is_treated_as_an_empty_answer():
    choice = LlmNbv(ScriptedModel(error=ConnectionError("server down"))).choose(make_request())
    assert choice.debug["fallback"] is True
    assert choice.debug["error"] == "ConnectionError: server down"
    assert "server down" in choice.reason


def test_when_every_direction_is_used_up_back_is_offered():
    model = ScriptedModel(answer("front-left"))
    choice = LlmNbv(model).choose(make_request(visited=frozenset(range(6))))
    assert '["back"]' in model.calls[0][0]
    assert (choice.direction, choice.target_index) == ("back", 5)


def test_no_scene_image_sends_no_images():
    model = ScriptedModel(answer("back"))
    LlmNbv(model).choose(make_request(scene_image=None))
    assert model.calls[0][1] == []


def test_custom_template_files_are_used(tmp_path):
    template = tmp_path / "mine.txt"
    template.write_text('Go {allowed_directions} around the {object_category}; keep {other} and {"k": 1}\n')
    model = ScriptedModel(answer("back"))
    LlmNbv(model, attribute_template_path=template).choose(make_request())
    expected_list = "['front-right', 'back', 'back-left', 'back-right']"
    assert model.calls[0][0] == f'Go {expected_list} around the backpack; keep {{other}} and {{"k": 1}}\n'


def test_missing_or_empty_templates_fail_with_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.txt"):
        LlmNbv(ScriptedModel(), direct_template_path=tmp_path / "nope.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    with pytest.raises(ValueError, match="empty"):
        load_prompt_template(empty)


def test_registry_passes_the_model_through():
    model = ScriptedModel(answer("back"))
    assert make_nbv("llm", model=model).choose(make_request()).direction == "back"


def test_visited_directions_follow_capture_coordinates():
    # Sector 3's capture actually sits 120 deg from sector 2's, so it is named back-left, not front-left.
    skewed = SectorGeometry.from_records([at(2, 120.0), at(3, 240.0)], GOAL)
    assert visited_direction_names(2, frozenset({2, 3}), skewed) == ["front", "back-left"]
    assert visited_direction_names(2, frozenset({2, 3}), None) == ["front", "front-left"]


def test_attribute_statuses_use_reconciled_states():
    attributes = [Attribute("color", "color", 3, "red"), Attribute("logo", "logo_text", 2, "ACME")]
    tracker = AttributeStateTracker(["color", "logo"])
    tracker.update(0, {"color": AttributeState.MATCHED, "logo": AttributeState.CONTRADICTED}, 0.1)
    statuses = attribute_statuses(attributes, tracker)
    # The c = 0.1 Yes is Matched in the raw votes but Missing once reconciled; the prompt shows the latter.
    assert [s.state for s in statuses] == [AttributeState.MISSING, AttributeState.CONTRADICTED]
    assert statuses[1].evidence_phrase == "ACME"
