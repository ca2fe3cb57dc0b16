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
* **Solidity of the silhouette** (object mask area over its convex hull's area). A pair of glasses is a thin
  frame around see-through lenses: face-on it is mostly holes, edge-on a thin bar; no side of it is a
  filled, compact blob. Mugs, balls, books and wallets are solid bodies: from any side the
  silhouette nearly fills its hull (a mug's handle leaves a small hole). Only the estimated mask is known,
  so this is used only where it is unambiguous: a compact, filled silhouette rules out glasses, and a
  silhouette that fills well under its hull rules out a solid body.
* **Outline: round or a polygon.** A box (laptop, phone, book, wallet) seen from any side has an outline of
  at most six straight edges (a cuboid's silhouette under perspective), so a clearly round outline is no box.
  Measured on the convex hull of the mask (concavities, holes and a ragged mask edge do not matter):
  :func:`outline_roundness` is how much better an ellipse fits it than the best polygon of six corners. The
  converse (a polygonal outline is no ball) is not used: an occluder joins a ball's mask and squares it off.

Sizes are real-world ranges of everyday objects in metres (the longest extent a camera can see, with
generous margins), not values fitted to any renderer; the distance range and the field of view are
parameters of the robot's approach (:class:`CategoryParams`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import cv2
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

#: Categories made of a thin frame around see-through parts: no view of them is a filled, compact blob.
OPEN_FRAME_CATEGORIES: frozenset[str] = frozenset({"eyeglasses"})


def is_open_frame(category: object) -> bool:
    """Whether ``category`` names a thin frame around see-through parts (its region shows what is behind)."""
    return isinstance(category, str) and category.strip().lower() in OPEN_FRAME_CATEGORIES


#: Box-shaped categories: from any side their outline is a polygon of at most six corners.
BOX_CATEGORIES: frozenset[str] = frozenset({"book", "cellphone", "laptop", "wallet"})

#: Corners of the polygon an outline is compared with: a cuboid's silhouette has at most six.
OUTLINE_POLYGON_CORNERS = 6

#: Solid-bodied categories whose silhouette nearly fills its convex hull from every side.
#: (Not phones: a phone's dark screen merges with a dark background, and a second generated dataset had a
#: phone's estimated mask at 60 % of its hull.)
SOLID_BODY_CATEGORIES: frozenset[str] = frozenset({"ball", "book", "mug", "wallet"})


@dataclass(frozen=True)
class CategoryParams:
    """Knobs of the category evidence.

    ``enabled``: False answers nothing from the category (the pre-issue behaviour).
    ``min_distance_m`` / ``max_distance_m`` (0.8 / 1.9): the camera's distance to the object when it
    verifies; the benchmark captures views at 0.9-1.7 m horizontal distance from the object's centre,
    widened for the camera's height above the object.
    ``hfov_deg`` (42.0): horizontal field of view of the camera (the benchmark camera); with the frame width
    it gives the focal length in pixels when the view does not bring the camera's own (a robot camera's
    CameraInfo, see :mod:`aiv_verifier.camera_model`).
    ``size_margin`` (1.25): the measured extent must exceed a category's largest size by this factor (or
    fall short of its smallest extent by it) before it counts against the category.
    ``ball_max_elongation`` (3.0): a ball's silhouette box is never longer than this times its width. An
    occluded ball shows only a slice of its disc (val had one at 2.1), so only extreme boxes count; 0 = off.
    ``min_box_px`` (12): boxes with a shorter side than this are too coarse for any cue.
    Silhouette (on the estimated mask of a solid, face-on view of at least ``silhouette_min_pixels``
    camera pixels, 300, not cut by the image edge): a mask filling at least ``compact_min_solidity`` (0.97)
    of its convex hull and ``compact_min_fill`` (0.7) of its box is no open frame (glasses: at most 0.51
    and 0.37 on the ``train`` splits of two generated datasets, where the lenses were clear; tinted lenses
    join the mask, and two filled lenses with a bridge reach 0.88-0.94 of their hull; 0.92 contradicted one
    such pair on the default val split, and 0.95 one perturbed view of a pair on the seed-11 dataset
    (0.95, 0.86), so the bound sits above both); one filling less than
    ``solid_body_min_solidity`` (0.6) of its hull is no solid body (lowest there: a book at 0.79, a mug at
    0.88). 0 turns either cue off.
    Outline (same views; :func:`outline_roundness`, about +0.35 for a clean disc, below 0 for polygons): a
    box category is ruled out at ``box_max_roundness`` (0.1) or rounder; ``outline_cue`` False turns it off.
    On the ``train`` and ``val`` splits of two datasets generated with other seeds (11, 13), clean and with
    the ``episode_sweep`` perturbations (4,404 views), no book, phone, laptop or wallet came above 0.055
    (1,015 views) while 569 views of other objects (visors, balls, hats) reached 0.1. A ball rule at the
    other end (-0.3) was measured and dropped: no ball came below -0.252 there, but with other draws of the
    same perturbations two views of true balls did.
    """

    enabled: bool = True
    min_distance_m: float = 0.8
    max_distance_m: float = 1.9
    hfov_deg: float = 42.0
    size_margin: float = 1.25
    ball_max_elongation: float = 3.0
    min_box_px: float = 12.0
    silhouette_min_pixels: float = 300.0
    compact_min_solidity: float = 0.97
    compact_min_fill: float = 0.7
    solid_body_min_solidity: float = 0.6
    outline_cue: bool = True
    box_max_roundness: float = 0.1


@dataclass(frozen=True)
class CategoryEvidence:
    """``mismatch`` True when a cue rules the category out; ``reason`` says which and with what numbers."""

    mismatch: bool
    reason: str
    extent_m: tuple[float, float] = (0.0, 0.0)


def box_touches_edge(box: tuple[int, int, int, int], image_hw: tuple[int, int]) -> bool:
    """Whether the image edge cuts the box: the object may go on beyond it, so its outline is not its own."""
    x1, y1, x2, y2 = box
    height, width = image_hw
    return x1 <= 0 or y1 <= 0 or x2 >= width or y2 >= height


def focal_px(image_width: int, hfov_deg: float) -> float:
    return (image_width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)


def judge_category(
    category: str,
    box: tuple[int, int, int, int],
    image_hw: tuple[int, int],
    params: CategoryParams,
    padding_px: int = 0,
    focal_length_px: float | None = None,
) -> CategoryEvidence:
    """Category evidence from the object's box in the full frame (``padding_px`` added by the cropper).

    ``focal_length_px``: the camera's own horizontal focal length in pixels of this frame (its CameraInfo);
    None falls back to ``params.hfov_deg``, which is right only for a camera with that field of view.
    """
    name = category.strip().lower()
    if not params.enabled or name not in CATEGORY_EXTENT_M:
        return CategoryEvidence(False, "")
    x1, y1, x2, y2 = box
    width = image_hw[1]
    w = max(0, x2 - x1 - 2 * padding_px)
    h = max(0, y2 - y1 - 2 * padding_px)
    if min(w, h) < params.min_box_px:
        return CategoryEvidence(False, "")
    f = focal_length_px if focal_length_px and focal_length_px > 0 else focal_px(width, params.hfov_deg)
    long_side = float(max(w, h))
    low, high = long_side * params.min_distance_m / f, long_side * params.max_distance_m / f
    smallest, largest = CATEGORY_EXTENT_M[name]
    if low > params.size_margin * largest:
        return CategoryEvidence(
            True,
            f"object spans at least {low * 100:.0f} cm; a {name} is at most {largest * 100:.0f} cm",
            (low, high),
        )
    cut = box_touches_edge(box, image_hw)
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


def _hull_of(mask: np.ndarray) -> np.ndarray | None:
    """Convex hull of every outer contour of a mask (None when it is empty)."""
    binary = np.ascontiguousarray(mask, dtype=np.uint8)
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    return cv2.convexHull(np.concatenate(contours))


def silhouette_shape(mask: np.ndarray) -> tuple[float, float]:
    """(solidity, fill) of a mask: its area over its convex hull's area and over its bounding box's area."""
    binary = np.ascontiguousarray(mask, dtype=np.uint8)
    area = float(binary.sum())
    if area == 0:
        return 0.0, 0.0
    hull = _hull_of(binary)
    hull_area = float(cv2.contourArea(hull)) if hull is not None else 0.0
    ys, xs = np.nonzero(binary)
    box_area = float((ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1))
    # A hull through pixel centres misses half a pixel all round: never report more than full.
    return min(1.0, area / max(hull_area, 1.0)), area / box_area


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 0.0


def outline_roundness(mask: np.ndarray) -> float:
    """How much better an ellipse fits the mask's convex hull than the best polygon of at most six corners:
    IoU with the fitted ellipse minus IoU with that polygon (about +0.35 for a clean disc, about -0.2 for a
    rectangle; 0.0 when the outline is too small to tell)."""
    hull = _hull_of(mask)
    if hull is None or len(hull) < 3:
        return 0.0
    shape = mask.shape[:2]
    filled = np.zeros(shape, np.uint8)
    cv2.fillPoly(filled, [hull], 1)
    region = filled.astype(bool)
    # The ellipse is fitted to the hull's corners; a hull of three or four corners (a clean triangle or
    # quadrilateral) has too few, so its whole boundary is used instead.
    points = hull
    if len(hull) < 5:
        outline, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        points = max(outline, key=len)
        if len(points) < 5:
            return 0.0
    ellipse = np.zeros(shape, np.uint8)
    cv2.ellipse(ellipse, cv2.fitEllipse(points), 1, -1)
    perimeter = cv2.arcLength(hull, True)
    polygon = hull
    # The coarsest tolerance that still keeps the corners: grow it until six corners or fewer remain.
    for fraction in np.linspace(0.005, 0.2, 40):
        polygon = cv2.approxPolyDP(hull, float(fraction) * perimeter, True)
        if len(polygon) <= OUTLINE_POLYGON_CORNERS:
            break
    fitted = np.zeros(shape, np.uint8)
    cv2.fillPoly(fitted, [polygon], 1)
    return _iou(region, ellipse.astype(bool)) - _iou(region, fitted.astype(bool))


def judge_outline(category: str, mask: np.ndarray, params: CategoryParams) -> CategoryEvidence:
    """Category evidence from the outline's roundness (see :class:`CategoryParams`); callers apply the same
    view conditions as for :func:`judge_silhouette`."""
    name = category.strip().lower()
    if not params.outline_cue or name not in BOX_CATEGORIES:
        return CategoryEvidence(False, "")
    roundness = outline_roundness(mask)
    if roundness >= params.box_max_roundness:
        return CategoryEvidence(
            True,
            f"outline is round (an ellipse fits it {roundness:+.2f} better than six edges); a {name} is a box",
        )
    return CategoryEvidence(False, "")


def judge_silhouette(
    category: str, mask: np.ndarray, source_pixels: float, cut: bool, params: CategoryParams
) -> CategoryEvidence:
    """Category evidence from the estimated object mask of a solid view (see :class:`CategoryParams`)."""
    name = category.strip().lower()
    if not params.enabled or cut or source_pixels < params.silhouette_min_pixels:
        return CategoryEvidence(False, "")
    outline = judge_outline(name, mask, params)
    if outline.mismatch:
        return outline
    open_frame = is_open_frame(name)
    if not open_frame and name not in SOLID_BODY_CATEGORIES:
        return CategoryEvidence(False, "")
    solidity, fill = silhouette_shape(mask)
    if (
        open_frame
        and params.compact_min_solidity > 0
        and solidity >= params.compact_min_solidity
        and fill >= params.compact_min_fill
    ):
        return CategoryEvidence(
            True,
            f"silhouette is a filled, compact blob ({solidity:.0%} of its hull, {fill:.0%} of its box); "
            f"a {name} is a thin frame",
        )
    if name in SOLID_BODY_CATEGORIES and solidity < params.solid_body_min_solidity:
        return CategoryEvidence(
            True, f"silhouette fills only {solidity:.0%} of its hull; a {name} is a solid body"
        )
    return CategoryEvidence(False, "")
