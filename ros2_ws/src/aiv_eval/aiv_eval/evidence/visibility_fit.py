"""Count where claims can be seen: the rows of the visibility model (:mod:`aiv_verifier.core.visibility`).

From surveyed pairs (whose ``visible`` flags come from the privileged ground truth through the exact oracle),
for every claim the target holds or lacks and every served view of its pair:

- the ``any`` row of (claim kind, view hint, view type) counts the view, and whether it shows the claim;
- for every other served view of the pair that does *not* show the claim, the row of the angular distance
  between the two sectors (60, 120 or 180 degrees) counts the view the same way: how often a claim missed from
  one side shows from a side that far away.

Only counts per kind, hint and view type are kept: no instance, episode or pair appears in the table.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiv_verifier.core.nbv_uncertainty import sector_distance_deg
from aiv_verifier.core.visibility import VisibilityCount, VisibilityKey, distance_bin

from .survey import SurveyPair


def visibility_rows(pairs: Iterable[SurveyPair]) -> dict[VisibilityKey, VisibilityCount]:
    counts: dict[VisibilityKey, list[int]] = {}

    def add(key: VisibilityKey, visible: bool) -> None:
        row = counts.setdefault(key, [0, 0])
        row[0] += visible
        row[1] += 1

    for pair in pairs:
        if pair.pair_type == "neg_diff":
            continue  # another category: the query's claims have no place on it
        for name, kind, hint in pair.claims:
            shown = {
                view.sector: (view.view_type, answer.visible)
                for view in pair.views
                for answer in view.answers
                if answer.name == name and not answer.about_object
            }
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


__all__ = ["visibility_rows"]
