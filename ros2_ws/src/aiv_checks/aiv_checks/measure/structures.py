"""Pattern cues from the shapes that one colour forms inside the object region.

A pattern is a repeated mark of one colour on another. Given the pixels of the pattern's colour (the
claimed one, or each of the object's main colours when looking for "any pattern"), the connected pieces
they form say which pattern it is:

* **dots**: several small, compact, roughly round pieces that do not touch each other;
* **stripes**: several elongated pieces (length ≥ 3× width, measured by second moments, so the curved bands
  on a ball still count), or one long band that leaves most of the object to other colours;
* **checks**: many compact, square-ish pieces that touch only at corners; so they separate under
  4-connectivity but merge under 8-connectivity; that corner contact is what distinguishes a checkerboard
  from dots;
* a **grid** (one sprawling piece of low fill) is what plaid lines form.

Because shading splits a checkerboard's squares into odd pieces (dark side faces merge with dark squares),
checks have a second, local cue: **X-junctions**, points whose four diagonal neighbours at a small offset
read A/B/B/A: the corner where four squares meet. Dots and stripes seldom produce them.

Moment-based shape statistics are computed for all pieces at once with ``bincount`` sums, so an analysis
costs a few milliseconds. Floral and camouflage prints have no crisp geometry; they are accepted as
"irregular blobs" only (see :data:`COMPATIBLE_KINDS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import cv2
import numpy as np
from aiv_common.setting_fields import setting

#: Which detected structures support a claimed pattern word (lexicon.PATTERN_WORDS keys).
COMPATIBLE_KINDS: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        "dots": frozenset({"dots"}),
        "stripes": frozenset({"stripes"}),
        "checks": frozenset({"checks"}),
        "plaid": frozenset({"checks", "grid", "stripes"}),
        "floral": frozenset({"dots", "blobs"}),
        "camouflage": frozenset({"blobs"}),
    }
)


@dataclass(frozen=True)
class StructureSettings:
    """Geometry of the marks that make a pattern (areas as shares of the object region)."""

    min_piece_fraction: float = setting(
        0.0015, "pieces smaller than this share of the object are noise", minimum=0.0, maximum=1.0
    )
    max_dot_fraction: float = setting(
        0.05,
        "a dot covers at most this share of the object (a bigger compact piece is a panel)",
        minimum=0.0,
        maximum=1.0,
    )
    dot_elongation: float = setting(2.2, "a dot is at most this many times longer than wide", minimum=0.0)
    dot_fill: float = setting(
        0.45, "a dot fills at least this share of its bounding box", minimum=0.0, maximum=1.0
    )
    stripe_elongation: float = setting(
        3.0, "a stripe is at least this many times longer than wide", minimum=0.0
    )
    long_stripe_span: float = setting(
        0.6,
        "a band spanning this share of the object's extent counts as a stripe whatever its width",
        minimum=0.0,
        maximum=1.0,
    )
    long_stripe_max_share: float = setting(
        0.5,
        "one long band alone is a stripe only while its colour covers at most this share of the object (a "
        "band over most of it is the body colour); 1 = no limit",
        minimum=0.0,
        maximum=1.0,
    )
    min_dots: int = setting(4, "how many dots make a dotted pattern (one round mark is a logo)", minimum=0)
    min_stripes: int = setting(2, "how many stripes make a striped pattern", minimum=0)
    min_checks: int = setting(5, "how many squares make a checked pattern", minimum=0)
    corner_merge: float = setting(
        0.7,
        "checks touch at corners: pieces joined diagonally must number at most this share of the pieces "
        "counted edge to edge",
        minimum=0.0,
        maximum=1.0,
    )
    max_check_fraction: float = setting(
        0.08, "a check square covers at most this share of the object", minimum=0.0, maximum=1.0
    )
    junction_offset: int = setting(
        2, "distance (pixels) of the diagonal probes that find the corners where four squares meet", minimum=0
    )
    min_junctions: int = setting(4, "how many separate four-square corners make a checkerboard", minimum=0)


@dataclass(frozen=True)
class PatternFinding:
    """Which structures one colour's pixels form inside the region; ``scores`` are in [0, 1]."""

    colour_share: float
    pieces: int
    scores: dict[str, float]

    @property
    def best(self) -> tuple[str, float]:
        if not self.scores:
            return "", 0.0
        kind = max(self.scores, key=lambda k: self.scores[k])
        return kind, self.scores[kind]

    def describe(self) -> str:
        kind, score = self.best
        return f"{kind} ({score:.2f})" if score > 0 else "no structure"


