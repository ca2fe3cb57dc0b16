"""Printed words (real OCR engine) and small logo marks."""

from __future__ import annotations

import numpy as np
import pytest
from aiv_checks import ClassicalSettings, ClassicalVerifier, OcrItem, make_ocr_engine
from aiv_checks.checks.text import TextSettings
from aiv_verifier.core.types import Decision
from PIL import Image

from verifier_classical.scenes import BOX, attr, paint_object, printed_box, solid, view_of

TEXT_BOX = (40, 240, 320, 400)
WHITE = (245, 245, 242)
NAVY = (25, 35, 95)
RED = (200, 30, 35)


def _engine_or_skip():
    engine = make_ocr_engine("auto")
    if engine is None:
        pytest.skip("no OCR engine installed (scripts/bootstrap.sh installs rapidocr-onnxruntime)")
    return engine


def test_bootstrap_installs_rapidocr() -> None:
    # The engine is part of the pinned environment; this fails (rather than skips) when it is missing, so a
    # broken install shows up here and not only as skipped OCR tests.
    engine = make_ocr_engine("rapidocr")
    assert engine.name == "rapidocr"


def test_ocr_engine_reads_a_printed_word() -> None:
    engine = _engine_or_skip()
    frame = printed_box(NAVY, WHITE, "NOVA")
    items = engine.read(frame)
    assert any("NOVA" in item.text.upper() for item in items), items


def test_a_large_crop_is_read_at_the_capped_size_with_boxes_in_its_own_pixels() -> None:
    # The verifier's crops reach 512x1408 px (upscaled from thin boxes); the engine reads them at a long
    # side of 960 px at most (the detector's activations are most of the verifier's peak memory) and gives
    # the boxes back in the crop's own coordinates.
    from aiv_checks.measure.ocr import RapidOcrEngine

    _engine_or_skip()
    frame = printed_box(NAVY, WHITE, "NOVA")
    large = np.asarray(Image.fromarray(frame).resize((frame.shape[1] * 3, frame.shape[0] * 3), Image.BICUBIC))
    engine = RapidOcrEngine(max_input_side=960)
    (item,) = [i for i in engine.read(large) if "NOVA" in i.text.upper()]
    x1, y1, x2, y2 = item.box
    # The word was printed inside the box (40, 240, 320, 400) of the small frame: three times that here.
    assert 3 * 40 <= x1 < x2 <= 3 * 320 and 3 * 240 <= y1 < y2 <= 3 * 400, item.box


def test_text_claims(verifier) -> None:
    _engine_or_skip()
    frame = printed_box(NAVY, WHITE, "NOVA")
    attributes = [
        attr('the word "NOVA" in white', "logo_text", "t1"),
        attr('"NOVA"', "logo_text", "t2"),
        attr('the word "NOVA" in red', "logo_text", "t3"),
        attr('the word "KIWI" on the front', "logo_text", "t4"),
        attr('the word "MOUNTAINEERING"', "logo_text", "t5"),
    ]
    answers = verifier.verify(view_of(frame, TEXT_BOX), attributes)
    assert [a.answer for a in answers[:3]] == [Decision.YES, Decision.YES, Decision.NO]
    assert "NOVA" in answers[0].reason
    assert "white" in answers[2].reason
    assert answers[3].answer is Decision.NO  # a different word of the same length is printed there
    assert answers[4].answer is not Decision.YES


def test_one_ocr_pass_per_call_and_none_without_text_items() -> None:
    class CountingEngine:
        name = "counting"

        def __init__(self) -> None:
            self.calls = 0

        def read(self, image_rgb: np.ndarray) -> list[OcrItem]:
            self.calls += 1
            return [OcrItem("NOVA", 0.99, (100, 200, 400, 300))]

    engine = CountingEngine()
    verifier = ClassicalVerifier(ClassicalSettings(), ocr=engine)
    frame = printed_box(NAVY, WHITE, "NOVA")
    text_items = [
        attr('"NOVA"', "logo_text", "a"),
        attr('the word "NOVA"', "logo_text", "b"),
        attr("navy blue"),
    ]
    verifier.verify(view_of(frame, TEXT_BOX), text_items)
    assert engine.calls == 1
    assert verifier.model_calls == 1
    verifier.verify(view_of(frame, TEXT_BOX), [attr("navy blue"), attr("white stripes", "pattern")])
    assert engine.calls == 1


class FixedReads:
    """An OCR engine that reads the given words, confidently, whatever the image: the text rules' input."""

    name = "fixed"

    def __init__(self, *words: str) -> None:
        self.words = words

    def read(self, image_rgb: np.ndarray) -> list[OcrItem]:
        return [OcrItem(word, 0.99, (100, 200, 400, 300)) for word in self.words]


