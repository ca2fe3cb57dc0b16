"""One synthetic episode rebuilt in memory and rendered from any camera pose (no rclpy, no files).

The episode is the one ``aiv-capture`` would write for (preset, seed, split, scene, episode): the same room,
target instance, placement and occluders, found by re-running the generator's own placement loop
(:meth:`aiv_synth.episode.EpisodeCapturer.capture`) with label-only renders (the loop's success test needs
mask areas only, and its random draws do not depend on shading), so nothing is read from a dataset directory
and no pre-captured image is ever used. Afterwards every frame is rendered live by the generator's ray caster
(:class:`aiv_synth.renderer.Renderer`) from the requested pose, with the generator's contact-shadow zone, so a
render at a benchmark capture pose reproduces that capture and a render anywhere else shows honestly what
the camera would see there (including occlusion by furniture and occluders).

Ground truth per render follows the generator's own definitions: target mask = pixels with segmentation id
:data:`aiv_synth.placement.TARGET_ID`, box = the mask's xyxy extent, ``mask_meets_threshold`` = area above the
category threshold, visible attributes = attributes whose part (or decal) region shows at least the
attribute type's minimum pixels (:func:`aiv_synth.episode.visible_attributes`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from aiv_synth.attributes import Instance
from aiv_synth.camera import (
    BENCHMARK_INTRINSICS,
    SENSOR_HEIGHT,
    CameraPose,
    Intrinsics,
    pitch_action,
    pitch_for_action,
)
from aiv_synth.episode import (
    EpisodeCapture,
    EpisodeCapturer,
    attribute_pixels,
    mask_stats,
    visible_attributes,
)
from aiv_synth.furniture import Footprint
from aiv_synth.pipeline import EpisodeTask, make_plan, scene_id
from aiv_synth.placement import TARGET_ID
from aiv_synth.presets import get_preset
from aiv_synth.renderer import Frame, Primitive, Renderer, ShadowZone
from aiv_synth.scene import Room, generate_room

from .frames import BasePose, base_pose_from_scene, scene_heading, scene_xz

#: Pitch rules: ``benchmark`` tilts by the generator's one look step when the object is more than 0.3 m above or
#: below the sensor (paper Eq. 14, what every capture did); ``fixed`` uses a set pitch.
PITCH_RULES = ("benchmark", "fixed")


class SceneError(ValueError):
    """The requested scene or episode does not exist, or its placement failed; the message says which."""


@dataclass(frozen=True)
class CaptureView:
    """A benchmark capture of the episode (what ``aiv-capture`` would write), for tests and start poses."""

    tag: str
    sector: int
    range_label: str
    position: tuple[float, float, float]  # scene frame, sensor height included
    pose: CameraPose
    mask_area_px: int

    @property
    def base_pose(self) -> BasePose:
        """The base pose whose camera is this capture's camera (yaw toward the object)."""
        return base_pose_from_scene(
            self.position[0], self.position[2], self.pose.forward[0], self.pose.forward[2]
        )


@dataclass
class LiveView:
    """One live render with its ground truth."""

    frame: Frame
    pose: CameraPose
    mask_area_px: int
    bbox_xyxy: list[int] | None
    mask_threshold_px: int
    visible_attributes: list[str] = field(default_factory=list)
    attribute_pixels: dict[str, int] = field(default_factory=dict)

    @property
    def rgb(self) -> np.ndarray:
        return self.frame.rgb

    @property
    def mask_meets_threshold(self) -> bool:
        return self.mask_area_px > self.mask_threshold_px


