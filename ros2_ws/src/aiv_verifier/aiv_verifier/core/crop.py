"""Crop the candidate object out of a view and say how much to trust the view (spec §5.4).

The per-view verifier sees this crop, and the tracker weights its answers by the returned confidence. When
there is no box (trap view in GT mode, nothing detected), the full image is used with confidence 0.1, which
the tracker's Eq. 3 down-weighting turns into 0.02: such a view can barely move the reconciled state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

CROP_PADDING_PX = 3
MIN_CROP_SIDE_PX = 512
NO_BOX_CONFIDENCE = 0.1
GT_BOX_CONFIDENCE = 1.0
SINGLE_VIEW_CONFIDENCE = 1.0

PixelBox = tuple[int, int, int, int]


@dataclass(frozen=True)
class Detection:
    """One detector box in absolute pixel xyxy with its score in [0, 1]."""

    box_xyxy: tuple[float, float, float, float]
    score: float

    def __post_init__(self) -> None:
        if len(self.box_xyxy) != 4:
            raise ValueError(f"box must be (x1, y1, x2, y2), got {self.box_xyxy!r}")
        if not 0.0 <= self.score <= 1.0:
            raise ValueError(f"detection score must lie in [0, 1], got {self.score}")


@dataclass(frozen=True)
class CropResult:
    """The image to verify, the pixel box it came from (None = full image) and its confidence."""

    image: np.ndarray
    box: PixelBox | None
    confidence: float
    reason: str


def round_half_up(value: float) -> int:
    """Round .5 upwards (Python's ``round`` would send 2.5 to 2)."""
    return math.floor(value + 0.5)


def padded_box(
    box_xyxy: Sequence[float], width: int, height: int, padding: int = CROP_PADDING_PX
) -> PixelBox | None:
    """Grow the box by ``padding`` px per side and clamp it to the image; None if nothing usable is left.

    Fractional coordinates are widened outwards (floor for the start, ceil for the end) so the crop always
    covers the box; end coordinates are exclusive, as in slicing and ``PIL.Image.crop``.
    """
    if len(box_xyxy) != 4 or not all(math.isfinite(float(v)) for v in box_xyxy):
        return None
    x1, y1, x2, y2 = (float(v) for v in box_xyxy)
    left = max(0, math.floor(x1) - padding)
    top = max(0, math.floor(y1) - padding)
    right = min(width, math.ceil(x2) + padding)
    bottom = min(height, math.ceil(y2) + padding)
    if right <= left or bottom <= top:
        return None
    return left, top, right, bottom


def upscale_to_min_side(image: np.ndarray, min_side: int = MIN_CROP_SIDE_PX) -> np.ndarray:
    """Bicubic upscale so the shorter side is ``min_side`` (other side rounded half-up); never shrink."""
    height, width = image.shape[:2]
    shorter = min(width, height)
    if shorter >= min_side:
        return image
    scale = min_side / shorter
    size = (round_half_up(width * scale), round_half_up(height * scale))
    return np.asarray(Image.fromarray(image).resize(size, Image.Resampling.BICUBIC))


def _check_image(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        raise ValueError("image must be a uint8 numpy array")
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] in (3, 4))):
        raise ValueError(f"image must be HxW, HxWx3 or HxWx4, got shape {image.shape}")
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"image is empty (shape {image.shape})")


def crop_to_box(image: np.ndarray, box_xyxy: Sequence[float] | None) -> tuple[np.ndarray, PixelBox | None]:
    """Padded, clamped, upscaled crop; the whole image (also upscaled) when there is no usable box."""
    _check_image(image)
    height, width = image.shape[:2]
    pixel_box = padded_box(box_xyxy, width, height) if box_xyxy is not None else None
    if pixel_box is None:
        return upscale_to_min_side(image), None
    left, top, right, bottom = pixel_box
    return upscale_to_min_side(image[top:bottom, left:right]), pixel_box


def _with_single_view(confidence: float, single_view: bool) -> float:
    # Single-view runs have nothing to weigh against, so the reference trusts the only view fully.
    return SINGLE_VIEW_CONFIDENCE if single_view else confidence


def crop_with_gt_box(
    image: np.ndarray, gt_box_xyxy: Sequence[float] | None, *, single_view: bool = False
) -> CropResult:
    """GT mode: a box (even a trap view's sub-threshold one) gives c = 1.0; no box gives the full image, c =
    0.1.
    """
    crop, pixel_box = crop_to_box(image, gt_box_xyxy)
    if gt_box_xyxy is None:
        confidence, reason = NO_BOX_CONFIDENCE, "gt: no box for this view, using the full image"
    else:
        confidence = GT_BOX_CONFIDENCE
        reason = (
            "gt: cropped to the ground-truth box" if pixel_box else "gt: box empty after clamping, full image"
        )
    if single_view:
        reason += "; single-view run forces confidence 1.0"
    return CropResult(crop, pixel_box, _with_single_view(confidence, single_view), reason)


def crop_with_detections(
    image: np.ndarray, detections: Sequence[Detection], *, single_view: bool = False
) -> CropResult:
    """Detector mode: crop the best-scoring box, c = its score; nothing detected gives the full image, c =
    0.1.
    """
    if not detections:
        crop, pixel_box = crop_to_box(image, None)
        confidence, reason = NO_BOX_CONFIDENCE, "detector: nothing detected, using the full image"
    else:
        best = max(detections, key=lambda detection: detection.score)
        crop, pixel_box = crop_to_box(image, best.box_xyxy)
        confidence = best.score
        if pixel_box:
            reason = f"detector: cropped to the best box (score {best.score:.3f})"
        else:
            reason = f"detector: best box (score {best.score:.3f}) empty after clamping, full image"
    if single_view:
        reason += "; single-view run forces confidence 1.0"
    return CropResult(crop, pixel_box, _with_single_view(confidence, single_view), reason)
