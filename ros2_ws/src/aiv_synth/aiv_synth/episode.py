"""Capturing one episode: place the target, sample viewpoints (App. A), render, measure, judge success.

A placement is kept only if the episode meets the paper's success criteria (>= 6 navigable viewpoints,
>= 3 viewpoints whose mask exceeds the category threshold, App. A.8); otherwise the target is placed
again, drawing from the same per-episode generator, so the result stays a pure function of
(scene, episode id, base seed). A placement with too few navigable viewpoints is rejected before anything
is rendered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiv_dataset.vocabulary import mask_threshold_px

from .attributes import Instance
from .camera import BENCHMARK_INTRINSICS, Intrinsics
from .furniture import Footprint
from .geometry import sector_bounds_deg
from .objects import CATALOGUE, build_instance
from .objects.model import ObjectModel
from .placement import TARGET_ID, Placement, add_occluders, place_target
from .renderer import Frame, Renderer, ShadowZone
from .sampling import ViewSample, episode_seed, sample_viewpoints, seed_generators
from .scene import Room

MIN_NAVIGABLE_VIEWPOINTS = 6
MIN_VALID_MASKS = 3
MAX_PLACEMENTS = 12


def is_success(navigable_count: int, valid_mask_count: int) -> bool:
    """Paper Eq. 15-16."""
    return navigable_count >= MIN_NAVIGABLE_VIEWPOINTS and valid_mask_count >= MIN_VALID_MASKS


@dataclass
class CapturedView:
    """A sampled viewpoint with its rendering (None when it could not be captured)."""

    sample: ViewSample
    frame: Frame | None = None
    mask: np.ndarray | None = None
    area: int = 0
    bbox: list[int] | None = None
    attribute_pixels: dict[str, int] = field(default_factory=dict)


@dataclass
class EpisodeCapture:
    """Everything the writer needs for one episode."""

    scene_id: str
    scene_key: str
    episode_id: str
    seed: int
    instance: Instance
    model: ObjectModel
    placement: Placement
    goal: tuple[float, float, float]
    views: list[CapturedView]
    threshold: int
    placements_tried: int
    success: bool

    @property
    def navigable_count(self) -> int:
        return sum(1 for v in self.views if v.sample.captured)

    @property
    def valid_mask_count(self) -> int:
        return sum(1 for v in self.views if v.sample.captured and v.area > self.threshold)


def mask_stats(mask: np.ndarray) -> tuple[int, list[int] | None]:
    """Pixel count and [xmin, ymin, xmax, ymax] box of a boolean mask (None when empty)."""
    area = int(mask.sum())
    if area == 0:
        return 0, None
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return area, [int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1])]


def attribute_pixels(
    frame: Frame, mask: np.ndarray, instance: Instance, model: ObjectModel
) -> dict[str, int]:
    """Target pixels showing each present attribute (part regions, or decal coverage for prints)."""
    recipe = instance.recipe
    out: dict[str, int] = {}
    regions = frame.regions[mask]
    decals = frame.decal_regions[mask]
    for attr in CATALOGUE[instance.category].attributes_for(recipe.subtype):
        if not recipe.has(attr.name):
            continue
        ids = [model.regions[p] for p in attr.parts if p in model.regions]
        source = decals if any(p.startswith("decal:") for p in attr.parts) else regions
        out[attr.name] = int(np.isin(source, ids).sum()) if ids else 0
    return out


def visible_attributes(instance: Instance, pixels: dict[str, int]) -> list[str]:
    """Attributes whose region shows at least the type's minimum pixels (see :data:`MIN_PIXELS`)."""
    spec = CATALOGUE[instance.category]
    return [name for name, count in pixels.items() if count >= spec.attribute(name).min_pixels]


