"""Teddy bears and toys (a toy car or a toy robot).

The teddy bear is built from head, body, ears, muzzle, arms and legs, with an optional scarf or bow; its
chest patch and foot pads face forward. The toy car carries its racing number on the right side only and
the robot its chest emblem on the front only.
"""

from __future__ import annotations

import math

from ..materials import Surface
from ..renderer import BOX, CYLINDER, ELLIPSOID, FACE_PX, FACE_PZ, FACE_SIDE, TUBE, rot_z
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

_BLACK = Surface(base=(0.04, 0.04, 0.05), finish="glossy")
_NUMBERS = ("7", "12", "23", "42", "5", "88", "31", "99")


def build_teddy(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    fur = b.surface("fur_color", finish=b.material())
    patch = b.decal("chest_patch", FACE_SIDE, (0.0, 0.01), 0.055)
    b.add(ELLIPSOID, (0, 0.115, 0), (0.095, 0.11, 0.08), fur, "body", decals=patch)
    b.add(ELLIPSOID, (0, 0.27, 0.01), (0.08, 0.074, 0.074), fur, "head")
    for x in (-0.06, 0.06):
        b.add(ELLIPSOID, (x, 0.335, 0.0), (0.028, 0.028, 0.014), fur, "head")
        b.add(ELLIPSOID, (x * 0.8, 0.3, 0.07), (0.0085, 0.0085, 0.006), _BLACK, "head")
        b.add(
            ELLIPSOID,
            (x * 1.5, 0.13, 0.03),
            (0.03, 0.068, 0.034),
            fur,
            "body",
            rotation=rot_z(math.copysign(0.45, x)),
        )
        b.add(ELLIPSOID, (x * 0.85, 0.036, 0.065), (0.04, 0.035, 0.07), fur, "body")
        b.add(
            ELLIPSOID,
            (x * 0.85, 0.038, 0.133),
            (0.027, 0.027, 0.006),
            b.surface("pad_color", finish="fabric"),
            "pads",
        )
    b.add(
        ELLIPSOID, (0, 0.252, 0.07), (0.036, 0.027, 0.026), b.surface("muzzle_color", finish="fur"), "muzzle"
    )
    b.add(ELLIPSOID, (0, 0.265, 0.095), (0.011, 0.008, 0.006), _BLACK, "muzzle")
    if recipe.subtype == "scarf":
        scarf = b.surface("accessory_color", pattern="accessory_pattern", finish="wool", scale=0.02)
        b.add(TUBE, (0, 0.205, 0.004), (0.072, 0.018, 0.066), scarf, "accessory")
        b.add(BOX, (0.03, 0.16, 0.07), (0.016, 0.04, 0.004), scarf, "accessory")
    elif recipe.subtype == "bow":
        bow = b.surface("accessory_color", pattern="accessory_pattern", finish="fabric", scale=0.015)
        for x in (-0.026, 0.026):
            b.add(ELLIPSOID, (x, 0.205, 0.072), (0.026, 0.016, 0.01), bow, "accessory")
        b.add(ELLIPSOID, (0, 0.205, 0.077), (0.009, 0.009, 0.008), bow, "accessory")
    return b.build()


TEDDY_BEAR = CategorySpec(
    name="teddy bear",
    attributes=(
        AttrDef("fur_color", "color", ("body", "head"), COLOUR_VALUES, "{v} fur"),
        AttrDef("muzzle_color", "color", ("muzzle",), COLOUR_VALUES, "{a} {v} snout"),
        AttrDef("pad_color", "color", ("pads",), COLOUR_VALUES, "{v} foot pads", view_dependent=True),
        AttrDef("accessory_color", "color", ("accessory",), COLOUR_VALUES, "{a} {v} {sub}"),
        AttrDef(
            "accessory_pattern",
            "pattern",
            ("accessory",),
            pattern_values(),
            "{v} on the {sub}",
            base="accessory_color",
            optional=True,
        ),
        AttrDef(
            "chest_patch",
            "logo_text",
            ("decal:chest_patch",),
            decal_values(texts=()),
            "{v} on its chest",
            base="fur_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("body",), ("plush", "wool"), "{v}"),
    ),
    build=build_teddy,
    nouns={"default": ("teddy bear", "stuffed bear", "teddy")},
    vague_nouns={"default": ("teddy", "stuffed animal", "plush toy", "bear")},
    subtypes=("scarf", "bow", "plain"),
    subtype_drops={"plain": ("accessory_color", "accessory_pattern")},
    scale_range=(1.2, 1.5),
    supports=("floor", "table", "shelf", "seat"),
)


def build_toy(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    body = b.surface("body_color", pattern="body_pattern", finish=finish, scale=0.02)
    if recipe.subtype == "car":
        number = b.decal("side_number", FACE_PX, (0.0, 0.0), 0.022, max_width=0.06)
        b.add(BOX, (0, 0.032, 0), (0.042, 0.018, 0.088), body, "body", decals=number)
        b.add(
            BOX, (0, 0.062, -0.012), (0.035, 0.013, 0.042), b.surface("cabin_color", finish="glossy"), "cabin"
        )
        wheels = b.surface("wheel_color", finish="rubber")
        for x in (-0.043, 0.043):
            for z in (-0.055, 0.055):
                b.add(
                    CYLINDER,
                    (x, 0.017, z),
                    (0.017, 0.007, 0.017),
                    wheels,
                    "wheels",
                    rotation=rot_z(math.pi / 2),
                )
    else:
        emblem = b.decal("chest_logo", FACE_PZ, (0.0, 0.0), 0.035)
        b.add(BOX, (0, 0.105, 0), (0.042, 0.045, 0.03), body, "body", decals=emblem)
        head = b.surface("head_color", finish=finish)
        b.add(BOX, (0, 0.178, 0), (0.032, 0.026, 0.028), head, "head")
        b.add(BOX, (0, 0.182, 0.029), (0.024, 0.007, 0.002), b.surface("eye_color", finish="glossy"), "eyes")
        b.add(CYLINDER, (0, 0.215, 0), (0.003, 0.012, 0.003), head, "head")
        for x in (-0.02, 0.02):
            b.add(BOX, (x, 0.03, 0), (0.014, 0.03, 0.018), head, "head")
            b.add(BOX, (x * 2.6, 0.11, 0), (0.01, 0.038, 0.012), body, "body")
    return b.build()


TOY = CategorySpec(
    name="toy",
    attributes=(
        AttrDef("body_color", "color", ("body",), COLOUR_VALUES, "{a} {v} body"),
        AttrDef(
            "body_pattern",
            "pattern",
            ("body",),
            pattern_values(("stripes", "checks", "dots")),
            "{v}",
            base="body_color",
            optional=True,
        ),
        AttrDef("cabin_color", "color", ("cabin",), COLOUR_VALUES, "{a} {v} roof"),
        AttrDef("wheel_color", "color", ("wheels",), COLOUR_VALUES, "{v} wheels"),
        AttrDef(
            "side_number",
            "logo_text",
            ("decal:side_number",),
            decal_values(texts=_NUMBERS, logos=()),
            "{v} on its right side",
            base="body_color",
            view_dependent=True,
        ),
        AttrDef("head_color", "color", ("head",), COLOUR_VALUES, "{a} {v} head"),
        AttrDef("eye_color", "color", ("eyes",), COLOUR_VALUES, "{v} eyes", view_dependent=True),
        AttrDef(
            "chest_logo",
            "logo_text",
            ("decal:chest_logo",),
            decal_values(texts=()),
            "{v} on its chest",
            base="body_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("body",), ("plastic", "wooden", "metal"), "{v}"),
    ),
    build=build_toy,
    nouns={
        "car": ("toy car", "toy race car", "model car"),
        "robot": ("toy robot", "robot toy", "robot figure"),
        "default": ("toy",),
    },
    vague_nouns={
        "car": ("toy", "car", "toy vehicle"),
        "robot": ("toy", "robot", "figure"),
        "default": ("toy",),
    },
    subtypes=("car", "robot"),
    subtype_drops={
        "car": ("head_color", "eye_color", "chest_logo"),
        "robot": ("cabin_color", "wheel_color", "side_number"),
    },
    scale_range=(1.0, 1.3),
    supports=("floor", "table", "shelf"),
)
