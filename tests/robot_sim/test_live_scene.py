"""The stand-in's live renders reproduce the generator's pre-captured views, and its geometry is the scene's.

The micro dataset is written by the real capture pipeline; the stand-in rebuilds each episode in memory from
(preset, seed, scene, episode) alone and renders from base poses. At the exact capture poses the pixels are
identical; at the poses meta.json records (positions rounded to 0.1 mm), the stated tolerance holds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from aiv_robot_sim.frames import (
    BasePose,
    base_pose_from_scene,
    quaternion_to_yaw,
    scene_heading,
    scene_xz,
    world_from_scene_point,
    yaw_to_quaternion,
)
from aiv_robot_sim.live_scene import LiveScene, SceneError, find_task
from aiv_robot_sim.motion import Base, move_duration
from PIL import Image

from .poses import off_capture_pose

#: Tolerance at meta.json's rounded poses: mean |difference| per pixel (max over channels, 0-255 levels), the
#: share of pixels off by more than 8 levels, and target-mask pixels that differ.
MEAN_LEVELS = 0.5
SHARE_OVER_8 = 0.001
MASK_XOR_PX = 12


def _episodes(root: Path) -> list[Path]:
    return sorted((root / "pin_capture" / "val").glob("*/*"))


def _meta(episode: Path) -> dict:
    return json.loads((episode / "meta.json").read_text(encoding="utf-8"))


def _scene(meta: dict) -> LiveScene:
    return LiveScene("micro", 42, "val", meta["scene_key"], meta["episode_id"])


def _png(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image)


def test_renders_at_the_capture_poses_are_the_pre_captured_views_pixel_for_pixel(micro_root: Path) -> None:
    compared = 0
    for episode in _episodes(micro_root):
        meta = _meta(episode)
        scene = _scene(meta)
        assert scene.object_id == meta["object_id"] and scene.category == meta["object_category"]
        assert [round(c, 4) for c in scene.goal] == meta["goal_position_nominal"]
        records = {vp["tag"]: vp for vp in meta["viewpoints"] if vp["navigable"]}
        assert [view.tag for view in scene.captures()] == list(records)
        truth = json.loads(
            (micro_root / "privileged_gt" / "val" / f"{scene.object_id}.json").read_text(encoding="utf-8")
        )["captures"][scene.episode_path]
        for view in scene.captures():
            live = scene.render(view.base_pose)  # through the world frame and back
            record = records[view.tag]
            np.testing.assert_array_equal(live.rgb, _png(episode / record["rgb"]), err_msg=view.tag)
            np.testing.assert_array_equal(
                live.frame.object_ids == 100000, _png(episode / record["mask_raw_path"]) > 0, err_msg=view.tag
            )
            assert live.mask_area_px == record["mask_area_px"]
            assert live.bbox_xyxy == record["mask_bbox_xyxy"]
            assert live.mask_meets_threshold == record["mask_meets_threshold"]
            assert sorted(live.visible_attributes) == sorted(truth[view.tag]["visible"])
            assert scene.nearest_capture(live.pose) == view
            compared += 1
    assert compared >= 20


def test_renders_at_the_poses_meta_json_records_match_within_the_stated_tolerance(micro_root: Path) -> None:
    episode = _episodes(micro_root)[-1]
    meta = _meta(episode)
    scene = _scene(meta)
    gx, _, gz = meta["goal_position_nominal"]
    for record in meta["viewpoints"]:
        if not record["navigable"]:
            continue
        x, _, z = record["camera_position"]
        dx, dz = gx - x, gz - z
        norm = math.hypot(dx, dz)
        live = scene.render(base_pose_from_scene(x, z, dx / norm, dz / norm))
        reference = _png(episode / record["rgb"])
        levels = np.abs(live.rgb.astype(np.int16) - reference).max(axis=2)
        assert levels.mean() < MEAN_LEVELS, record["tag"]
        assert (levels > 8).mean() < SHARE_OVER_8, record["tag"]
        mask = _png(episode / record["mask_raw_path"]) > 0
        assert int((mask ^ (live.frame.object_ids == 100000)).sum()) <= MASK_XOR_PX, record["tag"]


def test_an_off_capture_pose_shows_a_different_view_of_the_same_object(micro_root: Path) -> None:
    scene = _scene(_meta(_episodes(micro_root)[0]))
    view, pose = off_capture_pose(scene)
    live = scene.render(pose)
    assert scene.nearest_capture(live.pose) is None
    assert live.mask_area_px > 0 and live.mask_area_px != view.mask_area_px
    assert not np.array_equal(live.rgb, scene.render(view.base_pose).rgb)


def test_goals_inside_walls_furniture_or_outside_the_room_are_refused(micro_root: Path) -> None:
    scene = _scene(_meta(_episodes(micro_root)[0]))  # its room has a partition wall
    room = scene.room
    assert room.walls

    def at(x: float, z: float) -> BasePose:
        return base_pose_from_scene(x, z, 1.0, 0.0)

    assert scene.refusal(scene.captures()[0].base_pose) is None
    assert "outside the room" in str(scene.refusal(at(-0.5, room.depth / 2)))
    assert "outside the room" in str(scene.refusal(at(room.width / 2, room.depth + 1.0)))
    assert "wall" in str(scene.refusal(at(0.05, room.depth / 2)))
    for wall in room.walls:  # partition walls reaching into the room
        assert "inside a wall" in str(scene.refusal(at(wall.cx, wall.cz)))
    furniture = [fp for fp in room.obstacles if fp not in room.walls]
    assert furniture
    for piece in furniture:
        assert "furniture" in str(scene.refusal(at(piece.cx, piece.cz)))
    assert "finite" in str(scene.refusal(BasePose(math.nan, 0.0, 0.0)))


def test_world_frame_is_the_scene_frame_turned_z_up() -> None:
    assert world_from_scene_point((1.0, 2.0, 3.0)) == (-3.0, -1.0, 2.0)
    pose = base_pose_from_scene(2.0, 3.0, 1.0, 0.0)  # facing scene +x
    assert (round(pose.x, 9), round(pose.y, 9)) == (-3.0, -2.0)
    assert math.isclose(pose.yaw, -math.pi / 2)  # scene +x is ROS -y
    assert np.allclose(scene_xz(pose), (2.0, 3.0)) and np.allclose(scene_heading(pose.yaw), (1.0, 0.0))
    for yaw in (-3.0, -0.4, 0.0, 1.2, 3.1):
        assert math.isclose(quaternion_to_yaw(*yaw_to_quaternion(yaw)), yaw, abs_tol=1e-12)


def test_the_base_drives_in_scaled_time_and_arrives_exactly_once() -> None:
    start, goal = BasePose(0.0, 0.0, 0.0), BasePose(2.0, 0.0, math.pi / 2)
    assert move_duration(start, goal, 0.5, math.pi / 2) == 4.0
    base = Base(start, 0.5, math.pi / 2, time_scale=10.0)
    base.start(goal, now=100.0)
    assert not base.update(100.2)
    half = base.pose(100.2)
    assert math.isclose(half.x, 1.0) and math.isclose(half.yaw, math.pi / 4)
    assert base.update(100.4) and base.pose(100.4) == goal and not base.update(100.5)
    base.start(BasePose(0.0, 0.0, 0.0), now=200.0)
    stopped = base.stop(200.1)
    assert not base.moving and math.isclose(stopped.x, 1.5)


def test_unknown_scenes_and_episodes_are_refused_with_what_exists() -> None:
    with pytest.raises(SceneError, match="has no scene 'nope'; it has 00800-"):
        find_task("micro", 42, "val", "nope", "")
    with pytest.raises(SceneError, match="has no episode '9'"):
        find_task("micro", 42, "val", "", "9")
    with pytest.raises(SceneError, match="unknown preset"):
        find_task("huge", 42, "val", "", "")
    with pytest.raises(SceneError, match="no split 'train'"):
        find_task("micro", 42, "train", "", "")