class _LabelsOnly:
    """A renderer stand-in for the placement search: labels only (no shading), identical masks."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer

    def render(
        self, prims: Sequence[Primitive], pose: CameraPose, *, shadows: ShadowZone | None = None
    ) -> Frame:
        return self.renderer.render(prims, pose, labels_only=True)


def find_task(preset: str, seed: int, split: str, scene: str, episode: str) -> EpisodeTask:
    """The generator's plan entry for (split, scene, episode); empty scene / episode = the first one."""
    try:
        plan = make_plan(get_preset(preset), seed, Path("."))
    except KeyError as error:
        raise SceneError(str(error.args[0] if error.args else error)) from None
    if split not in plan.scenes:
        raise SceneError(f"preset {preset!r} has no split {split!r}; it has {', '.join(sorted(plan.scenes))}")
    scenes = plan.scenes[split]
    key = scene or scenes[0]
    if key not in scenes:
        raise SceneError(
            f"preset {preset!r} split {split!r} has no scene {key!r}; it has {', '.join(scenes)}"
        )
    tasks = [t for t in plan.tasks if t.split == split and t.scene_key == key]
    if not tasks:
        raise SceneError(f"scene {key!r} of preset {preset!r} has no episodes")
    wanted = episode or tasks[0].episode_id
    for task in tasks:
        if task.episode_id == wanted:
            return task
    raise SceneError(
        f"scene {key!r} has no episode {wanted!r}; it has {', '.join(t.episode_id for t in tasks)}"
    )


