"""A CPU ray caster over analytic primitives that yields RGB, per-object ids and per-part regions.

Why not a mesh rasteriser (e.g. pybullet's TinyRenderer, ~70 ms per 360x640 frame here): the captures need
(a) an exact per-object segmentation, (b) to know for every pixel *which part and which printed decal* it
shows, so the ground truth can say which attributes a capture actually shows, and (c) crisp procedural
patterns and text pinned to one face. Casting one ray per pixel against boxes, ellipsoids, capped
cylinders and open tubes gives all three directly: a pixel's hit carries its primitive, and the hit point
in the primitive's own frame gives the face and metric (u, v) coordinates used by patterns and decals.

Speed comes from two things: each primitive is only tested against the pixels inside the screen-space
box of its bounding sphere, and shading runs once per visible pixel (deferred), grouped by primitive.
All arithmetic is element-wise NumPy (no BLAS), so frames are bit-identical across runs and worker counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .camera import BENCHMARK_INTRINSICS, NEAR_CLIP, CameraPose, Intrinsics
from .materials import FINISHES, Decal, Surface, sample_decal, surface_colour

BOX = "box"
ELLIPSOID = "ellipsoid"
CYLINDER = "cylinder"
TUBE = "tube"
KINDS = (BOX, ELLIPSOID, CYLINDER, TUBE)

#: Face codes: box faces +x, -x, +y, -y, +z, -z; 6 = curved side of cylinders, tubes and ellipsoids.
FACE_PX, FACE_NX, FACE_PY, FACE_NY, FACE_PZ, FACE_NZ, FACE_SIDE = range(7)

_EPS = 1e-4
_IDENTITY = np.eye(3)


def rot_y(angle: float) -> np.ndarray:
    """Rotation about +y (yaw). A local +z axis ends up pointing at azimuth ``pi/2 - angle`` in XZ."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class Primitive:
    """One analytic shape in world space.

    ``size``: box half extents; ellipsoid radii; cylinder/tube (radius x, half height, radius z) with the
    axis along local y. ``rotation`` maps local to world. ``clip`` = (nx, ny, nz, d) keeps only the local
    points with n.q >= d (hemispheres, half rings). ``object_id`` is the segmentation id (0 = room and
    furniture) and ``region`` the part id that attribute visibility is counted on.
    """

    kind: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    surface: Surface
    rotation: np.ndarray = field(default_factory=lambda: _IDENTITY, repr=False)
    object_id: int = 0
    region: int = -1
    clip: tuple[float, float, float, float] | None = None
    decals: tuple[Decal, ...] = ()

    @property
    def bound_radius(self) -> float:
        sx, sy, sz = self.size
        if self.kind == BOX:
            return math.sqrt(sx * sx + sy * sy + sz * sz)
        if self.kind == ELLIPSOID:
            return max(sx, sy, sz)
        return math.sqrt(max(sx, sz) ** 2 + sy * sy)

    def transformed(self, rotation: np.ndarray, translation: Sequence[float]) -> Primitive:
        """The primitive moved rigidly: world = rotation @ p + translation."""
        center = rotation @ np.asarray(self.center, dtype=np.float64) + np.asarray(translation)
        return Primitive(
            kind=self.kind,
            center=(float(center[0]), float(center[1]), float(center[2])),
            size=self.size,
            surface=self.surface,
            rotation=rotation @ self.rotation,
            object_id=self.object_id,
            region=self.region,
            clip=self.clip,
            decals=self.decals,
        )


@dataclass(frozen=True)
class Light:
    """One directional key light plus ambient and a weak fill from the camera."""

    direction: tuple[float, float, float] = (0.35, 1.0, 0.25)  # toward the light
    ambient: float = 0.42
    diffuse: float = 0.55
    fill: float = 0.12
    bounce: float = 0.3  # light reflected up from the floor onto ceilings and undersides
    tint: tuple[float, float, float] = (1.0, 0.98, 0.94)


@dataclass(frozen=True)
class ShadowZone:
    """Contact shadows: the ``casters`` (indices into the primitive list) shadow whatever lies within
    ``radius`` of ``centre`` (x, z) from the key light. Limited to a zone so that it stays cheap; it is used
    around the target, where a grounded-looking object matters most."""

    casters: tuple[int, ...]
    centre: tuple[float, float]
    radius: float
    darkening: float = 0.42