class EpisodeCapturer:
    """Captures episodes in one room; keeps the renderer and the room between episodes of a scene."""

    def __init__(self, room: Room, intrinsics: Intrinsics = BENCHMARK_INTRINSICS) -> None:
        self.room = room
        self.intr = intrinsics
        self.renderer = Renderer(intrinsics, room.light)

    def capture(
        self, scene_id: str, episode_id: str, instance: Instance, base_seed: int
    ) -> EpisodeCapture | None:
        """Place, sample and render one episode; None if no placement met the success criteria."""
        seed = episode_seed(scene_id, episode_id, base_seed)
        rng, _ = seed_generators(seed)
        spec = CATALOGUE[instance.category]
        model = build_instance(instance.recipe)
        threshold = mask_threshold_px(instance.category)
        for tried in range(1, MAX_PLACEMENTS + 1):
            placement = place_target(self.room, model, spec.supports, rng)
            if placement is None:
                continue
            add_occluders(self.room, placement, model, rng)
            goal = placement.goal(model)
            world = [*self.room.prims, *placement.occluders, *placement.target_prims(model)]
            shadows = ShadowZone(
                casters=tuple(range(len(self.room.prims), len(world))),
                centre=(goal[0], goal[2]),
                radius=placement.radius + 0.7,
            )
            obstacles = [*placement.obstacles]
            if placement.support.kind == "floor":
                obstacles.append(Footprint(placement.x, placement.z, placement.radius, placement.radius, 0.0))

            def navigable(x: float, z: float, extra: list[Footprint] = obstacles) -> bool:
                return self.room.navigable(x, z, extra)

            samples = sample_viewpoints(goal, navigable, rng, self.intr)
            views = [CapturedView(s) for s in samples]
            navigable_count = sum(1 for v in views if v.sample.captured)
            if navigable_count < MIN_NAVIGABLE_VIEWPOINTS:
                continue  # fails Eq. 15 whatever the masks are; nothing to render
            for view in views:
                if not view.sample.captured:
                    continue
                assert view.sample.pose is not None
                frame = self.renderer.render(world, view.sample.pose, shadows=shadows)
                mask = frame.object_ids == TARGET_ID
                view.frame, view.mask = frame, mask
                view.area, view.bbox = mask_stats(mask)
                view.attribute_pixels = attribute_pixels(frame, mask, instance, model)
            valid = sum(1 for v in views if v.sample.captured and v.area > threshold)
            if not is_success(navigable_count, valid):
                continue
            return EpisodeCapture(
                scene_id,
                self.room.key,
                episode_id,
                seed,
                instance,
                model,
                placement,
                goal,
                views,
                threshold,
                tried,
                True,
            )
        return None


def viewpoint_record(view: CapturedView, threshold: int, intr: Intrinsics) -> dict[str, Any]:
    """The v2 ``viewpoints`` entry of meta.json for one view (every field of spec §2.2)."""
    s = view.sample
    captured = s.captured
    meets = captured and view.area > threshold
    record: dict[str, Any] = {
        "tag": s.tag,
        "navigable": captured,
        "in_frustum": captured,
        "has_mask": captured and view.area > 0,
        "mask_area_px": view.area if captured else 0,
        "mask_bbox_xyxy": view.bbox if captured else None,
        "mask_area_fraction": round(view.area / (intr.width * intr.height), 4) if captured else 0.0,
        "mask_meets_threshold": meets,
        "rgb": f"rgb/rgb_{s.tag}.png" if captured else None,
        "mask_raw_path": f"mask/mask_{s.tag}.png" if captured else None,
        "camera_position": [round(c, 4) for c in s.position] if s.position is not None else None,
        "camera_rotation_quat_wxyz": [round(c, 5) for c in s.pose.quaternion_wxyz()]
        if s.pose is not None
        else None,
        "sector_index": s.sector,
        "angle_deg_range": sector_bounds_deg(s.sector),
        "range_label": s.range_label,
        "radius_m": round(s.radius, 3) if s.radius is not None else None,
        "pitch_action": s.pitch_action,
        "attempts": s.attempts,
    }
    if not captured:
        record["failure"] = s.failure
        if s.last_candidate is not None:
            record["last_candidate_xz"] = [round(c, 4) for c in s.last_candidate]
    else:
        record["ray_aligned"] = s.ray_aligned
    return record


def yaw_deg(placement: Placement) -> float:
    """Heading of the target's front (+z) as an azimuth in degrees, atan2(z, x) like the sector angles."""
    return round(math.degrees(math.atan2(math.cos(placement.yaw), math.sin(placement.yaw))) % 360.0, 2)
