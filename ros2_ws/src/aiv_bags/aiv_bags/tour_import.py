"""``aiv-bag import``: a tour bag (+ sidecar) becomes a PInVerify episode, its index lines and descriptions.

Sectors and view types come from the poses alone, relative to the object, the way the capture pipeline
assigns them (spec §2.3): azimuth ``theta = atan2(z - g_z, x - g_x)`` in the dataset frame, 12 sectors of 30
degrees of which the even ones (0, 2, ..., 10) are active, a far view at 1.4-1.7 m and a near view at 0.9-1.2
m of horizontal distance. What a tour does not have is the pipeline's world anchor: a robot's map frame is
rotated arbitrarily, so the sector grid is anchored on the tour itself —

1. **phase** (the grid modulo 60 degrees): when every view's azimuth modulo 60 degrees fits in a short arc
   (<= :data:`FIT_MAX_SPREAD_DEG`, true for benchmark-like tours of one or two views per sector), the grid is
   turned so that this arc sits centred in the active 30-degree windows — the largest margin to every window
   edge; otherwise (a dense tour, e.g. a video all round) the first view is put at the centre of its window;
2. **sector 0** is the active sector of the tour's first view (the robot's arrival view; the ``front``);
3. each view goes to the nearest active sector centre, and to ``far`` when its horizontal distance is at least
   ``far_min_m`` (1.3 m: between the two bands), else ``near``;
4. when several views fall on one (sector, range) slot, the one nearest the sector centre is kept.

So the same tour gives the same episode in any map frame: the virtual sector map, start view and every
transition of the environment are invariant under a rotation of the whole tour, which a round trip
(episode -> export -> import) checks. The grid's origin is recorded in meta.json (``tour_source``).

Boxes: a tour with a box topic (``/detections``, see :mod:`.tour_bag`) gives each view the box of highest score
as its ``mask_bbox_xyxy`` (all boxes are kept in the view's ``tour_view.boxes``), so the simulator serves it as
the ground-truth box and ``agent.bbox_mode: gt`` judges the same crop as on the dataset the tour came from; a
view whose box message is empty or missing has no box. A tour without one has no boxes at all: evaluate it with
a detector (``agent.bbox_mode: detector`` or ``detections``); the import report says which case it is. Tours
have no segmentation either way (``has_mask`` false, no mask area). The sidecar's per-view ``target_visible``
(default true) becomes ``mask_meets_threshold`` (false = trap view).

Nothing partial is ever left: the episode is written under a temporary name, checked with the dataset
loaders, then renamed; descriptions and the index are replaced atomically afterwards, and a failure there
removes the episode again.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from aiv_dataset.azimuth import azimuth, horizontal_distance
from aiv_dataset.constants import (
    ACTIVE_RAW_SECTORS,
    CAPTURE_SUBDIR,
    DESCRIPTIONS_FILENAME,
    DESCRIPTIONS_WITH_CATEGORY_FILENAME,
    META_FILENAME,
    RAW_SECTOR_COUNT,
    RAW_SECTOR_SKIP,
)
from aiv_dataset.errors import DatasetError
from aiv_dataset.fields import Where
from aiv_dataset.images import probe_image
from aiv_dataset.index_records import parse_pair_record
from aiv_dataset.meta import load_meta, sector_summary
from aiv_dataset.vocabulary import CATEGORIES, mask_threshold_px
from PIL import Image as PILImage

from .geometry import dataset_point, dataset_pose, object_in_view
from .sidecar import SIDECAR_NAME, Sidecar, load_sidecar
from .tour import DEFAULT_TOPICS, TourError, TourFrames, TourTopics
from .tour_bag import BagSummary, check_bag_opens, custom_convention, read_tour_bag

SECTOR_DEG = 360.0 / RAW_SECTOR_COUNT  # 30
ACTIVE_SPACING_DEG = SECTOR_DEG * (RAW_SECTOR_SKIP + 1)  # 60
#: Largest spread (degrees, azimuths modulo 60) for which the grid phase is fitted to all views.
FIT_MAX_SPREAD_DEG = 40.0
#: Horizontal distance (m) from which a view is "far": halfway between near (0.9-1.2) and far (1.4-1.7).
DEFAULT_FAR_MIN_M = 1.3
RANGES: dict[str, tuple[float, float]] = {"near": (0.9, 1.2), "far": (1.4, 1.7)}
DEFAULT_INDEX_NAME = "pv_index_tours.jsonl"


@dataclass(frozen=True)
class SectorGrid:
    """Where the tour's sector 0 starts, as a dataset azimuth, and how the phase was chosen."""

    origin_deg: float
    phase: str  # "fitted" or "first_view"
    spread_deg: float


