"""Crop geometry and detection confidence (spec §5.4)."""

import numpy as np
import pytest
from aiv_verifier.core.crop import (
    Detection,
    crop_to_box,
    crop_with_detections,
    crop_with_gt_box,
    padded_box,
    round_half_up,
    upscale_to_min_side,
)
from PIL import Image


def portrait_view() -> np.ndarray:
    """A benchmark-sized 360x640 (w x h) view with a gradient so crops can be located."""
    rows = np.arange(640, dtype=np.uint16)[:, None] % 256
    cols = np.arange(360, dtype=np.uint16)[None, :] % 256
    image = np.zeros((640, 360, 3), dtype=np.uint8)
    image[..., 0] = rows
    image[..., 1] = cols
    return image


def test_round_half_up_differs_from_bankers_rounding():
    assert round_half_up(2.5) == 3 and round(2.5) == 2
    assert round_half_up(0.5) == 1
    assert round_half_up(603.43) == 603
    assert round_half_up(568.89) == 569


def test_box_is_padded_by_three_pixels_and_clamped():
    assert padded_box((100, 200, 150, 260), 360, 640) == (97, 197, 153, 263)
    assert padded_box((-10, -5, 20, 700), 360, 640) == (0, 0, 23, 640)
    assert padded_box((355, 630, 400, 700), 360, 640) == (352, 627, 360, 640)
    # Fractional boxes are widened outwards.
    assert padded_box((10.2, 20.7, 30.1, 40.9), 360, 640) == (7, 17, 34, 44)


def test_degenerate_or_invalid_boxes_give_none():
    assert padded_box((400, 10, 420, 20), 360, 640) is None  # entirely right of the image
    assert padded_box((50, 50, 40, 60), 360, 640) is None  # inverted even after padding
    assert padded_box((float("nan"), 0, 10, 10), 360, 640) is None


def test_small_crop_is_upscaled_so_the_short_side_is_512():
    image = portrait_view()
    crop, box = crop_to_box(image, (100, 200, 150, 260))
    assert box == (97, 197, 153, 263)
    # 56 x 66 px -> scale 512/56 -> 512 x 603.43 -> 603 rows.
    assert crop.shape == (603, 512, 3)
    expected = Image.fromarray(image[197:263, 97:153]).resize((512, 603), Image.Resampling.BICUBIC)
    assert np.array_equal(crop, np.asarray(expected))


def test_long_side_rounds_up_when_the_fraction_is_above_half():
    crop, box = crop_to_box(portrait_view(), (10, 10, 13, 14))
    assert box == (7, 7, 16, 17)  # 9 x 10 px
    assert crop.shape == (569, 512, 3)  # 10 * 512 / 9 = 568.89 -> 569


def test_large_crop_is_never_downscaled():
    image = np.zeros((1000, 1200, 3), dtype=np.uint8)
    image[300:400, 300:400] = 200
    crop, box = crop_to_box(image, (100, 100, 700, 800))
    assert box == (97, 97, 703, 803)
    assert crop.shape == (706, 606, 3)
    assert np.array_equal(crop, image[97:803, 97:703])


def test_upscale_keeps_images_whose_short_side_is_already_512():
    image = np.zeros((512, 700), dtype=np.uint8)
    assert upscale_to_min_side(image) is image


def test_full_image_fallback_is_512_by_910():
    crop, box = crop_to_box(portrait_view(), None)
    assert box is None
    assert crop.shape == (910, 512, 3)


def test_gt_mode_without_box_is_the_trap_path():
    result = crop_with_gt_box(portrait_view(), None)
    assert result.confidence == 0.1
    assert result.box is None
    assert result.image.shape == (910, 512, 3)
    assert "no box" in result.reason


def test_gt_mode_with_box_is_fully_trusted_even_for_a_sub_threshold_mask():
    result = crop_with_gt_box(portrait_view(), [100, 200, 150, 260])
    assert result.confidence == 1.0
    assert result.box == (97, 197, 153, 263)


def test_gt_box_that_clamps_to_nothing_falls_back_to_full_image_keeping_confidence():
    result = crop_with_gt_box(portrait_view(), (400, 10, 420, 20))
    assert result.box is None and result.image.shape == (910, 512, 3)
    assert result.confidence == 1.0


def test_single_view_forces_full_confidence():
    assert crop_with_gt_box(portrait_view(), None, single_view=True).confidence == 1.0
    assert crop_with_detections(portrait_view(), [], single_view=True).confidence == 1.0
    detections = [Detection((10, 10, 60, 60), 0.27)]
    assert crop_with_detections(portrait_view(), detections, single_view=True).confidence == 1.0


def test_detector_mode_crops_the_best_box_and_uses_its_score():
    detections = [Detection((10, 10, 60, 60), 0.31), Detection((100, 200, 150, 260), 0.62)]
    result = crop_with_detections(portrait_view(), detections)
    assert result.box == (97, 197, 153, 263)
    assert result.confidence == 0.62


def test_detector_mode_without_detections_uses_full_image_at_low_confidence():
    result = crop_with_detections(portrait_view(), [])
    assert result.confidence == 0.1 and result.box is None
    assert result.image.shape == (910, 512, 3)


def test_bad_inputs_are_rejected_clearly():
    with pytest.raises(ValueError, match="uint8"):
        crop_to_box(np.zeros((10, 10, 3), dtype=np.float32), None)
    with pytest.raises(ValueError, match="shape"):
        crop_to_box(np.zeros((10, 10, 2), dtype=np.uint8), None)
    with pytest.raises(ValueError):
        Detection((0, 0, 1, 1), 1.5)
