"""Pattern claims on hand-made stripes, polka dots and checkerboards."""

from __future__ import annotations

import numpy as np
from aiv_checks import ClassicalSettings, ClassicalVerifier
from aiv_checks.checks.plain import PlainSettings
from aiv_checks.measure.structures import StructureSettings, count_x_junctions, find_structures
from aiv_verifier.core.types import Decision

from verifier_classical.scenes import attr, checks, dots, halves, paint_object, solid, stripes, view_of

NAVY = (25, 35, 95)
WHITE = (245, 245, 242)
RED = (200, 30, 35)
YELLOW = (245, 215, 40)
GREEN = (40, 150, 55)
BROWN = (115, 70, 35)


def _answers(verifier, frame, *phrases: str) -> list[Decision]:
    attributes = [attr(p, "pattern", name=f"p{i}") for i, p in enumerate(phrases)]
    return [a.answer for a in verifier.verify(view_of(frame), attributes)]


def test_stripes(verifier_without_ocr) -> None:
    frame = paint_object(stripes(NAVY, WHITE))
    answers = _answers(
        verifier_without_ocr,
        frame,
        "white stripes",
        "navy and white stripes",
        "striped",
        "white polka dots",
        "yellow checks",
    )
    assert answers[:3] == [Decision.YES, Decision.YES, Decision.YES]
    assert answers[3] is not Decision.YES  # white is there, but as bands, not dots
    assert answers[4] is Decision.NO  # a whole-object pattern claim in an absent colour, other pattern clear


def test_a_two_colour_print_needs_both_colours(verifier_without_ocr) -> None:
    """White stripes on a red object are no "navy and white stripes": the navy is nowhere (a real mug's white
    rim read as one band gave that Yes); the same stripes on navy are."""
    on_red = paint_object(stripes(RED, WHITE))
    answers = _answers(verifier_without_ocr, on_red, "white stripes", "navy and white stripes")
    assert answers == [Decision.YES, Decision.UNSURE]
    reason = verifier_without_ocr.verify(view_of(on_red), [attr("navy and white stripes", "pattern")])[
        0
    ].reason
    assert "no navy blue is on the object" in reason
    on_navy = paint_object(stripes(NAVY, WHITE))
    assert _answers(verifier_without_ocr, on_navy, "navy and white stripes") == [Decision.YES]


def test_dots(verifier_without_ocr) -> None:
    frame = paint_object(dots(RED, WHITE))
    answers = _answers(
        verifier_without_ocr, frame, "white polka dots", "white stripes", "spotted", "green dots"
    )
    assert answers[0] is Decision.YES
    assert answers[1] is not Decision.YES
    assert answers[2] is Decision.YES
    assert answers[3] is not Decision.YES


def test_checks(verifier_without_ocr) -> None:
    frame = paint_object(checks(GREEN, BROWN))
    answers = _answers(
        verifier_without_ocr,
        frame,
        "brown checks",
        "green and brown checkered",
        "brown polka dots",
        "yellow stripes",
    )
    assert answers[:2] == [Decision.YES, Decision.YES]
    assert answers[2] is not Decision.YES
    assert answers[3] is Decision.NO


def test_plain_object_shows_no_pattern(verifier_without_ocr) -> None:
    frame = paint_object(solid(RED))
    answers = _answers(verifier_without_ocr, frame, "white stripes", "white polka dots", "checks")
    assert Decision.YES not in answers


