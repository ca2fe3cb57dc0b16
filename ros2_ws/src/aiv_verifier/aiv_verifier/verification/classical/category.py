"""Weight-free category evidence: is the boxed object physically compatible with the query's category?

The reference prompt makes the category a gate: when the object is not a <category>, every attribute is No.
Without a learned model, the classical verifier can only use cues that physics fixes, so it answers the gate
with No only when such a cue rules the category out, and otherwise stays silent (the attributes are judged
on their own):

* **Size.** A camera at a pre-grasp stand-off sees an object's longest visible extent ``L`` px at a
  distance ``d`` in an assumed range; with focal length ``f`` px, the object spans at least ``L·d_min/f``
  metres. A mug cannot span 25 cm, keys cannot span 35 cm. Only the *lower* bound is used against a
  category's maximum size: a box can shrink (occlusion, foreshortening) but never grow beyond the object.
  The opposite direction (too small for a backpack) is checked against a category's smallest extent seen
  from any side, with the far distance, and only for boxes that are not cut by the image edge.
* **Roundness of a ball.** A ball is a disc from every side; a silhouette much longer than wide is no ball.

Sizes are real-world ranges of everyday objects in metres (the longest extent a camera can see, with
generous margins), not values fitted to any renderer; the distance range and the field of view are
parameters of the robot's approach (:class:`CategoryParams`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

#: (smallest extent visible from any side, largest possible extent) in metres per benchmark category.
#: The first number bounds what a partial or edge-on view may still show (a backpack is never narrower than
#: ~25 cm); the second is the largest the object comes in everyday life.
CATEGORY_EXTENT_M: MappingProxyType[str, tuple[float, float]] = MappingProxyType(
    {
        "backpack": (0.20, 0.70),
        "bag": (0.12, 0.70),
        "ball": (0.05, 0.75),
        "book": (0.10, 0.45),
        "camera": (0.05, 0.25),
        "cellphone": (0.06, 0.20),
        "eyeglasses": (0.05, 0.19),
        "hat": (0.12, 0.45),
        "headphones": (0.10, 0.30),
        "keys": (0.03, 0.22),
        "laptop": (0.20, 0.50),
        "mug": (0.06, 0.18),
        "shoes": (0.12, 0.45),
        "teddy bear": (0.10, 1.00),
        "toy": (0.03, 0.60),
        "visor": (0.12, 0.35),
        "wallet": (0.06, 0.24),
        "watch": (0.03, 0.30),
    }
)


@dataclass(frozen=True)
class CategoryParams:
    """Knobs of the category evidence.

    ``enabled``: False answers nothing from the category (the pre-issue behaviour).
    ``min_distance_m`` / ``max_distance_m`` (0.8 / 1.9): the camera's distance to the object when it
    verifies; the benchmark captures views at 0.9-1.7 m horizontal distance from the object's centre,
    widened for the camera's height above the object.
    ``hfov_deg`` (42.0): horizontal field of view of the camera (the benchmark camera); with the frame width
    it gives the focal length in pixels.
    ``size_margin`` (1.25): the measured extent must exceed a category's largest size by this factor (or
    fall short of its smallest extent by it) before it counts against the category.
    ``ball_max_elongation`` (3.0): a ball's silhouette box is never longer than this times its width. An
    occluded ball shows only a slice of its disc (val had one at 2.1), so only extreme boxes count; 0 = off.
    ``min_box_px`` (12): boxes with a shorter side than this are too coarse for any cue.
    """

    enabled: bool = True
    min_distance_m: float = 0.8
    max_distance_m: float = 1.9
    hfov_deg: float = 42.0
    size_margin: float = 1.25
    ball_max_elongation: float = 3.0
    min_box_px: float = 12.0


@dataclass(frozen=True)
class CategoryEvidence:
    """``mismatch`` True when a cue rules the category out; ``reason`` says which and with what numbers."""

    mismatch: bool
    reason: str
    extent_m: tuple[float, float] = (0.0, 0.0)


def focal_px(image_width: int, hfov_deg: float) -> float:
    return (image_width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)


def judge_category(
    category: str,
    box: tuple[int, int, int, int],
    image_hw: tuple[int, int],
    params: CategoryParams,
    padding_px: int = 0,
) -> CategoryEvidence:
    """Category evidence from the object's box in the full frame (``padding_px`` added by the cropper)."""
    name = category.strip().lower()
    if not params.enabled or name not in CATEGORY_EXTENT_M:
        return CategoryEvidence(False, "")
    x1, y1, x2, y2 = box
    height, width = image_hw
    w = max(0, x2 - x1 - 2 * padding_px)
    h = max(0, y2 - y1 - 2 * padding_px)
    if min(w, h) < params.min_box_px:
        return CategoryEvidence(False, "")
    f = focal_px(width, params.hfov_deg)
    long_side = float(max(w, h))
    low, high = long_side * params.min_distance_m / f, long_side * params.max_distance_m / f
    smallest, largest = CATEGORY_EXTENT_M[name]
    if low > params.size_margin * largest:
        return CategoryEvidence(
            True,
            f"object spans at least {low * 100:.0f} cm; a {name} is at most {largest * 100:.0f} cm",
            (low, high),
        )
    cut = x1 <= 0 or y1 <= 0 or x2 >= width or y2 >= height
    if not cut and high * params.size_margin < smallest:
        return CategoryEvidence(
            True,
            f"object spans at most {high * 100:.0f} cm; a {name} shows at least {smallest * 100:.0f} cm",
            (low, high),
        )
    if (
        name == "ball"
        and not cut
        and params.ball_max_elongation > 0
        and max(w, h) > params.ball_max_elongation * min(w, h)
    ):
        return CategoryEvidence(
            True,
            f"silhouette is {max(w, h) / min(w, h):.1f} times longer than wide; a ball is round",
            (low, high),
        )
    return CategoryEvidence(False, "", (low, high))


def silhouette_roundness(mask: np.ndarray) -> float:
    """Share of the mask's bounding box that the mask fills (π/4 ≈ 0.79 for a disc)."""
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return 0.0
    area = (ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1)
    return float(ys.size / max(area, 1))