def _piece_shapes(labels: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(area, elongation, fill, span) for pieces 1..n-1 of a label image, via moment sums."""
    ys, xs = np.nonzero(labels)
    ids = labels[ys, xs]
    area = np.bincount(ids, minlength=n)[1:].astype(np.float64)
    safe = np.maximum(area, 1.0)
    mx = np.bincount(ids, xs, n)[1:] / safe
    my = np.bincount(ids, ys, n)[1:] / safe
    cxx = np.bincount(ids, xs.astype(np.float64) ** 2, n)[1:] / safe - mx**2 + 1.0 / 12.0
    cyy = np.bincount(ids, ys.astype(np.float64) ** 2, n)[1:] / safe - my**2 + 1.0 / 12.0
    cxy = np.bincount(ids, xs.astype(np.float64) * ys, n)[1:] / safe - mx * my
    tr, det = cxx + cyy, cxx * cyy - cxy**2
    root = np.sqrt(np.maximum(tr**2 / 4.0 - det, 0.0))
    lam1, lam2 = tr / 2.0 + root, np.maximum(tr / 2.0 - root, 1e-6)
    elongation = np.sqrt(lam1 / lam2)
    # Extent along the main axis (≈ length of the piece), from the largest variance of a uniform bar.
    span = np.sqrt(12.0 * lam1)
    x_min = np.full(n, 1e9)
    x_max = np.full(n, -1e9)
    y_min = np.full(n, 1e9)
    y_max = np.full(n, -1e9)
    np.minimum.at(x_min, ids, xs)
    np.maximum.at(x_max, ids, xs)
    np.minimum.at(y_min, ids, ys)
    np.maximum.at(y_max, ids, ys)
    box_area = (x_max[1:] - x_min[1:] + 1) * (y_max[1:] - y_min[1:] + 1)
    fill = area / np.maximum(box_area, 1.0)
    return area, elongation, fill, span


def find_structures(colour_mask: np.ndarray, region: np.ndarray, params: StructureSettings) -> PatternFinding:
    """Score dots / stripes / checks / grid / blobs for the pixels of one colour inside ``region``."""
    region_area = float(region.sum())
    mask = (colour_mask & region).astype(np.uint8)
    share = float(mask.sum()) / max(region_area, 1.0)
    scores = {"dots": 0.0, "stripes": 0.0, "checks": 0.0, "grid": 0.0, "blobs": 0.0}
    if region_area < 50 or share <= 0.0 or share > 0.9:
        return PatternFinding(share, 0, scores)
    n4, lab4 = cv2.connectedComponents(mask, connectivity=4)
    if n4 <= 1:
        return PatternFinding(share, 0, scores)
    area, elongation, fill, span = _piece_shapes(lab4, n4)
    min_area = max(3.0, params.min_piece_fraction * region_area)
    keep = area >= min_area
    if not keep.any():
        return PatternFinding(share, 0, scores)
    area, elongation, fill, span = area[keep], elongation[keep], fill[keep], span[keep]
    pieces = int(keep.sum())
    total = float(area.sum())
    extent = float(np.sqrt(region_area))

    dots = (elongation <= params.dot_elongation) & (fill >= params.dot_fill)
    dots &= area <= params.max_dot_fraction * region_area
    n_dots = int(dots.sum())
    # Dots stay apart under 8-connectivity; checks merge at corners.
    n8 = cv2.connectedComponents(mask, connectivity=8)[0] - 1
    merge_ratio = n8 / max(n4 - 1, 1)
    compact_share = float(area[dots].sum()) / total
    if n_dots >= params.min_dots and compact_share >= 0.5:
        dot_like = merge_ratio > params.corner_merge
        scores["dots"] = (
            min(1.0, n_dots / (2.0 * params.min_dots)) * compact_share * (1.0 if dot_like else 0.15)
        )
    squares = (elongation <= 2.0) & (fill >= 0.4) & (area <= params.max_check_fraction * region_area)
    n_squares = int(squares.sum())
    if n_squares >= params.min_checks and merge_ratio <= params.corner_merge:
        scores["checks"] = min(1.0, n_squares / (2.0 * params.min_checks)) * min(
            1.0, 2.0 * (1.0 - merge_ratio)
        )

    junctions = count_x_junctions(mask.astype(bool), region, params.junction_offset)
    if junctions >= params.min_junctions:
        scores["checks"] = max(scores["checks"], min(1.0, junctions / (2.0 * params.min_junctions)))

    if scores["checks"] >= 0.5:
        # Squares meeting at corners are compact pieces too; a checkerboard is not polka dots.
        scores["dots"] = min(scores["dots"], 0.5 * (1.0 - scores["checks"]))

    bands = (elongation >= params.stripe_elongation) | (span >= params.long_stripe_span * extent * 1.2)
    band_share = float(area[bands].sum()) / total
    n_bands = int(bands.sum())
    if n_bands >= params.min_stripes and band_share >= 0.5:
        scores["stripes"] = min(1.0, n_bands / 4.0) * band_share
    elif (
        n_bands == 1
        and band_share >= 0.7
        and float(span[bands].max()) >= params.long_stripe_span * extent
        and share <= params.long_stripe_max_share
    ):
        scores["stripes"] = 0.35
    if scores["stripes"] >= 0.5:
        # Diagonal stripes also make A/B/B/A probes; a clear band structure wins.
        scores["checks"] = min(scores["checks"], 0.5 * scores["stripes"])
    big = area >= 0.15 * region_area
    if big.any() and float(fill[big].min()) < 0.35 and share < 0.6:
        scores["grid"] = 0.5
    if pieces >= 4 and share >= 0.04:
        scores["blobs"] = min(1.0, pieces / 10.0) * 0.5
    return PatternFinding(share, pieces, scores)


def count_x_junctions(mask: np.ndarray, region: np.ndarray, offset: int) -> int:
    """Number of separate A/B/B/A corner points of ``mask`` inside ``region`` (diagonal probes at
    ``offset`` px, in both the axis-aligned and the 45°-rotated layout)."""
    d = max(1, int(offset))
    h, w = mask.shape
    if h <= 2 * d + 1 or w <= 2 * d + 1:
        return 0
    total = np.zeros((h - 2 * d, w - 2 * d), dtype=bool)

    def at(array: np.ndarray, dy: int, dx: int) -> np.ndarray:
        return array[d + dy : h - d + dy, d + dx : w - d + dx]

    for probes in (((-d, -d), (-d, d), (d, d), (d, -d)), ((-d, 0), (0, d), (d, 0), (0, -d))):
        a, b, c, e = (at(mask, dy, dx) for dy, dx in probes)
        inside = (
            at(region, *probes[0]) & at(region, *probes[1]) & at(region, *probes[2]) & at(region, *probes[3])
        )
        total |= inside & (a == c) & (b == e) & (a != b)
    if not total.any():
        return 0
    _, _, stats, _ = cv2.connectedComponentsWithStats(total.astype(np.uint8), connectivity=8)
    # A true corner is a compact spot; long runs come from diagonal edges.
    sizes = stats[1:, cv2.CC_STAT_AREA]
    spans = np.maximum(stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT])
    return int(np.sum((sizes >= 1) & (spans <= 3 * d + 2)))
