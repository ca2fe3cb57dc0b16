"""Cameras, cellphones, laptops and headphones.

Each has a front/back asymmetry that matters for verification: a laptop's logo and stickers are on the
back of the lid while its wallpaper faces the front, a phone on a stand shows its case and logo only from
behind, a camera's brand sits on the front, and the headphones' logo is on the right ear cup only.
"""

from __future__ import annotations

import math

from ..materials import Surface, rgb
from ..renderer import BOX, CYLINDER, FACE_NY, FACE_NZ, FACE_PZ, TUBE, rot_x, rot_z
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

_GLASS = Surface(base=(0.05, 0.06, 0.08), finish="glass")
_FORWARD = rot_x(math.pi / 2)  # cylinder axis along z


def build_camera(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    body = b.surface("body_color", finish=finish)
    b.add(BOX, (0, 0.045, 0), (0.065, 0.04, 0.03), body, "body")
    brand = b.decal("brand", FACE_PZ, (0.0, 0.0), 0.011, max_width=0.036)
    b.add(BOX, (0, 0.093, 0.004), (0.02, 0.009, 0.02), body, "body", decals=brand)
    lens = b.surface("lens_color", finish="plastic")
    b.add(CYLINDER, (0.006, 0.042, 0.052), (0.026, 0.022, 0.026), lens, "lens", rotation=_FORWARD)
    b.add(CYLINDER, (0.006, 0.042, 0.075), (0.019, 0.0015, 0.019), _GLASS, "lens", rotation=_FORWARD)
    b.add(BOX, (-0.05, 0.042, 0.036), (0.014, 0.034, 0.007), b.surface("grip_color", finish="rubber"), "grip")
    b.add(
        CYLINDER, (0.042, 0.09, 0.0), (0.011, 0.006, 0.011), b.surface("dial_color", finish="metal"), "dial"
    )
    if recipe.has("strap_color"):
        strap = b.surface("strap_color", finish="fabric")
        b.add(
            TUBE, (0, 0.07, -0.01), (0.07, 0.006, 0.06), strap, "strap", rotation=_FORWARD, clip=(0, 0, -1, 0)
        )
    return b.build()


CAMERA = CategorySpec(
    name="camera",
    attributes=(
        AttrDef("body_color", "color", ("body",), COLOUR_VALUES, "{a} {v} body"),
        AttrDef("lens_color", "color", ("lens",), COLOUR_VALUES, "{a} {v} lens"),
        AttrDef(
            "grip_color", "color", ("grip",), COLOUR_VALUES, "{a} {v} grip on the front", view_dependent=True
        ),
        AttrDef("dial_color", "color", ("dial",), ("silver", "gold", "gunmetal"), "{a} {v} dial on top"),
        AttrDef(
            "brand",
            "logo_text",
            ("decal:brand",),
            decal_values(logos=()),
            "{v} on the front",
            base="body_color",
            view_dependent=True,
        ),
        AttrDef("strap_color", "color", ("strap",), COLOUR_VALUES, "{a} {v} strap", optional=True),
        AttrDef("material", "material", ("body",), ("plastic", "metal", "leather"), "{v}"),
    ),
    build=build_camera,
    nouns={"default": ("camera", "digital camera", "photo camera")},
    vague_nouns={"default": ("camera", "cam")},
    scale_range=(1.05, 1.3),
    supports=("table", "shelf"),
)


def build_cellphone(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    b.add(
        BOX,
        (0, 0.008, 0.012),
        (0.03, 0.008, 0.03),
        Surface(base=(0.15, 0.15, 0.16), finish="plastic"),
        "stand",
    )
    lean = rot_x(-0.3)
    frame = (lean, (0.0, 0.012, -0.004))
    case = b.surface("case_color", pattern="case_pattern", finish=b.material(), scale=0.015)
    logo = b.decal("back_logo", FACE_NZ, (0.0, 0.012), 0.024)
    b.add(BOX, (0, 0.078, 0), (0.037, 0.078, 0.0048), case, "case", decals=logo, frame=frame)
    screen = b.surface("wallpaper_color", finish="glass")
    b.add(BOX, (0, 0.078, 0.005), (0.034, 0.073, 0.0004), screen, "screen", frame=frame)
    b.add(BOX, (0.02, 0.136, -0.0056), (0.011, 0.013, 0.0012), _GLASS, "case", frame=frame)
    return b.build()


CELLPHONE = CategorySpec(
    name="cellphone",
    attributes=(
        AttrDef("case_color", "color", ("case",), COLOUR_VALUES, "{a} {v} case"),
        AttrDef(
            "case_pattern",
            "pattern",
            ("case",),
            pattern_values(),
            "{v} on the back of the case",
            base="case_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef(
            "back_logo",
            "logo_text",
            ("decal:back_logo",),
            decal_values(texts=()),
            "{v} on the back",
            base="case_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef(
            "wallpaper_color",
            "color",
            ("screen",),
            COLOUR_VALUES,
            "{a} {v} wallpaper on the screen",
            view_dependent=True,
        ),
        AttrDef("material", "material", ("case",), ("plastic", "leather", "metal", "glossy plastic"), "{v}"),
    ),
    build=build_cellphone,
    nouns={"default": ("smartphone", "cellphone", "mobile phone")},
    vague_nouns={"default": ("phone", "mobile", "cell phone")},
    scale_range=(0.85, 1.0),
    supports=("table", "shelf"),
)


def build_laptop(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    shell = b.surface("body_color", finish=b.material())
    b.add(BOX, (0, 0.009, 0), (0.165, 0.009, 0.115), shell, "body")
    keys = b.surface("keyboard_color", finish="plastic")
    keys = Surface(
        base=keys.base,
        pattern="checks",
        secondary=rgb(c * 0.75 for c in keys.base),
        scale=0.016 * b.k,
        finish="plastic",
    )
    b.add(BOX, (0, 0.0186, -0.035), (0.145, 0.0006, 0.055), keys, "keyboard")
    b.add(
        BOX,
        (0, 0.0186, 0.07),
        (0.05, 0.0005, 0.03),
        Surface(base=rgb(c * 0.85 for c in shell.base), finish="plastic"),
        "body",
    )
    hinge = (rot_x(-0.28), (0.0, 0.018, -0.113))
    decals = b.decal("lid_logo", FACE_NZ, (0.0, 0.01), 0.05)
    decals += b.decal("lid_sticker", FACE_NZ, (-0.09, -0.06), 0.035, max_width=0.07)
    b.add(BOX, (0, 0.112, -0.0035), (0.165, 0.112, 0.0035), shell, "body", decals=decals, frame=hinge)
    screen = b.surface("wallpaper_color", finish="glass")
    b.add(BOX, (0, 0.115, 0.0004), (0.15, 0.095, 0.0004), screen, "screen", frame=hinge)
    return b.build()


LAPTOP = CategorySpec(
    name="laptop",
    attributes=(
        AttrDef("body_color", "color", ("body",), (*COLOUR_VALUES, "silver"), "{a} {v} body"),
        AttrDef(
            "keyboard_color", "color", ("keyboard",), ("black", "white", "grey", "silver"), "{a} {v} keyboard"
        ),
        AttrDef(
            "wallpaper_color",
            "color",
            ("screen",),
            COLOUR_VALUES,
            "{a} {v} wallpaper on the screen",
            view_dependent=True,
        ),
        AttrDef(
            "lid_logo",
            "logo_text",
            ("decal:lid_logo",),
            decal_values(texts=()),
            "{v} on the back of the lid",
            base="body_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef(
            "lid_sticker",
            "logo_text",
            ("decal:lid_sticker",),
            decal_values(logos=()),
            "a sticker with {v} on the lid",
            base="body_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("body",), ("aluminium", "plastic"), "{v}"),
    ),
    build=build_laptop,
    nouns={"default": ("laptop", "notebook computer", "laptop computer")},
    vague_nouns={"default": ("laptop", "computer", "notebook")},
    scale_range=(0.9, 1.1),
    supports=("table", "floor", "seat"),
)


def build_headphones(recipe: Recipe) -> ObjectModel:
    b = ObjectBuilder(recipe)
    finish = b.material()
    cups = b.surface("cup_color", finish=finish)
    cushions = b.surface("cushion_color", finish="leather")
    sideways = rot_z(math.pi / 2)  # cylinder axis along x; local -y points to world +x
    for x in (-0.085, 0.085):
        decals = b.decal("cup_logo", FACE_NY, (0.0, 0.0), 0.04) if x > 0 else []
        b.add(CYLINDER, (x, 0.052, 0), (0.052, 0.018, 0.045), cups, "cups", rotation=sideways, decals=decals)
        b.add(CYLINDER, (x * 0.74, 0.052, 0), (0.045, 0.008, 0.039), cushions, "cushions", rotation=sideways)
    band = b.surface("band_color", pattern="band_pattern", finish=finish, scale=0.012)
    b.add(TUBE, (0, 0.07, 0), (0.09, 0.014, 0.1), band, "band", rotation=_FORWARD, clip=(0, 0, -1, 0))
    return b.build()


HEADPHONES = CategorySpec(
    name="headphones",
    attributes=(
        AttrDef("cup_color", "color", ("cups",), COLOUR_VALUES, "{v} ear cups"),
        AttrDef("cushion_color", "color", ("cushions",), COLOUR_VALUES, "{v} ear cushions"),
        AttrDef("band_color", "color", ("band",), COLOUR_VALUES, "{a} {v} headband"),
        AttrDef(
            "band_pattern",
            "pattern",
            ("band",),
            pattern_values(("stripes", "dots", "checks")),
            "{v} on the headband",
            base="band_color",
            optional=True,
        ),
        AttrDef(
            "cup_logo",
            "logo_text",
            ("decal:cup_logo",),
            decal_values(texts=()),
            "{v} on the right ear cup",
            base="cup_color",
            view_dependent=True,
            optional=True,
        ),
        AttrDef("material", "material", ("cups",), ("plastic", "metal", "leather"), "{v}"),
    ),
    build=build_headphones,
    nouns={"default": ("pair of over-ear headphones", "pair of headphones", "headset")},
    vague_nouns={"default": ("headphones", "headset", "earphones")},
    scale_range=(1.15, 1.3),
    supports=("table", "shelf", "floor"),
)
