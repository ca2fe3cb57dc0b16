"""The ``elevated`` catalogue: the standard categories plus parts that only some camera heights show.

The ``elevated`` preset captures every sector from below, at and above the benchmark's 1.31 m sensor. What
the extra heights add is only worth measuring if some objects carry details that the eye-level ring cannot
see, so this catalogue gives open containers something inside them: a drink in the mug (its surface 0.45 x
the mouth's width below the rim), a scarf in an open tote, a jacket in a backpack's open
top, a seat in a toy car's open cockpit. A well hides its floor from every view flatter than
``atan(depth / width)``: from 1.31 m an object on a table is seen 17-29 degrees from above, from 1.75 m
29-46 degrees, so the contents show from above (mostly from the near ring) and not from eye level. Floor
objects are seen steeply from every height and show them anyway; shelf objects often have a board above
that blocks the raised camera.

Nothing here changes the standard catalogue: a recipe names its catalogue (:attr:`Recipe.catalogue`), and
only the ``elevated`` presets plan instances from this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..materials import Surface
from ..renderer import CYLINDER, TUBE
from .bags import BACKPACK, BAG
from .household import MUG
from .model import COLOUR_VALUES, AttrDef, CategorySpec, ObjectBuilder, ObjectModel, Recipe
from .toys import TOY

#: Depth / width of a well (its floor shows from elevations above atan(ratio)), per category: chosen so that
#: with the parts around the mouth (a bag's handles, a backpack's loop and rounded lid) the contents first show
#: from about 30 degrees, between the eye-level and the raised camera's view of a table.
WELL_RATIO: dict[str, float] = {"bag": 0.45, "backpack": 0.3, "toy": 0.6}


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


def _half_full_mug(recipe: Recipe) -> ObjectModel:
    """The standard mug with its ``inside`` disc lifted: a drink filled to 0.036 m below the rim, not the
    bottom."""
    model = MUG.build(recipe)
    inside = model.regions["inside"]
    lift = 0.057 * recipe.scale  # the drink's surface 0.45 x the mouth's width below the rim
    prims = [
        replace(p, center=(p.center[0], p.center[1] + lift, p.center[2])) if p.region == inside else p
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
    ),
    replace(
        BACKPACK,
        attributes=(*BACKPACK.attributes, _contents("{a} {v} jacket inside the open top")),
        # Behind the carry loop, on the top of the body's rounded lid (0.445 m at the middle).
        build=_with_well(BACKPACK.build, (0.0, -0.025), 0.443, 0.04),
    ),
    replace(
        TOY,
        attributes=(*TOY.attributes, _contents("{a} {v} seat in the open cockpit")),
        # The car's bonnet in front of the roof becomes an open cockpit; the robot has none.
        build=_with_well(TOY.build, (0.0, 0.058), 0.05, 0.022, subtype="car"),
        subtype_drops={**TOY.subtype_drops, "robot": (*TOY.subtype_drops["robot"], "contents_color")},
    ),
    replace(
        MUG,
        attributes=tuple(
            replace(a, template="{a} {v} drink inside") if a.name == "inside_color" else a
            for a in MUG.attributes
        ),
        build=_half_full_mug,
    ),
)