@dataclass
class Frame:
    """One rendered view: colours and the per-pixel labels the capture pipeline needs."""

    rgb: np.ndarray  # (H, W, 3) uint8
    object_ids: np.ndarray  # (H, W) int32, 0 = background / structure
    regions: np.ndarray  # (H, W) int32 part region, -1 = none
    decal_regions: np.ndarray  # (H, W) int32 region of a decal covering the pixel, -1 = none
    depth: np.ndarray  # (H, W) float32 ray parameter (forward-normalised distance), inf = miss


# -- intersection ------------------------------------------------------------------------------------------


def _intervals(
    kind: str,
    o: Sequence[Any],
    dx: Any,
    dy: Any,
    dz: Any,
    size: Sequence[float],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Entry/exit ray parameters in the primitive's local frame and a hit flag.

    Either the origin is one point (camera rays: ``o`` holds Python floats, directions are arrays) or the
    direction is one vector (shadow rays: origins are arrays); the arithmetic is the same. For tubes (open
    cylinders) the two values are the two side roots, each valid on its own; the last return value says so
    (``True`` = independent roots, ``False`` = a solid interval).
    """
    sx, sy, sz = (float(s) for s in size)
    ox, oy, oz = o[0], o[1], o[2]
    if kind == BOX:
        ix, iy, iz = 1.0 / dx, 1.0 / dy, 1.0 / dz
        ax, bx = (-sx - ox) * ix, (sx - ox) * ix
        ay, by = (-sy - oy) * iy, (sy - oy) * iy
        az, bz = (-sz - oz) * iz, (sz - oz) * iz
        tin = np.maximum(np.maximum(np.minimum(ax, bx), np.minimum(ay, by)), np.minimum(az, bz))
        tout = np.minimum(np.minimum(np.maximum(ax, bx), np.maximum(ay, by)), np.maximum(az, bz))
        return tin, tout, tout >= tin, False
    if kind == ELLIPSOID:
        px, py, pz = ox / sx, oy / sy, oz / sz
        ex, ey, ez = dx / sx, dy / sy, dz / sz
        a = ex * ex + ey * ey + ez * ez
        b = px * ex + py * ey + pz * ez
        c = px * px + py * py + pz * pz - 1.0
        disc = b * b - a * c
        hit = disc >= 0.0
        root = np.sqrt(np.maximum(disc, 0.0))
        return (-b - root) / a, (-b + root) / a, hit, False
    # Cylinder and tube share the side quadric.
    px, pz = ox / sx, oz / sz
    ex, ez = dx / sx, dz / sz
    a = ex * ex + ez * ez
    b = px * ex + pz * ez
    c = px * px + pz * pz - 1.0
    disc = b * b - a * c
    hit = disc >= 0.0
    root = np.sqrt(np.maximum(disc, 0.0))
    t0, t1 = (-b - root) / a, (-b + root) / a
    if kind == TUBE:
        return t0, t1, hit, True
    iy = 1.0 / dy
    ay, by = (-sy - oy) * iy, (sy - oy) * iy
    tin = np.maximum(t0, np.minimum(ay, by))
    tout = np.minimum(t1, np.maximum(ay, by))
    return tin, tout, hit & (tout >= tin), False


def _clip_ok(
    clip: tuple[float, float, float, float] | None,
    o: Sequence[float],
    t: np.ndarray,
    dx: np.ndarray,
    dy: np.ndarray,
    dz: np.ndarray,
) -> np.ndarray | bool:
    if clip is None:
        return True
    nx, ny, nz, d0 = clip
    return (o[0] + t * dx) * nx + (o[1] + t * dy) * ny + (o[2] + t * dz) * nz >= d0


def _local_rays(prim: Primitive, origin: np.ndarray, dx: np.ndarray, dy: np.ndarray, dz: np.ndarray):
    r = prim.rotation
    o = r.T @ (origin - np.asarray(prim.center))
    if r is _IDENTITY:
        return o, dx, dy, dz
    lx = dx * np.float32(r[0, 0]) + dy * np.float32(r[1, 0]) + dz * np.float32(r[2, 0])
    ly = dx * np.float32(r[0, 1]) + dy * np.float32(r[1, 1]) + dz * np.float32(r[2, 1])
    lz = dx * np.float32(r[0, 2]) + dy * np.float32(r[1, 2]) + dz * np.float32(r[2, 2])
    return o, lx, ly, lz


def intersect(
    prim: Primitive, origin: np.ndarray, dx: np.ndarray, dy: np.ndarray, dz: np.ndarray
) -> np.ndarray:
    """Nearest visible ray parameter per ray (inf where the primitive is missed or clipped away).

    Divisions by a zero direction component give +-inf, which the slab and quadric tests handle; the rare
    0 * inf = NaN compares false everywhere and simply counts as a miss for that ray.
    """
    o, lx, ly, lz = _local_rays(prim, origin, dx, dy, dz)
    o = (float(o[0]), float(o[1]), float(o[2]))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t0, t1, hit, independent = _intervals(prim.kind, o, lx, ly, lz, prim.size)
        if independent:  # tube: each root must lie within the height
            h = prim.size[1]
            ok0 = hit & (t0 > _EPS) & (np.abs(o[1] + t0 * ly) <= h)
            ok1 = hit & (t1 > _EPS) & (np.abs(o[1] + t1 * ly) <= h)
        else:
            ok0 = hit & (t0 > _EPS)
            ok1 = hit & (t1 > _EPS)
        if prim.clip is not None:
            ok0 = ok0 & _clip_ok(prim.clip, o, t0, lx, ly, lz)
            ok1 = ok1 & _clip_ok(prim.clip, o, t1, lx, ly, lz)
    inf = np.float32(np.inf)
    return np.where(ok0, t0, np.where(ok1, t1, inf)).astype(np.float32, copy=False)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of two (N, 3) arrays, element-wise (see :func:`_mat_vec`)."""
    return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]


