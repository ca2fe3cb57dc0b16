"""``aiv-bag export``: a dataset episode as a tour bag plus its sidecar.

The views are the episode's observable captures (navigable, with an image and a camera position) in the
order the environment sorts them (by raw sector, file order within a sector), one second apart. Positions and
rotations are converted from the dataset's y-up frame to a z-up (REP-103) ``map`` frame (see
:mod:`.geometry`); the object centre is the episode's ``goal_position_nominal``. The sidecar carries the
object's identity and descriptions, the pairs of a given index that use the episode (labels) and each view's
mask flag (``target_visible``), so that an import restores the trap views. Each view's ground-truth box
(``mask_bbox_xyxy``; score 1, label the category) goes on the box topic as a detector would publish it (an
empty array where the mask is empty), unless ``boxes=False``; masks themselves are not exported.

The bag directory appears complete or not at all: it is written under a temporary name and renamed.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from aiv_dataset.constants import META_FILENAME
from aiv_dataset.errors import DatasetError
from aiv_dataset.layout import Episode, PInVerifyDataset
from aiv_dataset.meta import Viewpoint
from aiv_dataset.vocabulary import BENCHMARK_INTRINSICS

from .geometry import look_at_rotation_wxyz, world_point, world_pose
from .sidecar import SIDECAR_NAME, QueryPair, Sidecar, ViewTruth, save_sidecar
from .tour import (
    DEFAULT_FRAMES,
    DEFAULT_TOPICS,
    CameraModel,
    Tour,
    TourBox,
    TourError,
    TourFrames,
    TourImage,
    TourTopics,
    TourView,
)
from .tour_bag import EXPORT_SPACING_NS, EXPORT_START_NS, write_tour_bag


@dataclass(frozen=True)
class ExportResult:
    bag: Path
    sidecar: Path
    storage: str
    topics: TourTopics
    views: int
    left_out: tuple[str, ...]
    views_with_box: int = 0

    def lines(self) -> list[str]:
        boxes = (
            f", ground-truth boxes on {self.topics.detections} ({self.views_with_box} view(s) with a box)"
            if self.topics.detections
            else ", no boxes"
        )
        out = [
            f"wrote {self.bag} ({self.storage}): {self.views} view(s) on {self.topics.image}, camera info on "
            f"{self.topics.camera_info}, poses on {self.topics.tf} / {self.topics.tf_static}{boxes}",
            f"sidecar: {self.sidecar}",
        ]
        if self.left_out:
            out.append(f"left out (no image or no camera pose): {', '.join(self.left_out)}")
        return out


def _sorted_views(views: tuple[Viewpoint, ...]) -> tuple[Viewpoint, ...]:
    return tuple(sorted(views, key=lambda v: -1 if v.sector_index is None else v.sector_index))


def episode_tour(
    dataset: PInVerifyDataset,
    episode: Episode,
    *,
    compression: str | None = None,
    frames: TourFrames = DEFAULT_FRAMES,
    boxes: bool = True,
) -> tuple[Tour, tuple[ViewTruth, ...], tuple[str, ...]]:
    """The tour of an episode (with each view's ground-truth box unless ``boxes`` is false), its per-view
    ground truth and the names of the views left out."""
    meta = episode.meta
    source = meta.source
    if meta.goal_position is None:
        raise TourError(
            "episode has no goal_position_nominal: a tour needs the object's position", bag=source
        )
    intrinsics = meta.camera_intrinsics or BENCHMARK_INTRINSICS
    camera = CameraModel(
        intrinsics.width, intrinsics.height, intrinsics.fx, intrinsics.fy, intrinsics.cx, intrinsics.cy
    )
    views: list[TourView] = []
    truths: list[ViewTruth] = []
    left_out: list[str] = []
    for view in _sorted_views(meta.env_views):
        if not view.navigable:
            continue
        if not view.rgb or view.camera_position is None:
            left_out.append(view.name)
            continue
        try:
            rgb = episode.rgb(view).load()
        except DatasetError as error:
            raise TourError(f"cannot read the image of view {view.name}: {error}", bag=source) from None
        if rgb.shape[:2] != (camera.height, camera.width):
            raise TourError(
                f"image of view {view.name} is {rgb.shape[1]}x{rgb.shape[0]}, the camera intrinsics say "
                f"{camera.width}x{camera.height}",
                bag=source,
            )
        rotation = view.camera_rotation_wxyz or look_at_rotation_wxyz(
            view.camera_position, meta.goal_position
        )
        stamp = EXPORT_START_NS + len(views) * EXPORT_SPACING_NS
        pose = world_pose(view.camera_position, rotation, frames.up_axis)
        view_boxes: tuple[TourBox, ...] | None = None
        if boxes:
            box = view.mask_bbox_xyxy
            view_boxes = () if box is None else (TourBox(*box, score=1.0, label=meta.object_category),)
        views.append(TourView(stamp, TourImage.from_rgb(rgb, compression), pose, view.name, view_boxes))
        truths.append(ViewTruth(stamp, view.mask_meets_threshold, view.name))
    if not views:
        raise TourError("episode has no view with an image and a camera position to export", bag=source)
    object_position = world_point(meta.goal_position, frames.up_axis)
    return Tour(tuple(views), object_position, camera, frames), tuple(truths), tuple(left_out)


def _episode_sidecar(
    dataset: PInVerifyDataset,
    episode: Episode,
    truths: tuple[ViewTruth, ...],
    index: Path | None,
    frames: TourFrames,
    topics: TourTopics,
) -> Sidecar:
    meta = episode.meta
    db = dataset.load_descriptions()
    where = dataset.descriptions_file() or dataset.path
    if db is None or meta.object_id not in db:
        raise TourError(f"no descriptions of object {meta.object_id!r}", bag=str(where))
    queries: list[QueryPair] = []
    if index is not None:
        for record in dataset.read_pair_index(index):
            if record.episode_path.rstrip("/") != episode.episode_path:
                continue
            if record.query_object_id not in db:
                raise TourError(f"no descriptions of query object {record.query_object_id!r}", bag=str(where))
            if any(q.object_id == record.query_object_id for q in queries):
                continue
            queries.append(
                QueryPair(
                    record.query_object_id,
                    record.query_object_category,
                    db[record.query_object_id].descriptions,
                    record.label,
                    record.pair_type,
                )
            )
    parts = episode.episode_path.split("/")
    return Sidecar(
        object_id=meta.object_id,
        category=meta.object_category,
        descriptions=db[meta.object_id].descriptions,
        scene=meta.scene_key,
        episode=meta.episode_id,
        split=parts[-3] if len(parts) >= 3 else None,
        frames={
            "fixed": frames.fixed,
            "object": frames.object,
            "camera": frames.camera,
            "up_axis": frames.up_axis,
        },
        topics={k: v for k, v in vars(topics).items() if v is not None},
        queries=tuple(queries),
        views=truths,
    )


def export_episode(
    root: Path,
    episode_path: str,
    out: Path,
    *,
    index: Path | None = None,
    storage: str = "mcap",
    version: int = 9,
    compression: str | None = None,
    camera_chain: str = "direct",
    object_topic: str = "tf_static",
    frames: TourFrames = DEFAULT_FRAMES,
    topics: TourTopics = DEFAULT_TOPICS,
    boxes: bool = True,
) -> ExportResult:
    """Write the episode at ``root/episode_path`` as a tour bag directory ``out`` (with ``tour.yaml``)."""
    out = Path(out)
    if out.exists():
        raise TourError("output already exists; choose a new bag directory", bag=str(out))
    dataset = PInVerifyDataset(root)
    try:
        episode = dataset.load_episode(episode_path.rstrip("/"))
    except DatasetError as error:
        raise TourError(
            f"cannot load the episode: {error}", bag=str(Path(root) / episode_path / META_FILENAME)
        ) from None
    tour, truths, left_out = episode_tour(
        dataset, episode, compression=compression, frames=frames, boxes=boxes
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    # rosbags names the storage file after the bag directory, so the bag is built under its final name
    # inside a scratch directory and moved out whole.
    scratch = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    try:
        partial = scratch / out.name
        used = write_tour_bag(
            tour,
            partial,
            topics=topics,
            storage=storage,
            version=version,
            camera_chain=camera_chain,
            object_topic=object_topic,
        )
        sidecar = _episode_sidecar(dataset, episode, truths, index, frames, used)
        save_sidecar(sidecar, partial / SIDECAR_NAME)
        os.rename(partial, out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with_box = sum(1 for view in tour.views if view.best_box() is not None)
    return ExportResult(out, out / SIDECAR_NAME, storage, used, len(tour.views), left_out, with_box)
