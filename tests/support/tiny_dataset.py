"""Build small, hand-written PInVerify datasets on disk for tests.

The real benchmark is tens of GB; tests need a handful of episodes whose every property is chosen on
purpose: which raw sectors are navigable, which views are traps, where exactly each camera stands around
the goal, whether coordinates are present, which meta.json generation (``viewpoints`` v2 / ``captures`` v1)
is used. This module writes such episodes in the real on-disk layout (spec §2.1-2.4) so the production
loaders, the environment, the index builder and the ROS nodes can all be exercised on them.

Typical use::

    ds = TinyDataset(tmp_path)
    ep = ds.add_episode(EpisodeSpec(views=ring(traps={4}, unreachable={8})))
    ds.write_descriptions()                      # descriptions for every object used so far
    index = ds.write_index("pv_index_test.jsonl", [ds.pair(ep)])

Images are small (36 x 64 px, portrait like the real 360 x 640) unless ``image_size=FULL_IMAGE`` is asked
for. Every RGB frame is filled with :func:`image_color` of its view, so a test can tell from the pixels
which capture an observation shows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from aiv_dataset.constants import ACTIVE_RAW_SECTORS
from aiv_dataset.vocabulary import BENCHMARK_INTRINSICS
from PIL import Image

#: Image sizes as (width, height).
SMALL_IMAGE: tuple[int, int] = (36, 64)
FULL_IMAGE: tuple[int, int] = (BENCHMARK_INTRINSICS.width, BENCHMARK_INTRINSICS.height)

#: Default goal centre (world coordinates, y up).
GOAL: tuple[float, float, float] = (2.0, 0.5, -1.0)

#: The captured raw sectors, under the short name the tests use.
RAW_SECTORS: tuple[int, ...] = ACTIVE_RAW_SECTORS
FAR_RADIUS = 1.55
NEAR_RADIUS = 1.05
HFOV_DEG = BENCHMARK_INTRINSICS.hfov_deg

#: Marker for :attr:`EpisodeSpec.meta_overrides` / :attr:`View.extra`: delete this key from the record.
DROP: Any = object()

#: Marker for "compute the usual value" (positions, boxes, rgb paths).
AUTO: Any = "auto"


def image_color(sector: int, kind: str) -> tuple[int, int, int]:
    """The fill colour of the RGB frame of view (sector, kind): unique per view, easy to assert on."""
    return (10 + 20 * sector, 200 if kind == "far" else 100, 50)


@dataclass
class View:
    """One viewpoint record of a hand-written episode.

    Args:
        sector: raw sector S (0, 2, ..., 10 in real data; any 0..11 is accepted).
        kind: "far" or "near".
        navigable: a non-navigable view gets no image, no position and no mask (like real v2 records).
        visible: ``mask_meets_threshold``; False makes a navigable view a trap view.
        angle_deg: azimuth around the goal (deg, from +x toward +z); default = centre of the sector's
            30-degree window, ``30 * S + 15``.
        radius: horizontal distance from the goal; default 1.55 m (far) / 1.05 m (near).
        position: explicit camera position; ``None`` writes no coordinates; AUTO derives from angle/radius.
        bbox: GT box ``[x0, y0, x1, y1]``; AUTO puts one in the image centre (smaller for traps); None = null.
        rgb: relative rgb path; AUTO = ``rgb/rgb_s{S}_{kind}.png``; None = no image path.
        write_image: write the rgb/mask files (False simulates a missing image).
        extra: keys merged into the record last (use :data:`DROP` to delete one).
    """

    sector: int
    kind: str = "far"
    navigable: bool = True
    visible: bool = True
    angle_deg: float | None = None
    radius: float | None = None
    position: Any = AUTO
    bbox: Any = AUTO
    rgb: Any = AUTO
    write_image: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tag(self) -> str:
        return f"s{self.sector}_{self.kind}"

    @property
    def azimuth_deg(self) -> float:
        return 30.0 * self.sector + 15.0 if self.angle_deg is None else self.angle_deg

    def camera_position(self, goal: Sequence[float]) -> list[float] | None:
        if not self.navigable or self.position is None:
            return None
        if self.position is not AUTO:
            return [float(v) for v in self.position]
        r = self.radius if self.radius is not None else (FAR_RADIUS if self.kind == "far" else NEAR_RADIUS)
        theta = math.radians(self.azimuth_deg)
        return [goal[0] + r * math.cos(theta), goal[1] + 0.8, goal[2] + r * math.sin(theta)]

    def rgb_path(self) -> str | None:
        if not self.navigable and self.rgb is AUTO:
            return None
        return f"rgb/rgb_{self.tag}.png" if self.rgb is AUTO else self.rgb

    def mask_path(self) -> str | None:
        return f"mask/mask_{self.tag}.png" if self.navigable else None


def ring(
    *,
    sectors: Iterable[int] = RAW_SECTORS,
    near: bool = True,
    traps: Iterable[int] = (),
    unreachable: Iterable[int] = (),
    near_traps: Iterable[int] = (),
    far_traps: Iterable[int] = (),
) -> list[View]:
    """A full set of views: far (+ near) for every raw sector, in sector order (far listed first).

    ``traps`` makes both views of those sectors traps; ``far_traps``/``near_traps`` only one of them;
    ``unreachable`` makes both views of those sectors non-navigable.
    """
    traps, unreachable = set(traps), set(unreachable)
    near_traps, far_traps = set(near_traps), set(far_traps)
    views: list[View] = []
    for s in sectors:
        nav = s not in unreachable
        views.append(View(s, "far", navigable=nav, visible=nav and s not in traps | far_traps))
        if near:
            views.append(View(s, "near", navigable=nav, visible=nav and s not in traps | near_traps))
    return views


@dataclass
class EpisodeSpec:
    """Everything that defines one hand-written episode.

    ``list_key`` picks the meta.json generation ("viewpoints" = v2, "captures" = v1); ``rgb_key`` writes the
    image path under "rgb" or its alias "rgb_filename". ``meta_overrides`` replaces top-level meta.json keys
    (DROP deletes one), applied after everything else so broken files can be produced on purpose.
    """

    scene: str = "00001-aaaaaaaaaaa"
    episode: str = "0"
    object_id: str = "mug_a"
    category: str = "mug"
    views: list[View] = field(default_factory=ring)
    goal: tuple[float, float, float] = GOAL
    split: str = "val"
    list_key: str = "viewpoints"
    rgb_key: str = "rgb"
    image_size: tuple[int, int] = SMALL_IMAGE
    images: bool = True
    meta_overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def episode_path(self) -> str:
        return f"pin_capture/{self.split}/{self.scene}/{self.episode}"


@dataclass(frozen=True)
class EpisodeHandle:
    """A written episode: its spec, dataset-relative path, directory and the meta.json content written."""

    spec: EpisodeSpec
    episode_path: str
    directory: Path
    meta: dict[str, Any]

    @property
    def object_id(self) -> str:
        return self.spec.object_id

    @property
    def category(self) -> str:
        return self.spec.category


def _vfov(width: int, height: int, hfov_deg: float) -> float:
    return math.degrees(2 * math.atan(math.tan(math.radians(hfov_deg) / 2) * height / width))


def _auto_bbox(view: View, size: tuple[int, int]) -> list[int]:
    w, h = size
    if view.visible:
        return [w // 4, h // 4, 3 * w // 4, 3 * h // 4]
    return [w // 2 - 1, h // 2 - 1, w // 2 + 1, h // 2 + 1]


def _box_area(box: Sequence[float]) -> int:
    return int((box[2] - box[0]) * (box[3] - box[1]))


def viewpoint_record(view: View, goal: Sequence[float], size: tuple[int, int], rgb_key: str = "rgb") -> dict:
    """The meta.json record of one view (v2 field set; also valid as a v1 capture)."""
    bbox = _auto_bbox(view, size) if view.bbox is AUTO and view.navigable else view.bbox
    if bbox is AUTO:
        bbox = None
    area = _box_area(bbox) if bbox is not None else 0
    lo = 30 * view.sector
    record: dict[str, Any] = {
        "tag": view.tag,
        "navigable": view.navigable,
        "in_frustum": view.navigable,
        "has_mask": bbox is not None,
        "mask_area_px": area,
        "mask_bbox_xyxy": bbox,
        "mask_area_fraction": round(area / (size[0] * size[1]), 4),
        "mask_meets_threshold": view.visible,
        rgb_key: view.rgb_path(),
        "mask_raw_path": view.mask_path(),
        "camera_position": view.camera_position(goal),
        "camera_rotation_quat_wxyz": [1.0, 0.0, 0.0, 0.0] if view.navigable else None,
        "sector_index": view.sector,
        "angle_deg_range": [lo, lo + 30],
        "range_label": view.kind,
        "radius_m": view.radius
        if view.radius is not None
        else (FAR_RADIUS if view.kind == "far" else NEAR_RADIUS),
    }
    for key, value in view.extra.items():
        if value is DROP:
            record.pop(key, None)
        else:
            record[key] = value
    return record


def meta_document(spec: EpisodeSpec) -> dict[str, Any]:
    """The meta.json content of an episode spec."""
    w, h = spec.image_size
    views = [viewpoint_record(v, spec.goal, spec.image_size, spec.rgb_key) for v in spec.views]
    meta: dict[str, Any] = {
        "scene_id": f"data/scene_datasets/hm3d/{spec.split}/{spec.scene}/{spec.scene.split('-')[-1]}.glb",
        "scene_key": spec.scene,
        "episode_id": spec.episode,
        "goal_position_nominal": list(spec.goal),
        "object_category": spec.category,
        "object_id": spec.object_id,
        "camera_intrinsics": {
            "width": w,
            "height": h,
            "hfov_deg": HFOV_DEG,
            "vfov_deg": round(_vfov(w, h, HFOV_DEG), 2),
        },
        "sensor_mount_offset_y": 1.31,
        "n_sectors": 12,
        "sector_order": list(RAW_SECTORS),
        "sector_skip": 1,
        "ranges": {"near": [0.9, 1.2], "far": [1.4, 1.7]},
        "category_mask_threshold": 150,
        spec.list_key: views,
        "navigable_count": sum(1 for v in spec.views if v.navigable),
        "valid_mask_count": sum(1 for v in spec.views if v.navigable and v.visible),
        "success": True,
    }
    for key, value in spec.meta_overrides.items():
        if value is DROP:
            meta.pop(key, None)
        else:
            meta[key] = value
    return meta


def write_png(path: Path, array: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path, format="PNG", compress_level=1)


def rgb_frame(view: View, size: tuple[int, int]) -> np.ndarray:
    w, h = size
    frame = np.empty((h, w, 3), dtype=np.uint8)
    frame[...] = image_color(view.sector, view.kind)
    return frame


def mask_frame(view: View, size: tuple[int, int], bbox: Sequence[float] | None) -> np.ndarray:
    w, h = size
    mask = np.zeros((h, w), dtype=np.uint8)
    if bbox is not None:
        x0, y0, x1, y1 = (int(v) for v in bbox)
        mask[y0:y1, x0:x1] = 255
    return mask


class TinyDataset:
    """A dataset root being filled with hand-written episodes, descriptions and index files."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.episodes: list[EpisodeHandle] = []
        self.objects: dict[str, str] = {}  # object id -> category, for every object seen

    # -- episodes -------------------------------------------------------------------------------------------

    def add_episode(self, spec: EpisodeSpec | None = None, **changes: Any) -> EpisodeHandle:
        """Write one episode (meta.json, rgb/, mask/). Keyword arguments override fields of ``spec``."""
        spec = replace(spec or EpisodeSpec(), **changes)
        directory = self.root / spec.episode_path
        directory.mkdir(parents=True, exist_ok=True)
        meta = meta_document(spec)
        (directory / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        if spec.images:
            records = meta.get(spec.list_key)
            if isinstance(records, list):  # overrides may have replaced the list with garbage
                for view, record in zip(spec.views, records, strict=False):
                    if isinstance(record, dict):
                        self._write_view_images(directory, view, record, spec)
        handle = EpisodeHandle(spec=spec, episode_path=spec.episode_path, directory=directory, meta=meta)
        self.episodes.append(handle)
        self.objects.setdefault(spec.object_id, spec.category)
        return handle

    def _write_view_images(
        self, directory: Path, view: View, record: Mapping[str, Any], spec: EpisodeSpec
    ) -> None:
        if not view.navigable or not view.write_image:
            return
        rgb = record.get(spec.rgb_key)
        if isinstance(rgb, str) and ".." not in rgb and not rgb.startswith("/"):
            write_png(directory / rgb, rgb_frame(view, spec.image_size))
        mask = record.get("mask_raw_path")
        if isinstance(mask, str):
            write_png(directory / mask, mask_frame(view, spec.image_size, record.get("mask_bbox_xyxy")))

    def add_object(self, object_id: str, category: str) -> None:
        """Register an object that appears only as a query (so descriptions are written for it)."""
        self.objects.setdefault(object_id, category)

    # -- descriptions and index -----------------------------------------------------------------------------

    @staticmethod
    def descriptions_of(object_id: str, category: str) -> list[str]:
        """Deterministic three descriptions of an object."""
        return [
            f"a {category} with the id {object_id}",
            f"the {category} called {object_id}",
            f"{category} ({object_id})",
        ]

    def write_descriptions(
        self, objects: Mapping[str, str] | None = None, texts: Mapping[str, Sequence[str]] | None = None
    ) -> tuple[Path, Path]:
        """Write both description files (plain and with-category) for ``objects`` (default: all seen);
        ``texts`` replaces the usual three descriptions of the objects it names (e.g. with bad queries)."""
        objects = dict(self.objects if objects is None else objects)
        chosen = dict(texts or {})

        def of(oid: str, cat: str) -> list[str]:
            return list(chosen[oid]) if oid in chosen else self.descriptions_of(oid, cat)

        plain = {oid: of(oid, cat) for oid, cat in objects.items()}
        with_cat = {
            oid: {"object_category": cat, "descriptions": of(oid, cat)} for oid, cat in objects.items()
        }
        p1 = self.root / "object_descriptions.json"
        p2 = self.root / "object_descriptions_with_category.json"
        p1.write_text(json.dumps(plain, indent=1), encoding="utf-8")
        p2.write_text(json.dumps(with_cat, indent=1), encoding="utf-8")
        return p1, p2

    def pair(
        self,
        episode: EpisodeHandle,
        query_object_id: str | None = None,
        query_category: str | None = None,
        pair_type: str | None = None,
    ) -> dict[str, Any]:
        """An index record for ``episode``; positive by default, typed from the ids/categories otherwise."""
        qid = query_object_id or episode.object_id
        qcat = query_category or self.objects.get(qid, episode.category)
        if pair_type is None:
            pair_type = (
                "positive"
                if qid == episode.object_id
                else ("neg_same" if qcat == episode.category else "neg_diff")
            )
        views = episode.spec.views
        valid = sorted({v.sector for v in views if v.visible})
        navigable = sorted({v.sector for v in views if v.navigable and v.rgb_path()})
        self.add_object(qid, qcat)
        return {
            "episode_path": episode.episode_path,
            "scene": episode.spec.scene,
            "episode": episode.spec.episode,
            "meta_path": f"{episode.episode_path}/meta.json",
            "rgb_dir": f"{episode.episode_path}/rgb",
            "depth_dir": f"{episode.episode_path}/depth",
            "target_object_id": episode.object_id,
            "target_object_category": episode.category,
            "valid_start_sectors": valid,
            "navigable_sectors": navigable,
            "n_navigable": len(navigable),
            "n_mask_visible": len(valid),
            "query_object_id": qid,
            "query_object_category": qcat,
            "label": 1 if pair_type == "positive" else 0,
            "pair_type": pair_type,
        }

    def write_index(self, name: str, records: Iterable[Mapping[str, Any] | str], split: str = "val") -> Path:
        """Write ``<root>/<split>/<name>``; string items are written verbatim (for broken lines)."""
        path = self.root / split / name
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return path


def build_small_benchmark(
    root: Path,
    *,
    categories: Sequence[str] = ("mug", "keys", "laptop"),
    objects_per_category: int = 2,
    episodes_per_object: int = 2,
    images: bool = False,
) -> TinyDataset:
    """A miniature benchmark split: every object appears in ``episodes_per_object`` scenes.

    Sector layouts vary deterministically between episodes (one trap, one unreachable sector at different
    places) so statistics are not all identical. Without ``images`` only meta.json files are written, which
    is all the index builder needs.
    """
    ds = TinyDataset(root)
    counter = 0
    for c, category in enumerate(categories):
        for o in range(objects_per_category):
            object_id = f"{category.replace(' ', '_')}_{o}"
            for e in range(episodes_per_object):
                trap = RAW_SECTORS[(counter + 1) % 6]
                gone = RAW_SECTORS[(counter + 3) % 6]
                ds.add_episode(
                    EpisodeSpec(
                        scene=f"{100 + c * 10 + e:05d}-scene{c}{e}",
                        episode=str(o),
                        object_id=object_id,
                        category=category,
                        views=ring(traps={trap}, unreachable={gone}),
                        images=images,
                    )
                )
                counter += 1
    ds.write_descriptions()
    return ds


# -- the paper's examples (App. I, Listings 1 and 2) -----------------------------------------------------

#: meta.json of paper Listing 1, exactly as printed (its viewpoint list is truncated to the first entry).
PAPER_EXAMPLE_META: dict[str, Any] = {
    "scene_id": "data/scene_datasets/hm3d/train/00059-kJxT5qssH4H/kJxT5qssH4H.basis.glb",
    "scene_key": "00059-kJxT5qssH4H",
    "episode_id": "0",
    "goal_position_nominal": [2.612, 3.301, -1.106],
    "object_category": "backpack",
    "object_id": "2ad86321197a49feb54b7726743d7fd0",
    "camera_intrinsics": {"width": 360, "height": 640, "hfov_deg": 42.0, "vfov_deg": 68.62},
    "sensor_mount_offset_y": 1.31,
    "n_sectors": 12,
    "sector_order": [0, 2, 4, 6, 8, 10],
    "sector_skip": 1,
    "ranges": {"near": [0.9, 1.2], "far": [1.4, 1.7]},
    "category_mask_threshold": 500,
    "viewpoints": [
        {
            "tag": "s0_far",
            "navigable": True,
            "in_frustum": True,
            "has_mask": True,
            "mask_area_px": 5111,
            "mask_bbox_xyxy": [140, 368, 222, 452],
            "mask_area_fraction": 0.0222,
            "mask_meets_threshold": True,
            "rgb": "rgb/rgb_s0_far.png",
            "mask_raw_path": "mask/mask_s0_far.png",
            "camera_position": [4.261, 4.771, -1.039],
            "camera_rotation_quat_wxyz": [0.697, -0.187, 0.669, 0.179],
            "sector_index": 0,
            "angle_deg_range": [0, 30],
            "range_label": "far",
            "radius_m": 1.65,
        }
    ],
    "navigable_count": 6,
    "valid_mask_count": 6,
    "success": True,
}

#: The positive index record of paper Listing 2 (the "..." of its meta_path/rgb_dir spelled out).
PAPER_EXAMPLE_INDEX_RECORD: dict[str, Any] = {
    "episode_path": "pin_capture/val/00813-svBbv1Pavdk/43",
    "scene": "00813-svBbv1Pavdk",
    "episode": "43",
    "meta_path": "pin_capture/val/00813-svBbv1Pavdk/43/meta.json",
    "rgb_dir": "pin_capture/val/00813-svBbv1Pavdk/43/rgb",
    "target_object_id": "8dac2731fff9431399c01ee114e5e002",
    "target_object_category": "laptop",
    "valid_start_sectors": [0, 6, 8, 10],
    "navigable_sectors": [0, 2, 4, 6, 8, 10],
    "n_navigable": 6,
    "n_mask_visible": 4,
    "query_object_id": "8dac2731fff9431399c01ee114e5e002",
    "query_object_category": "laptop",
    "label": 1,
    "pair_type": "positive",
}


def write_paper_example(root: Path) -> Path:
    """Write the Listing-1 episode (meta.json + full-size 360x640 rgb and mask of its one viewpoint) under
    ``pin_capture/train/00059-kJxT5qssH4H/0``; returns the episode directory."""
    meta = PAPER_EXAMPLE_META
    directory = Path(root) / "pin_capture" / "train" / meta["scene_key"] / meta["episode_id"]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    view = View(0, "far")
    write_png(directory / "rgb" / "rgb_s0_far.png", rgb_frame(view, FULL_IMAGE))
    write_png(
        directory / "mask" / "mask_s0_far.png",
        mask_frame(view, FULL_IMAGE, meta["viewpoints"][0]["mask_bbox_xyxy"]),
    )
    return directory
