"""How likely a claim is to be visible from a view, given the views that did not settle it.

The model is a table estimated from synthetic datasets' privileged ground truth (``aiv-eval visibility``),
never from one instance or episode: for a claim of some kind, placed on one side of the object or not (its
phrase's view hint: "on the back"), seen from a far or near view, the share of views that show it among those
at an azimuth 60, 120 or 180 degrees from a view that did not show it (and, without such a view, among all
views). Counts are smoothed with one seen and one unseen view (Laplace), and thin rows fall back to coarser
ones (view type pooled, then the hint), so every lookup has an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: Angular distance bins (degrees) to the nearest view that did not settle the claim; ``any`` = no such view.
DISTANCE_BINS: tuple[str, ...] = ("any", "60", "120", "180")
VIEW_TYPES: tuple[str, ...] = ("far", "near", "any")
#: Rows with fewer views than this defer to the coarser row.
MIN_VIEWS = 30


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


@dataclass(frozen=True)
class VisibilityModel:
    """Lookup of P(visible) with fallbacks; ``rows`` hold counts for concrete view types only."""

    rows: Mapping[VisibilityKey, VisibilityCount]
    _pooled: dict[VisibilityKey, VisibilityCount] = field(default_factory=dict, repr=False, compare=False)

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
    "DISTANCE_BINS",
    "MIN_VIEWS",
    "VIEW_TYPES",
    "VisibilityCount",
    "VisibilityKey",
    "VisibilityModel",
    "distance_bin",
]
