"""The geometric next-best-view strategies, random and farthest-point, and the fallbacks every strategy shares.

They sit apart from :mod:`.nbv` (the registry of strategies by name, and the language-model strategy) because
the uncertainty strategy (:mod:`.nbv_uncertainty`) falls back on the farthest-point one: both import this
module, and :mod:`.nbv` loads the uncertainty strategy only when a configuration names it, so no two of them
import each other. :mod:`.nbv` re-exports both classes under their old names.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from aiv_dataset.vocabulary import SECTOR_COUNT, relative_direction

from .nbv_types import DEFAULT_BASE_SEED, NbvChoice, NbvRequest
from .sector_geometry import capture_azimuths_of, sector_azimuths, shortest_arc
from .seeding import seeded_rng
from .view_sphere import (
    View,
    angle_between,
    level_elevations,
    move_to,
    neighbour_views,
    seen_directions,
    view_direction,
)


def _unvisited(request: NbvRequest) -> list[int]:
    return [k for k in range(SECTOR_COUNT) if k not in request.visited and k not in request.failed]


def _view_choice(request: NbvRequest, target: View, reason: str, debug: dict[str, Any]) -> NbvChoice:
    return NbvChoice(move_to(request.current_view, target), target[0], reason, debug, target[1])


def _views_text(views: list[View]) -> str:
    return "[" + ", ".join(f"s{sector}/L{level}" for sector, level in views) + "]"


def _seeded_view(views: list[View], base_seed: int, request: NbvRequest, *salt: str) -> View:
    """One of ``views`` uniformly, seeded by the episode, the number of views used so far and ``salt``."""
    rng = seeded_rng(base_seed, request.episode_key, len(request.used_views), *salt)
    return views[rng.randrange(len(views))]


def _random_neighbour(request: NbvRequest, base_seed: int, why: str) -> NbvChoice:
    """The last resort with levels: any view one move away, used up or not."""
    options = neighbour_views(request.current_view, request.levels)
    target = _seeded_view(options, base_seed, request, "non-current")
    return _view_choice(
        request,
        target,
        f"{why}; picked view {_views_text([target])} at random among the neighbouring ones",
        {"fallback": "random_non_current", "options": [list(view) for view in options]},
    )


def _random_non_current(request: NbvRequest, base_seed: int, why: str) -> NbvChoice:
    """Last resort shared by all strategies when nothing unvisited is left: any sector but the current one."""
    if request.multi_level:
        return _random_neighbour(request, base_seed, why)
    options = [k for k in range(SECTOR_COUNT) if k != request.current_sector]
    target = seeded_rng(base_seed, request.episode_key, len(request.visited), "non-current").choice(options)
    return NbvChoice(
        relative_direction(request.current_sector, target),
        target,
        f"{why}; picked sector {target} at random among the non-current ones",
        {"fallback": "random_non_current", "options": options},
    )


class RandomNbv:
    """Uniform choice among unvisited, non-failed sectors, seeded by episode and number of visited sectors."""

    name: ClassVar[str] = "random"

    def __init__(self, base_seed: int = DEFAULT_BASE_SEED) -> None:
        self.base_seed = base_seed

    def choose(self, request: NbvRequest) -> NbvChoice:
        if request.multi_level:
            return self._choose_view(request)
        candidates = _unvisited(request)
        if not candidates:
            return _random_non_current(request, self.base_seed, "random: every sector is visited or failed")
        target = seeded_rng(self.base_seed, request.episode_key, len(request.visited)).choice(candidates)
        direction = relative_direction(request.current_sector, target)
        return NbvChoice(
            direction,
            target,
            f"random: picked {direction} (sector {target}) uniformly among unvisited sectors {candidates}",
            {"candidates": candidates},
        )

    def _choose_view(self, request: NbvRequest) -> NbvChoice:
        """Uniform over the unused views one move away, seeded by episode and number of used views."""
        candidates = request.candidate_views()
        if not candidates:
            return _random_neighbour(request, self.base_seed, "random: every neighbouring view is used up")
        target = _seeded_view(candidates, self.base_seed, request)
        return _view_choice(
            request,
            target,
            f"random: picked {move_to(request.current_view, target)} (view {_views_text([target])}) uniformly "
            f"among unused views {_views_text(candidates)}",
            {"candidates": [list(view) for view in candidates]},
        )


class FarthestNbv:
    """Angular farthest-point sampling (paper Eq. 4 as the reference code computes it).

    A sector's azimuth is that of its first listed capture (synthetic θ_ref + k·60° if it has none); it is
    scored by the shortest arc to the nearest capture (far or near) of any visited sector. The best unvisited,
    non-failed sector wins; ties go to the lowest index.
    """

    name: ClassVar[str] = "farthest"

    def __init__(self, base_seed: int = DEFAULT_BASE_SEED) -> None:
        self.base_seed = base_seed

    def choose(self, request: NbvRequest) -> NbvChoice:
        if request.multi_level:
            return self._choose_view(request)
        candidates = _unvisited(request)
        if not candidates:
            return _random_non_current(request, self.base_seed, "farthest: every sector is visited or failed")
        geometry = request.geometry
        azimuths = sector_azimuths(geometry) if geometry is not None else None
        if geometry is None or azimuths is None:
            target = seeded_rng(self.base_seed, request.episode_key, len(request.visited)).choice(candidates)
            direction = relative_direction(request.current_sector, target)
            return NbvChoice(
                direction,
                target,
                f"farthest: no capture coordinates, picked {direction} (sector {target}) at random "
                f"among unvisited {candidates}",
                {"fallback": "random_unvisited", "candidates": candidates},
            )
        visited_azimuths = capture_azimuths_of(geometry, request.visited)
        scores: dict[int, float] = {}
        best_sector, best_score = candidates[0], -math.inf
        for sector in candidates:
            # Without any located visited capture all candidates tie at the maximum arc, so the lowest k wins.
            score = min(
                (shortest_arc(azimuths.by_sector[sector], seen) for seen in visited_azimuths), default=math.pi
            )
            scores[sector] = score
            if score > best_score:
                best_sector, best_score = sector, score
        direction = relative_direction(request.current_sector, best_sector)
        return NbvChoice(
            direction,
            best_sector,
            f"farthest: {direction} (sector {best_sector}) is {math.degrees(best_score):.1f} deg from the "
            "nearest visited view, the largest gap among unvisited sectors",
            {
                "scores_deg": {k: round(math.degrees(v), 3) for k, v in scores.items()},
                "synthetic_sectors": sorted(set(range(SECTOR_COUNT)) - azimuths.measured),
                "visited_capture_count": len(visited_azimuths),
            },
        )

    def _choose_view(self, request: NbvRequest) -> NbvChoice:
        """FPS on the view sphere: each unused view one move away is scored by the smallest angle between its
        viewing direction from the goal and those of every located capture of a visited view; the largest
        wins, ties going to the first in :func:`~.view_sphere.candidate_views` order."""
        candidates = request.candidate_views()
        if not candidates:
            return _random_neighbour(request, self.base_seed, "farthest: every neighbouring view is used up")
        geometry = request.geometry
        azimuths = sector_azimuths(geometry) if geometry is not None else None
        if geometry is None or azimuths is None:
            target = _seeded_view(candidates, self.base_seed, request)
            return _view_choice(
                request,
                target,
                f"farthest: no capture coordinates, picked {move_to(request.current_view, target)} at random "
                f"among unused views {_views_text(candidates)}",
                {"fallback": "random_unvisited", "candidates": [list(view) for view in candidates]},
            )
        elevations = level_elevations(geometry)
        seen = seen_directions(geometry, request.used_views)
        scores: dict[View, float] = {}
        best, best_score = candidates[0], -math.inf
        for view in candidates:
            direction = view_direction(geometry, azimuths, elevations, view)
            score = min((angle_between(direction, other) for other in seen), default=math.pi)
            scores[view] = score
            if score > best_score:
                best, best_score = view, score
        return _view_choice(
            request,
            best,
            f"farthest: {move_to(request.current_view, best)} (view {_views_text([best])}) is "
            f"{math.degrees(best_score):.1f} deg from the nearest visited view on the view sphere, the largest "
            "gap among unused views",
            {
                "scores_deg": {f"{k[0]}/{k[1]}": round(math.degrees(v), 3) for k, v in scores.items()},
                "visited_capture_count": len(seen),
            },
        )


__all__ = ["FarthestNbv", "RandomNbv"]
