"""Count where claims can be seen: the rows of the visibility model (:mod:`aiv_verifier.core.visibility`).

From surveyed pairs (whose ``visible`` flags come from the privileged ground truth through the exact oracle),
for every claim the target holds or lacks and every served view of its pair:

- the ``any`` row of (claim kind, view hint, view type) counts the view, and whether it shows the claim;
- for every other served view of the pair that does *not* show the claim, the row of the angular distance
  between the two sectors (60, 120 or 180 degrees) counts the view the same way: how often a claim missed from
  one side shows from a side that far away.

These eye-level rows count eye-level views only, so a survey with height levels gives the same rows as a
one-level survey of the same pairs. The rows by level (:func:`visibility_level_rows`) count every view of a
pair surveyed with levels the same way, keyed by the claim's vertical hint (on top, underneath, neither) and
the view's level, with ``same`` for a view that missed the claim at the same sector from another height.

Only counts per kind, hint, level and view type are kept: no instance, episode or pair appears in the table.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiv_verifier.core.nbv_uncertainty import sector_distance_deg
from aiv_verifier.core.visibility import (
    NO_VERTICAL,
    LevelKey,
    VisibilityCount,
    VisibilityKey,
    distance_bin,
    level_distance_bin,
)

from .survey import SurveyPair

_Shown = dict[tuple[int, int], tuple[str, bool]]


def _shown(pair: SurveyPair, name: str) -> _Shown:
    """(sector, level) -> (view type, whether the view shows the claim) for every view that answered it."""
    return {
        (view.sector, view.level): (view.view_type, answer.visible)
        for view in pair.views
        for answer in view.answers
        if answer.name == name and not answer.about_object
    }


def visibility_rows(pairs: Iterable[SurveyPair]) -> dict[VisibilityKey, VisibilityCount]:
    """The eye-level rows (eye-level views and eye-level references only)."""
    counts: dict[VisibilityKey, list[int]] = {}

    def add(key: VisibilityKey, visible: bool) -> None:
        row = counts.setdefault(key, [0, 0])
        row[0] += visible
        row[1] += 1

    for pair in pairs:
        if pair.pair_type == "neg_diff":
            continue  # another category: the query's claims have no place on it
        for name, kind, hint in pair.claims:
            shown = {sector: seen for (sector, level), seen in _shown(pair, name).items() if level == 0}
            for sector, (view_type, visible) in shown.items():
                if view_type not in ("far", "near"):
                    continue
                add((kind, hint, view_type, "any"), visible)
                for other, (_, other_visible) in shown.items():
                    if other != sector and not other_visible:
                        add(
                            (kind, hint, view_type, distance_bin(sector_distance_deg(sector, other))), visible
                        )
    return {key: VisibilityCount(visible, views) for key, (visible, views) in counts.items()}


def visibility_level_rows(pairs: Iterable[SurveyPair]) -> dict[LevelKey, VisibilityCount]:
    """The rows by level, from the pairs surveyed with views off eye level (none: an empty table)."""
    counts: dict[LevelKey, list[int]] = {}

    def add(key: LevelKey, visible: bool) -> None:
        row = counts.setdefault(key, [0, 0])
        row[0] += visible
        row[1] += 1

    for pair in pairs:
        if pair.pair_type == "neg_diff" or not any(view.level != 0 for view in pair.views):
            continue
        verticals = pair.verticals or (NO_VERTICAL,) * len(pair.claims)
        for (name, kind, _), vertical in zip(pair.claims, verticals, strict=True):
            shown = _shown(pair, name)
            for (sector, level), (view_type, visible) in shown.items():
                if view_type not in ("far", "near"):
                    continue
                add((kind, vertical, level, view_type, "any"), visible)
                for (other, other_level), (_, other_visible) in shown.items():
                    if (other, other_level) != (sector, level) and not other_visible:
                        bin_ = level_distance_bin(sector_distance_deg(sector, other), other == sector)
                        add((kind, vertical, level, view_type, bin_), visible)
    return {key: VisibilityCount(visible, views) for key, (visible, views) in counts.items()}


__all__ = ["visibility_level_rows", "visibility_rows"]
