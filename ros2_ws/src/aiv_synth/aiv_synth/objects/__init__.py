"""Procedural, part-based instances of the 18 PInVerify categories (see :mod:`.model`)."""

from __future__ import annotations

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


def build_instance(recipe: Recipe) -> ObjectModel:
    """Primitives of an instance in its own frame (bottom at y = 0, front toward +z)."""
    return CATALOGUE[recipe.category].build(recipe)


__all__ = ["CATALOGUE", "AttrDef", "CategorySpec", "ObjectModel", "Recipe", "build_instance"]
