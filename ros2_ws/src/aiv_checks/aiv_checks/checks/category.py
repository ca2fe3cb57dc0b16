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
parameters of the robot's approach (:class:`CategorySettings`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import cv2
import numpy as np
from aiv_common.setting_fields import setting
from aiv_verifier.core.crop import CROP_PADDING_PX

from ..view import Scene, solid_view

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
class CategorySettings:
    """When the box's size, silhouette or outline rules the query's category out (every attribute is then No)."""

    enabled: bool = setting(True, "judge the category from size and silhouette at all (false: never)")
    min_distance_m: float = setting(
        0.8, "nearest distance (metres) from the camera to the object when it verifies", minimum=0.0
    )
    max_distance_m: float = setting(
        1.9, "farthest distance (metres) from the camera to the object when it verifies", minimum=0.0
    )
    hfov_deg: float = setting(
        42.0,
        "horizontal field of view of the camera (degrees), used for pixels-to-metres when the view brings no "
        "focal length of its own (a robot camera's CameraInfo)",
        minimum=0.0,
    )
    size_margin: float = setting(
        1.25,
        "the measured extent must exceed the category's largest size, or fall short of its smallest, by this "
        "factor before it counts against the category",
        minimum=0.0,
    )
    ball_max_elongation: float = setting(
        3.0,
        "a box longer than this many times its width is no ball (0 = off); an occluded ball shows only a "
        "slice of its disc, so only extreme boxes count",
        minimum=0.0,
    )
    min_box_px: float = setting(
        12.0, "boxes with a shorter side (pixels) than this are too coarse for any cue", minimum=0.0
    )
    silhouette_min_pixels: float = setting(
        300.0,
        "the silhouette and outline cues need an object of at least this many camera pixels",
        minimum=0.0,
    )
    compact_min_solidity: float = setting(
        0.97,
        "a silhouette filling at least this share of its convex hull (and the box share below) is no thin "
        "frame such as glasses (0 = off)",
        minimum=0.0,
    )
    compact_min_fill: float = setting(
        0.7, "... and filling at least this share of its box", minimum=0.0, maximum=1.0
    )
    solid_body_min_solidity: float = setting(
        0.6,
        "a silhouette filling less than this share of its convex hull is no solid body (mug, ball, book, "
        "wallet); 0 = off",
        minimum=0.0,
    )
    outline_cue: bool = setting(True, "rule box-shaped categories out by a round outline")
    box_max_roundness: float = setting(
        0.1,
        "an outline this much better fitted by an ellipse than by six straight edges (about +0.35 for a disc, "
        "below 0 for polygons) is no book, phone, laptop or wallet",
        minimum=-1.0,
        maximum=1.0,
    )


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
    params: CategorySettings,
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


def judge_outline(category: str, mask: np.ndarray, params: CategorySettings) -> CategoryEvidence:
    """Category evidence from the outline's roundness (see :class:`CategorySettings`); callers apply the same
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
    category: str, mask: np.ndarray, source_pixels: float, cut: bool, params: CategorySettings
) -> CategoryEvidence:
    """Category evidence from the estimated object mask of a solid view (see :class:`CategorySettings`)."""
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


# -- the gates the verifier runs (see aiv_checks.registry.GATES) -----------------------------------------------


def size_gate(scene: Scene) -> str:
    """Reason the box's size (or a ball's elongation) rules the query's category out ("" when it does not);
    needs only the box and the frame size, so it runs before the object region is estimated."""
    view = scene.view
    if scene.image_hw is None or not isinstance(view.category, str) or not view.category:
        return ""
    if view.crop_box is None:
        return ""
    evidence = judge_category(
        view.category,
        view.crop_box,
        scene.image_hw,
        scene.settings.category,
        CROP_PADDING_PX,
        focal_length_px=view.focal_px if isinstance(view.focal_px, (int, float)) else None,
    )
    return f"not a {view.category}: {evidence.reason}" if evidence.mismatch else ""


def silhouette_gate(scene: Scene) -> str:
    """Reason the object's silhouette or outline rules the query's category out ("" when it does not): only on
    a solid view whose box the image edge does not cut (a cut silhouette has a straight side)."""
    view, region = scene.view, scene.region
    if region is None or scene.image_hw is None or not isinstance(view.category, str) or not view.category:
        return ""
    if view.crop_box is None or not solid_view(region, scene.settings.decisive_min_box_px):
        return ""
    cut = box_touches_edge(view.crop_box, scene.image_hw)
    evidence = judge_silhouette(
        view.category, region.mask, region.source_pixels, cut, scene.settings.category
    )
    return f"not a {view.category}: {evidence.reason}" if evidence.mismatch else ""
