"""Putting the target into a room: a support (floor, table, shelf, seat), a spot, a heading, occluders.

The benchmark injects each object into an HM3D house; where it lands decides how much "looking around"
the episode needs. A target against a wall has unreachable sectors; one next to a vase or behind a chair
has trap sectors. Besides what the room already offers, an episode may add one or two occluders right
next to the target, sized relative to it, which is the main source of trap views for small objects.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

import numpy as np

from .furniture import Footprint, Support, decor
from .objects.model import ObjectModel
from .renderer import Primitive, rot_y
from .scene import Room

#: Semantic id of the target in the segmentation (as in the benchmark's captures).
TARGET_ID = 100000
#: Relative preference for each support kind when a category allows several.
SUPPORT_WEIGHTS: dict[str, float] = {"floor": 1.0, "table": 1.3, "shelf": 0.9, "seat": 0.5}
#: Probability that an episode adds occluders next to the target, and their kinds per support.
P_OCCLUDER = 0.9
SURFACE_OCCLUDERS = ("vase", "box", "box", "plant", "frame", "lamp")
SEAT_OCCLUDERS = ("pillow", "pillow", "box")
FLOOR_OCCLUDERS = ("box", "box", "plant")


@dataclass
class Placement:
    """Where the target stands and what was added around it for this episode."""

    support: Support
    x: float
    y: float
    z: float
    yaw: float
    radius: float
    occluders: list[Primitive] = field(default_factory=list)
    obstacles: list[Footprint] = field(default_factory=list)
    occluder_kinds: list[str] = field(default_factory=list)
    taken: list[tuple[float, float, float]] = field(default_factory=list)  # occluders on the support

    def goal(self, model: ObjectModel) -> tuple[float, float, float]:
        """World position of the target's bounding-box centre (``goal_position_nominal``)."""
        c = rot_y(self.yaw) @ model.centre + np.array([self.x, self.y, self.z])
        return (float(c[0]), float(c[1]), float(c[2]))

    def target_prims(self, model: ObjectModel) -> list[Primitive]:
        rot = rot_y(self.yaw)
        return [
            replace(p.transformed(rot, (self.x, self.y, self.z)), object_id=TARGET_ID) for p in model.prims
        ]


def _clear_of(support: Support, x: float, z: float, radius: float) -> bool:
    return all(math.hypot(x - ox, z - oz) >= radius + r + 0.02 for ox, oz, r in support.occupied)


def _clear_of_list(taken: list[tuple[float, float, float]], x: float, z: float, radius: float) -> bool:
    return all(math.hypot(x - ox, z - oz) >= radius + r for ox, oz, r in taken)


def _floor_ok(room: Room, x: float, z: float, radius: float, extra: list[Footprint]) -> bool:
    margin = radius + 0.05
    if not (margin <= x <= room.width - margin and margin <= z <= room.depth - margin):
        return False
    xs, zs = np.array([x]), np.array([z])
    return all(fp.distance(xs, zs)[0] >= margin for fp in [*room.obstacles, *extra])


def candidate_supports(room: Room, model: ObjectModel, kinds: tuple[str, ...]) -> list[Support]:
    height = float(model.upper[1] - model.lower[1])
    radius = model.footprint_radius
    return [
        s
        for s in room.supports
        if s.kind in kinds and s.headroom >= height + 0.02 and min(s.hx, s.hz) >= radius * 0.8
    ]