@pytest.mark.parametrize(
    ("read", "claimed", "expected"),
    [
        ("CULL", "QUILL", Decision.UNSURE),  # 3 of QUILL's 5 letters: OCR garbling the claimed word
        ("JMLA", "LUMA", Decision.UNSURE),  # 3 of 4
        ("CULL", "BREZ", Decision.NO),  # no letter in common: another word
        ("TORU", "RUMI", Decision.NO),  # half the letters is not more than half
        ("QUILL", "RUMI", Decision.NO),
        ("KIRO", "ORBIT", Decision.NO),  # 3 of ORBIT's letters, but only 1 in ORBIT's order: another word
        ("ORBIT", "KIRO", Decision.NO),
    ],
)
def test_a_read_holding_most_of_the_claimed_letters_is_a_misread_not_a_contradiction(
    read: str, claimed: str, expected: Decision
) -> None:
    verifier = ClassicalVerifier(ClassicalSettings(), ocr=FixedReads(read))
    frame = printed_box(NAVY, WHITE, "NOVA")
    (answer,) = verifier.verify(view_of(frame, TEXT_BOX), [attr(f'the word "{claimed}"', "logo_text")])
    assert answer.answer is expected, answer.reason
    if expected is Decision.UNSURE:
        assert "misread" in answer.reason


def test_the_misread_rule_can_be_turned_off() -> None:
    verifier = ClassicalVerifier(
        ClassicalSettings(text=TextSettings(misread_overlap=1.0)), ocr=FixedReads("CULL")
    )
    frame = printed_box(NAVY, WHITE, "NOVA")
    (answer,) = verifier.verify(view_of(frame, TEXT_BOX), [attr('the word "QUILL"', "logo_text")])
    assert answer.answer is Decision.NO and 'reads "CULL", not "QUILL"' in answer.reason


def test_without_engine_text_is_unsure(verifier_without_ocr) -> None:
    frame = printed_box(NAVY, WHITE, "NOVA")
    (answer,) = verifier_without_ocr.verify(view_of(frame, TEXT_BOX), [attr('the word "NOVA"', "logo_text")])
    assert answer.answer is Decision.UNSURE
    assert answer.reason == "no OCR engine"


def test_failing_engine_gives_unsure() -> None:
    class BrokenEngine:
        name = "broken"

        def read(self, image_rgb: np.ndarray) -> list[OcrItem]:
            raise RuntimeError("boom")

    verifier = ClassicalVerifier(ClassicalSettings(), ocr=BrokenEngine())
    frame = printed_box(NAVY, WHITE, "NOVA")
    answers = verifier.verify(view_of(frame, TEXT_BOX), [attr('"NOVA"', "logo_text"), attr("navy blue")])
    assert answers[0].answer is Decision.UNSURE
    assert answers[1].answer is Decision.YES


def test_unknown_engine_name_is_rejected() -> None:
    with pytest.raises(ValueError):
        make_ocr_engine("paddle")
    assert make_ocr_engine("none") is None


def _with_mark(draw_mark):
    def paint(patch, xs, ys):
        out = solid(NAVY)(patch, xs, ys)
        draw_mark(out, xs, ys)
        return out

    return paint


def test_logo_mark_of_the_claimed_colour_and_shape(verifier_without_ocr) -> None:
    def triangle(out, xs, ys):
        # Upright triangle, 50 px high, centred in the object.
        cx, top, height = 100, 70, 50
        inside = (ys >= top) & (ys <= top + height) & (np.abs(xs - cx) <= (ys - top) * 0.6)
        out[inside] = RED

    frame = paint_object(_with_mark(triangle))
    answers = verifier_without_ocr.verify(
        view_of(frame),
        [
            attr("a red triangle logo on the front", "logo_text", "l1"),
            attr("a red star logo", "logo_text", "l2"),
            attr("a yellow triangle logo", "logo_text", "l3"),
        ],
    )
    assert answers[0].answer is Decision.YES, answers[0].reason
    assert answers[1].answer is Decision.UNSURE  # a red mark, but not star-shaped: not a contradiction
    assert answers[2].answer is Decision.UNSURE  # no yellow mark: maybe on the other side
    assert "triangle" in answers[1].reason


def test_logo_colour_along_the_silhouette_edge_is_not_a_logo(verifier_without_ocr) -> None:
    def rim(out, xs, ys):
        out[ys < 12] = RED  # a red top rim touching the background

    frame = paint_object(_with_mark(rim), BOX)
    (answer,) = verifier_without_ocr.verify(view_of(frame), [attr("a red circle logo", "logo_text")])
    assert answer.answer is Decision.UNSURE
