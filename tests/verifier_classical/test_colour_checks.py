"""Colour claims on hand-made objects: main colours, light/dark variants, shading, two-colour objects, parts."""

from __future__ import annotations

import numpy as np
import pytest
from aiv_checks import ClassicalSettings, ClassicalVerifier
from aiv_checks.checks.part_colour import PartColourSettings
from aiv_checks.measure.colour import (
    COLOUR_NAMES,
    LUT_BITS,
    PROTOTYPES_RGB,
    name_pixels,
    name_pixels_rgb,
    srgb_to_lab,
)
from aiv_verifier.core.types import Decision

from verifier_classical.scenes import BOX, attr, halves, paint_object, solid, view_of

LIGHT_BLUE = (150, 195, 235)
BLUE = (40, 90, 205)
NAVY = (25, 35, 95)


def test_every_prototype_is_named_as_itself() -> None:
    for name in COLOUR_NAMES:
        for rgb in PROTOTYPES_RGB[name]:
            labels, _ = name_pixels_rgb(np.array([[rgb]], dtype=np.uint8))
            assert COLOUR_NAMES[int(labels[0, 0])] == name, (name, rgb)


def test_the_lookup_table_names_each_quantised_colour_as_naming_its_cell_centre_does() -> None:
    """The table is built block by block; every cell must hold what naming its centre colour directly gives."""
    rng = np.random.default_rng(5)
    pixels = rng.integers(0, 256, (4000, 3), dtype=np.uint8)
    step = 256 >> LUT_BITS
    centres = (pixels >> (8 - LUT_BITS)).astype(np.float32) * step + (step - 1) / 2.0
    expected_labels, expected_dist = name_pixels(srgb_to_lab(centres))
    labels, dist = name_pixels_rgb(pixels)
    assert np.array_equal(labels, expected_labels)
    assert np.allclose(dist, expected_dist, rtol=0, atol=1e-4)


def _answers(verifier, frame, *phrases: str, box=BOX) -> list[Decision]:
    attributes = [attr(p, name=f"a{i}") for i, p in enumerate(phrases)]
    return [a.answer for a in verifier.verify(view_of(frame, box), attributes)]


@pytest.mark.parametrize(
    ("rgb", "right", "wrong"),
    [
        (BLUE, "blue", "orange"),
        (LIGHT_BLUE, "light blue", "navy blue"),
        (NAVY, "navy blue", "yellow"),
        ((200, 30, 35), "red", "green"),
        ((40, 150, 55), "a green body", "a pink body"),
        ((115, 45, 155), "purple", "olive green"),
    ],
)
def test_main_colour_yes_and_clear_no(verifier_without_ocr, rgb, right: str, wrong: str) -> None:
    assert _answers(verifier_without_ocr, paint_object(solid(rgb)), right, wrong) == [
        Decision.YES,
        Decision.NO,
    ]


def test_light_and_dark_variants_are_told_apart(verifier_without_ocr) -> None:
    light = paint_object(solid(LIGHT_BLUE))
    navy = paint_object(solid(NAVY))
    assert _answers(verifier_without_ocr, light, "light blue", "navy blue", "dark blue") == [
        Decision.YES,
        Decision.NO,
        Decision.NO,
    ]
    assert _answers(verifier_without_ocr, navy, "navy blue", "light blue") == [Decision.YES, Decision.NO]


def test_shading_does_not_turn_a_colour_into_a_contradiction(verifier_without_ocr) -> None:
    # 45 % darker on the right side: the lit half is blue, the shaded half drifts toward navy.
    frame = paint_object(solid(BLUE, shade=0.45))
    assert _answers(verifier_without_ocr, frame, "blue", "navy blue")[0] is Decision.YES
    assert Decision.NO not in _answers(verifier_without_ocr, frame, "blue", "navy blue")


def test_grey_looking_white_is_not_contradicted(verifier_without_ocr) -> None:
    # A white object in a dim corner reads grey; "white" must not be answered No.
    frame = paint_object(solid((150, 150, 152)))
    assert _answers(verifier_without_ocr, frame, "a white body")[0] is not Decision.NO


def test_two_colour_object(verifier_without_ocr) -> None:
    # Mostly white (black reads as possible shade and never contradicts, so white must dominate for a No).
    frame = paint_object(halves((20, 20, 22), (245, 245, 242), split=0.4))
    answers = _answers(
        verifier_without_ocr, frame, "black and white", "black", "a white body", "red", "a red and blue body"
    )
    assert answers == [Decision.YES, Decision.YES, Decision.YES, Decision.NO, Decision.NO]