def place_target(
    room: Room, model: ObjectModel, kinds: tuple[str, ...], rng: random.Random, min_height: float = 0.0
) -> Placement | None:
    """A random free spot for the target on an allowed support kind (None if nothing fits).

    ``min_height`` keeps the supports at least that high (metres) when the room has any, e.g. to put an open
    container where a standing person looks down onto it; a room without one keeps every allowed support."""
    supports = candidate_supports(room, model, kinds)
    if min_height > 0.0:
        supports = [s for s in supports if s.y >= min_height] or supports
    if not supports:
        return None
    radius = model.footprint_radius
    weights = [
        SUPPORT_WEIGHTS.get(s.kind, 1.0) / sum(1 for t in supports if t.kind == s.kind) for s in supports
    ]
    for _ in range(40):
        support = rng.choices(supports, weights=weights)[0]
        span_x = max(0.0, support.hx - radius)
        span_z = max(0.0, support.hz - radius)
        lx = rng.uniform(-span_x, span_x)
        # On shelves, objects stand toward the open front so that they can be seen at all.
        lz = rng.uniform(0.0, span_z) if support.kind == "shelf" else rng.uniform(-span_z, span_z)
        x, z = support.to_world(lx, lz)
        if not _clear_of(support, x, z, radius):
            continue
        if support.kind == "floor" and not _floor_ok(room, x, z, radius, []):
            continue
        if support.kind == "shelf" and rng.random() < 0.7:
            yaw = support.yaw + rng.uniform(-0.7, 0.7)
        else:
            yaw = rng.uniform(0.0, 2.0 * math.pi)
        return Placement(support, x, support.y, z, yaw, radius)
    return None


def add_occluders(room: Room, placement: Placement, model: ObjectModel, rng: random.Random) -> None:
    """With probability :data:`P_OCCLUDER`, one or two occluders right next to the target.

    They are sized from the target (wider than it, 1.5-3x as tall, plus what the camera's downward view
    needs), because a trap view requires the target to be hidden from *both* distance rings of a sector.
    """
    if rng.random() >= P_OCCLUDER:
        return
    height = float(model.upper[1] - model.lower[1])
    diameter = 2.0 * placement.radius
    support = placement.support
    on_floor = support.kind == "floor"
    for _ in range(rng.choice((1, 2, 2))):
        kinds = {"floor": FLOOR_OCCLUDERS, "seat": SEAT_OCCLUDERS}.get(support.kind, SURFACE_OCCLUDERS)
        kind = rng.choice(kinds)
        width = diameter * rng.uniform(1.0, 1.7) + (0.1 if on_floor else 0.0)
        tall = height * rng.uniform(1.5, 2.8) + (0.2 if on_floor else 0.06)
        tall = min(tall, support.headroom - 0.02)
        if tall < 0.06:
            continue
        radius = decor(random.Random(0), kind, 0.0, 0.0, 0.0, tall, width)[1]
        for _ in range(8):  # try a few directions until the occluder fits
            angle = rng.uniform(0.0, 2.0 * math.pi)
            distance = placement.radius + radius + rng.uniform(0.0, 0.06)
            x = placement.x + distance * math.cos(angle)
            z = placement.z + distance * math.sin(angle)
            if on_floor:
                ok = _floor_ok(room, x, z, radius, placement.obstacles)
            else:
                lx, lz = _to_local(support, x, z)
                # The whole occluder must stand on the surface (support rectangles are inset 6 cm from
                # the real edge); a box hanging in the air in front of a shelf would look absurd.
                ok = (
                    abs(lx) + 0.8 * radius <= support.hx + 0.06
                    and abs(lz) + 0.8 * radius <= support.hz + 0.06
                    and _clear_of(support, x, z, radius)
                )
            if ok and _clear_of_list(placement.taken, x, z, radius):
                prims, radius, _ = decor(rng, kind, x, support.y, z, tall, width)
                placement.occluders += prims
                placement.occluder_kinds.append(kind)
                placement.taken.append((x, z, radius))
                if on_floor:
                    placement.obstacles.append(Footprint(x, z, radius, radius, 0.0))
                break


def _to_local(support: Support, x: float, z: float) -> tuple[float, float]:
    dx, dz = x - support.cx, z - support.cz
    c, s = math.cos(support.yaw), math.sin(support.yaw)
    return c * dx - s * dz, s * dx + c * dz
