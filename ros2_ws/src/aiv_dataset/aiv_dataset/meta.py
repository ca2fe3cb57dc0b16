"""Typed, validated view of an episode's ``meta.json`` (spec §2.2, paper App. I.2).

Two generations of the file exist: v2 lists every attempted viewpoint under ``viewpoints`` (up to 12, with
non-navigable ones), v1 lists only accepted views under ``captures``. The reference index builder reads
``viewpoints`` first, the reference environment reads only ``captures``; we keep both lists so each consumer
can apply its own precedence (:attr:`EpisodeMeta.index_views`, :attr:`EpisodeMeta.env_views`).

Flags missing from a record get the defaults the reference code gives them for that generation: a v2
viewpoint without ``navigable``/``mask_meets_threshold`` counts as false (the builder's reading), a v1
capture as true (the environment's and builder's reading of ``captures``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .constants import FLOAT32_MAX, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, RAW_SECTOR_COUNT, VIEW_TYPES
from .errors import DatasetError
from .fields import (
    Where,
    as_bool,
    as_bounded,
    as_id,
    as_int,
    as_list,
    as_mapping,
    as_number,
    as_str,
    as_vector,
    optional,
    required,
)
from .json_text import parse_json
from .levels import EYE_LEVEL, MAX_LEVEL, MIN_LEVEL, level_from_tag, level_name
from .paths import check_relative

_TAG_SECTOR = re.compile(r"^s(\d+)(?:_|$)")
_FILE_SECTOR = re.compile(r"(?:^|_)s(\d+)(?=_|\.|$)")


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole model of the capture camera (360x640 portrait, HFOV 42 degrees in the benchmark)."""

    width: int
    height: int
    hfov_deg: float
    vfov_deg: float | None = None

    @property
    def fx(self) -> float:
        return (self.width / 2.0) / math.tan(math.radians(self.hfov_deg) / 2.0)

    @property
    def fy(self) -> float:
        if self.vfov_deg is None:
            return self.fx  # square pixels
        return (self.height / 2.0) / math.tan(math.radians(self.vfov_deg) / 2.0)

    @property
    def cx(self) -> float:
        return (self.width - 1) / 2.0

    @property
    def cy(self) -> float:
        return (self.height - 1) / 2.0


@dataclass(frozen=True)
class Viewpoint:
    """One pre-captured (or attempted) camera pose around the target.

    ``sector_index`` is the raw 30-degree sector (0, 2, ..., 10); ``view_type`` is "far" or "near".
    ``height_level`` is the camera height level (:mod:`.levels`; 0 = eye level, the only level of a one-level
    dataset); ``camera_height_m`` the sensor height above the floor and ``camera_pitch_deg`` the tilt toward
    the object (positive = looking up), both given by datasets with height levels.
    ``rgb``/``mask_path`` are relative to the episode directory. ``list_position`` is the record's position
    in the meta.json list, kept because some reference policies depend on file order.
    """

    list_position: int
    tag: str | None
    sector_index: int | None
    view_type: str
    navigable: bool
    mask_meets_threshold: bool
    rgb: str | None = None
    mask_path: str | None = None
    camera_position: tuple[float, float, float] | None = None
    camera_rotation_wxyz: tuple[float, float, float, float] | None = None
    mask_bbox_xyxy: tuple[float, float, float, float] | None = None
    mask_area_px: int | None = None
    mask_area_fraction: float | None = None
    has_mask: bool | None = None
    in_frustum: bool | None = None
    range_label: str | None = None
    radius_m: float | None = None
    angle_deg_range: tuple[float, float] | None = None
    height_level: int = EYE_LEVEL
    camera_height_m: float | None = None
    camera_pitch_deg: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        """Tag if present, else a synthetic name, for messages and debug logs."""
        if self.tag:
            return self.tag
        return f"s{self.sector_index}_{self.view_type}" if self.sector_index is not None else "untagged"

    @property
    def is_trap(self) -> bool:
        """Reachable but the target is not meaningfully visible (spec §3.7)."""
        return self.navigable and not self.mask_meets_threshold


