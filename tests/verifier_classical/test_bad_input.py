"""Whatever arrives, the verifier answers (Unsure with a reason) instead of raising."""

from __future__ import annotations

import numpy as np
import pytest
from aiv_checks import ClassicalVerifier
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.verification.base import ViewInput, check_answers

from verifier_classical.scenes import BOX, attr, paint_object, solid, view_of

BLUE = (40, 90, 205)
ATTRIBUTES = [attr("blue"), attr('the word "NOVA"', "logo_text"), attr("white stripes", "pattern")]


def _view(crop: object, box=(10, 10, 60, 60)) -> ViewInput:
    return ViewInput(crop, np.zeros((640, 360, 3), np.uint8), box, 1.0, "bag", ())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "crop",
    [
        np.zeros((0, 0, 3), np.uint8),
        np.zeros((0, 512, 3), np.uint8),
        np.zeros((512, 512, 5), np.uint8),
        np.zeros((4, 4, 3), np.uint8),
        np.array(["a", "b"]),
        None,
        "not an image",
        np.full((64, 64, 3), np.nan, np.float32),
    ],
    ids=["zero", "zero-height", "5-channel", "4x4", "strings", "none", "str", "nan"],
)
def test_unusable_crops_give_unsure_with_a_reason(verifier: ClassicalVerifier, crop: object) -> None:
    answers = verifier.verify(_view(crop), ATTRIBUTES)
    check_answers(ATTRIBUTES, answers, verifier.name)
    assert all(a.answer is Decision.UNSURE and a.reason for a in answers)


def _object_crop() -> tuple[np.ndarray, ViewInput]:
    view = view_of(paint_object(solid(BLUE)))
    return view.crop, view


@pytest.mark.parametrize("convert", ["gray", "gray1", "rgba", "float01", "float255", "uint16"])
def test_other_layouts_and_dtypes_are_converted(verifier: ClassicalVerifier, convert: str) -> None:
    crop, view = _object_crop()
    converted = {
        "gray": lambda c: c.mean(axis=2).astype(np.uint8),
        "gray1": lambda c: c.mean(axis=2, keepdims=True).astype(np.uint8),
        "rgba": lambda c: np.concatenate([c, np.full((*c.shape[:2], 1), 255, np.uint8)], axis=2),
        "float01": lambda c: c.astype(np.float32) / 255.0,
        "float255": lambda c: c.astype(np.float64),
        "uint16": lambda c: c.astype(np.uint16),
    }[convert](crop)
    odd = ViewInput(converted, view.full_image, view.crop_box, 1.0, "bag", ())
    answers = verifier.verify(odd, [attr("blue"), attr("orange", name="o")])
    if convert.startswith("gray"):
        assert [a.answer for a in answers] != [Decision.YES, Decision.NO]  # no colour left to judge by
        assert all(a.reason for a in answers)
    else:
        assert [a.answer for a in answers] == [Decision.YES, Decision.NO]


def test_empty_attribute_list(verifier: ClassicalVerifier) -> None:
    _, view = _object_crop()
    assert verifier.verify(view, []) == []


def test_huge_and_unicode_phrases(verifier: ClassicalVerifier) -> None:
    _, view = _object_crop()
    attributes = [
        Attribute("long", "color", 2, "blue " + "x" * 10_000),
        Attribute("unicode", "other", 2, "🎩 ünïcödé «ÉCRIT» — 日本語の帽子 " * 200),
        Attribute("blank", "color", 2, "   "),
        Attribute("quotes", "logo_text", 2, '"' * 40),
        Attribute("control", "pattern", 2, "\x00\x1b[31m stripes"),
    ]
    answers = verifier.verify(view, attributes)
    check_answers(attributes, answers, verifier.name)
    assert answers[0].answer is Decision.YES  # the colour word is still read from a runaway phrase
    assert all(a.answer is Decision.UNSURE for a in answers[1:])
    assert all(a.reason for a in answers)


def test_box_outside_the_frame_and_missing_full_image(verifier: ClassicalVerifier) -> None:
    crop, _ = _object_crop()
    odd = ViewInput(crop, None, (-50, -50, 10_000, 10_000), 1.0, "bag", ())  # type: ignore[arg-type]
    answers = verifier.verify(odd, [attr("blue")])
    assert len(answers) == 1 and answers[0].reason


def test_names_and_order_are_kept(verifier: ClassicalVerifier) -> None:
    _, view = _object_crop()
    attributes = [attr(p, name=f"n{i}") for i, p in enumerate(["orange", "blue", "teal", "blue"])]
    answers = verifier.verify(view, attributes)
    assert [a.attribute for a in answers] == ["n0", "n1", "n2", "n3"]
    assert answers[1].answer is Decision.YES and answers[0].answer is Decision.NO
    assert view.crop_box == (BOX[0] - 3, BOX[1] - 3, BOX[2] + 3, BOX[3] + 3)
