"""Procedural rooms: walls, furniture, decor, the places objects can stand, and where the agent can stand.

A scene plays the role of an HM3D house in the benchmark: many episodes share it, each injecting one target
object somewhere in it. What makes the benchmark's sector statistics is reproduced by construction:
furniture and walls make some sectors unreachable (a target on a shelf against a wall cannot be seen from
behind the wall), and furniture, decor and partition walls hide the target from some reachable sectors
(trap views).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from .camera import AGENT_RADIUS
from .furniture import (
    FABRICS,
    WOODS,
    Footprint,
    Piece,
    Support,
    armchair,
    bed,
    cabinet,
    chair,
    crate,
    decor,
    desk,
    floor_lamp,
    plant,
    rug,
    shelf,
    sofa,
    table,
)
from .materials import Surface, rgb
from .renderer import BOX, Light, Primitive

WALL_HEIGHT = 2.6
WALL_THICKNESS = 0.1
#: Room layouts and the furniture each one contains (wall-backed pieces first, then free-standing ones).
STYLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "living room": (
        ("sofa", "shelf", "cabinet", "shelf"),
        ("coffee table", "armchair", "plant", "lamp", "crate"),
    ),
    "bedroom": (("bed", "cabinet", "desk", "shelf"), ("plant", "crate", "armchair")),
    "office": (("desk", "shelf", "shelf", "cabinet", "desk"), ("plant", "crate", "table")),
    "dining room": (("cabinet", "shelf", "cabinet"), ("dining set", "plant", "lamp")),
}
DECOR_KINDS = ("vase", "box", "lamp", "plant", "frame", "pillow")


@dataclass
class Room:
    """A generated room: primitives to render plus the geometry the sampler and placer need."""

    key: str
    style: str
    width: float
    depth: float
    prims: list[Primitive]
    pieces: list[Piece]
    obstacles: list[Footprint]
    supports: list[Support]
    light: Light
    decor_count: int = 0
    walls: list[Footprint] = field(default_factory=list)

    def navigable(self, x: float, z: float, extra: list[Footprint] | None = None) -> bool:
        """Whether the agent's body (radius 0.17 m) fits at (x, z): inside the walls, clear of furniture."""
        r = AGENT_RADIUS
        if not (r <= x <= self.width - r and r <= z <= self.depth - r):
            return False
        return all(fp.distance_to(x, z) > r for fp in self.obstacles) and all(
            fp.distance_to(x, z) > r for fp in extra or ()
        )

    def navigable_many(
        self, xs: np.ndarray, zs: np.ndarray, extra: list[Footprint] | None = None
    ) -> np.ndarray:
        r = AGENT_RADIUS
        ok = (xs >= r) & (xs <= self.width - r) & (zs >= r) & (zs <= self.depth - r)
        for fp in [*self.obstacles, *(extra or [])]:
            ok &= fp.distance(xs, zs) > r
        return ok


def rects_overlap(a: Footprint, b: Footprint, margin: float = 0.0) -> bool:
    """Separating-axis test for two oriented rectangles grown by ``margin``."""

    def axes(f: Footprint) -> list[tuple[float, float]]:
        c, s = math.cos(f.yaw), math.sin(f.yaw)
        return [(c, -s), (s, c)]

    def corners(f: Footprint) -> list[tuple[float, float]]:
        (ux, uz), (vx, vz) = axes(f)
        hx, hz = f.hx + margin, f.hz + margin
        return [
            (f.cx + sx * hx * ux + sz * hz * vx, f.cz + sx * hx * uz + sz * hz * vz)
            for sx in (-1, 1)
            for sz in (-1, 1)
        ]

    ca, cb = corners(a), corners(b)
    for ax, az in axes(a) + axes(b):
        pa = [x * ax + z * az for x, z in ca]
        pb = [x * ax + z * az for x, z in cb]
        if max(pa) < min(pb) or max(pb) < min(pa):
            return False
    return True