@dataclass(frozen=True)
class PlacedView:
    """One tour view placed in the sector grid."""

    index: int  # position in the tour (time order)
    sector: int  # raw sector (0, 2, ..., 10)
    view_type: str
    azimuth_deg: float  # in the grid frame, [0, 360)
    offset_deg: float  # from the sector's centre, (-30, 30]
    radius_m: float


def _smallest_arc(phases: Sequence[float], period: float) -> tuple[float, float]:
    """(start, length) of the shortest arc of a circle of ``period`` that holds every phase."""
    ordered = sorted(p % period for p in phases)
    gaps = [(ordered[(i + 1) % len(ordered)] - ordered[i]) % period for i in range(len(ordered))]
    if len(ordered) == 1:
        return ordered[0], 0.0
    widest = max(range(len(gaps)), key=lambda i: (gaps[i], -i))
    start = ordered[(widest + 1) % len(ordered)]
    return start, period - gaps[widest]


def place_views(
    azimuths_deg: Sequence[float], radii_m: Sequence[float], *, far_min_m: float = DEFAULT_FAR_MIN_M
) -> tuple[SectorGrid, list[PlacedView]]:
    """Put every view (azimuth around the object in the dataset frame, in tour order) in a sector and range."""
    if not azimuths_deg:
        raise ValueError("no views to place")
    start, spread = _smallest_arc(azimuths_deg, ACTIVE_SPACING_DEG)
    half_window = SECTOR_DEG / 2.0
    if spread <= FIT_MAX_SPREAD_DEG:
        phase, how = start + spread / 2.0 - half_window, "fitted"
    else:
        phase, how = azimuths_deg[0] - half_window, "first_view"
    # Sector 0 = the active sector of the first view.
    first = (azimuths_deg[0] - phase) % 360.0
    origin = (phase + ACTIVE_SPACING_DEG * round((first - half_window) / ACTIVE_SPACING_DEG)) % 360.0
    if math.isclose(origin, 360.0, abs_tol=1e-9):
        origin = 0.0
    placed = []
    for i, (theta, radius) in enumerate(zip(azimuths_deg, radii_m, strict=True)):
        rel = (theta - origin) % 360.0
        k = round((rel - half_window) / ACTIVE_SPACING_DEG) % len(ACTIVE_RAW_SECTORS)
        centre = k * ACTIVE_SPACING_DEG + half_window
        offset = (rel - centre + 180.0) % 360.0 - 180.0
        view_type = "far" if radius >= far_min_m else "near"
        placed.append(PlacedView(i, ACTIVE_RAW_SECTORS[k], view_type, rel, offset, radius))
    return SectorGrid(origin, how, spread), placed


def choose_slots(placed: Sequence[PlacedView]) -> tuple[list[PlacedView], list[PlacedView]]:
    """One view per (sector, range): the one nearest the sector centre (earlier on ties). Returns
    (chosen sorted by sector then time, unused)."""
    best: dict[tuple[int, str], PlacedView] = {}
    for view in placed:
        key = (view.sector, view.view_type)
        if key not in best or abs(view.offset_deg) < abs(best[key].offset_deg):
            best[key] = view
    chosen = sorted(best.values(), key=lambda v: (v.sector, v.index))
    used = {v.index for v in chosen}
    return chosen, [v for v in placed if v.index not in used]


@dataclass
class ImportResult:
    """What an import wrote, and the report printed for it."""

    episode_dir: Path
    episode_path: str
    index_file: Path
    pairs: int
    lines: list[str] = field(default_factory=list)
    has_boxes: bool = False  # the tour had a box topic (its views' boxes are the episode's GT boxes)


@dataclass(frozen=True)
class ImportOptions:
    root: Path
    split: str | None = None
    scene: str | None = None
    episode: str | None = None
    index_name: str = DEFAULT_INDEX_NAME
    sidecar: Path | None = None
    topics: TourTopics = DEFAULT_TOPICS
    frames: dict[str, str] = field(default_factory=dict)  # command-line overrides
    object_position: tuple[float, float, float] | None = None
    far_min_m: float = DEFAULT_FAR_MIN_M


