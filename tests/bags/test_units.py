"""The pieces of aiv_bags on their own: axis convention, sector placement, tf lookups, images, the report."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from aiv_bags import cli
from aiv_bags.geometry import (
    Transform,
    axis_angle_matrix,
    dataset_point,
    dataset_pose,
    look_at_rotation_wxyz,
    object_in_view,
    world_point,
    world_pose,
)
from aiv_bags.tf_tree import TfLookupError, TfTree
from aiv_bags.tour import TourBox, TourImage, TourTopics
from aiv_bags.tour_bag import read_tour_bag, write_tour_bag
from aiv_bags.tour_import import choose_slots, place_views
from aiv_dataset.azimuth import azimuth

from .tour_tools import benchmark_like_dataset

# -- axis convention --------------------------------------------------------------------------------------


def test_dataset_and_ros_frames_agree_on_up_and_on_left() -> None:
    # Habitat y up -> ROS z up; Habitat forward (-z) -> ROS +x; Habitat right (+x) -> ROS -y.
    assert np.allclose(world_point((0.0, 1.0, 0.0), "z"), (0.0, 0.0, 1.0))
    assert np.allclose(world_point((0.0, 0.0, -1.0), "z"), (1.0, 0.0, 0.0))
    assert np.allclose(world_point((1.0, 0.0, 0.0), "z"), (0.0, -1.0, 0.0))
    # +theta (dataset) is clockwise seen from above in the ROS frame: the spec's sign flip.
    goal = (0.0, 0.0, 0.0)

    def ros_azimuth(theta: float) -> float:
        x, y, _ = world_point((math.cos(theta), 0.5, math.sin(theta)), "z")
        return math.atan2(y, x)

    for theta in (0.3, 1.9, -2.5):
        assert math.isclose(azimuth((math.cos(theta), 0.5, math.sin(theta)), goal), theta)
        step = (ros_azimuth(theta + 0.2) - ros_azimuth(theta) + math.pi) % (2 * math.pi) - math.pi
        assert math.isclose(step, -0.2)
    assert np.allclose(world_point((1.0, 2.0, 3.0), "y"), (1.0, 2.0, 3.0))


@pytest.mark.parametrize("up_axis", ["z", "y"])
def test_pose_conversion_round_trips(up_axis: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        position = tuple(rng.uniform(-5, 5, size=3))
        q = rng.normal(size=4)
        q = tuple(q / np.linalg.norm(q))
        back_position, back_q = dataset_pose(world_pose(position, q, up_axis), up_axis)
        assert np.allclose(back_position, position)
        assert np.isclose(abs(float(np.dot(back_q, q))), 1.0)
        assert np.allclose(dataset_point(world_point(position, up_axis), up_axis), position)


def test_a_camera_looking_at_the_object_sees_it_in_its_optical_frame() -> None:
    goal, camera = (2.0, 0.5, -1.0), (3.4, 1.31, -0.2)
    pose = world_pose(camera, look_at_rotation_wxyz(camera, goal), "z")
    assert object_in_view(pose, world_point(goal, "z"), 42.0, 68.62)
    away = world_pose(camera, look_at_rotation_wxyz(goal, camera), "z")
    assert not object_in_view(away, world_point(goal, "z"), 42.0, 68.62)


# -- sector placement -------------------------------------------------------------------------------------


def test_placement_follows_the_capture_pipeline_for_benchmark_views() -> None:
    azimuths = [30.0 * s + 15.0 + d for s, d in zip((0, 2, 4, 6, 8, 10), (3, -8, 9, 0, -2, 5), strict=True)]
    grid, placed = place_views(azimuths, [1.55] * 6)
    assert grid.phase == "fitted"
    assert [p.sector for p in placed] == [0, 2, 4, 6, 8, 10]
    assert all(p.view_type == "far" for p in placed)
    # Rotating every view moves the grid with it; the tour's first view stays in sector 0.
    turned = [(a + 77.0) % 360.0 for a in azimuths]
    grid2, placed2 = place_views(turned, [1.55] * 6)
    assert [p.sector for p in placed2] == [0, 2, 4, 6, 8, 10]
    assert math.isclose((grid2.origin_deg - grid.origin_deg) % 360.0, 77.0)
    # Starting the tour elsewhere relabels the sectors from there.
    _, placed3 = place_views(azimuths[2:] + azimuths[:2], [1.55] * 6)
    assert [p.sector for p in placed3] == [0, 2, 4, 6, 8, 10]


def test_dense_tours_anchor_on_the_first_view_and_keep_the_most_central_views() -> None:
    azimuths = [10.0 + 7.5 * i for i in range(48)]  # a video all round, every 7.5 degrees
    radii = [1.0 if i % 2 else 1.5 for i in range(48)]
    grid, placed = place_views(azimuths, radii)
    assert grid.phase == "first_view" and math.isclose(grid.origin_deg, -5.0 % 360.0)
    chosen, unused = choose_slots(placed)
    assert sorted({(v.sector, v.view_type) for v in chosen}) == [
        (s, t) for s in (0, 2, 4, 6, 8, 10) for t in ("far", "near")
    ]
    assert len(chosen) + len(unused) == 48
    assert all(abs(v.offset_deg) <= 7.5 for v in chosen)


def test_near_and_far_split_between_the_bands() -> None:
    _, placed = place_views([15.0, 16.0, 17.0], [0.95, 1.29, 1.31])
    assert [p.view_type for p in placed] == ["near", "near", "far"]
    _, placed = place_views([15.0, 16.0], [0.5, 0.7], far_min_m=0.6)
    assert [p.view_type for p in placed] == ["near", "far"]


# -- tf lookups -------------------------------------------------------------------------------------------


def test_tf_chains_compose_and_interpolate() -> None:
    tree = TfTree()
    mount = Transform((0.1, 0.0, 1.2), (0.5, -0.5, 0.5, -0.5))
    tree.add("base_link", "camera_optical", 0, mount, static=True, topic="/tf_static")
    yaw = Transform.from_matrix(axis_angle_matrix((0, 0, 1), math.pi / 2), (2.0, 0.0, 0.0))
    tree.add("map", "odom", 0, Transform((1.0, 1.0, 0.0)), static=True, topic="/tf_static")
    tree.add("odom", "base_link", 10, Transform((0.0, 0.0, 0.0)), static=False, topic="/tf")
    tree.add("odom", "base_link", 20, yaw, static=False, topic="/tf")
    at_20 = tree.lookup("map", "camera_optical", 20)
    expected = Transform((1.0, 1.0, 0.0)).compose(yaw).compose(mount)
    assert np.allclose(at_20.translation, expected.translation)
    half = tree.lookup("map", "base_link", 15)
    assert np.allclose(half.translation, (2.0, 1.0, 0.0))
    assert np.isclose(abs(half.rotation[3]), math.cos(math.pi / 8))
    with pytest.raises(TfLookupError, match="near stamp"):
        tree.lookup("map", "base_link", 5_000_000_000)
    with pytest.raises(TfLookupError, match="is in no transform"):
        tree.lookup("map", "gripper", 15)


def test_tf_tree_refuses_what_tf2_would_not_accept() -> None:
    tree = TfTree()
    tree.add("map", "camera", 5, Transform((0, 0, 0)), static=False, topic="/tf")
    with pytest.raises(ValueError, match="duplicate stamp"):
        tree.add("map", "camera", 5, Transform((0, 0, 0)), static=False, topic="/tf")
    with pytest.raises(ValueError, match="non-monotonic"):
        tree.add("map", "camera", 4, Transform((0, 0, 0)), static=False, topic="/tf")
    with pytest.raises(ValueError, match="two parents"):
        tree.add("odom", "camera", 6, Transform((0, 0, 0)), static=False, topic="/tf")
    with pytest.raises(ValueError, match="not finite"):
        tree.add("map", "object", 0, Transform((math.nan, 0, 0)), static=True, topic="/tf_static")


# -- images -----------------------------------------------------------------------------------------------


def test_images_decode_from_every_usable_encoding() -> None:
    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    assert np.array_equal(TourImage.from_rgb(rgb).to_rgb(), rgb)
    assert np.array_equal(TourImage.from_rgb(rgb, "png").to_rgb(), rgb)
    bgr = TourImage(rgb[:, :, ::-1].tobytes(), "bgr8", False, 5, 4, 15)
    assert np.array_equal(bgr.to_rgb(), rgb)
    padded = np.zeros((4, 24), dtype=np.uint8)  # rows padded to 24 bytes
    padded[:, :20] = np.dstack([rgb, np.full((4, 5), 255, np.uint8)]).reshape(4, 20)
    assert np.array_equal(TourImage(padded.tobytes(), "rgba8", False, 5, 4, 24).to_rgb(), rgb)
    grey = TourImage(bytes(range(20)), "mono8", False, 5, 4, 5).to_rgb()
    assert grey.shape == (4, 5, 3) and np.array_equal(grey[:, :, 0], grey[:, :, 2])
    with pytest.raises(ValueError, match="32FC1"):
        TourImage(bytes(80), "32FC1", False, 5, 4, 20).to_rgb()


# -- the import report ------------------------------------------------------------------------------------


def test_import_report_says_to_use_a_detector(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds, episodes, index = benchmark_like_dataset(tmp_path / "src")
    bag = tmp_path / "tour"
    export = ["export", str(ds.root), episodes[2].episode_path, str(bag), "--index", str(index), "--no-boxes"]
    assert cli.main(export) == 0
    assert "no boxes" in capsys.readouterr().out
    capsys.readouterr()
    assert (
        cli.main(["import", str(bag), str(tmp_path / "dst"), "--scene", "robot-kitchen", "--episode", "7"])
        == 0
    )
    out = capsys.readouterr().out
    assert "no masks" in out and "agent.bbox_mode: detector" in out
    episode = tmp_path / "dst" / "pin_capture" / "val" / "robot-kitchen" / "7"
    meta = json.loads((episode / "meta.json").read_text())
    assert meta["tour_source"]["has_masks"] is False
    assert all(v["mask_bbox_xyxy"] is None and v["has_mask"] is False for v in meta["viewpoints"])
    # Sector 0 is the first view of the tour: the episode's lowest raw sector (2 here) is renumbered.
    assert [v["tour_view"]["label"] for v in meta["viewpoints"]][:2] == ["s2_far", "s2_near"]
    assert meta["viewpoints"][0]["tag"] == "s0_far"
    lines = (tmp_path / "dst" / "val" / "pv_index_tours.jsonl").read_text().splitlines()
    assert [json.loads(line)["pair_type"] for line in lines] == ["positive", "neg_same", "neg_diff"]


def test_import_keeps_the_best_box_of_each_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A detector's boxes (several per view, some views without one) become the episode's GT boxes."""
    ds, episodes, index = benchmark_like_dataset(tmp_path / "src")
    exported = tmp_path / "exported"
    assert (
        cli.main(["export", str(ds.root), episodes[2].episode_path, str(exported), "--index", str(index)])
        == 0
    )
    tour = read_tour_bag(exported).tour
    detected = []
    for n, view in enumerate(tour.views):
        if n == 0:
            boxes: tuple[TourBox, ...] | None = None  # the detector skipped this frame
        elif n == 1:
            boxes = ()  # nothing found
        else:
            boxes = (TourBox(1, 2, 3, 4, 0.25, "cup"), TourBox(5, 6, 17, 28, 0.75, "mug"))
        detected.append(dataclasses.replace(view, boxes=boxes))
    bag = tmp_path / "robot"
    write_tour_bag(tour.with_views(tuple(detected)), bag, topics=TourTopics(detections="/robot/objects"))
    sidecar = yaml.safe_load((exported / "tour.yaml").read_text())
    del sidecar["topics"]["detections"]  # found by its type: the bag's only Detection2DArray topic
    (bag / "tour.yaml").write_text(yaml.safe_dump(sidecar))
    capsys.readouterr()
    assert cli.main(["import", str(bag), str(tmp_path / "dst")]) == 0
    out = capsys.readouterr().out
    assert "boxes: from /robot/objects" in out and "no masks" in out
    (meta_file,) = (tmp_path / "dst").rglob("meta.json")
    meta = json.loads(meta_file.read_text())
    assert meta["tour_source"]["boxes"] == "/robot/objects"
    by_stamp = {v["tour_view"]["stamp_ns"]: v for v in meta["viewpoints"]}
    for n, view in enumerate(tour.views):
        if view.stamp_ns not in by_stamp:
            continue
        record = by_stamp[view.stamp_ns]
        assert record["has_mask"] is False and record["mask_area_px"] is None
        assert record["mask_bbox_xyxy"] == (None if n < 2 else [5.0, 6.0, 17.0, 28.0])