def _walls(width: float, depth: float, colour: tuple[float, float, float]) -> list[Primitive]:
    t, h = WALL_THICKNESS, WALL_HEIGHT
    wall = Surface(base=colour, finish="paint")
    return [
        Primitive(BOX, (-t / 2, h / 2, depth / 2), (t / 2, h / 2, depth / 2 + t), wall),
        Primitive(BOX, (width + t / 2, h / 2, depth / 2), (t / 2, h / 2, depth / 2 + t), wall),
        Primitive(BOX, (width / 2, h / 2, -t / 2), (width / 2 + t, h / 2, t / 2), wall),
        Primitive(BOX, (width / 2, h / 2, depth + t / 2), (width / 2 + t, h / 2, t / 2), wall),
    ]


def _floor(rng: random.Random, width: float, depth: float) -> Primitive:
    kind = rng.choice(("planks", "tiles", "carpet"))
    if kind == "planks":
        wood = rng.choice(WOODS)
        surface = Surface(
            base=wood,
            pattern="stripes",
            secondary=rgb(c * 0.85 for c in wood),
            scale=0.18,
            angle=rng.choice((0.0, math.pi / 2)),
            finish="wood",
        )
    elif kind == "tiles":
        tone = rng.choice(((0.85, 0.84, 0.8), (0.6, 0.6, 0.62), (0.75, 0.68, 0.58)))
        surface = Surface(
            base=tone, pattern="checks", secondary=rgb(c * 0.9 for c in tone), scale=0.45, finish="ceramic"
        )
    else:
        surface = Surface(base=rng.choice(FABRICS), finish="fabric")
    return Primitive(BOX, (width / 2, -0.05, depth / 2), (width / 2 + 0.2, 0.05, depth / 2 + 0.2), surface)


def _wall_openings(rng: random.Random, width: float, depth: float) -> list[Primitive]:
    """A door and a window or two as flat panels on the walls (decoration; they block nothing)."""
    prims = []
    spans = [(0, width), (1, width), (2, depth), (3, depth)]
    rng.shuffle(spans)
    door_wood = Surface(base=rng.choice(WOODS), finish="wood")
    frame = Surface(base=(0.95, 0.95, 0.93), finish="paint")
    glass = Surface(base=(0.62, 0.76, 0.88), finish="glass")
    for i, (side, length) in enumerate(spans[:3]):
        along = rng.uniform(0.7, length - 0.7)
        if i == 0:
            items = [(0.45, 1.02, 1.02, 0.02, door_wood)]
        else:
            w = rng.uniform(0.45, 0.7)
            items = [(w + 0.05, 1.5, 0.6, 0.015, frame), (w, 1.5, 0.55, 0.025, glass)]
        for half_w, cy, half_h, proud, surface in items:
            if side == 0:
                c, size = (along, cy, proud / 2), (half_w, half_h, proud / 2)
            elif side == 1:
                c, size = (along, cy, depth - proud / 2), (half_w, half_h, proud / 2)
            elif side == 2:
                c, size = (proud / 2, cy, along), (proud / 2, half_h, half_w)
            else:
                c, size = (width - proud / 2, cy, along), (proud / 2, half_h, half_w)
            prims.append(Primitive(BOX, c, size, surface))
    return prims


_WALL_PIECES = {"sofa": sofa, "shelf": shelf, "cabinet": cabinet, "bed": bed, "desk": desk}
_FREE_PIECES = {"armchair": armchair, "plant": plant, "lamp": floor_lamp, "crate": crate}


def _fits(room_w: float, room_d: float, fp: Footprint, pieces: list[Piece], margin: float) -> bool:
    test = Footprint(fp.cx, fp.cz, fp.hx, fp.hz, fp.yaw)
    # Inside the room: check the rotated corners.
    c, s = math.cos(fp.yaw), math.sin(fp.yaw)
    for sx in (-1, 1):
        for sz in (-1, 1):
            x = fp.cx + c * sx * fp.hx + s * sz * fp.hz
            z = fp.cz - s * sx * fp.hx + c * sz * fp.hz
            if not (0.0 <= x <= room_w and 0.0 <= z <= room_d):
                return False
    return all(not (p.footprint and p.blocks and rects_overlap(test, p.footprint, margin)) for p in pieces)


