"""Next-best-view strategies in the virtual 6-sector frame (spec §5.10), selectable by name.

Every strategy answers the same question: given where the agent is, which sectors it has used up (visited,
which includes failed targets) and which moves were refused, which relative direction should it ask for next?
None of them knows which sectors are navigable beyond past failures, exactly like the reference. All
randomness comes from seeds derived from (base seed, episode key, step), so a run is repeatable across
processes.

With camera height levels (an episode whose ``levels`` hold more than one), every strategy chooses among the
views one move away, (sector, level) pairs (:mod:`.view_sphere`): planar moves at the current level and
``up`` / ``down`` at the current sector. A one-level episode takes the ring code below unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from aiv_dataset.levels import LEVEL_DIRECTIONS
from aiv_dataset.vocabulary import SECTOR_COUNT, relative_direction, target_sector

from .nbv_prompt import (
    AttributeStatus,
    allowed_directions_text,
    allowed_view_directions_text,
    attribute_status_text,
    default_template_path,
    description_status_text,
    direction_guide_text,
    fill_prompt_slots,
    height_note_text,
    list_text,
    load_prompt_template,
    offered_directions,
    offered_view_directions,
    parse_direction_response,
    resolve_direction,
    view_visibility_warning_text,
    visibility_warning_text,
    visited_direction_names,
    visited_view_names,
)
from .nbv_types import DEFAULT_BASE_SEED as DEFAULT_BASE_SEED
from .nbv_types import QUERY_MODES as QUERY_MODES
from .nbv_types import NbvChoice as NbvChoice
from .nbv_types import NbvRequest as NbvRequest
from .nbv_types import NbvStrategy as NbvStrategy
from .sector_geometry import capture_azimuths_of, sector_azimuths, shortest_arc
from .seeding import seeded_rng
from .types import LanguageModel
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


class LlmNbv:
    """Ask a vision-language model, shown the full scene image, which allowed direction to take next.

    Prompt templates are read from files (defaults under ``aiv_verifier/prompts``). If the answer names no
    allowed direction, or the model fails, a seeded uniform choice among the offered directions is used
    instead.
    """

    name: ClassVar[str] = "llm"

    def __init__(
        self,
        model: LanguageModel,
        attribute_template_path: str | Path | None = None,
        direct_template_path: str | Path | None = None,
        base_seed: int = DEFAULT_BASE_SEED,
    ) -> None:
        self.model = model
        self.base_seed = base_seed
        self.templates = {
            "attribute": load_prompt_template(attribute_template_path or default_template_path("attribute")),
            "direct": load_prompt_template(direct_template_path or default_template_path("direct")),
        }

    def offered(self, request: NbvRequest) -> list[str]:
        """The directions the prompt lists and the parser accepts (``up`` / ``down`` only with levels)."""
        if request.multi_level:
            return offered_view_directions(request.current_view, request.levels, request.used_views)
        return offered_directions(request.current_sector, request.visited)

    def build_prompt(self, request: NbvRequest) -> str:
        descriptions = [*request.descriptions[:3], "", "", ""][:3]
        offered = self.offered(request)
        if request.query_mode == "attribute":
            status = attribute_status_text(request.attributes)
        else:
            status = description_status_text(request.attributes)
        slots = {
            "desc1": descriptions[0],
            "desc2": descriptions[1],
            "desc3": descriptions[2],
            "object_category": request.object_category,
            "verification_status": status,
            "visited_directions": list_text(
                visited_direction_names(request.current_sector, request.visited, request.geometry)
            ),
            "allowed_directions": allowed_directions_text(request.current_sector, request.visited),
            "visibility_warning": visibility_warning_text(
                request.current_sector, request.sector_visibility, request.geometry, request.failed_direction
            ),
            "direction_guide": direction_guide_text(offered),
            "height_note": height_note_text(request.current_level, request.levels),
        }
        if request.multi_level:
            slots["visited_directions"] = list_text(
                visited_view_names(
                    request.current_view, request.visited_views | {request.current_view}, request.geometry
                )
            )
            slots["allowed_directions"] = allowed_view_directions_text(offered)
            slots["visibility_warning"] = view_visibility_warning_text(
                request.current_view, request.view_visibility, request.geometry, request.failed_direction
            )
        return fill_prompt_slots(self.templates[request.query_mode], slots)

    def choose(self, request: NbvRequest) -> NbvChoice:
        prompt = self.build_prompt(request)
        images = [request.scene_image] if request.scene_image is not None else []
        error: str | None = None
        try:
            # A chat model that reports failures (aiv_models.chat.ChatModel) says why an answer is empty.
            checked = getattr(self.model, "generate_checked", None)
            if callable(checked):
                response, failure = checked(prompt, images)
                error = failure or None
            else:
                response = self.model.generate(prompt, images)
        except Exception as exc:  # a failed model call must not end the episode; treat it as an empty answer
            response, error = "", f"{type(exc).__name__}: {exc}"
        if not isinstance(response, str):
            response, error = "", f"model returned {type(response).__name__}, expected str"

        offered = self.offered(request)
        parsed = parse_direction_response(response, height_moves=request.multi_level)
        rng = seeded_rng(self.base_seed, request.episode_key, request.step, "llm-nbv")
        direction, fell_back = resolve_direction(parsed, offered, rng)
        target, target_level = _target_of(request, direction)
        if fell_back:
            reason = (
                f"llm: answer {parsed.raw_choice!r} is not an offered direction {offered}; "
                f"picked {direction} at random"
            )
        else:
            reason = f"llm: model chose {direction}"
        if error:
            reason += f" (model call failed: {error})"
        return NbvChoice(
            direction,
            target,
            reason,
            {
                "prompt": prompt,
                "response": response,
                "raw_choice": parsed.raw_choice,
                "canonical_choice": parsed.canonical,
                "parsed_json": parsed.parsed_json,
                "offered": offered,
                "fallback": fell_back,
                "error": error,
            },
            target_level,
        )


def _target_of(request: NbvRequest, direction: str) -> View:
    """The view a direction leads to from the request's current view (index arithmetic; up / down: one level)."""
    offset = LEVEL_DIRECTIONS.get(direction)
    if offset is not None:
        return request.current_sector, request.current_level + offset
    return target_sector(request.current_sector, direction), request.current_level


