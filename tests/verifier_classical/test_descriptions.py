"""Direct mode: a whole description (type ``other``) is judged by the checkable claims inside it."""

from __future__ import annotations

from aiv_verifier.core.types import Attribute, Decision

from verifier_classical.scenes import paint_object, stripes, view_of

NAVY = (25, 35, 95)
WHITE = (245, 245, 242)


def _answer(verifier, frame, description: str):
    (answer,) = verifier.verify(view_of(frame), [Attribute("desc_1", "other", 2, description)])
    return answer


def test_matching_description_is_yes(verifier_without_ocr) -> None:
    frame = paint_object(stripes(NAVY, WHITE))
    answer = _answer(verifier_without_ocr, frame, "a navy blue canvas bag with white stripes")
    assert answer.answer is Decision.YES, answer.reason


def test_contradicted_main_colour_is_no(verifier_without_ocr) -> None:
    frame = paint_object(stripes(NAVY, WHITE))
    answer = _answer(verifier_without_ocr, frame, "an orange canvas bag with white stripes and a black strap")
    assert answer.answer is Decision.NO
    assert "orange" in answer.reason


def test_description_without_checkable_claims_is_unsure(verifier_without_ocr) -> None:
    frame = paint_object(stripes(NAVY, WHITE))
    answer = _answer(verifier_without_ocr, frame, "a sturdy leather bag that looks expensive")
    assert answer.answer is Decision.UNSURE