@dataclass(frozen=True)
class EpisodeMeta:
    """Validated content of one meta.json."""

    source: str
    scene_key: str
    episode_id: str
    object_id: str
    object_category: str
    scene_id: str | None = None
    goal_position: tuple[float, float, float] | None = None
    camera_intrinsics: CameraIntrinsics | None = None
    category_mask_threshold: float | None = None
    viewpoints: tuple[Viewpoint, ...] | None = None
    captures: tuple[Viewpoint, ...] | None = None
    navigable_count: int | None = None
    valid_mask_count: int | None = None
    success: bool | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def format_version(self) -> str:
        return "v2" if self.viewpoints is not None else "v1"

    @property
    def index_views(self) -> tuple[Viewpoint, ...]:
        """Views as the index builder and statistics read them: ``viewpoints`` first, else ``captures``."""
        if self.viewpoints is not None:
            return self.viewpoints
        return self.captures or ()

    @property
    def env_views(self) -> tuple[Viewpoint, ...]:
        """Views as the episode environment reads them: ``captures`` first (as the reference), else v2."""
        if self.captures is not None:
            return self.captures
        return self.viewpoints or ()


def sector_from_tag(tag: str | None) -> int | None:
    """``"s4_far"`` -> 4; ``None`` when the tag does not carry a sector."""
    if not tag:
        return None
    match = _TAG_SECTOR.match(tag)
    return int(match.group(1)) if match else None


def sector_from_filename(path: str | None) -> int | None:
    """``"rgb/rgb_s10_near.png"`` -> 10; ``None`` when the file name does not carry a sector."""
    if not path:
        return None
    match = _FILE_SECTOR.search(PurePosixPath(path.replace("\\", "/")).name)
    return int(match.group(1)) if match else None


def view_type_from_name(*names: str | None) -> str:
    """Reference rule: the first non-empty of the names decides; "far" if it contains "far", else "near"."""
    for name in names:
        if name:
            return "far" if "far" in name else "near"
    return "near"


def _relative_path(value: Any, where: Where) -> str:
    text = as_str(value, where)
    check_relative(text, where)
    return text.replace("\\", "/")


def _view_type(value: Any, where: Where) -> str:
    text = as_str(value, where)
    if text not in VIEW_TYPES:
        raise where.expected('"far" or "near"', value)
    return text


def _pixel_coordinate(value: Any, where: Where) -> float:
    return as_bounded(value, where, minimum=0, maximum=MAX_IMAGE_SIDE)


def _bbox(value: Any, where: Where) -> tuple[float, float, float, float]:
    """A GT box in pixels: inside ``[0, MAX_IMAGE_SIDE]`` on both axes (it travels in float32 fields)."""
    items = as_list(value, where)
    if len(items) != 4:
        raise where.error(f"expected a list of 4 numbers, got {len(items)} item(s)")
    x0, y0, x1, y1 = (_pixel_coordinate(item, where.at(i)) for i, item in enumerate(items))
    if x1 < x0 or y1 < y0:
        raise where.error(
            f"expected [xmin, ymin, xmax, ymax] with xmin <= xmax and ymin <= ymax, got {list(value)}"
        )
    return (x0, y0, x1, y1)


def _range(value: Any, where: Where) -> tuple[float, float]:
    lo, hi = as_vector(value, where, 2)
    return (lo, hi)


def _vec3(value: Any, where: Where) -> tuple[float, float, float]:
    x, y, z = as_vector(value, where, 3)
    return (x, y, z)


def _vec4(value: Any, where: Where) -> tuple[float, float, float, float]:
    w, x, y, z = as_vector(value, where, 4)
    return (w, x, y, z)