def _against_wall(rng: random.Random, builder, w: float, d: float, pieces: list[Piece]) -> Piece | None:
    for _ in range(30):
        side = rng.randrange(4)
        sub_seed = rng.random()  # the probe and the placed piece must have the same dimensions
        probe = builder(random.Random(sub_seed), 0.0, 0.0, 0.0)
        hx, hz = probe.footprint.hx, probe.footprint.hz
        if side in (0, 1):
            if w < 2 * hx + 0.1:
                continue
            along = rng.uniform(hx + 0.02, w - hx - 0.02)
            cx, cz, yaw = (along, hz + 0.01, 0.0) if side == 0 else (along, d - hz - 0.01, math.pi)
        else:
            if d < 2 * hx + 0.1:
                continue
            along = rng.uniform(hx + 0.02, d - hx - 0.02)
            cx, cz, yaw = (
                (hz + 0.01, along, math.pi / 2) if side == 2 else (w - hz - 0.01, along, -math.pi / 2)
            )
        fp = Footprint(cx, cz, hx, hz, yaw)
        if _fits(w, d, fp, pieces, 0.05):
            return builder(random.Random(sub_seed), cx, cz, yaw)
    return None


def _free(
    rng: random.Random, builder, w: float, d: float, pieces: list[Piece], clearance: float = 0.45
) -> Piece | None:
    for _ in range(30):
        yaw = rng.uniform(0.0, 2.0 * math.pi)
        sub_seed = rng.random()
        probe = builder(random.Random(sub_seed), 0.0, 0.0, 0.0)
        hx, hz = probe.footprint.hx, probe.footprint.hz
        cx = rng.uniform(0.3 + hx, w - 0.3 - hx) if w > 0.6 + 2 * hx else w / 2
        cz = rng.uniform(0.3 + hz, d - 0.3 - hz) if d > 0.6 + 2 * hz else d / 2
        fp = Footprint(cx, cz, hx, hz, yaw)
        if _fits(w, d, fp, pieces, clearance):
            return builder(random.Random(sub_seed), cx, cz, yaw)
    return None


def _dining_set(rng: random.Random, w: float, d: float, pieces: list[Piece]) -> list[Piece]:
    tab = _free(rng, lambda r, x, z, a: table(r, x, z, a), w, d, pieces, clearance=0.8)
    if tab is None:
        return []
    out = [tab]
    fp = tab.footprint
    assert fp is not None
    for side in rng.sample(range(4), rng.randint(2, 4)):
        lx, lz, face = [
            (0, fp.hz + 0.3, math.pi),
            (0, -fp.hz - 0.3, 0.0),
            (fp.hx + 0.3, 0, -math.pi / 2),
            (-fp.hx - 0.3, 0, math.pi / 2),
        ][side]
        c, s = math.cos(fp.yaw), math.sin(fp.yaw)
        cx, cz = fp.cx + c * lx + s * lz, fp.cz - s * lx + c * lz
        ch = Footprint(cx, cz, 0.22, 0.22, fp.yaw + face)
        if _fits(w, d, ch, pieces + out[1:], 0.02):
            out.append(chair(random.Random(rng.random()), cx, cz, fp.yaw + face))
    return out


def add_decor_on(
    rng: random.Random, support: Support, kind: str, size: float, lx: float, lz: float
) -> tuple[list[Primitive], float]:
    """Decor item at local support coordinates; records it as occupying that spot."""
    x, z = support.to_world(lx, lz)
    prims, radius, _ = decor(rng, kind, x, support.y, z, size, None)
    support.occupied.append((x, z, radius))
    return prims, radius


