"""Viewpoint sampling around the goal, following paper App. A (Algorithm 1) step by step.

Per active sector (0, 2, ..., 10), far view first: up to 50 attempts, each a ring sample at a random far
radius and a random azimuth inside the sector, snapped to the nearest navigable point; a non-navigable
sample counts as a failure and 15 in a row abort the view. A navigable sample must still lie in the sector
and range, and the goal must pass the frustum test once the camera is yawed toward it and given the pitch
step. The near view is then first tried along the far view's ray (exactly, then with +-2deg jitter; three
tries), then ring-sampled, under the same checks. Per-episode seeding is MD5(scene_id_episode_id_seed)
(App. A.9).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from aiv_dataset.azimuth import horizontal_distance
from aiv_dataset.constants import ACTIVE_RAW_SECTORS
from aiv_dataset.levels import EYE_LEVEL, level_tag_suffix

from .camera import SENSOR_HEIGHT, CameraPose, Intrinsics, pitch_action, pitch_for_action
from .geometry import RANGES, in_range, point_at, positive_azimuth, sector_bounds, sector_of

MAX_ATTEMPTS = 50
MAX_CONSECUTIVE_FAILURES = 15
RAY_ATTEMPTS = 3
RAY_JITTER = math.radians(2.0)
#: How far a sample may be moved to the nearest navigable point (Habitat snaps to the navmesh).
SNAP_RADIUS = 0.2
_SNAP_OFFSETS: tuple[tuple[float, float], ...] = tuple(
    (r * math.cos(a * math.pi / 8), r * math.sin(a * math.pi / 8))
    for r in (0.05, 0.1, 0.15, 0.2)
    for a in range(16)
)


def episode_seed(scene_id: str, episode_id: str, base_seed: int = 42) -> int:
    """Paper Eq. 17: MD5(scene_id + "_" + episode_id + "_" + base_seed) mod 2^31."""
    digest = hashlib.md5(f"{scene_id}_{episode_id}_{base_seed}".encode()).hexdigest()
    return int(digest, 16) % (2**31)


@dataclass
class ViewSample:
    """Outcome of sampling one (sector, range) viewpoint."""

    sector: int
    range_label: str
    captured: bool
    attempts: int
    failure: str | None = None  # "consecutive_failures" | "max_attempts" when not captured
    position: tuple[float, float, float] | None = None  # camera position (sensor height included)
    pose: CameraPose | None = None
    pitch_action: str = "none"
    ray_aligned: bool = False
    last_candidate: tuple[float, float] | None = None  # last sampled XZ (for plots of failures)
    radius: float | None = None  # horizontal distance to the goal of the captured position
    #: Camera height level (0 = eye level, the sampled view; others are derived by :func:`level_view`).
    level: int = EYE_LEVEL
    camera_height: float | None = None  # sensor height above the floor, given for datasets with levels
    pitch_deg: float | None = None  # camera tilt (positive = up), given for datasets with levels

    @property
    def tag(self) -> str:
        return f"s{self.sector}_{self.range_label}{level_tag_suffix(self.level)}"


def level_view(
    eye: ViewSample,
    goal: Sequence[float],
    level: int,
    camera_height: float,
    blocked: Callable[[tuple[float, float, float]], bool],
    floor_y: float = 0.0,
) -> ViewSample:
    """The view of ``eye``'s sector and range at another camera height, pitched at the goal.

    No random draw: the camera keeps the eye-level view's floor position (a torso or mast lifts or lowers
    the head where the base stands) and tilts so that the goal's centre is on the optical axis. The view
    is unreachable where the eye-level one is (no base position), and where ``blocked`` says the scene
    hides the object from that height (a shelf board above it, the table top or cabinet edge below it).
    """
    if not eye.captured or eye.position is None:
        return ViewSample(
            eye.sector,
            eye.range_label,
            False,
            0,
            "no_base_position",
            last_candidate=eye.last_candidate,
            level=level,
            camera_height=camera_height,
        )
    position = (eye.position[0], floor_y + camera_height, eye.position[2])
    distance = horizontal_distance(position, goal)
    pitch = math.atan2(goal[1] - position[1], distance)
    pitch_deg = round(math.degrees(pitch), 2)
    if blocked(position):
        return ViewSample(
            eye.sector,
            eye.range_label,
            False,
            0,
            "blocked_by_support",
            last_candidate=(position[0], position[2]),
            level=level,
            camera_height=camera_height,
            pitch_deg=pitch_deg,
        )
    pose = CameraPose.looking_at(position, goal, pitch)
    return ViewSample(
        eye.sector,
        eye.range_label,
        True,
        0,
        None,
        position,
        pose,
        "none",
        eye.ray_aligned,
        eye.last_candidate,
        distance,
        level=level,
        camera_height=camera_height,
        pitch_deg=pitch_deg,
    )


def snap(x: float, z: float, navigable: Callable[[float, float], bool]) -> tuple[float, float] | None:
    """The sample itself if navigable, else the nearest navigable point within :data:`SNAP_RADIUS`."""
    if navigable(x, z):
        return x, z
    for dx, dz in _SNAP_OFFSETS:
        if navigable(x + dx, z + dz):
            return x + dx, z + dz
    return None


def _try_view(
    goal: Sequence[float],
    floor_y: float,
    sector: int,
    range_label: str,
    navigable: Callable[[float, float], bool],
    rng: random.Random,
    intr: Intrinsics,
    theta_far: float | None,
) -> ViewSample:
    lo, hi = RANGES[range_label]
    a_min, a_max = sector_bounds(sector)
    consecutive = 0
    ray_attempts = 0
    last: tuple[float, float] | None = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        radius = rng.uniform(lo, hi)
        ray = False
        if theta_far is not None and ray_attempts < RAY_ATTEMPTS:
            theta = theta_far if ray_attempts == 0 else theta_far + rng.uniform(-RAY_JITTER, RAY_JITTER)
            ray_attempts += 1
            ray = True
        else:
            theta = rng.uniform(a_min, a_max)
        cx, cz = point_at(goal, radius, theta)
        last = (cx, cz)
        snapped = snap(cx, cz, navigable)
        if snapped is None:
            consecutive += 1
            if consecutive >= MAX_CONSECUTIVE_FAILURES:
                return ViewSample(
                    sector, range_label, False, attempt, "consecutive_failures", last_candidate=last
                )
            continue
        consecutive = 0
        position = (snapped[0], floor_y + SENSOR_HEIGHT, snapped[1])
        if sector_of(positive_azimuth(position, goal)) != sector or not in_range(position, goal, range_label):
            continue
        action = pitch_action(goal[1], floor_y)
        pose = CameraPose.looking_at(position, goal, pitch_for_action(action))
        if not pose.in_frustum(goal, intr):
            continue
        radius_m = horizontal_distance(position, goal)
        return ViewSample(
            sector, range_label, True, attempt, None, position, pose, action, ray, last, radius_m
        )
    return ViewSample(sector, range_label, False, MAX_ATTEMPTS, "max_attempts", last_candidate=last)


def sample_viewpoints(
    goal: Sequence[float],
    navigable: Callable[[float, float], bool],
    rng: random.Random,
    intr: Intrinsics,
    *,
    floor_y: float = 0.0,
    sectors: Sequence[int] = ACTIVE_RAW_SECTORS,
) -> list[ViewSample]:
    """Far then near view for every active sector, in sector order (up to 12 samples)."""
    views: list[ViewSample] = []
    for sector in sectors:
        far = _try_view(goal, floor_y, sector, "far", navigable, rng, intr, None)
        theta_far = positive_azimuth(far.position, goal) if far.position is not None else None
        near = _try_view(goal, floor_y, sector, "near", navigable, rng, intr, theta_far)
        views += [far, near]
    return views


def seed_generators(seed: int) -> tuple[random.Random, np.random.Generator]:
    """Python and NumPy generators seeded with the episode seed (both are seeded, as in the paper)."""
    return random.Random(seed), np.random.default_rng(seed)