def test_structure_scores_separate_the_three_kinds() -> None:
    region = np.ones((120, 120), dtype=bool)
    yy, xx = np.mgrid[0:120, 0:120]
    striped = (yy % 16) < 6
    dotted = ((xx % 20) - 10) ** 2 + ((yy % 20) - 10) ** 2 <= 16
    checked = ((xx // 12) + (yy // 12)) % 2 == 1
    params = StructureSettings()
    assert find_structures(striped, region, params).best[0] == "stripes"
    assert find_structures(dotted, region, params).best[0] == "dots"
    assert find_structures(checked, region, params).best[0] == "checks"
    assert count_x_junctions(checked, region, 2) >= 50
    assert count_x_junctions(dotted, region, 2) == 0
    assert count_x_junctions(striped, region, 2) == 0


def test_a_whole_object_pattern_in_a_colour_the_object_lacks_is_no(verifier_without_ocr) -> None:
    # Navy and white stripes: nothing on the object could be yellow or red under any shade.
    frame = paint_object(stripes(NAVY, WHITE))
    answers = _answers(
        verifier_without_ocr,
        frame,
        "red stripes",  # whole object: every side would show some red (navy stripes are no other pattern)
        "red stripes on the brim",  # a brim faces every side too
        "red flower print on the front cover",  # one face only: may be turned away
        "red stripes on the arms",  # thin parts a distant view may not resolve
        "white stripes",
    )
    assert answers == [Decision.NO, Decision.NO, Decision.UNSURE, Decision.UNSURE, Decision.YES]


def test_a_pattern_colour_under_shade_is_not_called_absent(verifier_without_ocr) -> None:
    # Dark red checks on brown: the claimed "red" could be the checks in shadow, so no absence No.
    frame = paint_object(checks((120, 25, 30), BROWN))
    assert _answers(verifier_without_ocr, frame, "red polka dots")[0] is not Decision.NO


def test_no_pattern_claim_is_contradicted_only_by_a_clear_pattern(verifier_without_ocr) -> None:
    striped = paint_object(stripes(NAVY, WHITE))
    # Off by default (plain objects have stripes of their own: keyboards, pages, soles).
    assert _answers(verifier_without_ocr, striped, "no pattern")[0] is Decision.UNSURE
    judge = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", plain=PlainSettings(no_score=0.6)), ocr=None
    )
    dotted = paint_object(dots(RED, WHITE))
    plain = paint_object(solid(RED, shade=0.4))
    two_tone = paint_object(halves(GREEN, WHITE))
    assert _answers(judge, striped, "no pattern", "no pattern on the brim") == [
        Decision.NO,
        Decision.UNSURE,  # the brim is not located: stripes elsewhere say nothing about it
    ]
    assert _answers(judge, dotted, "no pattern")[0] is Decision.NO
    # Checks never count against a plain claim: JPEG blocks and a ball's seams look like them.
    checked = paint_object(checks(GREEN, BROWN))
    assert _answers(judge, checked, "no pattern")[0] is Decision.UNSURE
    # A plain or two-tone body is no pattern, but another side could still be printed: never a Yes.
    assert _answers(judge, plain, "no pattern")[0] is Decision.UNSURE
    assert _answers(judge, two_tone, "no pattern")[0] is Decision.UNSURE


def test_a_pale_pattern_colour_is_never_called_absent(verifier_without_ocr) -> None:
    # Cream or light blue marks a few pixels across blend into the ground at a distance: not seeing them is
    # no evidence, unlike a vivid colour.
    frame = paint_object(stripes(NAVY, BROWN))
    cream, light_blue, green = _answers(
        verifier_without_ocr, frame, "cream stripes", "light blue dots on the brim", "green stripes"
    )
    assert cream is Decision.UNSURE and light_blue is Decision.UNSURE
    assert green is Decision.NO


def test_another_pattern_contradicts_only_a_print_every_side_shows(verifier_without_ocr) -> None:
    # Navy and white stripes: "yellow checks" over the whole object is contradicted; the same checks on the
    # front cover may face away while the pages or the spine show stripes of their own.
    striped = paint_object(stripes(NAVY, WHITE))
    whole, front = _answers(
        verifier_without_ocr, striped, "yellow checks", "yellow checks on the front cover"
    )
    assert whole is Decision.NO
    assert front is Decision.UNSURE


def test_one_band_is_a_stripe_only_while_it_leaves_most_of_the_object_to_other_colours() -> None:
    """A single long band of the claimed colour is a stripe across the object; the same colour over most of
    the object is its body (a navy case is no "navy stripes" case), whatever its outline."""
    region = np.ones((100, 100), bool)
    params = StructureSettings()
    band = np.zeros((100, 100), bool)
    band[40:60] = True
    assert find_structures(band, region, params).scores["stripes"] >= 0.3
    body = np.zeros((100, 100), bool)
    body[:70] = True
    assert find_structures(body, region, params).scores["stripes"] == 0.0
    off = StructureSettings(long_stripe_max_share=1.0)  # the earlier rule, still selectable
    assert find_structures(body, region, off).scores["stripes"] >= 0.3
