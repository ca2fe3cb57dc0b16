"""The part-based object model shared by all 18 categories.

An instance is a :class:`Recipe` (category, attribute values, size factor); a category's builder turns it
into primitives in the object's own frame (bottom at y = 0, front facing +z). Every primitive belongs to
a named *part* and every decal to a named *decal region*, and every attribute says which of those show it.
That link is what lets the capture pipeline state, per capture, which attributes are actually visible —
and what makes "the logo is on the back" a geometric fact rather than a label.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..appearance import COLOURS, LOGO_SHAPES, METALS, WORDS, colour_rgb
from ..decals import logo_bitmap, text_aspect, text_bitmap
from ..materials import RGB, Decal, Surface
from ..renderer import Primitive

#: Names of the renderer's face codes (box faces +x .. -z, then the curved side), for the ground truth.
FACE_NAMES: tuple[str, ...] = ("+x", "-x", "+y", "-y", "+z", "-z", "side")

#: Attribute types (the names the benchmark's attribute extractor uses).
ATTRIBUTE_TYPES = ("color", "pattern", "logo_text", "material", "count", "shape")

#: Minimum pixels of an attribute's region for it to count as visible in a capture, per type. Text and
#: logos need enough pixels to be read; a colour can be told from a dozen.
MIN_PIXELS: dict[str, int] = {
    "color": 12,
    "pattern": 40,
    "logo_text": 30,
    "material": 30,
    "count": 12,
    "shape": 20,
}

NONE = "none"

#: The image of an absence surface: one fully transparent texel (see :meth:`ObjectBuilder.decal`).
_GHOST_IMAGE = np.zeros((1, 1, 4), dtype=np.uint8)


@dataclass(frozen=True)
class AttrDef:
    """One attribute slot of a category.

    ``parts``: regions whose pixels show the attribute (decal attributes name their decal region).
    ``domain``: allowed values. ``base``: for patterns and decals, the colour attribute of the surface they
    sit on (their colour must contrast with it).
    ``template``: how descriptions mention it; ``{v}`` is the value phrase, ``{a}`` its article, ``{sub}`` the
    subtype noun. ``view_dependent``: placed on one face/side by design (a logo on the back, a number on one
    side). ``mutable``: may be changed to make a same-category distractor.
    """

    name: str
    type: str
    parts: tuple[str, ...]
    domain: tuple[str, ...]
    template: str
    base: str | None = None
    view_dependent: bool = False
    optional: bool = False
    mutable: bool = True

    @property
    def min_pixels(self) -> int:
        return MIN_PIXELS[self.type]


@dataclass
class Recipe:
    """An instance: category, subtype, size factor and one value per attribute (``"none"`` = absent)."""

    category: str
    subtype: str
    scale: float
    values: dict[str, str]
    #: Which catalogue the category comes from: "standard" (every preset but ``elevated``) or "elevated"
    #: (extra parts that only some camera heights show; see :mod:`.elevated`).
    catalogue: str = "standard"

    def value(self, name: str) -> str:
        return self.values[name]

    def has(self, name: str) -> bool:
        return self.values.get(name, NONE) != NONE


@dataclass
class ObjectModel:
    """Primitives of one instance in its own frame plus the part / decal region names."""

    category: str
    prims: list[Primitive]
    regions: dict[str, int]
    lower: np.ndarray  # (3,) bounding box
    upper: np.ndarray
    #: Absence surfaces: ``decal:{attr}`` of an attribute the recipe lacks -> (part, face) it would be on.
    absence_surfaces: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def centre(self) -> np.ndarray:
        return 0.5 * (self.lower + self.upper)

    @property
    def half_extents(self) -> np.ndarray:
        return 0.5 * (self.upper - self.lower)

    @property
    def footprint_radius(self) -> float:
        """Radius of a circle around the local origin containing the XZ footprint."""
        return float(
            np.hypot(np.maximum(-self.lower[0], self.upper[0]), np.maximum(-self.lower[2], self.upper[2]))
        )


def parse_pattern(value: str) -> tuple[str, str] | None:
    """``"stripes/white"`` -> ("stripes", "white"); ``"none"`` -> None."""
    if value == NONE:
        return None
    kind, colour = value.split("/", 1)
    return kind, colour


def parse_decal(value: str) -> tuple[str, str, str] | None:
    """``"text/NOVA/white"`` or ``"logo/star/yellow"`` -> (kind, content, colour); ``"none"`` -> None."""
    if value == NONE:
        return None
    kind, content, colour = value.split("/", 2)
    return kind, content, colour


class ObjectBuilder:
    """Collects primitives for one recipe; lengths are given at nominal size and scaled here."""

    def __init__(self, recipe: Recipe) -> None:
        self.recipe = recipe
        self.k = recipe.scale
        self.prims: list[Primitive] = []
        self.regions: dict[str, int] = {}
        #: Regions of absence surfaces: where an absent logo / print would be (see :meth:`decal`).
        self.ghost_regions: set[int] = set()
        self.ghost_places: dict[int, tuple[str, str]] = {}  # region -> (part, face) it was pinned to

    # -- values -------------------------------------------------------------------------------------------

    def colour(self, attr_or_colour: str) -> RGB:
        """Colour of an attribute (by name) or a literal colour name."""
        name = self.recipe.values.get(attr_or_colour, attr_or_colour)
        return colour_rgb(name)

    def surface(
        self,
        colour: str | RGB,
        *,
        pattern: str | None = None,
        finish: str = "matte",
        scale: float = 0.03,
        angle: float = 0.0,
        inside: RGB | None = None,
    ) -> Surface:
        """A surface whose colour comes from an attribute (or literal) and optional pattern attribute."""
        base = self.colour(colour) if isinstance(colour, str) else colour
        spec = parse_pattern(self.recipe.values.get(pattern, NONE)) if pattern else None
        if spec is None:
            return Surface(base=base, finish=finish, inside=inside)
        kind, pcolour = spec
        return Surface(
            base=base,
            pattern=kind,
            secondary=colour_rgb(pcolour),
            tertiary=colour_rgb("yellow") if kind == "floral" else colour_rgb("black"),
            scale=scale * self.k,
            angle=angle,
            finish=finish,
            inside=inside,
        )

    def material(self, attr: str = "material", default: str = "matte") -> str:
        """Finish of the renderer for a material attribute value (leather, canvas, ...)."""
        value = self.recipe.values.get(attr, default)
        return MATERIAL_FINISH.get(value, default)

    # -- geometry -----------------------------------------------------------------------------------------

    def region(self, name: str) -> int:
        if name not in self.regions:
            self.regions[name] = len(self.regions)
        return self.regions[name]

    def add(
        self,
        kind: str,
        centre: Sequence[float] | np.ndarray,
        size: Sequence[float],
        surface: Surface,
        part: str,
        *,
        rotation: np.ndarray | None = None,
        clip: tuple[float, float, float, float] | None = None,
        decals: Sequence[Decal] = (),
        frame: tuple[np.ndarray, Sequence[float]] | None = None,
    ) -> None:
        """Add a primitive. ``frame`` = (R, t) places a sub-assembly (a tilted lid, a leaning phone): the
        primitive's centre and rotation are given in that frame."""
        k = self.k
        rot = rotation if rotation is not None else np.eye(3)
        # Absence surfaces first: a real decal drawn after one overwrites its labels, never the reverse.
        decals = sorted(decals, key=lambda d: d.region not in self.ghost_regions)
        for d in decals:
            if d.region in self.ghost_regions:
                self.ghost_places[d.region] = (part, FACE_NAMES[d.face])
        if frame is not None:
            r_frame, t_frame = frame
            centre = r_frame @ np.asarray(centre, dtype=np.float64) + np.asarray(t_frame, dtype=np.float64)
            rot = r_frame @ rot
        self.prims.append(
            Primitive(
                kind=kind,
                center=(float(centre[0]) * k, float(centre[1]) * k, float(centre[2]) * k),
                size=(size[0] * k, size[1] * k, size[2] * k),
                surface=surface,
                rotation=rot,
                region=self.region(part),
                clip=None if clip is None else (clip[0], clip[1], clip[2], clip[3] * k),
                decals=tuple(decals),
            )
        )

    def decal(
        self,
        attr: str,
        face: int,
        centre: tuple[float, float],
        height: float,
        *,
        max_width: float | None = None,
    ) -> list[Decal]:
        """The decal of a logo/text attribute on a face.

        ``height`` is the logo height or text cap height at nominal size; text keeps its aspect ratio but is
        shrunk to ``max_width`` when given.

        An attribute the recipe lacks gets an *absence surface* instead: a fully transparent decal over the
        rectangle the print would cover (``height`` tall, ``max_width`` or ``height`` wide), under the region
        ``decal:{attr}``. It leaves every colour unchanged (alpha 0) but labels the pixels where the print
        would be, so a capture can state that the place of an absent logo is in view and an absence claim
        ("no logo on the fob") becomes judgeable there. Slots the builder never reaches (a whole part
        that is absent) have no such surface.
        """
        spec = parse_decal(self.recipe.values.get(attr, NONE))
        if spec is None:
            if attr not in self.recipe.values:
                return []
            region = self.region(f"decal:{attr}")
            self.ghost_regions.add(region)
            k = self.k
            width = max_width if max_width is not None else height
            return [
                Decal(
                    image=_GHOST_IMAGE,
                    face=face,
                    center=(centre[0] * k, centre[1] * k),
                    size=(width * k, height * k),
                    region=region,
                )
            ]
        kind, content, colour = spec
        rgb = colour_rgb(colour)
        if kind == "text":
            image = text_bitmap(content, rgb)
            width = height * text_aspect(content)
            if max_width is not None and width > max_width:
                height *= max_width / width
                width = max_width
        else:
            image = logo_bitmap(content, rgb)
            width = height
        k = self.k
        return [
            Decal(
                image=image,
                face=face,
                center=(centre[0] * k, centre[1] * k),
                size=(width * k, height * k),
                region=self.region(f"decal:{attr}"),
            )
        ]

    def build(self) -> ObjectModel:
        lows, highs = [], []
        for prim in self.prims:
            lo, hi = -np.asarray(prim.size, dtype=np.float64), np.asarray(prim.size, dtype=np.float64)
            # An axis-aligned clip plane cuts the local box (hemispheres, half rings).
            if prim.clip is not None:
                normal = np.asarray(prim.clip[:3], dtype=np.float64)
                axis = int(np.argmax(np.abs(normal)))
                if np.count_nonzero(normal) == 1:
                    bound = prim.clip[3] / normal[axis]
                    if normal[axis] > 0:
                        lo[axis] = max(lo[axis], bound)
                    else:
                        hi[axis] = min(hi[axis], bound)
            corners = np.array(
                [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
            )
            pts = corners @ prim.rotation.T + np.asarray(prim.center)
            lows.append(pts.min(axis=0))
            highs.append(pts.max(axis=0))
        lower = np.min(lows, axis=0)
        upper = np.max(highs, axis=0)
        ghosts = {
            name: self.ghost_places[region]
            for name, region in self.regions.items()
            if region in self.ghost_places
        }
        return ObjectModel(self.recipe.category, self.prims, dict(self.regions), lower, upper, ghosts)


# -- attribute domains -----------------------------------------------------------------------------------

COLOUR_VALUES: tuple[str, ...] = tuple(COLOURS)
METAL_VALUES: tuple[str, ...] = tuple(METALS)
PATTERN_KINDS: tuple[str, ...] = ("stripes", "dots", "checks", "plaid", "floral")


def pattern_values(kinds: Sequence[str] = PATTERN_KINDS) -> tuple[str, ...]:
    return tuple(f"{k}/{c}" for k in kinds for c in COLOURS)


def decal_values(
    *, texts: Sequence[str] = WORDS, logos: Sequence[str] = tuple(LOGO_SHAPES)
) -> tuple[str, ...]:
    colours = [c for c in COLOURS if c not in ("grey", "beige", "tan")]
    values = [f"text/{t}/{c}" for t in texts for c in colours]
    values += [f"logo/{s}/{c}" for s in logos for c in colours]
    return tuple(values)


def decal_colour(value: str) -> str | None:
    spec = parse_decal(value)
    return None if spec is None else spec[2]


def pattern_colour(value: str) -> str | None:
    spec = parse_pattern(value)
    return None if spec is None else spec[1]


#: Renderer finish for each material attribute value.
MATERIAL_FINISH: dict[str, str] = {
    "leather": "leather",
    "canvas": "canvas",
    "nylon": "nylon",
    "denim": "denim",
    "wool": "wool",
    "felt": "wool",
    "straw": "canvas",
    "suede": "suede",
    "plastic": "plastic",
    "glossy plastic": "glossy",
    "rubber": "rubber",
    "metal": "metal",
    "aluminium": "metal",
    "ceramic": "ceramic",
    "enamel": "glossy",
    "plush": "fur",
    "fabric": "fabric",
    "cotton": "fabric",
    "wooden": "wood",
    "paper": "paper",
    "hardcover": "paper",
    "glass": "glass",
}


@dataclass(frozen=True)
class CategorySpec:
    """Everything the pipeline needs about a category: attributes, subtypes, nouns, size and builder."""

    name: str
    attributes: tuple[AttrDef, ...]
    build: Callable[[Recipe], ObjectModel]
    nouns: dict[str, tuple[str, ...]]
    vague_nouns: dict[str, tuple[str, ...]]
    subtypes: tuple[str, ...] = ("default",)
    scale_range: tuple[float, float] = (0.9, 1.1)
    #: Where instances may be placed: floor, table (tables, desks, cabinets) and shelf.
    supports: tuple[str, ...] = ("floor", "table", "shelf")
    #: Attributes only meaningful for some subtypes: subtype -> names to drop.
    subtype_drops: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Lowest support (metres) to stand on when the room has one of the allowed kinds that high (0: any).
    min_support_height: float = 0.0

    def attribute(self, name: str) -> AttrDef:
        for attr in self.attributes:
            if attr.name == name:
                return attr
        raise KeyError(name)

    def attributes_for(self, subtype: str) -> tuple[AttrDef, ...]:
        drop = set(self.subtype_drops.get(subtype, ()))
        return tuple(a for a in self.attributes if a.name not in drop)

    def noun(self, subtype: str, vague: bool = False) -> tuple[str, ...]:
        table = self.vague_nouns if vague else self.nouns
        return table.get(subtype, table["default"])