_NBV_REGISTRY: dict[str, Callable[..., NbvStrategy]] = {}


def register_nbv(name: str, factory: Callable[..., NbvStrategy]) -> None:
    """Make a strategy available to :func:`make_nbv` under ``name``; re-registering a name is an error."""
    if name in _NBV_REGISTRY:
        raise ValueError(f"NBV strategy {name!r} is already registered")
    _NBV_REGISTRY[name] = factory


def available_nbv_strategies() -> tuple[str, ...]:
    return tuple(sorted(_NBV_REGISTRY))


def make_nbv(name: str, **options: Any) -> NbvStrategy:
    """Build the strategy a config names, passing ``options`` (e.g. ``base_seed``, ``model``) to it."""
    try:
        factory = _NBV_REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown NBV strategy {name!r}; available: {list(available_nbv_strategies())}"
        ) from None
    return factory(**options)


#: Views chosen to resolve what is still uncertain (:mod:`.nbv_uncertainty`); needs evidential opinions and a
#: visibility model, which the agent factory passes.
UNCERTAINTY_NBV = "uncertainty"


def _uncertainty_nbv(**options: Any) -> NbvStrategy:
    from .nbv_uncertainty import UncertaintyNbv

    return UncertaintyNbv(**options)


register_nbv(RandomNbv.name, RandomNbv)
register_nbv(FarthestNbv.name, FarthestNbv)
register_nbv(LlmNbv.name, LlmNbv)
register_nbv(UNCERTAINTY_NBV, _uncertainty_nbv)

__all__ = [
    "DEFAULT_BASE_SEED",
    "UNCERTAINTY_NBV",
    "AttributeStatus",
    "FarthestNbv",
    "LanguageModel",
    "LlmNbv",
    "NbvChoice",
    "NbvRequest",
    "NbvStrategy",
    "RandomNbv",
    "available_nbv_strategies",
    "make_nbv",
    "register_nbv",
]
