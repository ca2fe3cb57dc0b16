"""Furniture and decor built from primitives: what blocks the agent, what hides the target, what holds it.

Each piece is built in its own frame (origin on the floor at the centre of its footprint, front toward
+z) and then placed. A piece reports three things besides its primitives: its *footprint* (an oriented
rectangle the agent cannot enter — this is what makes sectors unreachable), its *supports* (table tops,
shelf boards, seats where an object can be put) and its height (what it can hide).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from .materials import Surface, rgb
from .renderer import BOX, CYLINDER, ELLIPSOID, TUBE, Primitive, rot_y

WOODS: tuple[tuple[float, float, float], ...] = (
    (0.55, 0.38, 0.22),
    (0.72, 0.55, 0.36),
    (0.38, 0.25, 0.15),
    (0.82, 0.7, 0.52),
    (0.3, 0.22, 0.18),
)
PAINTS: tuple[tuple[float, float, float], ...] = (
    (0.92, 0.92, 0.9),
    (0.25, 0.27, 0.3),
    (0.62, 0.68, 0.72),
    (0.78, 0.74, 0.66),
    (0.45, 0.52, 0.45),
)
FABRICS: tuple[tuple[float, float, float], ...] = (
    (0.42, 0.45, 0.5),
    (0.6, 0.52, 0.42),
    (0.28, 0.34, 0.44),
    (0.55, 0.3, 0.28),
    (0.72, 0.7, 0.66),
    (0.3, 0.42, 0.34),
)


@dataclass(frozen=True)
class Footprint:
    """An oriented rectangle on the floor (XZ) that the agent's body may not overlap."""

    cx: float
    cz: float
    hx: float
    hz: float
    yaw: float

    def local(self, x: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates in the rectangle's frame (inverse of :func:`rot_y` about the centre)."""
        dx, dz = x - self.cx, z - self.cz
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return c * dx - s * dz, s * dx + c * dz

    def distance_to(self, x: float, z: float) -> float:
        """Scalar :meth:`distance` (the sampler asks about one point at a time, thousands of times)."""
        dx, dz = x - self.cx, z - self.cz
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        ox = max(abs(c * dx - s * dz) - self.hx, 0.0)
        oz = max(abs(s * dx + c * dz) - self.hz, 0.0)
        return math.hypot(ox, oz)

    def distance(self, x: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Distance from points to the rectangle (0 inside)."""
        lx, lz = self.local(x, z)
        ox = np.maximum(np.abs(lx) - self.hx, 0.0)
        oz = np.maximum(np.abs(lz) - self.hz, 0.0)
        return np.hypot(ox, oz)


@dataclass
class Support:
    """A horizontal surface objects can stand on: kind, height, rectangle and free headroom."""

    kind: str  # floor | table | shelf | seat
    y: float
    cx: float
    cz: float
    hx: float
    hz: float
    yaw: float
    headroom: float
    occupied: list[tuple[float, float, float]] = field(default_factory=list)  # (x, z, radius)

    def to_world(self, lx: float, lz: float) -> tuple[float, float]:
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return self.cx + c * lx + s * lz, self.cz - s * lx + c * lz


@dataclass
class Piece:
    """A placed piece of furniture or decor."""

    kind: str
    prims: list[Primitive]
    footprint: Footprint | None
    supports: list[Support]
    height: float
    blocks: bool = True  # whether the footprint blocks the agent


def _place(
    kind: str,
    local: list[Primitive],
    cx: float,
    cz: float,
    yaw: float,
    hx: float,
    hz: float,
    height: float,
    supports: list[Support],
    blocks: bool = True,
) -> Piece:
    rot = rot_y(yaw)
    prims = [p.transformed(rot, (cx, 0.0, cz)) for p in local]
    placed = []
    for s in supports:
        wx, wz = Support(s.kind, 0, cx, cz, 0, 0, yaw, 0).to_world(s.cx, s.cz)
        placed.append(Support(s.kind, s.y, wx, wz, s.hx, s.hz, yaw, s.headroom))
    return Piece(kind, prims, Footprint(cx, cz, hx, hz, yaw), placed, height, blocks)


def table(rng: random.Random, cx: float, cz: float, yaw: float, *, low: bool = False) -> Piece:
    """Dining/side table (0.72-0.78 m) or coffee table (0.4-0.48 m) with four legs."""
    w = rng.uniform(0.8, 1.4) if not low else rng.uniform(0.8, 1.2)
    d = rng.uniform(0.6, 0.9) if not low else rng.uniform(0.45, 0.65)
    h = rng.uniform(0.72, 0.78) if not low else rng.uniform(0.4, 0.48)
    wood = Surface(base=rng.choice(WOODS), finish="wood")
    top = 0.025
    prims = [Primitive(BOX, (0, h - top, 0), (w / 2, top, d / 2), wood)]
    leg = 0.03
    for sx in (-1, 1):
        for sz in (-1, 1):
            prims.append(
                Primitive(
                    BOX,
                    (sx * (w / 2 - 0.06), (h - 2 * top) / 2, sz * (d / 2 - 0.06)),
                    (leg, (h - 2 * top) / 2, leg),
                    wood,
                )
            )
    support = Support("table", h, 0, 0, w / 2 - 0.06, d / 2 - 0.06, 0, 1.0)
    return _place("coffee table" if low else "table", prims, cx, cz, yaw, w / 2, d / 2, h, [support])


def desk(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    """Desk against a wall: top, side panels and a drawer block."""
    w, d, h = rng.uniform(1.0, 1.4), rng.uniform(0.55, 0.7), rng.uniform(0.73, 0.77)
    paint = Surface(base=rng.choice(PAINTS + WOODS), finish="wood")
    prims = [
        Primitive(BOX, (0, h - 0.02, 0), (w / 2, 0.02, d / 2), paint),
        Primitive(BOX, (-w / 2 + 0.02, (h - 0.04) / 2, 0), (0.02, (h - 0.04) / 2, d / 2 - 0.02), paint),
        Primitive(BOX, (w / 2 - 0.22, (h - 0.04) / 2, 0), (0.2, (h - 0.04) / 2, d / 2 - 0.02), paint),
    ]
    support = Support("table", h, 0, 0.03, w / 2 - 0.06, d / 2 - 0.09, 0, 1.0)
    return _place("desk", prims, cx, cz, yaw, w / 2, d / 2, h, [support])


def shelf(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    """Open bookcase: back, sides, top, bottom and 3-4 boards; every board is a support."""
    w, d = rng.uniform(0.7, 1.2), rng.uniform(0.32, 0.4)
    levels = rng.choice((3, 4))
    h = rng.uniform(1.1, 1.9)
    wood = Surface(base=rng.choice(WOODS + PAINTS[:2]), finish="wood")
    t = 0.02
    prims = [
        Primitive(BOX, (0, h / 2, -d / 2 + t / 2), (w / 2, h / 2, t / 2), wood),
        Primitive(BOX, (-w / 2 + t / 2, h / 2, 0), (t / 2, h / 2, d / 2), wood),
        Primitive(BOX, (w / 2 - t / 2, h / 2, 0), (t / 2, h / 2, d / 2), wood),
        Primitive(BOX, (0, h - t / 2, 0), (w / 2, t / 2, d / 2), wood),
    ]
    supports = []
    spacing = (h - 0.08) / levels
    for i in range(levels):
        y = 0.06 + i * spacing
        prims.append(Primitive(BOX, (0, y - t / 2, 0), (w / 2 - t, t / 2, d / 2 - t), wood))
        supports.append(Support("shelf", y, 0, 0.02, w / 2 - 0.06, d / 2 - 0.06, 0, spacing - t - 0.02))
    return _place("shelf", prims, cx, cz, yaw, w / 2, d / 2, h, supports)


def cabinet(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    """Dresser / sideboard: a closed box with drawer lines; its top is a support."""
    w, d, h = rng.uniform(0.8, 1.4), rng.uniform(0.4, 0.55), rng.uniform(0.75, 0.95)
    colour = rng.choice(WOODS + PAINTS)
    body = Surface(
        base=colour, pattern="stripes", secondary=rgb(c * 0.7 for c in colour), scale=0.22, finish="wood"
    )
    prims = [Primitive(BOX, (0, h / 2, 0), (w / 2, h / 2, d / 2), body)]
    support = Support("table", h, 0, 0, w / 2 - 0.06, d / 2 - 0.06, 0, 1.0)
    return _place("cabinet", prims, cx, cz, yaw, w / 2, d / 2, h, [support])


def sofa(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    """Sofa with seat, back and arms; the seat is a support for soft objects."""
    w, d = rng.uniform(1.6, 2.2), rng.uniform(0.8, 0.95)
    fabric = Surface(base=rng.choice(FABRICS), finish="fabric")
    seat_h = 0.44
    prims = [
        Primitive(BOX, (0, seat_h / 2, 0.05), (w / 2 - 0.12, seat_h / 2, d / 2 - 0.05), fabric),
        Primitive(BOX, (0, 0.45, -d / 2 + 0.1), (w / 2, 0.45, 0.1), fabric),
        Primitive(BOX, (-w / 2 + 0.1, 0.3, 0), (0.1, 0.3, d / 2), fabric),
        Primitive(BOX, (w / 2 - 0.1, 0.3, 0), (0.1, 0.3, d / 2), fabric),
    ]
    support = Support("seat", seat_h, 0, 0.08, w / 2 - 0.3, d / 2 - 0.25, 0, 1.0)
    return _place("sofa", prims, cx, cz, yaw, w / 2, d / 2, 0.9, [support])


def bed(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    """Bed against a wall: frame, mattress, pillow and headboard; the mattress is a support."""
    w, length = rng.uniform(1.2, 1.7), rng.uniform(1.9, 2.1)
    frame = Surface(base=rng.choice(WOODS), finish="wood")
    sheet = Surface(base=rng.choice((*FABRICS, (0.9, 0.9, 0.92))), finish="fabric")
    prims = [
        Primitive(BOX, (0, 0.15, 0), (w / 2, 0.15, length / 2), frame),
        Primitive(BOX, (0, 0.4, 0.02), (w / 2 - 0.03, 0.1, length / 2 - 0.04), sheet),
        Primitive(BOX, (0, 0.5, -length / 2 + 0.03), (w / 2, 0.5, 0.03), frame),
        Primitive(
            ELLIPSOID,
            (0, 0.54, -length / 2 + 0.3),
            (w / 2 - 0.15, 0.07, 0.18),
            Surface(base=(0.93, 0.93, 0.9), finish="fabric"),
        ),
    ]
    support = Support("seat", 0.5, 0, 0.25, w / 2 - 0.2, length / 2 - 0.55, 0, 1.0)
    return _place("bed", prims, cx, cz, yaw, w / 2, length / 2, 1.0, [support])


def chair(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    """Chair: seat, back and four legs (its footprint blocks, its legs barely hide anything)."""
    wood = Surface(base=rng.choice(WOODS + PAINTS), finish="wood")
    s = 0.22
    prims = [
        Primitive(BOX, (0, 0.45, 0), (s, 0.02, s), wood),
        Primitive(BOX, (0, 0.7, -s + 0.02), (s, 0.23, 0.02), wood),
    ]
    for sx in (-1, 1):
        for sz in (-1, 1):
            prims.append(Primitive(BOX, (sx * (s - 0.03), 0.215, sz * (s - 0.03)), (0.02, 0.215, 0.02), wood))
    support = Support("seat", 0.47, 0, 0.02, s - 0.05, s - 0.06, 0, 0.5)
    return _place("chair", prims, cx, cz, yaw, s, s, 0.93, [support])


def armchair(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    fabric = Surface(base=rng.choice(FABRICS), finish="fabric")
    w, d = 0.85, 0.85
    prims = [
        Primitive(BOX, (0, 0.22, 0.05), (w / 2 - 0.12, 0.22, d / 2 - 0.05), fabric),
        Primitive(BOX, (0, 0.45, -d / 2 + 0.1), (w / 2, 0.45, 0.1), fabric),
        Primitive(BOX, (-w / 2 + 0.1, 0.32, 0), (0.1, 0.32, d / 2), fabric),
        Primitive(BOX, (w / 2 - 0.1, 0.32, 0), (0.1, 0.32, d / 2), fabric),
    ]
    support = Support("seat", 0.44, 0, 0.08, 0.16, 0.14, 0, 1.0)
    return _place("armchair", prims, cx, cz, yaw, w / 2, d / 2, 0.9, [support])


def plant(rng: random.Random, cx: float, cz: float, yaw: float, scale: float = 1.0) -> Piece:
    """Potted plant: a pot and a clump of foliage (a soft, see-around occluder)."""
    pot = Surface(base=rng.choice(((0.7, 0.4, 0.25), (0.9, 0.9, 0.88), (0.2, 0.2, 0.22))), finish="ceramic")
    leaf = Surface(
        base=rng.choice(((0.2, 0.45, 0.2), (0.3, 0.55, 0.25), (0.15, 0.38, 0.22))), finish="fabric"
    )
    r, h = 0.14 * scale, 0.3 * scale
    prims = [Primitive(CYLINDER, (0, h / 2, 0), (r, h / 2, r), pot)]
    for i in range(4):
        a = i * math.pi / 2 + 0.4
        prims.append(
            Primitive(
                ELLIPSOID,
                (0.08 * scale * math.cos(a), h + 0.22 * scale, 0.08 * scale * math.sin(a)),
                (0.16 * scale, 0.26 * scale, 0.16 * scale),
                leaf,
            )
        )
    return _place("plant", prims, cx, cz, yaw, r + 0.06 * scale, r + 0.06 * scale, h + 0.48 * scale, [])


def floor_lamp(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    metal = Surface(base=(0.2, 0.2, 0.22), finish="metal")
    shade = Surface(
        base=rng.choice(((0.95, 0.9, 0.78), (0.85, 0.85, 0.85))), finish="fabric", inside=(1.0, 0.95, 0.85)
    )
    prims = [
        Primitive(CYLINDER, (0, 0.015, 0), (0.15, 0.015, 0.15), metal),
        Primitive(CYLINDER, (0, 0.8, 0), (0.015, 0.8, 0.015), metal),
        Primitive(TUBE, (0, 1.55, 0), (0.2, 0.14, 0.2), shade),
    ]
    return _place("lamp", prims, cx, cz, yaw, 0.15, 0.15, 1.7, [])


def crate(rng: random.Random, cx: float, cz: float, yaw: float) -> Piece:
    """A storage box or stack of two on the floor."""
    colour = rng.choice(((0.7, 0.55, 0.35), (0.3, 0.35, 0.45), (0.8, 0.8, 0.78), (0.55, 0.25, 0.2)))
    s = Surface(base=colour, finish="paper")
    w, d, h = rng.uniform(0.3, 0.5), rng.uniform(0.3, 0.45), rng.uniform(0.25, 0.45)
    prims = [Primitive(BOX, (0, h / 2, 0), (w / 2, h / 2, d / 2), s)]
    total = h
    if rng.random() < 0.4:
        h2 = rng.uniform(0.2, 0.35)
        prims.append(Primitive(BOX, (0.02, h + h2 / 2, 0.01), (w / 2 - 0.04, h2 / 2, d / 2 - 0.04), s))
        total += h2
    return _place("crate", prims, cx, cz, yaw, w / 2, d / 2, total, [])


def rug(rng: random.Random, cx: float, cz: float, yaw: float, w: float, d: float) -> Piece:
    """A patterned rug: walkable, hides nothing, but gives the floor texture."""
    base = rng.choice(FABRICS)
    s = Surface(
        base=base,
        pattern=rng.choice(("stripes", "checks", "plaid")),
        secondary=rgb(min(1.0, c * 1.35) for c in base),
        scale=rng.uniform(0.12, 0.3),
        finish="fabric",
    )
    prims = [Primitive(BOX, (0, 0.004, 0), (w / 2, 0.004, d / 2), s)]
    return _place("rug", prims, cx, cz, yaw, w / 2, d / 2, 0.008, [], blocks=False)


def decor(
    rng: random.Random, kind: str, x: float, y: float, z: float, height: float, width: float | None = None
) -> tuple[list[Primitive], float, float]:
    """Small decor standing on a support at (x, y, z): (primitives, footprint radius, height).

    These are the occluders that create trap views when they stand between the camera and the target.
    ``height`` and ``width`` are nominal sizes in metres (the width defaults to a kind-specific ratio).
    """
    colour = rng.choice(
        ((0.8, 0.3, 0.25), (0.25, 0.45, 0.6), (0.9, 0.88, 0.8), (0.3, 0.3, 0.32), (0.65, 0.55, 0.3))
    )
    turn = rot_y(rng.uniform(0, math.pi))
    if kind == "vase":
        r = (width or height * 0.56) / 2
        return (
            [
                Primitive(
                    ELLIPSOID,
                    (x, y + height * 0.35, z),
                    (r, height * 0.35, r),
                    Surface(base=colour, finish="ceramic"),
                ),
                Primitive(
                    CYLINDER,
                    (x, y + height * 0.8, z),
                    (r * 0.45, height * 0.2, r * 0.45),
                    Surface(base=colour, finish="ceramic"),
                ),
            ],
            r,
            height,
        )
    if kind == "box":
        w = width or height * rng.uniform(0.8, 1.4)
        prims = [
            Primitive(
                BOX,
                (x, y + height / 2, z),
                (w / 2, height / 2, w * 0.4),
                Surface(base=colour, finish="paper"),
                rotation=turn,
            )
        ]
        return prims, w * 0.55, height
    if kind == "lamp":
        metal = Surface(base=(0.25, 0.25, 0.27), finish="metal")
        shade = Surface(base=(0.95, 0.92, 0.82), finish="fabric", inside=(1.0, 0.95, 0.85))
        r = (width or height * 0.6) / 2
        return (
            [
                Primitive(CYLINDER, (x, y + 0.01, z), (r * 0.6, 0.01, r * 0.6), metal),
                Primitive(CYLINDER, (x, y + height * 0.35, z), (0.012, height * 0.35, 0.012), metal),
                Primitive(TUBE, (x, y + height * 0.8, z), (r, height * 0.2, r), shade),
            ],
            r,
            height,
        )
    if kind == "plant":
        r = (width or height * 0.65) / 2
        leaf = Surface(base=(0.22, 0.48, 0.22), finish="fabric")
        return (
            [
                Primitive(
                    CYLINDER,
                    (x, y + height * 0.2, z),
                    (r * 0.6, height * 0.2, r * 0.6),
                    Surface(base=colour, finish="ceramic"),
                ),
                Primitive(ELLIPSOID, (x, y + height * 0.62, z), (r, height * 0.38, r), leaf),
            ],
            r,
            height,
        )
    if kind == "frame":
        w = width or height * 0.8
        prims = [
            Primitive(
                BOX,
                (x, y + height / 2, z),
                (w / 2, height / 2, 0.012),
                Surface(base=colour, finish="glossy"),
                rotation=turn,
            )
        ]
        return prims, w / 2, height
    if kind == "pillow":
        w = width or height * 1.6
        prims = [
            Primitive(
                ELLIPSOID,
                (x, y + height / 2, z),
                (w / 2, height / 2, w / 2 * 0.9),
                Surface(base=colour, finish="fabric"),
                rotation=turn,
            )
        ]
        return prims, w / 2, height
    raise ValueError(f"unknown decor kind {kind!r}")