def parse_viewpoint(data: Any, where: Where, *, list_position: int, generation: str) -> Viewpoint:
    """Validate one viewpoint/capture record.

    ``generation`` is "v2" (from ``viewpoints``) or "v1" (from ``captures``) and selects the defaults for
    missing flags (see module docstring). The sector index comes from ``sector_index``, else the tag, else the
    rgb file name; the view type from ``view_type``, else the rgb file name / tag, as the reference does.
    """
    obj = as_mapping(data, where)
    flag_default = generation == "v1"
    tag = optional(obj, "tag", where, as_str)
    rgb_main = optional(obj, "rgb", where, _relative_path)
    rgb_alias = optional(obj, "rgb_filename", where, _relative_path)
    if rgb_main and rgb_alias and rgb_main != rgb_alias:
        raise where.at("rgb_filename").error(
            f"alias disagrees with 'rgb' ({rgb_alias!r} vs {rgb_main!r}); expected the same path"
        )
    rgb = rgb_alias or rgb_main

    explicit_sector = optional(obj, "sector_index", where, lambda v, w: as_int(v, w, minimum=0))
    tag_sector = sector_from_tag(tag)
    file_sector = sector_from_filename(rgb)
    if explicit_sector is not None and tag_sector is not None and explicit_sector != tag_sector:
        raise where.at("sector_index").error(f"value {explicit_sector} disagrees with tag {tag!r}")
    sector = next((s for s in (explicit_sector, tag_sector, file_sector) if s is not None), None)
    if sector is None:
        raise where.error("cannot determine the sector: no 'sector_index', no tag like 's4_far', no rgb name")
    if sector >= RAW_SECTOR_COUNT:
        raise where.at("sector_index").error(
            f"expected a raw sector in 0..{RAW_SECTOR_COUNT - 1}, got {sector}"
        )

    view_type = optional(obj, "view_type", where, _view_type)
    if view_type is None:
        view_type = view_type_from_name(rgb_alias, rgb_main, tag)
    range_label = optional(obj, "range_label", where, _view_type)
    if range_label is not None and range_label != view_type:
        raise where.at("range_label").error(
            f"value {range_label!r} disagrees with the view type {view_type!r}"
        )

    position = optional(obj, "camera_position", where, _vec3)
    rotation = optional(obj, "camera_rotation_quat_wxyz", where, _vec4)
    level, height, pitch = _height_fields(obj, where, tag)
    return Viewpoint(
        list_position=list_position,
        tag=tag,
        sector_index=sector,
        view_type=view_type,
        navigable=optional(obj, "navigable", where, as_bool, flag_default),
        mask_meets_threshold=optional(obj, "mask_meets_threshold", where, as_bool, flag_default),
        rgb=rgb,
        mask_path=optional(obj, "mask_raw_path", where, _relative_path),
        camera_position=position,
        camera_rotation_wxyz=rotation,
        mask_bbox_xyxy=optional(obj, "mask_bbox_xyxy", where, _bbox),
        mask_area_px=optional(obj, "mask_area_px", where, _pixel_count),
        mask_area_fraction=optional(
            obj, "mask_area_fraction", where, lambda v, w: as_bounded(v, w, minimum=0, maximum=1)
        ),
        has_mask=optional(obj, "has_mask", where, as_bool),
        in_frustum=optional(obj, "in_frustum", where, as_bool),
        range_label=range_label,
        radius_m=optional(obj, "radius_m", where, lambda v, w: as_bounded(v, w, minimum=0)),
        angle_deg_range=optional(obj, "angle_deg_range", where, _range),
        height_level=level,
        camera_height_m=height,
        camera_pitch_deg=pitch,
        raw=dict(obj),
    )


def _height_fields(
    obj: Mapping[str, Any], where: Where, tag: str | None
) -> tuple[int, float | None, float | None]:
    """``height_level``, ``camera_height_m`` and ``camera_pitch_deg`` of a viewpoint, checked together.

    All three are optional (a one-level dataset has none of them). A level needs the height it was taken from;
    a tag that names a level (``"s4_far_above"``) must agree with ``height_level``, and a level other than eye
    level needs a tag that names it, so that its image and debug names cannot be mistaken for an eye-level
    view's."""
    level = optional(
        obj, "height_level", where, lambda v, w: as_int(v, w, minimum=MIN_LEVEL, maximum=MAX_LEVEL)
    )
    height = optional(obj, "camera_height_m", where, lambda v, w: as_bounded(v, w, minimum=0.0, maximum=10.0))
    pitch = optional(
        obj, "camera_pitch_deg", where, lambda v, w: as_bounded(v, w, minimum=-90.0, maximum=90.0)
    )
    tag_level = level_from_tag(tag)
    if level is None:
        if tag_level is not None:
            raise where.at("height_level").error(
                f"missing, but tag {tag!r} names the {level_name(tag_level)!r} level ({tag_level})"
            )
        return EYE_LEVEL, height, pitch
    if height is None:
        raise where.at("camera_height_m").error(
            f"missing: a view with height_level {level} must say the camera height it was taken from"
        )
    if tag is not None and (tag_level or EYE_LEVEL) != level:
        raise where.at("height_level").error(
            f"value {level} disagrees with tag {tag!r} (expected a tag ending in"
            f" {'no level suffix' if level == EYE_LEVEL else repr('_' + level_name(level))})"
        )
    return level, height, pitch