def _sphere_candidates(
    centre: np.ndarray, radius: float, points: np.ndarray, light: np.ndarray, skip: np.ndarray
) -> np.ndarray:
    """Points whose ray toward the light passes within ``radius`` of ``centre`` (and is not yet blocked)."""
    rel = centre.astype(np.float32) - points
    along = rel[:, 0] * light[0] + rel[:, 1] * light[1] + rel[:, 2] * light[2]
    perp2 = _dot(rel, rel) - along * along
    r = np.float32(radius)
    return (along > -r) & (perp2 < r * r) & ~skip


def _caster_groups(casters: Sequence[Primitive]) -> list[tuple[np.ndarray, float, list[Primitive]]]:
    """Casters grouped by object id with a bounding sphere per group (a cheap first rejection test)."""
    by_object: dict[int, list[Primitive]] = {}
    for prim in casters:
        by_object.setdefault(prim.object_id, []).append(prim)
    groups = []
    for members in by_object.values():
        centres = np.array([p.center for p in members], dtype=np.float64)
        centre = centres.mean(axis=0)
        radius = max(
            float(np.linalg.norm(c - centre)) + p.bound_radius for c, p in zip(centres, members, strict=True)
        )
        groups.append((centre, radius, members))
    return groups


def _shadowed(casters: Sequence[Primitive], points: np.ndarray, light: np.ndarray) -> np.ndarray:
    """Whether the ray from each point toward the light hits one of the casters (N,) bool."""
    blocked = np.zeros(len(points), dtype=bool)
    for centre, radius, members in _caster_groups(casters):
        in_group = _sphere_candidates(centre, radius, points, light, blocked)
        if in_group.any():
            sel = np.flatnonzero(in_group)
            blocked[sel] = _shadowed_by(members, points[sel], light)
    return blocked