def _resolve_sidecar(bag: Path, given: Path | None) -> Path:
    if given is not None:
        return given
    inside = bag / SIDECAR_NAME if bag.is_dir() else None
    beside = bag.parent / f"{bag.name}.{SIDECAR_NAME}"
    for candidate in (inside, beside):
        if candidate is not None and candidate.is_file():
            return candidate
    return inside or beside


def _frames(bag: Path, sidecar: Sidecar, overrides: dict[str, str]) -> TourFrames:
    """Frame names: command line, then sidecar, then the bag's own record, then the defaults."""
    stored = custom_convention(bag)
    base = TourFrames(
        fixed=stored.get("fixed_frame", "map"),
        object=stored.get("object_frame", "object"),
        camera=stored.get("camera_frame", "camera_optical"),
        up_axis=stored.get("up_axis", "z") if stored.get("up_axis") in ("y", "z") else "z",
    )
    frames = sidecar.apply_frames(base)
    values = {
        k: overrides.get(k, getattr(frames, k)) for k in ("fixed", "object", "camera", "base", "up_axis")
    }
    return TourFrames(**values)


def _topics(sidecar: Sidecar, given: TourTopics) -> TourTopics:
    merged = sidecar.apply_topics(TourTopics())
    return TourTopics(
        image=given.image or merged.image,
        camera_info=given.camera_info or merged.camera_info,
        tf=given.tf if given.tf != DEFAULT_TOPICS.tf else merged.tf,
        tf_static=given.tf_static if given.tf_static != DEFAULT_TOPICS.tf_static else merged.tf_static,
        detections=given.detections or merged.detections,
    )


def _safe_name(value: str, what: str, source: str) -> str:
    if not value or value in (".", "..") or "/" in value or "\\" in value or value.startswith("."):
        raise TourError(f"{what} {value!r} cannot be a directory name", bag=source)
    return value


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.parent / f".{path.name}.partial-{os.getpid()}"
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _merged_descriptions(root: Path, sidecar: Sidecar) -> dict[Path, tuple[str | None, Any]]:
    """New content of both description files (None = unchanged), refusing conflicting entries."""
    objects = {sidecar.object_id: (sidecar.category, sidecar.descriptions)}
    for q in sidecar.pairs():
        objects.setdefault(q.object_id, (q.category, q.descriptions))
    out: dict[Path, tuple[str | None, Any]] = {}
    for name, with_category in ((DESCRIPTIONS_WITH_CATEGORY_FILENAME, True), (DESCRIPTIONS_FILENAME, False)):
        path = root / name
        original: str | None = None
        data: dict[str, Any] = {}
        if path.is_file():
            original = path.read_text(encoding="utf-8")
            try:
                loaded = json.loads(original)
            except json.JSONDecodeError as exc:
                raise TourError(f"descriptions file is not valid JSON ({exc.msg})", bag=str(path)) from None
            if not isinstance(loaded, dict):
                raise TourError("descriptions file is not a JSON object", bag=str(path))
            data = loaded
        changed = False
        for oid, (category, texts) in objects.items():
            entry: Any = (
                {"object_category": category, "descriptions": list(texts)} if with_category else list(texts)
            )
            if oid in data:
                present = data[oid]
                present_texts = present.get("descriptions") if isinstance(present, dict) else present
                if present_texts != list(texts):
                    raise TourError(
                        f"object {oid!r} already has other descriptions; use another object id or the same texts",
                        bag=str(path),
                    )
                continue
            data[oid] = entry
            changed = True
        if changed:
            out[path] = (original, data)
    return out


