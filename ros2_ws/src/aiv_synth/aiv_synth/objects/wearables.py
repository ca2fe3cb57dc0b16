"""Hats, visors, eyeglasses, watches and shoes.

Several of these are small (eyeglasses 13 cm, a watch 4 cm across) and lie flat, which is what makes them
hard in the benchmark; details placed on one side (a logo on the outer side of the shoes, a plate on the
right arm of the glasses, an emblem on the front of a hat) can only be checked from that side.
"""

from __future__ import annotations

import math

from ..appearance import LENS_TINTS, colour_rgb
from ..decals import dial_bitmap
from ..materials import Decal, Surface
from ..renderer import BOX, CYLINDER, ELLIPSOID, FACE_PY, FACE_SIDE, TUBE, rot_x, rot_z
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

_UPPER = (0.0, 1.0, 0.0, 0.0)


def build_hat(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    crown = b.surface(
        "crown_color", pattern="crown_pattern", finish=finish, scale=0.03, inside=(0.2, 0.2, 0.2)
    )
    decals = b.decal("front_logo", FACE_SIDE, (0.0, 0.06), 0.045, max_width=0.11)
    b.add(ELLIPSOID, (0, 0.006, 0), (0.095, 0.11, 0.105), crown, "crown", clip=_UPPER, decals=decals)
    b.add(CYLINDER, (0, 0.004, 0), (0.17, 0.004, 0.18), b.surface("brim_color", finish=finish), "brim")
    b.add(TUBE, (0, 0.022, 0), (0.097, 0.012, 0.107), b.surface("band_color", finish="fabric"), "band")
    return b.build()


HAT = CategorySpec(
    name="hat",
    attributes=(
        AttrDef("crown_color", "color", ("crown",), COLOUR_VALUES, "{a} {v} crown"),
        AttrDef(
            "crown_pattern", "pattern", ("crown",), pattern_values(), "{v}", base="crown_color", optional=True
        ),
        AttrDef("brim_color", "color", ("brim",), COLOUR_VALUES, "{a} {v} brim"),
        AttrDef("band_color", "color", ("band",), COLOUR_VALUES, "{a} {v} band around it"),
        AttrDef(
            "front_logo",
            "logo_text",
            ("decal:front_logo",),
            decal_values(),
            "{v} on the front",
            base="crown_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("crown",), ("wool", "felt", "straw", "denim", "cotton"), "{v}"),
    ),
    build=build_hat,
    nouns={"default": ("hat", "brimmed hat", "sun hat")},
    vague_nouns={"default": ("hat", "cap")},
    scale_range=(1.05, 1.25),
    supports=("floor", "table", "shelf", "seat"),
)


def build_visor(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    decals = b.decal("front_logo", FACE_SIDE, (0.0, 0.0), 0.026, max_width=0.1)
    band = b.surface("band_color", finish=finish)
    b.add(TUBE, (0, 0.021, 0), (0.085, 0.02, 0.1), band, "band", decals=decals)
    brim = b.surface("brim_color", pattern="brim_pattern", finish=finish, scale=0.025)
    b.add(CYLINDER, (0, 0.004, 0.055), (0.1, 0.004, 0.1), brim, "brim", clip=(0.0, 0.0, 1.0, 0.0))
    return b.build()


VISOR = CategorySpec(
    name="visor",
    attributes=(
        AttrDef("band_color", "color", ("band",), COLOUR_VALUES, "{a} {v} headband"),
        AttrDef("brim_color", "color", ("brim",), COLOUR_VALUES, "{a} {v} brim"),
        AttrDef(
            "brim_pattern",
            "pattern",
            ("brim",),
            pattern_values(),
            "{v} on the brim",
            base="brim_color",
            optional=True,
        ),
        AttrDef(
            "front_logo",
            "logo_text",
            ("decal:front_logo",),
            decal_values(),
            "{v} on the front of the band",
            base="band_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("band",), ("nylon", "canvas", "cotton"), "{v}"),
    ),
    build=build_visor,
    nouns={"default": ("sun visor", "visor", "visor cap")},
    vague_nouns={"default": ("visor", "cap", "sun visor")},
    scale_range=(1.1, 1.3),
)


def build_eyeglasses(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    frame = b.surface("frame_color", finish="plastic")
    lens = Surface(base=LENS_TINTS[recipe.value("lens_tint")], finish="glass")
    stand = rot_x(math.pi / 2)  # tube/cylinder axis along z: rims face forward
    y0 = 0.022
    for x in (-0.034, 0.034):
        if recipe.value("frame_shape") == "round":
            b.add(TUBE, (x, y0, 0), (0.025, 0.003, 0.022), frame, "frame", rotation=stand)
            b.add(CYLINDER, (x, y0, 0), (0.024, 0.0012, 0.021), lens, "lenses", rotation=stand)
        else:
            for dy in (-0.02, 0.02):
                b.add(BOX, (x, y0 + dy, 0), (0.027, 0.0025, 0.003), frame, "frame")
            for dx in (-0.025, 0.025):
                b.add(BOX, (x + dx, y0, 0), (0.0025, 0.02, 0.003), frame, "frame")
            b.add(BOX, (x, y0, 0), (0.024, 0.019, 0.0012), lens, "lenses")
    b.add(BOX, (0, y0 + 0.008, 0), (0.009, 0.002, 0.002), frame, "frame")
    temples = b.surface("temple_color", pattern="temple_pattern", finish="plastic", scale=0.01)
    for x in (-0.061, 0.061):
        b.add(BOX, (x, y0 + 0.006, -0.068), (0.0028, 0.0035, 0.068), temples, "temples")
        b.add(BOX, (x, y0 - 0.008, -0.134), (0.0028, 0.014, 0.0035), temples, "temples")
    if recipe.has("arm_plate"):
        plate = Surface(base=colour_rgb(recipe.value("arm_plate")), finish="metal")
        b.add(BOX, (0.0645, y0 + 0.006, -0.02), (0.001, 0.004, 0.012), plate, "arm_plate")
    return b.build()


EYEGLASSES = CategorySpec(
    name="eyeglasses",
    attributes=(
        AttrDef("frame_color", "color", ("frame",), COLOUR_VALUES, "{a} {v} frame"),
        AttrDef("frame_shape", "shape", ("frame",), ("round", "rectangular"), "{v} rims"),
        AttrDef("lens_tint", "color", ("lenses",), tuple(LENS_TINTS), "{v} lenses"),
        AttrDef("temple_color", "color", ("temples",), COLOUR_VALUES, "{v} arms"),
        AttrDef(
            "temple_pattern",
            "pattern",
            ("temples",),
            pattern_values(("stripes", "dots")),
            "{v} on the arms",
            base="temple_color",
            optional=True,
        ),
        AttrDef(
            "arm_plate",
            "color",
            ("arm_plate",),
            METAL_VALUES,
            "{a} small {v} plate on the right arm",
            view_dependent=True,
            optional=True,
        ),
    ),
    build=build_eyeglasses,
    nouns={"default": ("pair of glasses", "pair of eyeglasses", "pair of spectacles")},
    vague_nouns={"default": ("glasses", "eyeglasses", "specs")},
    scale_range=(0.95, 1.05),
    supports=("table", "shelf", "floor"),
)


def build_watch(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    metal = Surface(base=colour_rgb(recipe.value("case_color")), finish="metal")
    b.add(CYLINDER, (0, 0.007, 0), (0.02, 0.005, 0.02), metal, "case")
    dial_rgb = colour_rgb(recipe.value("dial_color"))
    marks = (0.9, 0.9, 0.9) if sum(dial_rgb) < 1.2 else (0.08, 0.08, 0.08)
    dial = Decal(
        image=dial_bitmap(dial_rgb, marks),
        face=FACE_PY,
        center=(0.0, 0.0),
        size=(0.034 * b.k, 0.034 * b.k),
        region=b.region("decal:dial"),
    )
    b.add(
        CYLINDER,
        (0, 0.0122, 0),
        (0.0172, 0.0004, 0.0172),
        Surface(base=dial_rgb, finish="glass"),
        "dial",
        decals=[dial],
    )
    strap = b.surface(
        "strap_color", pattern="strap_pattern", finish="leather", scale=0.008, angle=math.pi / 2
    )
    for z in (-0.056, 0.056):
        b.add(BOX, (0, 0.003, z), (0.0115, 0.003, 0.037), strap, "strap")
    b.add(BOX, (0, 0.0065, 0.088), (0.0125, 0.0015, 0.004), metal, "case")
    b.add(CYLINDER, (0.0225, 0.007, 0), (0.003, 0.003, 0.003), metal, "case", rotation=rot_z(math.pi / 2))
    return b.build()


WATCH = CategorySpec(
    name="watch",
    attributes=(
        AttrDef("case_color", "color", ("case",), METAL_VALUES, "{a} {v} case"),
        AttrDef("dial_color", "color", ("dial",), COLOUR_VALUES, "{a} {v} dial"),
        AttrDef("strap_color", "color", ("strap",), COLOUR_VALUES, "{a} {v} strap"),
        AttrDef(
            "strap_pattern",
            "pattern",
            ("strap",),
            pattern_values(("stripes",)),
            "{v} on the strap",
            base="strap_color",
            optional=True,
        ),
    ),
    build=build_watch,
    nouns={"default": ("wristwatch", "watch", "analog watch")},
    vague_nouns={"default": ("watch", "wristwatch")},
    scale_range=(0.95, 1.1),
    supports=("table", "shelf", "floor"),
)


def build_shoes(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    upper = b.surface("upper_color", pattern="upper_pattern", finish=finish, scale=0.025)
    sole = b.surface("sole_color", finish="rubber")
    laces = b.surface("lace_color", finish="fabric")
    heel = b.surface("heel_color", finish=finish)
    for side, x in ((1.0, 0.065), (-1.0, -0.065)):
        b.add(BOX, (x, 0.012, 0.0), (0.045, 0.012, 0.135), sole, "sole")
        u_side = side * (math.pi / 2) * 0.5 * (0.043 + 0.085)
        decals = b.decal("side_logo", FACE_SIDE, (u_side, 0.025), 0.03, max_width=0.07)
        b.add(
            ELLIPSOID, (x, 0.024, -0.045), (0.043, 0.072, 0.085), upper, "upper", clip=_UPPER, decals=decals
        )
        b.add(ELLIPSOID, (x, 0.024, 0.055), (0.041, 0.042, 0.078), upper, "upper", clip=_UPPER)
        b.add(ELLIPSOID, (x, 0.093, -0.06), (0.026, 0.004, 0.04), Surface(base=(0.12, 0.12, 0.12)), "upper")
        b.add(BOX, (x, 0.071, 0.03), (0.015, 0.004, 0.034), laces, "laces", rotation=rot_x(0.55))
        b.add(BOX, (x, 0.075, -0.128), (0.014, 0.024, 0.006), heel, "heel")
    return b.build()


SHOES = CategorySpec(
    name="shoes",
    attributes=(
        AttrDef("upper_color", "color", ("upper",), COLOUR_VALUES, "{a} {v} upper"),
        AttrDef(
            "upper_pattern", "pattern", ("upper",), pattern_values(), "{v}", base="upper_color", optional=True
        ),
        AttrDef("sole_color", "color", ("sole",), COLOUR_VALUES, "{v} soles"),
        AttrDef("lace_color", "color", ("laces",), COLOUR_VALUES, "{v} laces"),
        AttrDef("heel_color", "color", ("heel",), COLOUR_VALUES, "{v} heel tabs", view_dependent=True),
        AttrDef(
            "side_logo",
            "logo_text",
            ("decal:side_logo",),
            decal_values(),
            "{v} on the outer sides",
            base="upper_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("upper",), ("leather", "canvas", "suede", "nylon"), "{v}"),
    ),
    build=build_shoes,
    nouns={"default": ("pair of sneakers", "pair of shoes", "pair of trainers")},
    vague_nouns={"default": ("shoes", "sneakers", "trainers")},
    scale_range=(1.0, 1.2),
    supports=("floor", "shelf"),
)