def _shadowed_by(casters: Sequence[Primitive], points: np.ndarray, light: np.ndarray) -> np.ndarray:
    blocked = np.zeros(len(points), dtype=bool)
    for prim in casters:
        centre = np.asarray(prim.center, dtype=np.float32)
        candidate = _sphere_candidates(centre, prim.bound_radius, points, light, blocked)
        if not candidate.any():
            continue
        idx = np.flatnonzero(candidate)
        r = prim.rotation.astype(np.float32)
        local = _mat_vec(r.T, points[idx] - centre)
        d = r.T @ light
        ox, oy, oz = local[:, 0], local[:, 1], local[:, 2]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            t0, t1, hit, independent = _intervals(
                prim.kind, (ox, oy, oz), np.float32(d[0]), np.float32(d[1]), np.float32(d[2]), prim.size
            )
            ok0 = hit & (t0 > _EPS)
            ok1 = hit & (t1 > _EPS)
            if independent:
                ok0 &= np.abs(oy + t0 * d[1]) <= prim.size[1]
                ok1 &= np.abs(oy + t1 * d[1]) <= prim.size[1]
            if prim.clip is not None:
                nx, ny, nz, d0 = prim.clip
                ok0 &= (ox + t0 * d[0]) * nx + (oy + t0 * d[1]) * ny + (oz + t0 * d[2]) * nz >= d0
                ok1 &= (ox + t1 * d[0]) * nx + (oy + t1 * d[1]) * ny + (oz + t1 * d[2]) * nz >= d0
        blocked[idx] |= ok0 | ok1
    return blocked