def parse_view_list(data: Any, where: Where, *, generation: str) -> tuple[Viewpoint, ...]:
    """Validate a ``viewpoints``/``captures`` list; tags must be unique within it."""
    items = as_list(data, where)
    views = tuple(
        parse_viewpoint(item, where.at(i), list_position=i, generation=generation)
        for i, item in enumerate(items)
    )
    seen: dict[str, int] = {}
    for view in views:
        if view.tag is None:
            continue
        if view.tag in seen:
            raise (
                where.at(view.list_position)
                .at("tag")
                .error(f"duplicate tag {view.tag!r} (also at position {seen[view.tag]})")
            )
        seen[view.tag] = view.list_position
    slots: dict[tuple[int | None, str, int], int] = {}
    for view in views:
        if not view.navigable:
            continue
        key = (view.sector_index, view.view_type, view.height_level)
        if key in slots and (view.height_level != EYE_LEVEL or "height_level" in view.raw):
            raise (
                where.at(view.list_position)
                .at("height_level")
                .error(
                    f"duplicate view: sector {view.sector_index} {view.view_type} at level {view.height_level}"
                    f" is already at position {slots[key]}"
                )
            )
        slots.setdefault(key, view.list_position)
    return views


def _pixel_count(value: Any, where: Where) -> int:
    return as_int(value, where, minimum=0, maximum=MAX_IMAGE_PIXELS)


def _image_side(value: Any, where: Where) -> int:
    return as_int(value, where, minimum=1, maximum=MAX_IMAGE_SIDE)


def _intrinsics(value: Any, where: Where) -> CameraIntrinsics:
    """The camera block: image size within :data:`MAX_IMAGE_SIDE`, fields of view in (0, 180) degrees, and a
    derived focal length that is finite, positive and inside the float32 range (a field of view of 1e-40
    degrees would otherwise give a focal length of 1e45 px). Explicit ``fx``/``fy``/``cx``/``cy`` keys, which
    some writers add, are not used (the published camera model is derived from the fields of view) but must
    still make sense when present: positive focal lengths, a principal point inside the image."""
    obj = as_mapping(value, where)
    width = required(obj, "width", where, _image_side)
    height = required(obj, "height", where, _image_side)
    hfov = required(obj, "hfov_deg", where, as_number)
    if not 0.0 < hfov < 180.0:
        raise where.at("hfov_deg").error(f"expected a field of view in (0, 180) degrees, got {hfov}")
    vfov = optional(obj, "vfov_deg", where, as_number)
    if vfov is not None and not 0.0 < vfov < 180.0:
        raise where.at("vfov_deg").error(f"expected a field of view in (0, 180) degrees, got {vfov}")
    camera = CameraIntrinsics(
        width=width, height=height, hfov_deg=float(hfov), vfov_deg=None if vfov is None else float(vfov)
    )
    for name, focal, fov_key in (("fx", camera.fx, "hfov_deg"), ("fy", camera.fy, "vfov_deg")):
        if not (math.isfinite(focal) and 0.0 < focal <= FLOAT32_MAX):
            raise where.at(fov_key).error(
                f"gives the focal length {name} = {focal:g} px; expected a finite positive value within the "
                "float32 range (the field of view is too narrow)"
            )
    optional(obj, "fx", where, _positive)
    optional(obj, "fy", where, _positive)
    optional(obj, "cx", where, lambda v, w: as_bounded(v, w, minimum=0, maximum=width))
    optional(obj, "cy", where, lambda v, w: as_bounded(v, w, minimum=0, maximum=height))
    return camera


def _positive(value: Any, where: Where) -> float:
    number = as_number(value, where)
    if number <= 0:
        raise where.error(f"expected a positive number, got {number!r}")
    return number


def _view_count(value: Any, where: Where) -> int:
    """A count of viewpoints: one far and one near view per raw sector at most."""
    return as_int(value, where, minimum=0, maximum=RAW_SECTOR_COUNT * len(VIEW_TYPES))


