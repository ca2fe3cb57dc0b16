"""Mugs, books, keys and balls.

A mug's print faces one way and its handle another; a book standing up shows its title only from the
front and its emblem only from the back; keys are the smallest category (a ring, a few keys and a fob,
about 12 cm across lying flat), so they are often below the mask threshold from the far ring.
"""

from __future__ import annotations

import math

from ..appearance import PHRASES, colour_rgb
from ..materials import Surface
from ..renderer import BOX, CYLINDER, ELLIPSOID, FACE_NZ, FACE_PY, FACE_PZ, FACE_SIDE, TUBE, rot_x, rot_y
from .model import (
    COLOUR_VALUES,
    METAL_VALUES,
    AttrDef,
    CategorySpec,
    ObjectBuilder,
    ObjectModel,
    Recipe,
    decal_values,
    pattern_values,
)


def build_mug(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    inside = b.colour("inside_color")
    body = b.surface("body_color", pattern="body_pattern", finish=finish, scale=0.02, inside=inside)
    decals = b.decal("print", FACE_SIDE, (0.0, 0.0), 0.022, max_width=0.085)
    b.add(TUBE, (0, 0.048, 0), (0.04, 0.048, 0.04), body, "body", decals=decals)
    b.add(CYLINDER, (0, 0.003, 0), (0.0399, 0.003, 0.0399), Surface(base=inside, finish=finish), "inside")
    handle = b.surface("handle_color", finish=finish)
    b.add(
        TUBE,
        (0.04, 0.05, 0),
        (0.028, 0.006, 0.03),
        handle,
        "handle",
        rotation=rot_x(math.pi / 2),
        clip=(1, 0, 0, 0),
    )
    return b.build()


MUG = CategorySpec(
    name="mug",
    attributes=(
        AttrDef("body_color", "color", ("body",), COLOUR_VALUES, "{a} {v} body"),
        AttrDef(
            "body_pattern", "pattern", ("body",), pattern_values(), "{v}", base="body_color", optional=True
        ),
        AttrDef("inside_color", "color", ("inside",), COLOUR_VALUES, "{a} {v} inside"),
        AttrDef("handle_color", "color", ("handle",), COLOUR_VALUES, "{a} {v} handle"),
        AttrDef(
            "print",
            "logo_text",
            ("decal:print",),
            decal_values(texts=PHRASES),
            "{v} printed on the side",
            base="body_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("body",), ("ceramic", "enamel", "metal"), "{v}"),
    ),
    build=build_mug,
    nouns={"default": ("mug", "coffee mug", "cup")},
    vague_nouns={"default": ("mug", "cup")},
    scale_range=(0.9, 1.15),
    supports=("table", "shelf"),
)


def build_book(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    pages = Surface(
        base=(0.95, 0.93, 0.86),
        pattern="stripes",
        secondary=(0.85, 0.83, 0.76),
        scale=0.003,
        angle=math.pi / 2,
    )
    b.add(BOX, (0.002, 0.115, 0), (0.078, 0.112, 0.014), pages, "pages")
    cover = b.surface("cover_color", pattern="cover_pattern", finish=finish, scale=0.03)
    title = b.decal("title", FACE_PZ, (0.0, 0.05), 0.022, max_width=0.13)
    b.add(BOX, (0, 0.115, 0.016), (0.081, 0.115, 0.002), cover, "cover", decals=title)
    emblem = b.decal("back_emblem", FACE_NZ, (0.0, 0.0), 0.06)
    back = Surface(base=cover.base, finish=finish)
    b.add(BOX, (0, 0.115, -0.016), (0.081, 0.115, 0.002), back, "cover", decals=emblem)
    b.add(BOX, (-0.079, 0.115, 0), (0.002, 0.115, 0.018), b.surface("spine_color", finish=finish), "spine")
    return b.build()


BOOK = CategorySpec(
    name="book",
    attributes=(
        AttrDef("cover_color", "color", ("cover",), COLOUR_VALUES, "{a} {v} cover"),
        AttrDef(
            "cover_pattern",
            "pattern",
            ("cover",),
            pattern_values(),
            "{v} on the front cover",
            base="cover_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("spine_color", "color", ("spine",), COLOUR_VALUES, "{a} {v} spine"),
        AttrDef(
            "title",
            "logo_text",
            ("decal:title",),
            decal_values(texts=PHRASES, logos=()),
            "{v} as the title on the front",
            base="cover_color",
            view_dependent=True,
        ),
        AttrDef(
            "back_emblem",
            "logo_text",
            ("decal:back_emblem",),
            decal_values(texts=()),
            "{v} on the back cover",
            base="cover_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("cover",), ("hardcover", "paper"), "{v}"),
    ),
    build=build_book,
    nouns={"default": ("book", "novel", "volume")},
    vague_nouns={"default": ("book", "novel", "notebook")},
    scale_range=(1.15, 1.45),
    supports=("table", "shelf", "floor"),
)

_COUNT_WORDS = {"2": "two", "3": "three", "4": "four"}


def build_keys(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    metal = Surface(base=colour_rgb(recipe.value("key_metal")), finish="metal")
    b.add(TUBE, (0, 0.0025, 0), (0.015, 0.0018, 0.015), metal, "blades")
    heads = b.surface("head_color", finish="rubber")
    count = int(recipe.value("key_count"))
    for i in range(count):
        angle = math.radians(-45.0 + 90.0 * i / max(1, count - 1))
        turn = rot_y(angle)
        b.add(CYLINDER, (0, 0.003, 0.031), (0.012, 0.003, 0.012), heads, "heads", frame=(turn, (0, 0, 0)))
        b.add(BOX, (0, 0.0018, 0.062), (0.0045, 0.0018, 0.022), metal, "blades", frame=(turn, (0, 0, 0)))
    fob = b.surface("fob_color", finish="plastic")
    decals = b.decal("fob_logo", FACE_PY, (0.0, 0.0), 0.022)
    shape = recipe.value("fob_shape")
    if shape == "rectangular":
        b.add(BOX, (0, 0.005, -0.04), (0.016, 0.005, 0.022), fob, "fob", decals=decals)
    elif shape == "round":
        b.add(CYLINDER, (0, 0.005, -0.036), (0.019, 0.005, 0.019), fob, "fob", decals=decals)
    else:  # ball
        b.add(ELLIPSOID, (0, 0.014, -0.034), (0.014, 0.014, 0.014), fob, "fob")
    return b.build()


KEYS = CategorySpec(
    name="keys",
    attributes=(
        AttrDef("key_count", "count", ("blades", "heads"), ("2", "3", "4"), "{v} keys"),
        AttrDef("key_metal", "color", ("blades",), METAL_VALUES, "{v} metal"),
        AttrDef("head_color", "color", ("heads",), COLOUR_VALUES, "{v} key heads"),
        AttrDef("fob_color", "color", ("fob",), COLOUR_VALUES, "{a} {v} keychain"),
        AttrDef("fob_shape", "shape", ("fob",), ("rectangular", "round", "ball"), "{a} {v} fob"),
        AttrDef(
            "fob_logo",
            "logo_text",
            ("decal:fob_logo",),
            decal_values(texts=()),
            "{v} on the fob",
            base="fob_color",
            optional=True,
        ),
    ),
    build=build_keys,
    nouns={"default": ("set of keys", "bunch of keys", "key ring with keys")},
    vague_nouns={"default": ("keys", "keychain", "key ring")},
    scale_range=(0.95, 1.1),
    supports=("table", "shelf", "floor"),
)


def count_word(value: str) -> str:
    return _COUNT_WORDS.get(value, value)


def build_ball(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    surface = b.surface("base_color", pattern="ball_pattern", finish=b.material(), scale=0.05)
    decals = b.decal("side_print", FACE_SIDE, (0.0, 0.0), 0.05, max_width=0.1)
    b.add(ELLIPSOID, (0, 0.11, 0), (0.11, 0.11, 0.11), surface, "ball", decals=decals)
    return b.build()


BALL = CategorySpec(
    name="ball",
    attributes=(
        AttrDef("base_color", "color", ("ball",), COLOUR_VALUES, "{a} {v} base colour"),
        AttrDef(
            "ball_pattern",
            "pattern",
            ("ball",),
            pattern_values(("stripes", "dots", "checks")),
            "{v}",
            base="base_color",
            optional=True,
        ),
        AttrDef(
            "side_print",
            "logo_text",
            ("decal:side_print",),
            decal_values(),
            "{v} printed on one side",
            base="base_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("ball",), ("rubber", "leather", "plastic"), "{v}"),
    ),
    build=build_ball,
    nouns={"default": ("ball", "football", "play ball")},
    vague_nouns={"default": ("ball", "sports ball")},
    scale_range=(0.9, 1.2),
    supports=("floor", "table", "shelf", "seat"),
)