def _mat_vec(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``m @ v_i`` for every row of ``v`` (N, 3), written out element-wise so no BLAS kernel (whose
    summation order may depend on threading) touches pixel values."""
    out = np.empty_like(v)
    for i in range(3):
        out[:, i] = v[:, 0] * m[i, 0] + v[:, 1] * m[i, 1] + v[:, 2] * m[i, 2]
    return out


# -- surface parameterisation -----------------------------------------------------------------------------


def _surface_frame(kind: str, q: np.ndarray, size: Sequence[float]):
    """Local normal (N, 3), face code (N,), metric (u, v) and the u period of curved faces."""
    sx, sy, sz = (float(s) for s in size)
    x, y, z = q[:, 0], q[:, 1], q[:, 2]
    n = np.zeros_like(q)
    if kind == BOX:
        rel = np.abs(q) / np.array([sx, sy, sz], dtype=np.float32)
        axis = np.argmax(rel, axis=1)
        sign = np.where(q[np.arange(len(q)), axis] >= 0.0, 1.0, -1.0).astype(np.float32)
        n[np.arange(len(q)), axis] = sign
        face = (axis * 2 + (sign < 0)).astype(np.int32)
        u = np.select([face == 0, face == 1, face == 5], [-z, z, -x], default=x)
        v = np.select([face == 2, face == 3], [-z, z], default=y)
        return n, face, u, v, 0.0
    if kind == ELLIPSOID:
        n[:, 0], n[:, 1], n[:, 2] = x / (sx * sx), y / (sy * sy), z / (sz * sz)
        n /= np.sqrt(_dot(n, n))[:, None] + 1e-12
        r_eq = 0.5 * (sx + sz)
        u = np.arctan2(x / sx, z / sz) * r_eq
        face = np.full(len(q), FACE_SIDE, dtype=np.int32)
        return n, face, u, y, 2.0 * math.pi * r_eq
    r_eq = 0.5 * (sx + sz)
    radial = np.sqrt((x / sx) ** 2 + (z / sz) ** 2)
    side = np.ones(len(q), dtype=bool)
    if kind == CYLINDER:
        side = np.abs(radial - 1.0) <= np.abs(np.abs(y) / sy - 1.0)
    n[:, 0], n[:, 2] = x / (sx * sx), z / (sz * sz)
    n[~side] = 0.0
    n[~side, 1] = np.sign(y[~side])
    n /= np.sqrt(_dot(n, n))[:, None] + 1e-12
    face = np.where(side, FACE_SIDE, np.where(y >= 0.0, FACE_PY, FACE_NY)).astype(np.int32)
    u = np.where(side, np.arctan2(x / sx, z / sz) * r_eq, x)
    v = np.where(side, y, np.where(y >= 0.0, -z, z))
    return n, face, u, v, 2.0 * math.pi * r_eq


# -- renderer ---------------------------------------------------------------------------------------------


_CORNERS = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]


def screen_rect(prim: Primitive, pose: CameraPose, intr: Intrinsics) -> tuple[int, int, int, int] | None:
    """Pixel rectangle (row0, row1, col0, col1) covering the primitive's local bounding box.

    The box corners in front of the near plane, plus the points where box edges cross it, are projected;
    their pixel extent bounds the primitive exactly for boxes and conservatively for round shapes. A box
    entirely behind the camera is culled, which removes most walls and furniture behind the agent.
    """
    sx, sy, sz = prim.size
    corners = _CORNERS * np.array([sx, sy, sz]) @ prim.rotation.T + np.asarray(prim.center)
    rel = corners - pose.position
    depth = rel @ pose.forward
    if (depth <= NEAR_CLIP).all():
        return None
    right = rel @ pose.right
    up = rel @ pose.up
    keep = depth > NEAR_CLIP
    ds, xs, ys = list(depth[keep]), list(right[keep]), list(up[keep])
    if not keep.all():
        for a, b in _EDGES:
            if keep[a] != keep[b]:
                f = (NEAR_CLIP - depth[a]) / (depth[b] - depth[a])
                ds.append(NEAR_CLIP)
                xs.append(right[a] + f * (right[b] - right[a]))
                ys.append(up[a] + f * (up[b] - up[a]))
    d = np.asarray(ds)
    cols = intr.cx + intr.fx * np.asarray(xs) / d
    rows = intr.cy - intr.fy * np.asarray(ys) / d
    c0 = max(0, math.floor(cols.min()) - 1)
    c1 = min(intr.width, math.ceil(cols.max()) + 2)
    r0 = max(0, math.floor(rows.min()) - 1)
    r1 = min(intr.height, math.ceil(rows.max()) + 2)
    if c0 >= c1 or r0 >= r1:
        return None
    return r0, r1, c0, c1


def _shade(prim: Primitive, q: np.ndarray, dirs: np.ndarray, light: Light) -> tuple[np.ndarray, np.ndarray]:
    """Lit colour (N, 3) and decal region (N,) of the pixels where ``prim`` is the nearest hit."""
    n_local, face, u, v, period = _surface_frame(prim.kind, q, prim.size)
    r = prim.rotation.astype(np.float32)
    normal = _mat_vec(r, n_local)
    facing = _dot(normal, dirs)
    backface = facing > 0.0
    normal[backface] *= -1.0
    albedo = surface_colour(prim.surface, u, v, backface)
    decal_region = np.full(len(q), -1, dtype=np.int32)
    for decal in prim.decals:
        on_face = (face == decal.face) & ~backface
        if not on_face.any():
            continue
        du = u - decal.center[0]
        if decal.face == FACE_SIDE and period > 0.0:
            du = (du + 0.5 * period) % period - 0.5 * period
        colour, alpha, inside = sample_decal(decal, du + decal.center[0], v)
        alpha = alpha * on_face
        albedo = albedo * (1.0 - alpha[:, None]) + colour * alpha[:, None]
        decal_region[inside & on_face] = decal.region

    diffuse_k, spec_k, shininess, _, _ = FINISHES[prim.surface.finish]
    ld = np.asarray(light.direction, dtype=np.float32)
    ld = ld / np.linalg.norm(ld)
    view = -dirs / (np.sqrt(_dot(dirs, dirs))[:, None] + 1e-12)
    lambert = np.maximum(normal[:, 0] * ld[0] + normal[:, 1] * ld[1] + normal[:, 2] * ld[2], 0.0)
    fill = np.maximum(_dot(normal, view), 0.0)
    sky = 0.5 + 0.5 * normal[:, 1]
    bounce = light.bounce * np.maximum(-normal[:, 1], 0.0)
    intensity = light.ambient * (0.75 + 0.25 * sky) + light.diffuse * lambert + light.fill * fill + bounce
    colour = albedo * (diffuse_k * intensity)[:, None] * np.asarray(light.tint, dtype=np.float32)
    if spec_k > 0.0:
        half = view + ld
        half /= np.sqrt(_dot(half, half))[:, None] + 1e-12
        spec = spec_k * np.maximum(_dot(normal, half), 0.0) ** shininess
        tint = albedo if prim.surface.finish == "metal" else np.float32(1.0)
        colour = colour + 0.6 * spec[:, None] * tint
    return colour, decal_region


class Renderer:
    """Renders a list of primitives from a camera pose; stateless apart from the intrinsics."""

    def __init__(self, intrinsics: Intrinsics = BENCHMARK_INTRINSICS, light: Light | None = None) -> None:
        self.intr = intrinsics
        self.light = light or Light()
        self.background = np.array([0.55, 0.6, 0.66], dtype=np.float32)

    def render(
        self,
        prims: Sequence[Primitive],
        pose: CameraPose,
        *,
        labels_only: bool = False,
        shadows: ShadowZone | None = None,
    ) -> Frame:
        """Cast one ray per pixel. ``labels_only`` skips shading (mask statistics without colour);
        ``shadows`` adds contact shadows in one zone."""
        intr = self.intr
        h, w = intr.height, intr.width
        dirs = pose.ray_directions(intr)
        dx, dy, dz = (np.ascontiguousarray(dirs[..., i]) for i in range(3))
        origin = pose.position
        depth = np.full((h, w), np.inf, dtype=np.float32)
        index = np.full((h, w), -1, dtype=np.int32)
        for k, prim in enumerate(prims):
            rect = screen_rect(prim, pose, intr)
            if rect is None:
                continue
            r0, r1, c0, c1 = rect
            t = intersect(prim, origin, dx[r0:r1, c0:c1], dy[r0:r1, c0:c1], dz[r0:r1, c0:c1])
            sub = depth[r0:r1, c0:c1]
            closer = t < sub
            np.copyto(sub, t, where=closer)
            np.copyto(index[r0:r1, c0:c1], k, where=closer)

        object_lut = np.array([p.object_id for p in prims] + [0], dtype=np.int32)
        region_lut = np.array([p.region for p in prims] + [-1], dtype=np.int32)
        object_ids = object_lut[index]
        regions = region_lut[index]
        decal_regions = np.full((h, w), -1, dtype=np.int32)
        rgb = np.empty((h * w, 3), dtype=np.float32)
        rgb[:] = self.background
        if not labels_only:
            # Primitive indices fit in 16 bits, for which NumPy's stable sort is a radix sort.
            flat_index = index.reshape(-1).astype(np.int16)
            order = np.argsort(flat_index, kind="stable")
            keys = flat_index[order]
            starts = np.searchsorted(keys, np.arange(len(prims) + 1))
            flat_dirs = dirs.reshape(-1, 3)
            flat_depth = depth.reshape(-1)
            flat_decals = decal_regions.reshape(-1)
            casters = [prims[i] for i in shadows.casters] if shadows is not None else []
            caster_set = set(shadows.casters) if shadows is not None else set()
            light_dir = np.asarray(self.light.direction, dtype=np.float32)
            light_dir = light_dir / np.float32(np.sqrt(float(light_dir @ light_dir)))
            for k, prim in enumerate(prims):
                pix = order[starts[k] : starts[k + 1]]
                if len(pix) == 0:
                    continue
                d = flat_dirs[pix]
                points = origin.astype(np.float32) + flat_depth[pix, None] * d
                rel = points - np.asarray(prim.center, dtype=np.float32)
                q = _mat_vec(prim.rotation.T.astype(np.float32), rel)
                colour, decal = _shade(prim, q, d, self.light)
                if shadows is not None and k not in caster_set:
                    dxz = (points[:, 0] - shadows.centre[0]) ** 2 + (points[:, 2] - shadows.centre[1]) ** 2
                    near = np.flatnonzero(dxz < shadows.radius**2)
                    if len(near):
                        dark = _shadowed(casters, points[near] + light_dir * np.float32(1e-3), light_dir)
                        colour[near[dark]] *= np.float32(1.0 - shadows.darkening)
                rgb[pix] = colour
                flat_decals[pix] = decal
        image = (np.clip(rgb, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8).reshape(h, w, 3)
        return Frame(
            rgb=image, object_ids=object_ids, regions=regions, decal_regions=decal_regions, depth=depth
        )
