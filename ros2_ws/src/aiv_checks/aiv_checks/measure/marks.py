"""Find a small printed mark of a given colour on the object and, when it is big enough, name its shape.

A logo is a compact patch of one colour that lies *inside* the object (its surroundings are object pixels of
other colours), much smaller than the object. Requiring the surroundings to be object rather than background
keeps a coloured strap or an edge highlight from passing as a logo. Shape names come from the outline:
convexity (solidity), roundness (circularity), corner count of a simplified polygon and a hole for rings.
Below ~60 analysis pixels an outline is a few jagged steps, so no shape is claimed there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import cv2
import numpy as np

from .colour import colour_index
from .region import ObjectRegion

#: Smallest blob (analysis pixels) whose outline is trusted for a shape name.
MIN_SHAPE_PIXELS = 60


@dataclass(frozen=True)
class LogoFinding:
    """The best candidate mark: its shape name ("" when too small) and size in camera pixels."""

    shape: str
    pixels: float
    fraction: float


def classify_shape(blob: np.ndarray) -> str:
    """Shape name of a binary blob (one of the lexicon's LOGO_SHAPE_WORDS keys) or "" when unclear."""
    contours, hierarchy = cv2.findContours(blob.astype(np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return ""
    outer = max(contours, key=cv2.contourArea)
    area = float(cv2.contourArea(outer))
    perimeter = float(cv2.arcLength(outer, True))
    if area <= 0 or perimeter <= 0:
        return ""
    hull_area = float(cv2.contourArea(cv2.convexHull(outer)))
    solidity = area / max(hull_area, 1e-6)
    circularity = 4.0 * np.pi * area / perimeter**2
    has_hole = hierarchy is not None and any(h[3] >= 0 for h in hierarchy[0])
    corners = len(cv2.approxPolyDP(outer, 0.04 * perimeter, True))
    if has_hole and circularity > 0.6:
        return "circle"
    if solidity < 0.55:
        return "bolt"
    if solidity < 0.78:
        return "star" if corners >= 8 and circularity < 0.5 else "cross"
    if circularity > 0.82 and corners > 5:
        return "circle"
    if corners == 3:
        return "triangle"
    if corners == 4:
        rect = cv2.minAreaRect(outer)
        angle = abs(((rect[2] % 90) + 90) % 90)
        return "diamond" if 25 <= angle <= 65 else "square"
    if solidity < 0.93 and corners >= 5:
        return "heart"
    return ""


def find_logo(
    region: ObjectRegion,
    colour_names: Iterable[str],
    wanted_shape: str,
    min_fraction: float,
    max_fraction: float,
) -> LogoFinding | None:
    """Largest compact patch of the given colours enclosed by the object, or None."""
    indices = [colour_index(n) for n in colour_names]
    colour_mask = np.isin(region.labels, indices) & region.mask
    area_total = float(region.mask.sum())
    if area_total <= 0 or not colour_mask.any():
        return None
    n, labels, stats, _ = cv2.connectedComponentsWithStats(colour_mask.astype(np.uint8), connectivity=8)
    best: LogoFinding | None = None
    kernel = np.ones((3, 3), np.uint8)
    for i in range(1, n):
        area = float(stats[i, cv2.CC_STAT_AREA])
        fraction = area / area_total
        if not min_fraction <= fraction <= max_fraction or area < 4:
            continue
        x, y, w, h = (int(v) for v in stats[i, :4])
        if max(w, h) > 4 * max(min(w, h), 1):
            continue  # a band or an edge, not a mark
        y0, y1 = max(0, y - 2), min(labels.shape[0], y + h + 2)
        x0, x1 = max(0, x - 2), min(labels.shape[1], x + w + 2)
        blob = labels[y0:y1, x0:x1] == i
        ring = cv2.dilate(blob.astype(np.uint8), kernel, iterations=1).astype(bool) & ~blob
        if ring.sum() == 0 or region.mask[y0:y1, x0:x1][ring].mean() < 0.7:
            continue  # touches the background: an edge of the object, not something printed on it
        shape = classify_shape(blob) if area >= MIN_SHAPE_PIXELS else ""
        finding = LogoFinding(shape, area / max(region.scale**2, 1e-9), fraction)
        matches = wanted_shape and shape == wanted_shape
        if (
            best is None
            or matches
            or (not (wanted_shape and best.shape == wanted_shape) and area > best.pixels * region.scale**2)
        ):
            best = finding
            if matches:
                break
    return best
