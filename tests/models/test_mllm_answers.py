"""The MLLM verifier's answer rules (spec §5.5) on the reference's edge cases, and prompt slot filling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.verification.base import ViewInput
from aiv_verifier.verification.mllm import (
    VerifyPrompts,
    attribute_prompt,
    fill_slots,
    is_description_item,
    view_prompt,
)
from aiv_verifier.verification.mllm_answers import parse_verification_answer, parse_view_answers

YES, NO, UNSURE = Decision.YES, Decision.NO, Decision.UNSURE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"answer": "Yes", "reason": "red body"}', YES),
        ('{"answer": "No", "reason": "it is blue"}', NO),
        ('{"answer": "Unsure", "reason": "faces away"}', UNSURE),
        ('```json\n{"answer": "Yes"}\n```', YES),  # one markdown fence is stripped
        ('```\n{"answer": "no"}\n```', NO),
        ('  {"answer": " YES, clearly"}  ', YES),  # lower-cased, stripped prefix
        ('{"answer": "Not visible"}', NO),  # starts with "no": the reference's quirk, kept on purpose
        ('{"answer": "None of it"}', NO),
        ('{"answer": "Nope"}', NO),
        ('{"answer": "yesterday"}', YES),  # prefix rule, exactly as the reference
        ('{"answer": "Maybe"}', UNSURE),
        ('{"answer": ""}', UNSURE),
        ('{"reason": "no answer field"}', UNSURE),
        ('{"answer": null}', UNSURE),  # non-string answers are empty
        ('{"answer": ["Yes"]}', UNSURE),
        ('{"answer": true}', UNSURE),
        ('{"answer": 1}', UNSURE),
        ("(No) the mug is blue", UNSURE),  # prose is not JSON: Missing
        ('Answer: {"answer": "Yes"}', UNSURE),  # prose around JSON: the whole text must parse
        ('{"answer": "Yes"} because it is red', UNSURE),
        ("Yes", UNSURE),
        ("no", UNSURE),
        ("", UNSURE),
        ("null", UNSURE),
        ('["Yes"]', UNSURE),
        ('"Yes"', UNSURE),
        ('{"answer": "Yes"', UNSURE),  # truncated
        ('{"answer": "Ｙｅｓ"}', UNSURE),  # full-width letters do not start with "yes"
        ('{"answer": "Oui"}', UNSURE),
        ('{"answer": "Yes", "reason": "rouge vif, très net ✓"}', YES),
        ('\ufeff{"answer": "Yes"}', UNSURE),  # a BOM makes the text invalid JSON
    ],
)
def test_answer_rules(text: str, expected: Decision) -> None:
    assert parse_verification_answer(text).decision is expected


def test_reading_keeps_reason_and_answer_field() -> None:
    reading = parse_verification_answer('```json\n{"answer": "No", "reason": "the strap is green"}\n```')
    assert (reading.decision, reading.answer, reading.reason, reading.parsed) == (
        NO,
        "No",
        "the strap is green",
        True,
    )
    assert parse_verification_answer("(No) ...").parsed is False
    assert parse_verification_answer(None).decision is UNSURE


def test_one_call_answers_by_name_in_attribute_order() -> None:
    text = (
        '```json\n{"answers": {"strap_color": {"answer": "No"}, "color": "Yes", "logo": {"answer": 3}}}\n```'
    )
    readings = parse_view_answers(text, ["color", "logo", "strap_color", "missing"])
    assert [r.decision for r in readings] == [YES, UNSURE, NO, UNSURE]
    as_list = '{"answers": [{"name": "color", "answer": "No"}, {"name": "color", "answer": "Yes"}]}'
    assert [r.decision for r in parse_view_answers(as_list, ["color"])] == [NO]  # first entry counts
    assert [r.decision for r in parse_view_answers("(Yes)", ["color"])] == [UNSURE]


def _view(descriptions: tuple[str, ...] = ("a red mug", "the red mug {x}", "red coffee mug")) -> ViewInput:
    blank = np.zeros((4, 4, 3), np.uint8)
    return ViewInput(blank, blank, None, 1.0, "mug", descriptions)


def test_attribute_prompt_fills_the_reference_slots() -> None:
    prompts = VerifyPrompts.load()
    text = attribute_prompt(prompts, _view(), Attribute("handle_color", "color", 2, "white"))
    assert "The object should be: mug" in text and "is a mug at all" in text  # the category gate
    assert "1) a red mug\n2) the red mug {x}\n3) red coffee mug" in text  # all three descriptions
    assert "handle_color = white" in text
    assert '{"answer": "Yes/No/Unsure", "reason":' in text  # the JSON answer format, braces untouched
    assert "{object_category}" not in text and "{attribute_name}" not in text


def test_description_items_use_the_description_prompt() -> None:
    prompts = VerifyPrompts.load()
    item = Attribute("desc_2", "other", 2, "the red mug with a chip")
    assert is_description_item(item) and is_description_item(Attribute("merged_desc", "other", 2, "x"))
    assert not is_description_item(Attribute("desc_2", "color", 2, "x"))
    text = attribute_prompt(prompts, _view(), item)
    assert "Description: the red mug with a chip" in text and "1) a red mug" not in text
    everything = view_prompt(
        prompts, _view(), [Attribute("color", "color", 2, "red"), Attribute("logo", "logo_text", 3, "ACME")]
    )
    assert "color = red\nlogo = ACME" in everything and '{"answers": {' in everything


def test_prompt_files_are_overridable_and_unknown_braces_stay(tmp_path: Path) -> None:
    custom = tmp_path / "attr.txt"
    custom.write_text(
        "{object_category}|{desc3}|{attribute_name}={evidence_phrase}|{other} {}", encoding="utf-8"
    )
    prompts = VerifyPrompts.load(attribute=custom)
    text = attribute_prompt(prompts, _view(("only one",)), Attribute("color", "color", 2, "red"))
    assert text == "mug||color=red|{other} {}"
    assert fill_slots("{desc1} {descriptions}", {"desc1": "a"}) == "a {descriptions}"
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        VerifyPrompts.load(description=tmp_path / "empty.txt")
    with pytest.raises(FileNotFoundError, match=r"nope\.txt"):
        VerifyPrompts.load(view=tmp_path / "nope.txt")