def import_tour(bag: Path, options: ImportOptions) -> ImportResult:
    """Import one tour bag into the dataset at ``options.root``; raises TourError (nothing written) on bad input."""
    bag = Path(bag)
    bag_name = str(bag)
    if not bag.exists():
        raise TourError("bag does not exist", bag=bag_name)
    check_bag_opens(bag)  # a broken bag is the first thing to report, before its sidecar
    sidecar_path = _resolve_sidecar(bag, options.sidecar)
    sidecar = load_sidecar(sidecar_path)
    frames = _frames(bag, sidecar, options.frames)
    topics = _topics(sidecar, options.topics)
    object_override = options.object_position or sidecar.object_position
    read = read_tour_bag(bag, topics=topics, frames=frames, object_position=object_override)
    tour, summary = read.tour, read.summary

    root = Path(options.root)
    split = _safe_name(options.split or sidecar.split or "val", "split", str(sidecar_path))
    scene = _safe_name(options.scene or sidecar.scene or bag.name, "scene", str(sidecar_path))
    episode_id = _safe_name(options.episode or sidecar.episode or "0", "episode", str(sidecar_path))
    episode_path = f"{CAPTURE_SUBDIR}/{split}/{scene}/{episode_id}"
    final = root / episode_path
    if final.exists():
        raise TourError(
            f"episode {episode_path} already exists in {root}; remove it or choose another id", bag=bag_name
        )

    goal = dataset_point(tour.object_position, frames.up_axis)
    poses = [dataset_pose(v.pose, frames.up_axis) for v in tour.views]
    radii = [horizontal_distance(p, goal) for p, _ in poses]
    for n, r in enumerate(radii, start=1):
        if r < 1e-3:
            raise TourError(
                f"view {n} (stamp {tour.views[n - 1].stamp_ns} ns) stands on the object (horizontal distance "
                f"{r:.4f} m): its sector is undefined",
                bag=bag_name,
                topic=summary.image_topic,
            )
    azimuths = [math.degrees(azimuth(p, goal)) for p, _ in poses]
    grid, placed = place_views(azimuths, radii, far_min_m=options.far_min_m)
    chosen, unused = choose_slots(placed)
    _check_virtual_sectors(chosen, grid, bag_name)

    visibility = sidecar.visibility()
    labels = {v.stamp_ns: v.label for v in sidecar.views if v.label is not None}
    known_stamps = {v.stamp_ns for v in tour.views}
    stray = sorted(set(visibility) - known_stamps)
    if stray:
        raise TourError(
            f"field 'views': stamp(s) {stray[:3]} match no image of {summary.image_topic} in {bag_name}",
            bag=str(sidecar_path),
        )

    records = []
    images: dict[str, np.ndarray] = {}
    for view in chosen:
        tour_view = tour.views[view.index]
        position, rotation = poses[view.index]
        tag = f"s{view.sector}_{view.view_type}"
        rgb_rel = f"rgb/rgb_{tag}.png"
        images[rgb_rel] = tour_view.image.to_rgb()
        in_view = object_in_view(
            tour_view.pose, tour.object_position, tour.camera.hfov_deg, tour.camera.vfov_deg
        )
        lo = view.sector * SECTOR_DEG
        box = tour_view.best_box()
        records.append(
            {
                "tag": tag,
                "navigable": True,
                "in_frustum": in_view,
                "has_mask": False,
                "mask_area_px": None,
                "mask_bbox_xyxy": None if box is None else list(box.xyxy),
                "mask_area_fraction": None,
                "mask_meets_threshold": visibility.get(tour_view.stamp_ns, True),
                "rgb": rgb_rel,
                "mask_raw_path": None,
                "camera_position": list(position),
                "camera_rotation_quat_wxyz": list(rotation),
                "sector_index": view.sector,
                "angle_deg_range": [lo, lo + SECTOR_DEG],
                "range_label": view.view_type,
                "radius_m": round(view.radius_m, 4),
                "tour_view": {
                    "stamp_ns": tour_view.stamp_ns,
                    "azimuth_deg": round(view.azimuth_deg, 3),
                    "offset_from_sector_centre_deg": round(view.offset_deg, 3),
                    **({"label": labels[tour_view.stamp_ns]} if tour_view.stamp_ns in labels else {}),
                    **(
                        {"boxes": [[*b.xyxy, b.score, b.label] for b in tour_view.boxes]}
                        if tour_view.boxes is not None
                        else {}
                    ),
                },
            }
        )
    camera = tour.camera
    meta = {
        "scene_id": f"tour:{bag.name}",
        "scene_key": scene,
        "episode_id": episode_id,
        "goal_position_nominal": list(goal),
        "object_category": sidecar.category,
        "object_id": sidecar.object_id,
        "camera_intrinsics": {
            "width": camera.width,
            "height": camera.height,
            "hfov_deg": round(camera.hfov_deg, 6),
            "vfov_deg": round(camera.vfov_deg, 6),
        },
        "n_sectors": RAW_SECTOR_COUNT,
        "sector_order": list(ACTIVE_RAW_SECTORS),
        "sector_skip": RAW_SECTOR_SKIP,
        "ranges": {k: list(v) for k, v in RANGES.items()},
        "category_mask_threshold": mask_threshold_px(sidecar.category),
        "viewpoints": records,
        "navigable_count": len(records),
        "valid_mask_count": sum(1 for r in records if r["mask_meets_threshold"]),
        "success": True,
        "tour_source": {
            "bag": bag.name,
            "storage": summary.storage,
            "image_topic": summary.image_topic,
            "image_type": summary.image_type,
            "fixed_frame": frames.fixed,
            "up_axis": frames.up_axis,
            "views_in_bag": len(tour.views),
            "views_used": len(records),
            "sector_origin_azimuth_deg": round(grid.origin_deg, 6),
            "sector_phase": grid.phase,
            "has_masks": False,
            "boxes": summary.detections_topic or "detector",
        },
    }
    lines = _report(bag_name, summary, sidecar, grid, chosen, unused, records, visibility, episode_path, root)
    _commit(root, split, episode_path, meta, images, sidecar, options.index_name, bag_name)
    index_file = root / split / options.index_name
    lines.append(f"index: {index_file} (+{len(sidecar.pairs())} pair(s)); descriptions updated in {root}")
    return ImportResult(
        final, episode_path, index_file, len(sidecar.pairs()), lines, summary.detections_topic is not None
    )


