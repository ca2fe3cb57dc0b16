"""The ``elevated`` catalogue: the standard categories plus parts that only some camera heights show.

The ``elevated`` preset captures every sector from below, at and above the benchmark's 1.31 m sensor. What
the extra heights add is only worth measuring if some objects carry details that the eye-level ring cannot
see, so this catalogue gives open containers something inside them: a drink in the mug (its surface 0.6 x
the mouth's width below the rim), a scarf in an open tote, a jacket in a backpack's open top, a seat in a
toy car's open cockpit, insoles in a pair of high-top sneakers. A well hides its floor from every view
flatter than ``atan(depth / width)`` (about 31 degrees here): from 1.31 m an object on a dining table, desk
or cabinet is seen at most 27 degrees from above, from the raised camera 34-45 degrees (2.0 m from the far
ring, 1.75 m from the near one), so the contents show from above and not from eye level. From the floor, a
coffee table or a seat every height looks into them, so here these categories stand on a support at least
:data:`LOOK_DOWN_HEIGHT` high where the room has one of their kinds, and the toy is always the car.

Underneath: the backpack gets a top flap that overhangs its front, lined on its underside (attribute
``lining_color``). The lining faces down, so only a camera below the flap sees it: on a table the flap is
1.0-1.3 m above the floor, above the lowered camera (0.85 m) and below the eye-level one (1.31 m).

Every such attribute is a part or decal region of the model, so whether a capture shows it is counted from
the render's pixels like any other attribute. Nothing here changes the standard catalogue: a recipe names
its catalogue (:attr:`Recipe.catalogue`), and only the ``elevated`` presets plan instances from this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..appearance import colour_rgb
from ..materials import Decal, Surface
from ..renderer import BOX, CYLINDER, FACE_NY, TUBE
from .bags import BACKPACK, BAG
from .household import MUG
from .model import COLOUR_VALUES, AttrDef, CategorySpec, ObjectBuilder, ObjectModel, Recipe
from .toys import TOY
from .wearables import SHOES

#: Depth / width of a well (its floor shows from elevations above atan(ratio)), per category: chosen so that
#: with the parts around the mouth (a bag's handles, a backpack's loop and rounded lid) the contents first show
#: from about 31 degrees, between the eye-level and the raised camera's view of a table.
WELL_RATIO: dict[str, float] = {"bag": 0.45, "backpack": 0.3, "toy": 0.65, "shoes": 0.6}
#: Lowest support of an open container (metres): a dining table, desk, cabinet top or shelf board, where a
#: standing person looks down onto it (from 1.31 m at 27 degrees at most). From the floor, a coffee table, a
#: seat or a low board every camera height looks into the container, so nothing there needs a height.
LOOK_DOWN_HEIGHT = 0.7


def _add_well(
    b: ObjectBuilder,
    centre: tuple[float, float],
    top_y: float,
    radius: float,
    rim: Surface,
    rim_part: str,
    contents_attr: str,
) -> None:
    """An open, round mouth on top of an object (a rim ``WELL_RATIO`` x its width tall) with the contents'
    colour at the bottom of it."""
    depth = WELL_RATIO[b.recipe.category] * 2.0 * radius
    x, z = centre
    b.add(TUBE, (x, top_y + depth / 2.0, z), (radius, depth / 2.0, radius), rim, rim_part)
    contents = b.surface(contents_attr, finish="fabric")
    b.add(CYLINDER, (x, top_y + 0.002, z), (radius * 0.995, 0.002, radius * 0.995), contents, "contents")


def _with_well(
    build: Callable[[Recipe], ObjectModel],
    centre: tuple[float, float],
    top_y: float,
    radius: float,
    subtype: str | None = None,
) -> Callable[[Recipe], ObjectModel]:
    def builder(recipe: Recipe) -> ObjectModel:
        model = build(recipe)
        if subtype is not None and recipe.subtype != subtype:
            return model
        b = ObjectBuilder(recipe)
        b.prims, b.regions = list(model.prims), dict(model.regions)
        body = next(p for p in model.prims if p.region == model.regions["body"])
        # Lengths were scaled by the standard builder; ObjectBuilder.add scales again, so pass nominal ones.
        _add_well(
            b,
            centre,
            top_y,
            radius,
            Surface(base=body.surface.base, finish=body.surface.finish),
            "body",
            "contents_color",
        )
        out = b.build()
        return replace(out, absence_surfaces=model.absence_surfaces)

    return builder


#: The backpack's top flap (nominal metres, the standard backpack's frame): it lies on the front of the body
#: just under the rounded lid and reaches 4.5 cm past the body's front face (0.075 m), over the front pocket.
_FLAP_CENTRE = (0.0, 0.372, 0.08)
_FLAP_HALF = (0.13, 0.01, 0.04)


def _solid_image(colour: str) -> np.ndarray:
    """A one-texel opaque bitmap of a named colour (a decal that colours a whole face)."""
    rgb = colour_rgb(colour)
    return np.array([[[round(255 * c) for c in rgb] + [255]]], dtype=np.uint8)


def _with_lined_flap(build: Callable[[Recipe], ObjectModel]) -> Callable[[Recipe], ObjectModel]:
    """The backpack with a top flap over its front whose underside is lined in ``lining_color``.

    The lining is a decal over the flap's whole bottom face, so its pixels are exactly the face a camera
    sees from below the flap; from above the flap hides it from every direction."""

    def builder(recipe: Recipe) -> ObjectModel:
        model = build(recipe)
        b = ObjectBuilder(recipe)
        b.prims, b.regions = list(model.prims), dict(model.regions)
        body = next(p for p in model.prims if p.region == model.regions["body"])
        lining = Decal(
            image=_solid_image(recipe.value("lining_color")),
            face=FACE_NY,
            center=(0.0, 0.0),
            size=(2.2 * _FLAP_HALF[0] * recipe.scale, 2.2 * _FLAP_HALF[2] * recipe.scale),
            region=b.region("decal:flap_lining"),
        )
        flap = Surface(base=body.surface.base, finish=body.surface.finish)
        b.add(BOX, _FLAP_CENTRE, _FLAP_HALF, flap, "body", decals=(lining,))
        out = b.build()
        return replace(out, absence_surfaces=model.absence_surfaces)

    return builder


#: A high-top sneaker's collar (nominal metres, per shoe): a round rim over the standard shoe's opening, the
#: insole at its bottom on the upper's top.
_COLLAR_RADIUS = 0.028
_COLLAR_FLOOR = 0.096  # the insole, just above the upper's top at the opening (0.095)
_COLLAR_BASE = 0.075  # the rim reaches down into the upper so that no gap shows under it


def _high_top_shoes(recipe: Recipe) -> ObjectModel:
    """The standard pair with a high-top collar on each shoe: a rim ``WELL_RATIO`` x its width above the
    insole (``insole_color``), so the insole shows only from above about 31 degrees."""
    model = SHOES.build(recipe)
    b = ObjectBuilder(recipe)
    b.prims, b.regions = list(model.prims), dict(model.regions)
    upper = next(p for p in model.prims if p.region == model.regions["upper"])
    rim = Surface(base=upper.surface.base, finish=upper.surface.finish)
    insole = b.surface("insole_color", finish="fabric")
    top = _COLLAR_FLOOR + WELL_RATIO["shoes"] * 2.0 * _COLLAR_RADIUS
    for x in (0.065, -0.065):
        centre = (x, (_COLLAR_BASE + top) / 2.0, -0.06)
        b.add(TUBE, centre, (_COLLAR_RADIUS, (top - _COLLAR_BASE) / 2.0, _COLLAR_RADIUS), rim, "upper")
        r = _COLLAR_RADIUS * 0.995
        b.add(CYLINDER, (x, _COLLAR_FLOOR + 0.001, -0.06), (r, 0.001, r), insole, "insole")
    out = b.build()
    return replace(out, absence_surfaces=model.absence_surfaces)


def _half_full_mug(recipe: Recipe) -> ObjectModel:
    """The standard mug with its ``inside`` disc lifted: a drink filled to 0.048 m below the rim, not the
    bottom."""
    model = MUG.build(recipe)
    inside = model.regions["inside"]
    lift = (
        0.045 * recipe.scale
    )  # the drink's surface 0.6 x the mouth's width below the rim (about 31 degrees)
    body = model.regions["body"]
    # The standard mug's wall is glazed inside in ``inside_color``; here that colour is the drink's only, so
    # the wall above the drink is the body's glaze and no view that misses the drink shows its colour.
    prims = [
        replace(p, center=(p.center[0], p.center[1] + lift, p.center[2]))
        if p.region == inside
        else replace(p, surface=replace(p.surface, inside=None))
        if p.region == body and p.kind == TUBE
        else p
        for p in model.prims
    ]
    return replace(model, prims=prims)


def _contents(template: str) -> AttrDef:
    return AttrDef("contents_color", "color", ("contents",), COLOUR_VALUES, template)


ELEVATED_SPECS: tuple[CategorySpec, ...] = (
    replace(
        BAG,
        attributes=(*BAG.attributes, _contents("{a} {v} scarf inside the open top")),
        build=_with_well(BAG.build, (0.0, 0.0), 0.26, 0.05),
        supports=("table", "shelf", "seat"),
        min_support_height=LOOK_DOWN_HEIGHT,
    ),
    replace(
        BACKPACK,
        attributes=(
            *BACKPACK.attributes,
            _contents("{a} {v} jacket inside the open top"),
            AttrDef(
                "lining_color",
                "color",
                ("decal:flap_lining",),
                COLOUR_VALUES,
                "{a} {v} lining underneath the front flap",
                view_dependent=True,
            ),
        ),
        # Behind the carry loop, on the top of the body's rounded lid (0.445 m at the middle).
        build=_with_lined_flap(_with_well(BACKPACK.build, (0.0, -0.025), 0.443, 0.04)),
        supports=("table", "seat"),
        min_support_height=LOOK_DOWN_HEIGHT,
    ),
    replace(
        TOY,
        attributes=(*TOY.attributes, _contents("{a} {v} seat in the open cockpit")),
        # The car's bonnet in front of the roof becomes an open cockpit; the robot has none.
        build=_with_well(TOY.build, (0.0, 0.058), 0.05, 0.022, subtype="car"),
        subtype_drops={**TOY.subtype_drops, "robot": (*TOY.subtype_drops["robot"], "contents_color")},
        supports=("table", "shelf"),
        subtypes=("car",),
        min_support_height=LOOK_DOWN_HEIGHT,
    ),
    replace(
        SHOES,
        attributes=(
            *SHOES.attributes,
            AttrDef(
                "insole_color", "color", ("insole",), COLOUR_VALUES, "{v} insoles inside the high-top collars"
            ),
        ),
        build=_high_top_shoes,
        # A pair is too deep for a bookcase board, so up high means a table, desk or cabinet top.
        supports=("floor", "shelf", "table"),
        min_support_height=LOOK_DOWN_HEIGHT,
    ),
    replace(
        MUG,
        attributes=tuple(
            replace(a, template="{a} {v} drink inside") if a.name == "inside_color" else a
            for a in MUG.attributes
        ),
        build=_half_full_mug,
        min_support_height=LOOK_DOWN_HEIGHT,
    ),
)
