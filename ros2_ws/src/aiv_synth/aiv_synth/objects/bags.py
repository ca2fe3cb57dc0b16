"""Backpacks, bags and wallets: soft goods whose telling details sit on one face (pocket, flap, strap).

Sizes are nominal metres (backpack 30 x 42 x 15 cm, handbag 34 x 26 x 12 cm, wallet 11 x 2.4 x 9 cm);
the recipe's scale factor varies them per instance.
"""

from __future__ import annotations

import math

from ..renderer import BOX, ELLIPSOID, FACE_PY, FACE_PZ, TUBE, rot_x
from .model import (
    COLOUR_VALUES,
    AttrDef,
    CategorySpec,
    ObjectBuilder,
    ObjectModel,
    Recipe,
    decal_values,
    pattern_values,
)

_HALF_UP = (0.0, 0.0, -1.0, 0.0)  # keeps the upper half of a tube turned by rot_x(90deg)


def build_backpack(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    body = b.surface("body_color", pattern="body_pattern", finish=finish, scale=0.05)
    b.add(BOX, (0, 0.2, 0), (0.15, 0.2, 0.075), body, "body")
    b.add(ELLIPSOID, (0, 0.4, 0), (0.15, 0.045, 0.075), body, "body")
    pocket = b.surface("pocket_color", finish=finish)
    decals = b.decal("front_logo", FACE_PZ, (0.0, 0.0), 0.08, max_width=0.19)
    b.add(BOX, (0, 0.14, 0.1), (0.11, 0.095, 0.025), pocket, "pocket", decals=decals)
    straps = b.surface("strap_color", finish="nylon")
    for x in (-0.08, 0.08):
        b.add(BOX, (x, 0.22, -0.088), (0.024, 0.17, 0.012), straps, "straps")
    b.add(
        TUBE, (0, 0.44, 0), (0.045, 0.01, 0.045), straps, "straps", rotation=rot_x(math.pi / 2), clip=_HALF_UP
    )
    return b.build()


BACKPACK = CategorySpec(
    name="backpack",
    attributes=(
        AttrDef("body_color", "color", ("body",), COLOUR_VALUES, "{a} {v} body"),
        AttrDef(
            "body_pattern", "pattern", ("body",), pattern_values(), "{v}", base="body_color", optional=True
        ),
        AttrDef(
            "pocket_color", "color", ("pocket",), COLOUR_VALUES, "{a} {v} front pocket", view_dependent=True
        ),
        AttrDef(
            "front_logo",
            "logo_text",
            ("decal:front_logo",),
            decal_values(),
            "{v} on the front pocket",
            base="pocket_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef(
            "strap_color", "color", ("straps",), COLOUR_VALUES, "{v} shoulder straps", view_dependent=True
        ),
        AttrDef("material", "material", ("body",), ("nylon", "canvas", "leather"), "{v}"),
    ),
    build=build_backpack,
    nouns={"default": ("backpack", "rucksack", "school backpack")},
    vague_nouns={"default": ("backpack", "bag", "rucksack", "school bag")},
    scale_range=(0.8, 1.0),
    supports=("floor", "table", "seat"),
)


def build_bag(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    body = b.surface("body_color", pattern="body_pattern", finish=finish, scale=0.04)
    b.add(BOX, (0, 0.13, 0), (0.17, 0.13, 0.06), body, "body")
    flap = b.surface("flap_color", finish=finish)
    decals = b.decal("front_logo", FACE_PZ, (0.0, -0.01), 0.06, max_width=0.2)
    b.add(BOX, (0, 0.195, 0.066), (0.172, 0.068, 0.006), flap, "flap", decals=decals)
    handles = b.surface("handle_color", finish=finish)
    for z in (-0.035, 0.035):
        b.add(
            TUBE,
            (0, 0.26, z),
            (0.09, 0.007, 0.1),
            handles,
            "handles",
            rotation=rot_x(math.pi / 2),
            clip=_HALF_UP,
        )
    return b.build()


BAG = CategorySpec(
    name="bag",
    attributes=(
        AttrDef("body_color", "color", ("body",), COLOUR_VALUES, "{a} {v} body"),
        AttrDef(
            "body_pattern", "pattern", ("body",), pattern_values(), "{v}", base="body_color", optional=True
        ),
        AttrDef("flap_color", "color", ("flap",), COLOUR_VALUES, "{a} {v} front flap", view_dependent=True),
        AttrDef(
            "front_logo",
            "logo_text",
            ("decal:front_logo",),
            decal_values(),
            "{v} on the flap",
            base="flap_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("handle_color", "color", ("handles",), COLOUR_VALUES, "{v} handles"),
        AttrDef("material", "material", ("body",), ("leather", "canvas", "suede", "nylon"), "{v}"),
    ),
    build=build_bag,
    nouns={"default": ("handbag", "bag", "purse", "tote bag")},
    vague_nouns={"default": ("bag", "purse", "handbag")},
    scale_range=(0.85, 1.15),
    supports=("floor", "table", "shelf", "seat"),
)


def build_wallet(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    body = b.surface("wallet_color", pattern="wallet_pattern", finish=finish, scale=0.02)
    decals = b.decal("top_logo", FACE_PY, (0.0, 0.0), 0.035, max_width=0.08)
    b.add(BOX, (0, 0.012, 0), (0.055, 0.012, 0.045), body, "body", decals=decals)
    strap = b.surface("strap_color", finish=finish)
    b.add(BOX, (0, 0.016, 0.047), (0.013, 0.009, 0.003), strap, "strap")
    if recipe.has("card_color"):
        b.add(
            BOX,
            (0.058, 0.017, -0.005),
            (0.012, 0.0012, 0.027),
            b.surface("card_color", finish="plastic"),
            "card",
        )
    return b.build()


WALLET = CategorySpec(
    name="wallet",
    attributes=(
        AttrDef("wallet_color", "color", ("body",), COLOUR_VALUES, "{a} {v} body"),
        AttrDef(
            "wallet_pattern",
            "pattern",
            ("body",),
            pattern_values(),
            "{v}",
            base="wallet_color",
            optional=True,
        ),
        AttrDef(
            "top_logo",
            "logo_text",
            ("decal:top_logo",),
            decal_values(),
            "{v} on the top",
            base="wallet_color",
            optional=True,
        ),
        AttrDef(
            "strap_color",
            "color",
            ("strap",),
            COLOUR_VALUES,
            "{a} {v} snap strap on the front",
            view_dependent=True,
        ),
        AttrDef(
            "card_color",
            "color",
            ("card",),
            COLOUR_VALUES,
            "{a} {v} card sticking out of the side",
            optional=True,
        ),
        AttrDef("material", "material", ("body",), ("leather", "suede", "canvas", "nylon"), "{v}"),
    ),
    build=build_wallet,
    nouns={"default": ("wallet", "billfold", "purse wallet")},
    vague_nouns={"default": ("wallet", "purse", "billfold")},
    scale_range=(0.9, 1.1),
    supports=("table", "shelf", "floor"),
)