class LiveScene:
    """A synthetic episode that can be rendered from any base pose."""

    def __init__(
        self,
        preset: str = "micro",
        seed: int = 42,
        split: str = "val",
        scene: str = "",
        episode: str = "",
        *,
        intrinsics: Intrinsics = BENCHMARK_INTRINSICS,
        pitch_rule: str = "benchmark",
        fixed_pitch_deg: float = 0.0,
    ) -> None:
        if pitch_rule not in PITCH_RULES:
            raise SceneError(f"pitch rule {pitch_rule!r}; expected one of {', '.join(PITCH_RULES)}")
        self.task = find_task(preset, seed, split, scene, episode)
        self.intr = intrinsics
        self.room: Room = generate_room(self.task.scene_key, seed)
        capturer = EpisodeCapturer(self.room, intrinsics)
        self.renderer = capturer.renderer
        capturer.renderer = _LabelsOnly(self.renderer)  # type: ignore[assignment]
        capture = capturer.capture(
            scene_id(self.task.split, self.task.scene_key), self.task.episode_id, self.task.instance, seed
        )
        if capture is None:
            raise SceneError(
                f"episode {self.task.episode_path} has no placement meeting the capture criteria (aiv-capture "
                "skips it too); choose another episode"
            )
        self.capture: EpisodeCapture = capture
        placement = capture.placement
        self.world: list[Primitive] = [
            *self.room.prims,
            *placement.occluders,
            *placement.target_prims(capture.model),
        ]
        self.shadows = ShadowZone(
            casters=tuple(range(len(self.room.prims), len(self.world))),
            centre=(capture.goal[0], capture.goal[2]),
            radius=placement.radius + 0.7,
        )
        self.obstacles: list[Footprint] = [*placement.obstacles]
        if placement.support.kind == "floor":
            self.obstacles.append(
                Footprint(placement.x, placement.z, placement.radius, placement.radius, 0.0)
            )
        if pitch_rule == "benchmark":
            self.pitch = pitch_for_action(pitch_action(capture.goal[1], 0.0))
        else:
            self.pitch = math.radians(fixed_pitch_deg)

    # -- identity ------------------------------------------------------------------------------------------

    @property
    def instance(self) -> Instance:
        return self.capture.instance

    @property
    def category(self) -> str:
        return self.capture.instance.category

    @property
    def object_id(self) -> str:
        return self.capture.instance.object_id

    @property
    def episode_path(self) -> str:
        return self.task.episode_path

    @property
    def goal(self) -> tuple[float, float, float]:
        """The object's bounding-box centre in the scene frame (``goal_position_nominal``)."""
        return self.capture.goal

    @property
    def threshold(self) -> int:
        return self.capture.threshold

    def captures(self) -> list[CaptureView]:
        """The episode's captured benchmark views, in meta.json order."""
        out = []
        for view in self.capture.views:
            s = view.sample
            if s.captured and s.pose is not None and s.position is not None:
                out.append(CaptureView(s.tag, s.sector, s.range_label, s.position, s.pose, view.area))
        return out

    # -- geometry ------------------------------------------------------------------------------------------

    def refusal(self, pose: BasePose) -> str | None:
        """Why the base cannot stand at ``pose`` (None: it can): the capture sampler's navigability rule."""
        if not pose.is_finite():
            return "the goal is not a finite pose"
        x, z = scene_xz(pose)
        room = self.room
        if not (0.0 <= x <= room.width and 0.0 <= z <= room.depth):
            return "the goal is outside the room"
        if self.room.navigable(x, z, self.obstacles):
            return None
        from aiv_synth.camera import AGENT_RADIUS

        if not (
            AGENT_RADIUS <= x <= room.width - AGENT_RADIUS and AGENT_RADIUS <= z <= room.depth - AGENT_RADIUS
        ):
            return "the goal is inside a wall (the base does not fit between it and the wall)"
        if any(fp.distance_to(x, z) <= AGENT_RADIUS for fp in room.walls):
            return "the goal is inside a wall"
        return "the goal is inside furniture or an obstacle"

    def pose_around(self, azimuth: float, radius: float) -> BasePose:
        """The base pose at horizontal ``radius`` from the object and benchmark ``azimuth`` (radians,
        ``atan2(z - g_z, x - g_x)`` in the scene frame), facing the object: how the captures stand."""
        gx, _, gz = self.goal
        x, z = gx + radius * math.cos(azimuth), gz + radius * math.sin(azimuth)
        return base_pose_from_scene(x, z, gx - x, gz - z)

    def azimuth_and_radius(self, pose: BasePose) -> tuple[float, float]:
        """Inverse of :meth:`pose_around` for the position (the heading is ignored)."""
        x, z = scene_xz(pose)
        gx, _, gz = self.goal
        return math.atan2(z - gz, x - gx), math.hypot(x - gx, z - gz)

    def camera_pose(self, pose: BasePose, lift_m: float = 0.0, pitch: float | None = None) -> CameraPose:
        """The camera of a base standing at ``pose``: sensor height above the floor raised by the torso's
        ``lift_m`` (negative: lowered), pitched by ``pitch`` (radians, + = up; None: the pitch rule's)."""
        x, z = scene_xz(pose)
        hx, hz = scene_heading(pose.yaw)
        height = SENSOR_HEIGHT + lift_m
        position = (x, height, z)
        return CameraPose.looking_at(
            position, (x + hx, height, z + hz), self.pitch if pitch is None else pitch
        )

    # -- rendering -----------------------------------------------------------------------------------------

    def render_camera(self, camera: CameraPose) -> LiveView:
        """Render from a camera pose and measure the target's ground truth in that render."""
        frame = self.renderer.render(self.world, camera, shadows=self.shadows)
        mask = frame.object_ids == TARGET_ID
        area, bbox = mask_stats(mask)
        pixels = attribute_pixels(frame, mask, self.instance, self.capture.model) if area else {}
        return LiveView(
            frame=frame,
            pose=camera,
            mask_area_px=area,
            bbox_xyxy=bbox,
            mask_threshold_px=self.threshold,
            visible_attributes=visible_attributes(self.instance, pixels) if area else [],
            attribute_pixels=pixels,
        )

    def render(self, pose: BasePose, lift_m: float = 0.0, pitch: float | None = None) -> LiveView:
        """Render what the camera of a base at ``pose`` sees (torso lift and head pitch as in
        :meth:`camera_pose`)."""
        return self.render_camera(self.camera_pose(pose, lift_m, pitch))

    def nearest_capture(
        self, camera: CameraPose, position_tolerance_m: float = 0.01, angle_tolerance_deg: float = 0.5
    ) -> CaptureView | None:
        """The benchmark capture this camera reproduces (within the tolerances), if any."""
        cos_tol = math.cos(math.radians(angle_tolerance_deg))
        for view in self.captures():
            d = float(np.linalg.norm(np.asarray(view.position) - camera.position))
            if d <= position_tolerance_m and float(view.pose.forward @ camera.forward) >= cos_tol:
                return view
        return None