def parse_meta(data: Any, source: str | Path) -> EpisodeMeta:
    """Validate a decoded meta.json document; ``source`` names the file in error messages."""
    where = Where.of(source)
    obj = as_mapping(data, where)
    viewpoints = optional(obj, "viewpoints", where, lambda v, w: parse_view_list(v, w, generation="v2"))
    captures = optional(obj, "captures", where, lambda v, w: parse_view_list(v, w, generation="v1"))
    if viewpoints is None and captures is None:
        raise where.at("viewpoints").error("missing required field (v1 files may use 'captures' instead)")
    goal = optional(obj, "goal_position_nominal", where, _vec3)
    intrinsics = optional(obj, "camera_intrinsics", where, _intrinsics)
    for key, views in (("viewpoints", viewpoints), ("captures", captures)):
        _check_pitches(views or (), goal, intrinsics, where.at(key))
    return EpisodeMeta(
        source=str(source),
        scene_key=required(obj, "scene_key", where, as_str),
        episode_id=required(obj, "episode_id", where, as_id),
        object_id=required(obj, "object_id", where, as_id),
        object_category=required(obj, "object_category", where, as_str),
        scene_id=optional(obj, "scene_id", where, as_str),
        goal_position=goal,
        camera_intrinsics=intrinsics,
        category_mask_threshold=optional(
            obj,
            "category_mask_threshold",
            where,
            lambda v, w: as_bounded(v, w, minimum=0, maximum=MAX_IMAGE_PIXELS),
        ),
        viewpoints=viewpoints,
        captures=captures,
        navigable_count=optional(obj, "navigable_count", where, _view_count),
        valid_mask_count=optional(obj, "valid_mask_count", where, _view_count),
        success=optional(obj, "success", where, as_bool),
        raw=dict(obj),
    )


def _check_pitches(
    views: Iterable[Viewpoint],
    goal: tuple[float, float, float] | None,
    intrinsics: CameraIntrinsics | None,
    where: Where,
) -> None:
    """A navigable view's ``camera_pitch_deg`` must keep the object's centre inside the vertical field of view
    (a camera tilted away from the object shows no box: the view would be a trap by construction)."""
    if goal is None or intrinsics is None:
        return
    vfov = intrinsics.vfov_deg
    if vfov is None:
        vfov = math.degrees(2.0 * math.atan(intrinsics.height / (2.0 * intrinsics.fx)))
    for view in views:
        if view.camera_pitch_deg is None or view.camera_position is None or not view.navigable:
            continue
        x, y, z = view.camera_position
        horizontal = math.hypot(goal[0] - x, goal[2] - z)
        elevation = math.degrees(math.atan2(goal[1] - y, horizontal))
        if abs(elevation - view.camera_pitch_deg) > vfov / 2.0:
            raise (
                where.at(view.list_position)
                .at("camera_pitch_deg")
                .error(
                    f"pitch {view.camera_pitch_deg:.1f} deg cannot see the object: it lies"
                    f" {elevation:.1f} deg from the horizontal, outside the +-{vfov / 2.0:.1f} deg vertical field"
                )
            )


def read_json(path: Path, *, display: str | None = None) -> Any:
    """Read a JSON file, turning I/O, encoding and syntax failures and repeated keys into
    :class:`DatasetError`."""
    name = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError("file is missing", path=name) from None
    except IsADirectoryError:
        raise DatasetError("expected a JSON file, found a directory", path=name) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"file is not valid UTF-8 ({exc.reason} at byte {exc.start})", path=name) from None
    except OSError as exc:
        raise DatasetError(f"cannot read file ({exc.strerror or exc})", path=name) from None
    return parse_json(text, Where.of(name), whole_file=True)


def load_meta(path: Path, *, display: str | None = None) -> EpisodeMeta:
    """Read and validate one meta.json file."""
    name = display or str(path)
    return parse_meta(read_json(path, display=name), name)


def sector_summary(views: Iterable[Viewpoint]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(valid_start_sectors, navigable_sectors) of a view list, as the index records them (spec §2.4).

    Valid start: any viewpoint of the raw sector meets the mask threshold (navigability is not consulted, as
    in the reference builder). Navigable: some viewpoint is navigable and has an rgb path. Both sorted.
    """
    valid: set[int] = set()
    navigable: set[int] = set()
    for view in views:
        if view.sector_index is None or view.height_level != EYE_LEVEL:
            continue  # episodes start at eye level; other levels are reached by moves
        if view.navigable and view.rgb:
            navigable.add(view.sector_index)
        if view.mask_meets_threshold:
            valid.add(view.sector_index)
    return tuple(sorted(valid)), tuple(sorted(navigable))
