"""Procedural, part-based instances of the 18 PInVerify categories (see :mod:`.model`)."""

from __future__ import annotations

from typing import Protocol

from .bags import BACKPACK, BAG, WALLET
from .electronics import CAMERA, CELLPHONE, HEADPHONES, LAPTOP
from .household import BALL, BOOK, KEYS, MUG
from .model import AttrDef, CategorySpec, ObjectModel, Recipe
from .toys import TEDDY_BEAR, TOY
from .wearables import EYEGLASSES, HAT, SHOES, VISOR, WATCH

#: Category name -> spec, in the benchmark's (alphabetical) order.
CATALOGUE: dict[str, CategorySpec] = {
    spec.name: spec
    for spec in (
        BACKPACK,
        BAG,
        BALL,
        BOOK,
        CAMERA,
        CELLPHONE,
        EYEGLASSES,
        HAT,
        HEADPHONES,
        KEYS,
        LAPTOP,
        MUG,
        SHOES,
        TEDDY_BEAR,
        TOY,
        VISOR,
        WALLET,
        WATCH,
    )
}


def _elevated() -> dict[str, CategorySpec]:
    from .elevated import ELEVATED_SPECS

    return {**CATALOGUE, **{spec.name: spec for spec in ELEVATED_SPECS}}


#: Catalogue name -> categories. "standard" is every preset's but ``elevated``'s (see :mod:`.elevated`).
CATALOGUES: dict[str, dict[str, CategorySpec]] = {"standard": CATALOGUE, "elevated": _elevated()}


class _HasRecipe(Protocol):
    @property
    def recipe(self) -> Recipe: ...


def catalogue_of(item: Recipe | _HasRecipe) -> dict[str, CategorySpec]:
    """The catalogue a recipe (or an instance's recipe) was drawn from."""
    recipe = item if isinstance(item, Recipe) else item.recipe
    try:
        return CATALOGUES[recipe.catalogue]
    except KeyError:
        raise KeyError(f"unknown catalogue {recipe.catalogue!r}; known: {', '.join(CATALOGUES)}") from None


def build_instance(recipe: Recipe) -> ObjectModel:
    """Primitives of an instance in its own frame (bottom at y = 0, front toward +z)."""
    return catalogue_of(recipe)[recipe.category].build(recipe)


__all__ = [
    "CATALOGUE",
    "CATALOGUES",
    "AttrDef",
    "CategorySpec",
    "ObjectModel",
    "Recipe",
    "build_instance",
    "catalogue_of",
]
