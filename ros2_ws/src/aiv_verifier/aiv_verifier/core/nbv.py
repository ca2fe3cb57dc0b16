"""Next-best-view strategies in the virtual 6-sector frame (spec §5.10), selectable by name.

Every strategy answers the same question: given where the agent is, which sectors it has used up (visited,
which includes failed targets) and which moves were refused, which relative direction should it ask for next?
None of them knows which sectors are navigable beyond past failures, exactly like the reference. All
randomness comes from seeds derived from (base seed, episode key, step), so a run is repeatable across
processes.

With camera height levels (an episode whose ``levels`` hold more than one), every strategy chooses among the
views one move away, (sector, level) pairs (:mod:`.view_sphere`): planar moves at the current level and
``up`` / ``down`` at the current sector. A one-level episode takes the ring code unchanged.

The random and farthest-point strategies live in :mod:`.nbv_geometric` (the uncertainty strategy falls back on
the latter), re-exported here; this module holds the language-model strategy and the registry by name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from aiv_dataset.levels import LEVEL_DIRECTIONS
from aiv_dataset.vocabulary import target_sector

from .nbv_geometric import FarthestNbv as FarthestNbv
from .nbv_geometric import RandomNbv as RandomNbv
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
from .seeding import seeded_rng
from .types import LanguageModel
from .view_sphere import View


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