def generate_room(key: str, seed: int) -> Room:
    """A furnished room, fully determined by its key and seed."""
    rng = random.Random(f"{key}/{seed}")
    style = rng.choice(sorted(STYLES))
    width, depth = round(rng.uniform(5.0, 8.0), 2), round(rng.uniform(4.4, 6.6), 2)
    wall_colour = rng.choice(
        ((0.9, 0.88, 0.82), (0.82, 0.85, 0.86), (0.88, 0.82, 0.76), (0.78, 0.82, 0.76), (0.93, 0.93, 0.92))
    )
    prims: list[Primitive] = [_floor(rng, width, depth), *_walls(width, depth, wall_colour)]
    prims.append(
        Primitive(
            BOX,
            (width / 2, WALL_HEIGHT + 0.05, depth / 2),
            (width / 2 + 0.2, 0.05, depth / 2 + 0.2),
            Surface(base=(0.95, 0.95, 0.94), finish="paint"),
        )
    )
    prims += _wall_openings(rng, width, depth)
    pieces: list[Piece] = []
    walls: list[Footprint] = []

    if rng.random() < 0.35:  # partition wall reaching into the room from one side
        along_x = width >= depth
        length = rng.uniform(0.35, 0.5) * (depth if along_x else width)
        pos = rng.uniform(0.35, 0.65) * (width if along_x else depth)
        from_low = rng.random() < 0.5
        if along_x:
            cz = length / 2 if from_low else depth - length / 2
            fp = Footprint(pos, cz, WALL_THICKNESS / 2, length / 2, 0.0)
        else:
            cx = length / 2 if from_low else width - length / 2
            fp = Footprint(cx, pos, length / 2, WALL_THICKNESS / 2, 0.0)
        walls.append(fp)
        prims.append(
            Primitive(
                BOX,
                (fp.cx, WALL_HEIGHT / 2, fp.cz),
                (fp.hx, WALL_HEIGHT / 2, fp.hz),
                Surface(base=wall_colour, finish="paint"),
            )
        )
        pieces.append(Piece("partition", [], fp, [], WALL_HEIGHT))

    wall_kinds, free_kinds = STYLES[style]
    for kind in wall_kinds:
        if rng.random() < 0.85:
            piece = _against_wall(rng, _WALL_PIECES[kind], width, depth, pieces)
            if piece is not None:
                pieces.append(piece)
    for kind in free_kinds:
        if rng.random() > 0.8:
            continue
        if kind == "dining set":
            pieces += _dining_set(rng, width, depth, pieces)
        elif kind in ("coffee table", "table"):
            piece = _free(
                rng,
                lambda r, x, z, a, low=(kind == "coffee table"): table(r, x, z, a, low=low),
                width,
                depth,
                pieces,
            )
            if piece is not None:
                pieces.append(piece)
        else:
            piece = _free(rng, _FREE_PIECES[kind], width, depth, pieces)
            if piece is not None:
                pieces.append(piece)
    if rng.random() < 0.6:
        pieces.append(
            rug(
                rng,
                width / 2 + rng.uniform(-0.4, 0.4),
                depth / 2 + rng.uniform(-0.4, 0.4),
                rng.choice((0.0, math.pi / 2)),
                rng.uniform(1.4, min(2.6, width - 0.6)),
                rng.uniform(1.0, min(2.0, depth - 0.6)),
            )
        )

    supports: list[Support] = [
        Support("floor", 0.0, width / 2, depth / 2, width / 2 - 0.15, depth / 2 - 0.15, 0.0, WALL_HEIGHT)
    ]
    for piece in pieces:
        prims += piece.prims
        supports += piece.supports
    decor_count = 0
    for support in supports:
        if support.kind not in ("table", "shelf") or rng.random() < 0.45:
            continue
        size = min(support.headroom - 0.03, rng.uniform(0.15, 0.35))
        if size < 0.08:
            continue
        lx = rng.uniform(-support.hx, support.hx)
        lz = rng.uniform(-support.hz, support.hz) * 0.5
        items, _ = add_decor_on(rng, support, rng.choice(DECOR_KINDS[:5]), size, lx, lz)
        prims += items
        decor_count += 1
    obstacles = [p.footprint for p in pieces if p.footprint is not None and p.blocks]
    angle = rng.uniform(0.0, 2.0 * math.pi)
    light = Light(
        direction=(math.cos(angle) * 0.5, 1.0, math.sin(angle) * 0.5),
        ambient=rng.uniform(0.38, 0.48),
        diffuse=rng.uniform(0.5, 0.6),
    )
    return Room(key, style, width, depth, prims, pieces, obstacles, supports, light, decor_count, walls)
