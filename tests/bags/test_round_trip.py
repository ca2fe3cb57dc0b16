"""Dataset episode -> tour bag -> imported episode: the environment cannot tell them apart.

For every episode of a test set and every action script, the imported episode has the same virtual sector
map, start view and transitions as the original (views compared by identity: the tag the tour carried) —
also when every pose is turned by an arbitrary yaw about the up axis and shifted, and when each camera pose
then gets up to +-3 degrees and +-3 cm of noise. The test episodes place views up to 10 degrees from their
window centres, so the noise cannot carry a view across a +-30 degree decision boundary.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiv_bags import ImportOptions, TourFrames, export_episode, import_tour, read_tour_bag, write_tour_bag
from aiv_dataset import PInVerifyDataset, validate_dataset
from aiv_dataset.images import load_rgb

from .tour_tools import (
    action_scripts,
    benchmark_like_dataset,
    env_traces,
    index_lines,
    reframe,
)

SCRIPTS = action_scripts()
SHORT_SCRIPTS = action_scripts(long_scripts=4, pairs=False)
SEEDS = 3  # start seeds per episode (the start sector is drawn from them)
_ORIGINAL: dict[tuple[str, int], list[Any]] = {}


def _original_traces(root: Path, record: dict[str, Any], scripts: list[Any]) -> list[Any]:
    key = (record["episode_path"], id(scripts))
    if key not in _ORIGINAL:
        _ORIGINAL[key] = env_traces(root, [record], scripts, seeds=SEEDS)
    return _ORIGINAL[key]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any], Path]:
    ds, episodes, index = benchmark_like_dataset(tmp_path_factory.mktemp("src") / "pv_dataset")
    return ds.root, episodes, index


def _round_trip(
    tmp: Path,
    source: tuple[Path, list[Any], Path],
    *,
    reframe_args: dict[str, Any] | None = None,
    export_kwargs: dict[str, Any] | None = None,
) -> tuple[Path, dict[str, str]]:
    """Export every episode, optionally re-frame the bag, import all into one new dataset root.
    Returns the new root and original -> imported episode paths."""
    root, episodes, index = source
    dst = tmp / "imported"
    mapping = {}
    for ep in episodes:
        bag = tmp / f"bag_{ep.spec.episode}"
        export_episode(root, ep.episode_path, bag, index=index, **(export_kwargs or {}))
        if reframe_args is not None:
            read = read_tour_bag(bag)
            moved = tmp / f"moved_{ep.spec.episode}"
            storage = "sqlite3" if read.summary.storage == "sqlite3" else "mcap"
            write_tour_bag(reframe(read.tour, **reframe_args), moved, storage=storage)
            shutil.copy(bag / "tour.yaml", moved / "tour.yaml")
            bag = moved
        result = import_tour(bag, ImportOptions(root=dst))
        mapping[ep.episode_path] = result.episode_path
    return dst, mapping


def _assert_same_behaviour(
    source: tuple[Path, list[Any], Path], dst: Path, mapping: dict[str, str], scripts: list[Any]
) -> None:
    root, _, index = source
    original = index_lines(index)
    imported = index_lines(dst / "val" / "pv_index_tours.jsonl")
    for old_path, new_path in mapping.items():
        old_records = [r for r in original if r["episode_path"] == old_path]
        new_records = [r for r in imported if r["episode_path"] == new_path]
        assert [(r["query_object_id"], r["label"], r["pair_type"]) for r in new_records] == [
            (r["query_object_id"], r["label"], r["pair_type"]) for r in old_records
        ]
        # The environment does not read the query, so one pair per episode plays every transition.
        before = _original_traces(root, old_records[0], scripts)
        after = env_traces(dst, new_records[:1], scripts, seeds=SEEDS)
        assert len(after) == len(before)
        for n, (a, b) in enumerate(zip(after, before, strict=True)):
            assert a == b, f"{old_path}: trace {n} differs"


def test_round_trip_keeps_sector_map_start_and_transitions(tmp_path: Path, source: Any) -> None:
    dst, mapping = _round_trip(tmp_path, source)
    result = validate_dataset(dst)
    assert result.ok, result.report.format()
    _assert_same_behaviour(source, dst, mapping, SCRIPTS)
    # Lossless images: every imported frame has the original's pixels.
    root = source[0]
    original, imported = PInVerifyDataset(root), PInVerifyDataset(dst)
    for old_path, new_path in mapping.items():
        old = original.load_episode(old_path)
        new = imported.load_episode(new_path)
        by_tag = {v.name: v for v in old.meta.index_views if v.rgb}
        for view in new.meta.index_views:
            label = view.raw["tour_view"]["label"]
            assert np.array_equal(load_rgb(new.image_path(view)), load_rgb(old.image_path(by_tag[label])))
            # The ground-truth box travels on the box topic; the mask itself does not.
            assert view.mask_bbox_xyxy == by_tag[label].mask_bbox_xyxy and view.mask_path is None


def test_a_tour_exported_without_boxes_imports_without_boxes(tmp_path: Path, source: Any) -> None:
    dst, mapping = _round_trip(tmp_path, source, export_kwargs={"boxes": False})
    _assert_same_behaviour(source, dst, mapping, SCRIPTS[:1])
    imported = PInVerifyDataset(dst)
    for new_path in mapping.values():
        meta = imported.load_episode(new_path).meta
        assert all(view.mask_bbox_xyxy is None for view in meta.index_views)
        assert meta.raw["tour_source"]["boxes"] == "detector"


@pytest.mark.parametrize("yaw_deg", [37.0, 163.0, -101.5])
def test_round_trip_is_independent_of_the_map_frame(tmp_path: Path, source: Any, yaw_deg: float) -> None:
    dst, mapping = _round_trip(
        tmp_path, source, reframe_args={"yaw_rad": math.radians(yaw_deg), "offset": (3.5, -7.25, 0.4)}
    )
    _assert_same_behaviour(source, dst, mapping, SCRIPTS)


@pytest.mark.parametrize(("yaw_deg", "seed"), [(71.0, 1), (-143.0, 2), (212.0, 3)])
def test_round_trip_survives_pose_noise(tmp_path: Path, source: Any, yaw_deg: float, seed: int) -> None:
    dst, mapping = _round_trip(
        tmp_path,
        source,
        reframe_args={"yaw_rad": math.radians(yaw_deg), "offset": (-1.0, 2.0, 0.0), "noise_seed": seed},
    )
    _assert_same_behaviour(source, dst, mapping, SCRIPTS)


@pytest.mark.parametrize(
    "export_kwargs",
    [
        {"compression": "png"},
        {"storage": "sqlite3"},
        {"storage": "sqlite3", "version": 8},
        {"camera_chain": "base"},
        {"object_topic": "tf"},
        {"camera_chain": "base", "object_topic": "tf", "compression": "png", "storage": "sqlite3"},
        {"frames": TourFrames(fixed="world", object="target", camera="cam_optical", up_axis="y")},
    ],
    ids=[
        "compressed-png",
        "sqlite3",
        "sqlite3-v8",
        "camera-mount-on-tf_static",
        "object-on-tf",
        "all",
        "y-up",
    ],
)
def test_round_trip_variants(tmp_path: Path, source: Any, export_kwargs: dict[str, Any]) -> None:
    dst, mapping = _round_trip(tmp_path, source, export_kwargs=export_kwargs)
    assert validate_dataset(dst).ok
    _assert_same_behaviour(source, dst, mapping, SHORT_SCRIPTS)


def test_jpeg_tours_import_with_the_same_geometry(tmp_path: Path, source: Any) -> None:
    dst, mapping = _round_trip(tmp_path, source, export_kwargs={"compression": "jpeg"})
    assert validate_dataset(dst).ok
    _assert_same_behaviour(source, dst, mapping, SHORT_SCRIPTS)


class _Handle:
    """The two fields of an episode handle the round trip uses, for episodes the capture pipeline made."""

    def __init__(self, episode_path: str) -> None:
        self.episode_path = episode_path
        self.spec = type("Spec", (), {"episode": episode_path.replace("/", "_")})()


@pytest.mark.slow
@pytest.mark.parametrize(
    "reframe_args",
    [None, {"yaw_rad": math.radians(123.0), "offset": (1.0, 2.0, 0.0)}, {"yaw_rad": 0.7, "noise_seed": 1}],
    ids=["as-is", "yaw", "yaw-and-noise"],
)
def test_round_trip_of_capture_pipeline_episodes(
    tmp_path: Path, micro_root: Path, reframe_args: dict[str, Any] | None
) -> None:
    """The synthetic generator's episodes (views anywhere inside their 30-degree windows, real renders)."""
    index = micro_root / "val" / "pv_index_all.jsonl"
    paths = sorted({r["episode_path"] for r in index_lines(index)})
    source = (micro_root, [_Handle(p) for p in paths], index)
    dst, mapping = _round_trip(tmp_path, source, reframe_args=reframe_args)
    assert validate_dataset(dst).ok
    _assert_same_behaviour(source, dst, mapping, SCRIPTS)
    if reframe_args is None or "noise_seed" not in reframe_args:
        # The generator only keeps views that have the object in their frustum: the camera orientations
        # survived the trip through optical frames in a z-up map.
        for new_path in mapping.values():
            episode = PInVerifyDataset(dst).load_episode(new_path)
            assert all(view.in_frustum for view in episode.meta.index_views)
