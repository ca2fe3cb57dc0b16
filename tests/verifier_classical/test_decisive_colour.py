"""Issue 18: decisive main-colour answers that survive lighting, and the weight-free category gate.

Hand-made frames with known colours: a clearly different main colour is a No with a reason; white and grey
are told apart; white-balance casts, gamma and darker exposure change no answer; a part colour that is not the
main colour never produces a main-colour No; a see-through object (background visible through it) is not
contradicted by the background it frames; a box far too large for the query's category answers No for every
attribute, and so does a round outline for a box-shaped category.
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest
from aiv_checks import ClassicalSettings, ClassicalVerifier
from aiv_checks.checks.category import CategorySettings, judge_category
from aiv_checks.checks.identity import IdentitySettings
from aiv_checks.checks.main_colour import MainColourSettings
from aiv_checks.checks.part_colour import PartColourSettings
from aiv_checks.measure.colour import claim_evidence, srgb_to_lab
from aiv_verifier.core.types import Decision

from verifier_classical.scenes import BOX, attr, background, halves, paint_object, solid, view_of

WHITE = (242, 242, 238)
GREY = (118, 118, 120)
CHARCOAL = (62, 62, 64)
BLUE = (40, 90, 205)
ORANGE = (235, 125, 30)
RED = (200, 30, 35)
YELLOW = (245, 215, 40)


def _answers(verifier, frame, *phrases: str, category: str = "bag", box=BOX) -> list[Decision]:
    attributes = [attr(p, name=f"a{i}") for i, p in enumerate(phrases)]
    return [a.answer for a in verifier.verify(view_of(frame, box, category), attributes)]


def _cast(frame: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    return np.clip(frame.astype(np.float32) * np.array(gains, np.float32), 0, 255).astype(np.uint8)


def _gamma(frame: np.ndarray, gamma: float) -> np.ndarray:
    return np.clip(255.0 * (frame / 255.0) ** gamma, 0, 255).astype(np.uint8)


@pytest.mark.parametrize(
    ("rgb", "claim"),
    [(BLUE, "orange"), (ORANGE, "blue"), (RED, "green"), (YELLOW, "purple"), (BLUE, "a yellow body")],
)
def test_a_clearly_different_main_colour_is_no_with_a_reason(verifier_without_ocr, rgb, claim) -> None:
    answer = verifier_without_ocr.verify(view_of(paint_object(solid(rgb, shade=0.3))), [attr(claim)])[0]
    assert answer.answer is Decision.NO
    assert "cannot be" in answer.reason or "no " in answer.reason


def test_white_and_grey_are_told_apart(verifier_without_ocr) -> None:
    white = paint_object(solid(WHITE, shade=0.25))
    grey = paint_object(solid(GREY, shade=0.25))
    charcoal = paint_object(solid(CHARCOAL, shade=0.25))
    assert _answers(verifier_without_ocr, white, "white")[0] is Decision.YES
    assert _answers(verifier_without_ocr, grey, "grey")[0] is Decision.YES
    # A mid-grey surface may be a white one in shade: never a Yes for white, and not contradicted either;
    # a charcoal one is too dark for any white surface in a normally lit frame.
    assert _answers(verifier_without_ocr, grey, "white")[0] is not Decision.YES
    assert _answers(verifier_without_ocr, charcoal, "white")[0] is Decision.NO
    # A white object is never contradicted by a grey claim (its shaded side is grey).
    assert _answers(verifier_without_ocr, white, "grey")[0] is not Decision.NO


@pytest.mark.parametrize(
    "transform",
    [
        lambda f: _cast(f, (1.15, 1.0, 0.85)),  # warm white balance
        lambda f: _cast(f, (0.85, 1.0, 1.15)),  # cool white balance
        lambda f: _gamma(f, 1.35),  # darker mid-tones
        lambda f: _gamma(f, 0.75),  # brighter mid-tones
        lambda f: _cast(f, (0.7, 0.7, 0.7)),  # under-exposed frame
    ],
)
def test_lighting_changes_no_answer(verifier_without_ocr, transform) -> None:
    blue = transform(paint_object(solid(BLUE, shade=0.3)))
    assert _answers(verifier_without_ocr, blue, "blue", "orange") == [Decision.YES, Decision.NO]
    white = transform(paint_object(solid(WHITE, shade=0.2)))
    # A tinted white may read cream or pale blue (Yes or Unsure), but is never contradicted as white.
    assert _answers(verifier_without_ocr, white, "white")[0] is not Decision.NO
    assert _answers(verifier_without_ocr, white, "red")[0] is Decision.NO


def test_jpeg_and_noise_change_no_answer(verifier_without_ocr) -> None:
    import io

    from PIL import Image

    frame = paint_object(solid(ORANGE, shade=0.3))
    rng = np.random.default_rng(3)
    noisy = np.clip(frame + rng.normal(0, 6, frame.shape), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noisy).save(buffer, format="JPEG", quality=45)
    degraded = np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"))
    assert _answers(verifier_without_ocr, degraded, "orange", "blue") == [Decision.YES, Decision.NO]


def test_a_part_colour_that_is_not_the_main_colour(verifier_without_ocr) -> None:
    # A red body with a yellow band over its lower fifth: the band is there (Yes as a part), but yellow is
    # not the main colour; a green band is nowhere on an object whose band every side shows (No), and that
    # part No never turns into a No for the main colour.
    frame = paint_object(halves(RED, YELLOW, split=0.8))
    band, absent_band, main_red, main_yellow = _answers(
        verifier_without_ocr, frame, "a yellow band", "a green band", "red", "yellow"
    )
    assert band is Decision.YES
    assert absent_band is Decision.NO
    assert main_red is Decision.YES
    assert main_yellow is not Decision.YES


def test_a_part_colour_found_somewhere_needs_the_main_colour_to_count() -> None:
    # A blue object with a yellow band: "a yellow band" found somewhere on it is evidence only when the
    # query's main colour is seen too; on an object of another colour the yellow patch may be anything.
    strict = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", part_colour=PartColourSettings(yes_corroboration="main_match"))
    )
    found = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", part_colour=PartColourSettings(yes_corroboration="main_found"))
    )
    loose = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", part_colour=PartColourSettings(yes_corroboration="none"))
    )
    frame = paint_object(halves(BLUE, YELLOW, split=0.8))
    assert _answers(strict, frame, "a yellow band", "blue") == [Decision.YES, Decision.YES]
    assert _answers(loose, frame, "a yellow band", "red") == [Decision.YES, Decision.NO]
    view = view_of(frame, BOX, "bag")
    band, main = strict.verify(view, [attr("a yellow band", name="band_color"), attr("red", name="color")])
    assert main.answer is Decision.NO
    assert band.answer is Decision.UNSURE and "main colour is not confirmed" in band.reason, band.reason
    # Without a main-colour claim there is nothing to corroborate with: the part answer stands.
    assert _answers(strict, frame, "a yellow band") == [Decision.YES]
    # A part colour found absent is a No either way: the rule only withdraws Yes answers.
    assert _answers(strict, frame, "a green band", "red")[0] is Decision.NO
    # main_found asks less: the claimed main colour only has to be on the object, as a part colour would.
    # Yellow covers a fifth of this object: not confirmed as its main colour, yet found, so the blue band counts.
    band, main_yellow = _answers(found, frame, "a blue band", "yellow")
    assert band is Decision.YES and main_yellow is not Decision.YES
    assert _answers(strict, frame, "a blue band", "yellow")[0] is Decision.UNSURE
    assert _answers(found, frame, "a yellow band", "red")[0] is Decision.UNSURE
    with pytest.raises(ValueError, match=r"part_colour\.yes_corroboration"):
        ClassicalSettings(part_colour=PartColourSettings(yes_corroboration="always"))


def test_see_through_parts_are_never_contradicted_by_their_absence(verifier_without_ocr) -> None:
    # Tinted lenses: a black rim around a pane that lets the wall through, tinted green. The pane looks like
    # the wall behind it, so the object mask keeps only the rim: neither the true tint nor a wrong one can be
    # judged from the object's pixels, while an opaque part (the frame) can.
    frame = background()
    x1, y1, x2, y2 = BOX
    frame[y1:y2, x1:x2] = (20, 20, 22)
    pane = frame[y1 + 20 : y2 - 20, x1 + 20 : x2 - 20].astype(np.float32)
    frame[y1 + 20 : y2 - 20, x1 + 20 : x2 - 20] = np.clip(pane * (0.75, 1.0, 0.8), 0, 255).astype(np.uint8)
    green, purple, frame_colour = _answers(
        verifier_without_ocr, frame, "green lenses", "purple lenses", "a purple frame"
    )
    assert green is not Decision.NO and purple is not Decision.NO
    assert frame_colour is Decision.NO


def test_a_see_through_object_is_not_contradicted_by_what_it_frames(verifier_without_ocr) -> None:
    # A blue rectangular frame (like spectacles' rims or a hoop) with the wall and floor visible inside it.
    frame = background()
    x1, y1, x2, y2 = BOX
    frame[y1:y2, x1:x2] = BLUE
    inner = frame[y1 + 24 : y2 - 24, x1 + 24 : x2 - 24]
    inner[:] = background()[y1 + 24 : y2 - 24, x1 + 24 : x2 - 24]
    blue, beige = _answers(verifier_without_ocr, frame, "a blue frame", "blue")
    assert blue is not Decision.NO and beige is not Decision.NO


def test_claim_evidence_follows_hue_not_shade() -> None:
    shades = np.array([[40 * f, 90 * f, 205 * f] for f in (1.0, 0.7, 0.45)], np.float32)
    lab = srgb_to_lab(shades)
    blue = claim_evidence(lab, ("blue",))
    assert blue.compatible == 1.0 and blue.contradicting == 0.0
    orange = claim_evidence(lab, ("orange",))
    assert orange.compatible == 0.0 and orange.contradicting == 1.0


def test_the_category_gate_answers_no_only_on_impossible_sizes(verifier_without_ocr) -> None:
    frame = paint_object(solid(BLUE))
    # A 200 px box at 0.8 m or more spans at least 34 cm: no mug is that large; a bag can be.
    mug = verifier_without_ocr.verify(view_of(frame, BOX, "mug"), [attr("blue"), attr("a red handle")])
    assert [a.answer for a in mug] == [Decision.NO, Decision.NO]
    assert "not a mug" in mug[0].reason
    # A No about the object as a whole, the same for every attribute, says so (audits judge it as such).
    assert all(a.debug == {"claim": "object"} for a in mug)
    blue_bag = verifier_without_ocr.verify(view_of(frame, BOX, "bag"), [attr("blue")])[0]
    assert blue_bag.debug.get("claim") is None
    assert _answers(verifier_without_ocr, frame, "blue", category="bag")[0] is Decision.YES
    # A small box says nothing against a small category, nor against a large one unless clearly tiny.
    small = (150, 300, 190, 340)
    assert not judge_category("mug", small, (640, 360), CategorySettings()).mismatch
    assert not judge_category("backpack", small, (640, 360), CategorySettings()).mismatch
    assert judge_category("backpack", (170, 320, 184, 334), (640, 360), CategorySettings()).mismatch
    # A ball is round; a box four times longer than wide is no ball. Disabled gate: nothing.
    assert judge_category("ball", (100, 300, 260, 340), (640, 360), CategorySettings()).mismatch
    off = CategorySettings(enabled=False)
    assert not judge_category("mug", BOX, (640, 360), off).mismatch


def test_the_size_cue_uses_the_cameras_own_focal_length(verifier_without_ocr) -> None:
    """Pixels become metres through the focal length: the camera's own (its CameraInfo) when the view
    carries it, the configured 42-degree field of view only otherwise."""
    frame = paint_object(solid(BLUE))
    mug = [attr("blue"), attr("a red handle")]
    benchmark_like = view_of(frame, BOX, "mug")
    assert verifier_without_ocr.verify(benchmark_like, mug)[0].answer is Decision.NO
    # The same 200 px box through a long lens (fx 2500 px) spans at most 15 cm at 1.9 m: a mug may.
    long_lens = dataclasses.replace(benchmark_like, focal_px=2500.0)
    answers = verifier_without_ocr.verify(long_lens, mug)
    assert answers[0].answer is Decision.YES and "not a mug" not in answers[1].reason
    # A 14 px box is too small for a backpack through the benchmark camera (at most 6 cm at 1.9 m), but a
    # wide-angle camera (fx 150 px) sees a 18 cm extent there: no longer ruled out.
    tiny = (170, 320, 184, 334)
    assert judge_category("backpack", tiny, (640, 360), CategorySettings()).mismatch
    assert not judge_category(
        "backpack", tiny, (640, 360), CategorySettings(), focal_length_px=150.0
    ).mismatch
    # A focal length that is no focal length falls back to the parameter rather than dividing by it.
    assert judge_category("backpack", tiny, (640, 360), CategorySettings(), focal_length_px=0.0).mismatch


def test_the_earlier_main_colour_rule_stays_selectable() -> None:
    names_only = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", main_colour=MainColourSettings(no_rule="names"))
    )
    frame = paint_object(solid(BLUE, shade=0.3))
    assert _answers(names_only, frame, "blue")[0] is Decision.YES


def test_identity_gate_on_colours_no_description_names(verifier_without_ocr) -> None:
    frame = paint_object(halves(BLUE, ORANGE, split=0.5))

    def ask(*descriptions: str) -> list[Decision]:
        view = view_of(frame, BOX, "bag", descriptions)
        return [
            a.answer for a in verifier_without_ocr.verify(view, [attr("blue"), attr("leather", "material")])
        ]

    # Half of the object is orange, which no description names: not the described bag.
    assert ask("a blue leather bag with a blue strap", "a blue bag") == [Decision.NO, Decision.NO]
    # Named somewhere (an orange flap): no gate, each attribute on its own.
    assert ask("a blue leather bag with an orange flap", "a blue bag")[0] is Decision.YES


def test_identity_gate_catches_a_small_unnamed_trim_but_not_a_cast_on_white_parts(
    verifier_without_ocr,
) -> None:
    def ask(verifier, frame, *descriptions: str) -> Decision:
        return verifier.verify(view_of(frame, BOX, "bag", descriptions), [attr("blue")])[0].answer

    # A blue bag whose lowest tenth is an orange trim no description names: a same-category distractor.
    trimmed = paint_object(halves(BLUE, ORANGE, split=0.9))
    assert ask(verifier_without_ocr, trimmed, "a blue bag with a white strap") is Decision.NO
    lenient = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", identity=IdentitySettings(unexplained_share=0.1))
    )
    assert ask(lenient, trimmed, "a blue bag with a white strap") is Decision.YES
    # The described bag (blue with a white lower part) under warm and cool casts: the tinted white is not
    # "clearly coloured", so the gate stays shut. (The warmest corner of the sweep's casts, blue x0.85, does
    # tint a large white part past the gate at 0.04 and at 0.1 alike: a known limit, not tested as a pass.)
    described = paint_object(halves(BLUE, WHITE, split=0.7))
    for gains in ((1.1, 1.0, 0.9), (0.85, 1.0, 1.15), (1.15, 1.0, 1.0)):
        assert (
            ask(verifier_without_ocr, _cast(described, gains), "a blue bag with a white strap")
            is Decision.YES
        )


def test_bad_rule_names_are_refused() -> None:
    with pytest.raises(ValueError, match=r"main_colour\.no_rule"):
        ClassicalSettings(main_colour=MainColourSettings(no_rule="maybe"))


def _glasses_over_an_orange_wall() -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """Blue-rimmed glasses (two lenses and a bridge) whose clear lenses show an orange wall behind them."""
    frame = background()
    x1, y1, lens_w, lens_h, gap, rim = 60, 280, 36, 26, 14, 3
    for k in range(2):
        left = x1 + k * (lens_w + gap)
        frame[y1 : y1 + lens_h, left : left + lens_w] = BLUE
        frame[y1 + rim : y1 + lens_h - rim, left + rim : left + lens_w - rim] = ORANGE
    frame[y1 + 5 : y1 + 8, x1 + lens_w : x1 + lens_w + gap] = BLUE
    return frame, (x1, y1, x1 + 2 * lens_w + gap, y1 + lens_h)


def test_see_through_glasses_are_not_judged_by_what_shows_through_their_lenses() -> None:
    # The region of a thin frame around clear lenses holds whatever lies behind them: here an orange wall,
    # a hue no description names. With ``open_frame_palette_unreliable`` the palette's identity No and the
    # main-colour chroma No stay silent for a see-through category and the blue rim confirms the claim;
    # without it the wall makes the true glasses "not the described object".
    frame, box = _glasses_over_an_orange_wall()
    view = view_of(frame, box, "eyeglasses", ("glasses with a blue frame",))
    aware = ClassicalVerifier(ClassicalSettings(ocr_engine="none"))
    naive = ClassicalVerifier(ClassicalSettings(ocr_engine="none", open_frame_palette_unreliable=False))
    assert aware.verify(view, [attr("blue")])[0].answer is Decision.YES
    answer = naive.verify(view, [attr("blue")])[0]
    assert answer.answer is Decision.NO
    assert "not the described object" in answer.reason
    # The same palette on a solid category is still judged: the orange is the object's own.
    solid_view = view_of(frame, box, "wallet", ("a blue wallet",))
    assert aware.verify(solid_view, [attr("blue")])[0].answer is Decision.NO


def test_no_palette_rule_judges_glasses_by_the_wall_behind_them() -> None:
    # Every No that rests on which colours dominate the region stays silent for a see-through category: the
    # "mainly another colour" rule (orange dominates, so no purple) and the recoloured-part rule (a missing
    # part colour while the region shows hues no description names). Both still answer for a wallet with
    # the same pixels, and a colour no pixel at all could be (green) is still a No for the glasses: the rims
    # are in the region, and none of them is green.
    frame, box = _glasses_over_an_orange_wall()
    claims = [attr("purple"), attr("purple arms", name="arm_color"), attr("green", name="colour")]

    def answers(category: str, see_through_aware: bool) -> list[Decision]:
        params = ClassicalSettings(
            ocr_engine="none",
            open_frame_palette_unreliable=see_through_aware,
            identity=IdentitySettings(unexplained_share=0.0),  # the identity gate has its own test above
        )
        view = view_of(frame, box, category, ("purple glasses",))
        return [a.answer for a in ClassicalVerifier(params).verify(view, claims)]

    assert answers("eyeglasses", True) == [Decision.UNSURE, Decision.UNSURE, Decision.NO]
    assert answers("eyeglasses", False) == [Decision.NO, Decision.NO, Decision.NO]
    assert answers("wallet", True) == [Decision.NO, Decision.NO, Decision.NO]


@pytest.mark.parametrize("gains", [(1.15, 1.0, 0.85), (0.85, 1.0, 1.15), (1.0, 1.0, 1.0)])
def test_a_part_colour_under_a_cast_is_not_called_absent(verifier_without_ocr, gains) -> None:
    # A grey body with a purple band: a strong cast turns the purple towards magenta or blue, past what a Yes
    # accepts, but never so far that the band counts as missing; a green band is missing under every cast.
    def with_band(patch, xs, ys):
        out = solid((150, 150, 152), shade=0.2)(patch, xs, ys)
        out[(ys > 120) & (ys < 140)] = (115, 45, 155)
        return out

    frame = _cast(paint_object(with_band), gains)
    purple, green = _answers(verifier_without_ocr, frame, "a purple band", "a green band")
    assert purple is not Decision.NO
    assert green is Decision.NO


def test_absence_is_judged_with_a_wider_hue_tolerance_than_presence() -> None:
    # Pixels at the hue of blue's prototype turned by 45° (what a strong cast can do to a hue): too far for
    # a Yes at the default tolerance, close enough that blue cannot be called absent; a hue turned by 120°
    # (a different colour) is incompatible either way.
    proto = srgb_to_lab(np.array([[35, 85, 205]], np.float32))[0]
    chroma, hue = np.hypot(proto[1], proto[2]), np.arctan2(proto[2], proto[1])

    def turned(degrees: float) -> np.ndarray:
        angle = hue + np.radians(degrees)
        return np.array([[proto[0], chroma * np.cos(angle), chroma * np.sin(angle)]], np.float32)

    assert claim_evidence(turned(45), ("blue",)).compatible == 0.0
    assert claim_evidence(turned(45), ("blue",), hue_tolerance_deg=60.0).compatible == 1.0
    assert claim_evidence(turned(120), ("blue",), hue_tolerance_deg=60.0).compatible == 0.0


SMALL_BOX = (130, 300, 240, 370)  # 110 x 70 px: at 0.8-1.9 m a size a mug or a pair of glasses can have


def _spectacles(colour: tuple[int, int, int] = (20, 20, 22), tinted: bool = False) -> np.ndarray:
    """Two thick rings joined by a bridge: a frame around see-through lenses (the wall shows inside), or,
    ``tinted``, around dark lenses that hide the wall (sunglasses: two filled discs)."""
    import cv2

    frame = background()
    x1, y1, x2, y2 = SMALL_BOX
    cy, r = (y1 + y2) // 2, (y2 - y1) // 2 - 4
    if tinted:  # lenses a little apart, as on a real frame (the bridge spans the gap)
        r = (x2 - x1) * 10 // 44
    for cx in (x1 + r + 4, x2 - r - 5):
        if tinted:
            cv2.circle(frame, (cx, cy), r, (40, 70, 45), thickness=-1)
        cv2.circle(frame, (cx, cy), r, colour, thickness=6)
    cv2.line(frame, (x1 + 2 * r, cy - r // 2), (x2 - 2 * r, cy - r // 2), colour, thickness=6)
    return frame


def test_silhouette_shape_of_a_disc_and_a_ring() -> None:
    from aiv_checks.checks.category import silhouette_shape

    yy, xx = np.mgrid[0:101, 0:101]
    disc = (yy - 50) ** 2 + (xx - 50) ** 2 <= 50**2
    ring = disc & ((yy - 50) ** 2 + (xx - 50) ** 2 >= 42**2)
    solidity, fill = silhouette_shape(disc)
    assert solidity > 0.97 and abs(fill - np.pi / 4) < 0.02
    assert silhouette_shape(ring)[0] < 0.35


def test_a_filled_compact_silhouette_is_no_pair_of_glasses(verifier_without_ocr) -> None:
    frame = paint_object(solid(BLUE), SMALL_BOX)
    glasses = verifier_without_ocr.verify(view_of(frame, SMALL_BOX, "eyeglasses"), [attr("blue")])
    assert glasses[0].answer is Decision.NO and "thin frame" in glasses[0].reason
    # The same blob is a fine mug, and the size gate lets both categories through.
    assert _answers(verifier_without_ocr, frame, "blue", category="mug", box=SMALL_BOX) == [Decision.YES]
    # Sunglasses: dark lenses join the mask, two nearly touching discs fill most of their hull, but not all.
    sunglasses = _spectacles(tinted=True)
    answer = verifier_without_ocr.verify(view_of(sunglasses, SMALL_BOX, "eyeglasses"), [attr("black")])[0]
    assert "not a" not in answer.reason


def test_an_open_frame_silhouette_is_no_solid_body(verifier_without_ocr) -> None:
    frame = _spectacles()
    mug = verifier_without_ocr.verify(view_of(frame, SMALL_BOX, "mug"), [attr("black")])
    assert mug[0].answer is Decision.NO and "solid body" in mug[0].reason
    glasses = verifier_without_ocr.verify(view_of(frame, SMALL_BOX, "eyeglasses"), [attr("black")])
    assert "not a" not in glasses[0].reason
    # Categories the silhouette says nothing about (a bag can be a strap loop) are left alone.
    bag = verifier_without_ocr.verify(view_of(frame, SMALL_BOX, "bag"), [attr("black")])
    assert "not a" not in bag[0].reason
    off = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", category=CategorySettings(solid_body_min_solidity=0.0)), ocr=None
    )
    assert "not a" not in off.verify(view_of(frame, SMALL_BOX, "mug"), [attr("black")])[0].reason


def test_a_pale_colour_in_shadow_is_not_contradicted_by_its_darker_name(verifier_without_ocr) -> None:
    # Lavender in a dim corner: every pixel is named navy blue, but its hue is lavender's, so the name-share
    # rule (another colour dominates, none of the claimed name) must not turn it into a No. A claim with
    # another hue is still contradicted.
    frame = paint_object(solid((66, 58, 92)))
    lavender, yellow = verifier_without_ocr.verify(
        view_of(frame, BOX, "bag"), [attr("lavender"), attr("yellow")]
    )
    assert lavender.answer is not Decision.NO, lavender.reason
    assert yellow.answer is Decision.NO
    names_without_guard = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", main_colour=MainColourSettings(no_max_compatible=1.0)), ocr=None
    )
    assert names_without_guard.verify(view_of(frame, BOX, "bag"), [attr("lavender")])[0].answer is Decision.NO


def test_a_metal_finish_is_never_contradicted_by_the_colours_it_mirrors(verifier_without_ocr) -> None:
    # A polished rose gold key in a blue room shows navy and silver: the same pixels rule out a pink
    # plastic body, but not rose gold, nor a brass or gold part.
    frame = paint_object(halves((25, 35, 95), (170, 172, 178), split=0.6))
    rose_gold, pink, brass_part, yellow_part = _answers(
        verifier_without_ocr, frame, "rose gold", "pink", "a brass band", "a yellow band"
    )
    assert rose_gold is Decision.UNSURE and pink is Decision.NO
    assert brass_part is Decision.UNSURE and yellow_part is Decision.NO


def test_a_missing_part_colour_is_no_when_the_object_shows_a_hue_nothing_names(verifier_without_ocr) -> None:
    from aiv_verifier.core.crop import crop_with_gt_box
    from aiv_verifier.verification.base import ViewInput

    green = (40, 150, 55)
    description = "a blue bag with a pink handle"

    def ask(verifier, frame) -> Decision:
        crop = crop_with_gt_box(frame, BOX)
        view = ViewInput(crop.image, frame, crop.box, crop.confidence, "bag", (description,))
        return verifier.verify(view, [attr("pink handle", name="handle_color")])[0].answer

    # The described bag with its handle turned away: no pink, nothing unnamed, so the handle may be hidden.
    assert ask(verifier_without_ocr, paint_object(solid(BLUE, shade=0.2))) is Decision.UNSURE
    # A distractor whose handle is green (2 % of the object, below the 4 % identity gate): green is named by no
    # description, so the handle is there in another colour.
    distractor = paint_object(halves(BLUE, green, split=0.95))
    assert ask(verifier_without_ocr, distractor) is Decision.NO
    off = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", part_colour=PartColourSettings(unnamed_hue_share=0.0)), ocr=None
    )
    assert ask(off, distractor) is Decision.UNSURE


def _polygon_object(corners: list[tuple[int, int]], colour: tuple[int, int, int] = BLUE):
    """A frame with a flat polygon (a box's face seen at a slant) and its bounding box."""
    frame = background()
    points = np.array(corners, np.int32)
    cv2.fillPoly(frame, [points], colour)
    (x1, y1), (x2, y2) = points.min(0), points.max(0) + 1
    return frame, (int(x1), int(y1), int(x2), int(y2))


def test_outline_roundness_tells_discs_from_boxes() -> None:
    from aiv_checks.checks.category import outline_roundness

    canvas = np.zeros((120, 160), np.uint8)
    disc = cv2.circle(canvas.copy(), (80, 60), 40, 1, -1)
    assert outline_roundness(disc) > 0.3
    for corners in (
        [
            (30, 40),
            (130, 40),
            (130, 80),
            (30, 80),
        ],  # a rectangle (a hull of only four corners)
        [(30, 50), (90, 30), (140, 45), (140, 75), (80, 95), (30, 80)],  # a cuboid's six-cornered outline
        [(20, 40), (120, 30), (140, 70), (40, 85)],  # a slanted face
    ):
        box = cv2.fillPoly(canvas.copy(), [np.array(corners, np.int32)], 1)
        assert outline_roundness(box) < -0.1, corners
    # Holes and dents do not matter (the hull is measured); nothing to measure is 0.
    ring = cv2.circle(disc.copy(), (80, 60), 25, 0, -1)
    assert abs(outline_roundness(ring) - outline_roundness(disc)) < 0.02
    assert outline_roundness(canvas) == 0.0


def test_a_round_outline_is_no_box(verifier_without_ocr) -> None:
    disc = paint_object(solid(BLUE))
    for category in ("laptop", "book"):
        answer = verifier_without_ocr.verify(view_of(disc, BOX, category), [attr("blue")])[0]
        assert answer.answer is Decision.NO and f"a {category} is a box" in answer.reason
    assert _answers(verifier_without_ocr, disc, "blue", category="ball") == [Decision.YES]
    # A box's face seen at a slant is a polygon: a fine laptop (and, with an occluder in mind, not ruled
    # out as a ball either).
    slanted, box = _polygon_object([(80, 320), (230, 220), (279, 250), (130, 360)])
    assert _answers(verifier_without_ocr, slanted, "blue", category="laptop", box=box) == [Decision.YES]
    assert _answers(verifier_without_ocr, slanted, "blue", category="ball", box=box) == [Decision.YES]

    off = ClassicalVerifier(
        ClassicalSettings(ocr_engine="none", category=CategorySettings(outline_cue=False)), ocr=None
    )
    assert _answers(off, disc, "blue", category="laptop") == [Decision.YES]