def test_part_colours_present_absent_and_hidden(verifier_without_ocr) -> None:
    def with_strap(patch, xs, ys):
        out = solid(BLUE)(patch, xs, ys)
        out[(xs > 90) & (xs < 110)] = (245, 215, 40)  # a yellow strap down the middle
        return out

    frame = paint_object(with_strap)
    answers = _answers(
        verifier_without_ocr,
        frame,
        "a yellow strap",
        "a red strap",
        "a red pocket on the front",
        "a red wallpaper on the screen",
        "a blue body",
    )
    # Present part colour: Yes. Absent: No for a part every side shows (a strap), Unsure for one that may
    # face away (anything "on the front", a screen).
    assert answers == [Decision.YES, Decision.NO, Decision.UNSURE, Decision.UNSURE, Decision.YES]


def test_an_absent_part_colour_needs_a_well_resolved_view(verifier_without_ocr) -> None:
    off = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", part_colour=PartColourSettings(absent_is_no=False)), ocr=None
    )
    frame = paint_object(solid(BLUE))
    assert _answers(off, frame, "a red strap")[0] is Decision.UNSURE
    small = (170, 300, 180, 312)  # 10x12 camera pixels: a part could hide in one pixel
    assert (
        _answers(verifier_without_ocr, paint_object(solid(BLUE), small), "a red strap", box=small)[0]
        is not Decision.NO
    )

    # A shaded, dark-red-looking strap is still red under shade: no contradiction.
    def dark_strap(patch, xs, ys):
        out = solid(BLUE)(patch, xs, ys)
        out[(xs > 90) & (xs < 110)] = (110, 20, 25)
        return out

    assert _answers(verifier_without_ocr, paint_object(dark_strap), "a red strap")[0] is not Decision.NO


def test_reasons_and_certainty_are_filled(verifier_without_ocr) -> None:
    (answer,) = verifier_without_ocr.verify(view_of(paint_object(solid(BLUE))), [attr("orange")])
    assert answer.answer is Decision.NO
    assert "blue" in answer.reason and "orange" in answer.reason
    assert 0.0 < answer.certainty <= 1.0


def test_tiny_object_gives_unsure(verifier_without_ocr) -> None:
    box = (170, 300, 175, 305)  # 5x5 camera pixels
    frame = paint_object(solid(BLUE), box)
    answers = verifier_without_ocr.verify(view_of(frame, box), [attr("blue"), attr("orange", name="b")])
    assert [a.answer for a in answers] == [Decision.UNSURE, Decision.UNSURE]
    assert "camera pixels" in answers[0].reason


def test_no_box_view_is_unsure_for_everything(verifier_without_ocr) -> None:
    frame = paint_object(solid(BLUE))
    answers = verifier_without_ocr.verify(view_of(frame, None), [attr("blue"), attr("orange", name="b")])
    assert [a.answer for a in answers] == [Decision.UNSURE, Decision.UNSURE]
    assert "not localised" in answers[0].reason


def test_unjudgeable_types_are_unsure(verifier_without_ocr) -> None:
    frame = paint_object(solid(BLUE))
    attributes = [
        attr("leather", "material"),
        attr("rectangular rims", "shape"),
        attr("two buckles", "count"),
        attr("to the left of the lamp", "relation"),
        attr("no logo on the front", "logo_text"),
    ]
    answers = verifier_without_ocr.verify(view_of(frame), attributes)
    assert [a.answer for a in answers] == [Decision.UNSURE] * len(attributes)
    assert all(a.reason for a in answers)


def test_box_geometry_is_kept_from_the_spec_cropper() -> None:
    view = view_of(paint_object(solid(BLUE)))
    assert view.crop_box == (BOX[0] - 3, BOX[1] - 3, BOX[2] + 3, BOX[3] + 3)
    assert min(view.crop.shape[:2]) == 512


def test_a_dark_view_does_not_contradict(verifier_without_ocr) -> None:
    # An object seen as nearly black (unlit side, a phone's screen side) says nothing against "green".
    frame = paint_object(solid((22, 24, 22)))
    assert _answers(verifier_without_ocr, frame, "a green case")[0] is Decision.UNSURE