def _check_virtual_sectors(chosen: Sequence[PlacedView], grid: SectorGrid, bag: str) -> None:
    """The environment re-derives virtual sectors from azimuths (relative to the first capture); refuse a
    tour whose views sit so far from their sector centres that it would read them differently."""
    ref = chosen[0]
    for view in chosen:
        rel = (view.azimuth_deg - ref.azimuth_deg) % 360.0
        virtual = round(rel / ACTIVE_SPACING_DEG) % len(ACTIVE_RAW_SECTORS)
        expected = ((view.sector - ref.sector) // 2) % len(ACTIVE_RAW_SECTORS)
        if virtual != expected:
            raise TourError(
                f"views are too far from any sector layout: view {view.index + 1} lies in sector {view.sector} "
                f"({view.offset_deg:+.1f} deg from its centre) but {rel:.1f} deg from the first view; the "
                f"episode's sectors would be ambiguous",
                bag=bag,
            )


def _report(
    bag: str,
    summary: BagSummary,
    sidecar: Sidecar,
    grid: SectorGrid,
    chosen: Sequence[PlacedView],
    unused: Sequence[PlacedView],
    records: Sequence[dict[str, Any]],
    visibility: dict[int, bool],
    episode_path: str,
    root: Path,
) -> list[str]:
    lines = [
        f"imported {bag} ({summary.storage}; {summary.views} view(s) on {summary.image_topic} "
        f"[{summary.image_type}], camera info on {summary.camera_info_topic}) as {root / episode_path}",
        "sectors: " + ", ".join(r["tag"] for r in records) + f" (sector 0 starts at dataset azimuth "
        f"{grid.origin_deg:.1f} deg, phase {grid.phase}, views spread {grid.spread_deg:.1f} deg modulo 60)",
    ]
    if unused:
        lines.append(
            f"{len(unused)} view(s) not used: another view of the same sector and range is nearer the sector "
            "centre (views " + ", ".join(str(v.index + 1) for v in unused) + ")"
        )
    outside = [v for v in chosen if abs(v.offset_deg) > SECTOR_DEG / 2]
    if outside:
        lines.append(
            "outside their sector's 30-degree window: "
            + ", ".join(f"s{v.sector}_{v.view_type} ({v.offset_deg:+.1f} deg)" for v in outside)
        )
    off_band = [v for v in chosen if not RANGES[v.view_type][0] <= v.radius_m <= RANGES[v.view_type][1]]
    if off_band:
        lines.append(
            "outside the capture pipeline's distance bands (near 0.9-1.2 m, far 1.4-1.7 m): "
            + ", ".join(f"s{v.sector}_{v.view_type} ({v.radius_m:.2f} m)" for v in off_band)
        )
    hidden = [r["tag"] for r in records if not r["in_frustum"]]
    if hidden:
        lines.append(f"object outside the camera frustum in: {', '.join(hidden)}")
    if not visibility:
        lines.append(
            "no per-view visibility in the sidecar: every view counts as showing the object (no trap views)"
        )
    if sidecar.category not in CATEGORIES:
        lines.append(f"category {sidecar.category!r} is not one of the benchmark's 18 categories")
    if summary.detections_topic is not None:
        boxed = sum(1 for r in records if r["mask_bbox_xyxy"] is not None)
        lines.append(
            f"boxes: from {summary.detections_topic}, {boxed} of {len(records)} view(s) have one (the best-scored "
            "box of each view is the episode's ground-truth box, served for verifier agent.bbox_mode: gt); no "
            "masks (no mask areas; the oracle verifiers need the synthetic ground truth)"
        )
    else:
        lines.append(
            "no masks: a tour carries no segmentation, and this one no box topic, so this episode has no "
            "ground-truth boxes; evaluate it with a detector (verifier agent.bbox_mode: detector or detections), "
            "not agent.bbox_mode: gt, and not with the oracle verifiers (they need the synthetic ground truth)"
        )
    return lines


def _commit(
    root: Path,
    split: str,
    episode_path: str,
    meta: dict[str, Any],
    images: dict[str, np.ndarray],
    sidecar: Sidecar,
    index_name: str,
    bag: str,
) -> None:
    """Write the episode, descriptions and index lines, all or nothing."""
    final = root / episode_path
    descriptions = _merged_descriptions(root, sidecar)
    created = [
        p
        for p in reversed([final.parent, *final.parent.parents])
        if (p == root or root in p.parents) and not p.exists()
    ]
    for directory in created:
        directory.mkdir(exist_ok=True)
    partial = final.parent / f".{final.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    index_file = root / split / index_name
    renamed = False
    written: list[tuple[Path, str | None]] = []
    try:
        (partial / "rgb").mkdir(parents=True)
        for relative, rgb in images.items():
            PILImage.fromarray(rgb, "RGB").save(partial / relative, format="PNG", compress_level=6)
        (partial / META_FILENAME).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        lines = _check_written(partial, root, episode_path, sidecar, index_file, bag)
        os.rename(partial, final)
        renamed = True
        for path, (original, data) in descriptions.items():
            _write_json_atomic(path, data)
            written.append((path, original))
        index_file.parent.mkdir(parents=True, exist_ok=True)
        previous = index_file.read_text(encoding="utf-8") if index_file.is_file() else None
        if previous and not previous.endswith("\n"):
            previous += "\n"
        tmp = index_file.parent / f".{index_file.name}.partial-{os.getpid()}"
        tmp.write_text((previous or "") + "".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, index_file)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        if renamed:
            shutil.rmtree(final, ignore_errors=True)
        for path, original in written:
            if original is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(original, encoding="utf-8")
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise


def _check_written(
    directory: Path, root: Path, episode_path: str, sidecar: Sidecar, index_file: Path, bag: str
) -> list[str]:
    """Read the written episode back with the dataset loaders; return the index lines to append."""
    try:
        meta = load_meta(directory / META_FILENAME)
        for view in meta.index_views:
            if view.rgb:
                probe_image(directory / view.rgb, decode=True, field=f"{view.name}.rgb")
    except DatasetError as error:  # a bug, not bad input: never leave such an episode behind
        raise TourError(f"the episode written for the tour does not load back: {error}", bag=bag) from None
    if index_file.is_file():
        for n, line in enumerate(index_file.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                listed = json.loads(line).get("episode_path") if line.strip() else None
            except (json.JSONDecodeError, AttributeError):
                continue
            if listed == episode_path:
                raise TourError(f"line {n} already lists episode {episode_path}", bag=str(index_file))
    valid, navigable = sector_summary(meta.index_views)
    lines = []
    for pair in sidecar.pairs():
        record = {
            "episode_path": episode_path,
            "scene": meta.scene_key,
            "episode": meta.episode_id,
            "meta_path": f"{episode_path}/{META_FILENAME}",
            "rgb_dir": f"{episode_path}/rgb",
            "target_object_id": meta.object_id,
            "target_object_category": meta.object_category,
            "valid_start_sectors": list(valid),
            "navigable_sectors": list(navigable),
            "n_navigable": len(navigable),
            "n_mask_visible": len(valid),
            "query_object_id": pair.object_id,
            "query_object_category": pair.category,
            "label": pair.label,
            "pair_type": pair.pair_type,
        }
        try:
            parse_pair_record(record, Where.of(index_file))
        except DatasetError as error:
            raise TourError(f"index line for query {pair.object_id!r} is invalid: {error}", bag=bag) from None
        lines.append(json.dumps(record))
    return lines
