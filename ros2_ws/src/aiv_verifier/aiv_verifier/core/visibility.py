"""How likely a claim is to be visible from a view, given the views that did not settle it.

The model is a table estimated from synthetic datasets' privileged ground truth (``aiv-eval visibility``),
never from one instance or episode: for a claim of some kind, placed on one side of the object or not (its
phrase's view hint: "on the back"), seen from a far or near view, the share of views that show it among those
at an azimuth 60, 120 or 180 degrees from a view that did not show it (and, without such a view, among all
views). Counts are smoothed with one seen and one unseen view (Laplace), and thin rows fall back to coarser
ones (view type pooled, then the hint), so every lookup has an answer.

With camera height levels the table has a second part, rows by level: for a claim of some kind and vertical
hint (its phrase puts it on top -- a lid, a print on top, what is inside -- or underneath -- a sole, a base --
or neither), seen from a view at some level, the share of views that show it, overall and by the azimuth
distance to a view that did not show it (``same``: the same sector at another level). A view at another level
than the eye level, or any view of an episode with levels, is looked up there first; rows too thin defer to
coarser ones (view type, distance, kind, vertical hint pooled in turn) and, without any, to the eye-level
answer above, which is also the only answer a one-level episode ever gets. The rows are counted by
``aiv-eval visibility`` from training seeds' ground truth like the eye-level ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

#: Angular distance bins (degrees) to the nearest view that did not settle the claim; ``any`` = no such view.
DISTANCE_BINS: tuple[str, ...] = ("any", "60", "120", "180")
VIEW_TYPES: tuple[str, ...] = ("far", "near", "any")
#: Rows with fewer views than this defer to the coarser row.
MIN_VIEWS = 30
#: Distance bins of the rows by level: ``same`` = the same sector at another height level.
LEVEL_DISTANCE_BINS: tuple[str, ...] = ("any", "same", "60", "120", "180")
#: Vertical hints: where on the object a phrase puts its claim, for the height a view is taken from.
TOP, BOTTOM, NO_VERTICAL = "top", "bottom", "none"
VERTICAL_HINTS: tuple[str, ...] = (TOP, BOTTOM, NO_VERTICAL)

_TOP_WORDS = re.compile(
    r"\b(top|tops|lid|lids|cap|upper|uppermost|above|on top|inside|interior|contents?|open|opening|rim|"
    r"overhead|roof)\b",
    re.IGNORECASE,
)
_BOTTOM_WORDS = re.compile(
    r"\b(bottom|bottoms|underside|undersides|underneath|beneath|under|sole|soles|base|feet|foot|outsole|"
    r"lower)\b",
    re.IGNORECASE,
)


def vertical_hint(phrase: object) -> str:
    """``top`` when a phrase puts its claim on top of or inside the object (seen best from above), ``bottom``
    when underneath (seen best from below), ``none`` otherwise or when it names both."""
    if not isinstance(phrase, str):
        return NO_VERTICAL
    top, bottom = bool(_TOP_WORDS.search(phrase)), bool(_BOTTOM_WORDS.search(phrase))
    if top == bottom:
        return NO_VERTICAL
    return TOP if top else BOTTOM


def claim_vertical(name: str, phrase: object) -> str:
    """The vertical hint of a query item: its name's words ("lid_colour" -> "lid colour") and its phrase read
    together, since either may say where the claim sits (the verifier and the visibility fit both call this)."""
    words = name.replace("_", " ").replace("-", " ")
    return vertical_hint(f"{words} {phrase}" if isinstance(phrase, str) else words)


def level_distance_bin(degrees: float | None, same_sector: bool = False) -> str:
    """The distance bin of a row by level: ``same`` for the same sector (another level), else as
    :func:`distance_bin`."""
    return "same" if same_sector else distance_bin(degrees)


def distance_bin(degrees: float | None) -> str:
    """The bin of an angular distance in degrees (None: no reference view)."""
    if degrees is None:
        return "any"
    folded = abs(degrees) % 360.0
    folded = min(folded, 360.0 - folded)
    if folded < 90.0:
        return "60"
    if folded < 150.0:
        return "120"
    return "180"


@dataclass(frozen=True)
class VisibilityCount:
    visible: int
    views: int

    def __post_init__(self) -> None:
        if not 0 <= self.visible <= self.views:
            raise ValueError(f"visible views must lie in 0..views, got {self.visible} of {self.views}")

    @property
    def rate(self) -> float:
        return (self.visible + 1) / (self.views + 2)

    def __add__(self, other: VisibilityCount) -> VisibilityCount:
        return VisibilityCount(self.visible + other.visible, self.views + other.views)


#: (claim kind, view hint, view type, distance bin)
VisibilityKey = tuple[str, str, str, str]
#: (claim kind, vertical hint, level, view type, distance bin) -- the rows by height level
LevelKey = tuple[str, str, int, str, str]


@dataclass(frozen=True)
class VisibilityModel:
    """Lookup of P(visible) with fallbacks; ``rows`` hold counts for concrete view types only, ``level_rows``
    the counts by height level (empty for a table fitted on one-level data)."""

    rows: Mapping[VisibilityKey, VisibilityCount]
    level_rows: Mapping[LevelKey, VisibilityCount] = field(default_factory=dict)
    _pooled: dict[VisibilityKey, VisibilityCount] = field(default_factory=dict, repr=False, compare=False)
    _level_pooled: dict[LevelKey, VisibilityCount] = field(default_factory=dict, repr=False, compare=False)

    @property
    def levels(self) -> tuple[int, ...]:
        """Levels the rows by level count views at."""
        return tuple(sorted({key[2] for key in self.level_rows}))

    def level_probability(
        self,
        kind: str,
        hint: str,
        vertical: str,
        level: int,
        view_type: str,
        distance: str,
        eye_distance: str,
    ) -> float:
        """P(visible) of a claim from a view at ``level`` (``distance`` a :data:`LEVEL_DISTANCE_BINS` bin).

        The rows by level answer first (finest row with at least :data:`MIN_VIEWS` views); without one, the
        eye-level answer for ``eye_distance`` (the :data:`DISTANCE_BINS` bin) stands."""
        for candidate in (
            (kind, vertical, level, view_type, distance),
            (kind, vertical, level, "any", distance),
            (kind, vertical, level, "any", "any"),
            ("*", vertical, level, "any", distance),
            ("*", vertical, level, "any", "any"),
        ):
            count = self._level_count(*candidate)
            if count.views >= MIN_VIEWS:
                return count.rate
        return self.probability(kind, hint, view_type, eye_distance)

    def _level_count(
        self, kind: str, vertical: str, level: int, view_type: str, distance: str
    ) -> VisibilityCount:
        key = (kind, vertical, level, view_type, distance)
        if key not in self._level_pooled:
            total = VisibilityCount(0, 0)
            for (row_kind, row_vertical, row_level, row_type, row_distance), count in self.level_rows.items():
                if (
                    kind in ("*", row_kind)
                    and vertical in ("*", row_vertical)
                    and level == row_level
                    and view_type in ("any", row_type)
                    and distance == row_distance
                ):
                    total = total + count
            self._level_pooled[key] = total
        return self._level_pooled[key]

    def probability(self, kind: str, hint: str, view_type: str, distance: str) -> float:
        """P(a claim of ``kind`` with ``hint`` is visible from a ``view_type`` view ``distance`` away from the
        nearest view that did not show it)."""
        for candidate in self._candidates(kind, hint, view_type, distance):
            count = self._count(*candidate)
            if count.views >= MIN_VIEWS:
                return count.rate
        return self._count(kind, "*", "any", "any").rate

    def _candidates(self, kind: str, hint: str, view_type: str, distance: str) -> list[VisibilityKey]:
        return [
            (kind, hint, view_type, distance),
            (kind, hint, "any", distance),
            (kind, hint, "any", "any"),
            (kind, "*", "any", distance),
            ("*", hint, "any", distance),
            ("*", "*", "any", distance),
        ]

    def _count(self, kind: str, hint: str, view_type: str, distance: str) -> VisibilityCount:
        key = (kind, hint, view_type, distance)
        if key not in self._pooled:
            self._pooled[key] = self._pool(kind, hint, view_type, distance)
        return self._pooled[key]

    def _pool(self, kind: str, hint: str, view_type: str, distance: str) -> VisibilityCount:
        total = VisibilityCount(0, 0)
        for (row_kind, row_hint, row_type, row_distance), count in self.rows.items():
            if (
                kind in ("*", row_kind)
                and hint in ("*", row_hint)
                and view_type in ("any", row_type)
                and distance == row_distance
            ):
                total = total + count
        return total


__all__ = [
    "BOTTOM",
    "DISTANCE_BINS",
    "LEVEL_DISTANCE_BINS",
    "MIN_VIEWS",
    "NO_VERTICAL",
    "TOP",
    "VERTICAL_HINTS",
    "VIEW_TYPES",
    "LevelKey",
    "VisibilityCount",
    "VisibilityKey",
    "VisibilityModel",
    "claim_vertical",
    "distance_bin",
    "level_distance_bin",
    "vertical_hint",
]
