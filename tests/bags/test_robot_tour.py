"""A tour as a robot records it: a dense sweep round the object, JPEG frames, the camera on a mount
(map -> base_link on /tf, base_link -> camera on /tf_static), a map frame in no relation to the object, and
the object's position given in a hand-written sidecar."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import yaml
from aiv_bags import (
    CameraModel,
    ImportOptions,
    Tour,
    TourFrames,
    TourImage,
    TourView,
    import_tour,
    write_tour_bag,
)
from aiv_bags.geometry import look_at_rotation_wxyz, world_point, world_pose
from aiv_dataset import PInVerifyDataset, parse_pair_record, validate_dataset
from aiv_dataset.fields import Where
from aiv_offline_sim.environment import Action, PInVerifyEnv


def _robot_tour() -> Tour:
    goal = (4.0, 0.45, -2.0)  # dataset frame (y up)
    camera = CameraModel(64, 48, 60.0, 60.0, 31.5, 23.5)
    views = []
    for i in range(80):  # every 9 degrees from 200 degrees, once round far away, then once near
        theta = math.radians(200.0 + 9.0 * i)
        radius = 1.55 if i < 40 else 1.05
        position = (goal[0] + radius * math.cos(theta), 1.31, goal[2] + radius * math.sin(theta))
        pose = world_pose(position, look_at_rotation_wxyz(position, goal), "z")
        rgb = np.full((48, 64, 3), (i * 6 % 256, 120, 200 - i * 4), dtype=np.uint8)
        views.append(
            TourView(1_714_000_000_000_000_000 + i * 333_000_000, TourImage.from_rgb(rgb, "jpeg"), pose)
        )
    return Tour(
        tuple(views), world_point(goal, "z"), camera, TourFrames(fixed="map", camera="head_camera_optical")
    )


def test_robot_tour_imports_as_a_complete_episode(tmp_path: Path) -> None:
    tour = _robot_tour()
    bag = tmp_path / "kitchen_run_3"
    topics = write_tour_bag(tour, bag, camera_chain="base", object_topic="tf")
    assert topics.image == "/camera/image_raw/compressed"
    sidecar = {
        "format": "aiv-tour/1",
        "object": {
            "id": "red_mug",
            "category": "mug",
            "descriptions": ["a red mug with a white handle", "red coffee mug"],
            "position": list(tour.object_position),
        },
        "frames": {"object": "no_such_frame"},  # the position above is used instead
        "queries": [
            {"object_id": "red_mug"},
            {"object_id": "blue_mug", "category": "mug", "descriptions": ["blue"]},
        ],
    }
    (bag / "tour.yaml").write_text(yaml.safe_dump(sidecar))
    root = tmp_path / "dataset"
    result = import_tour(bag, ImportOptions(root=root))
    report = "\n".join(result.lines)
    assert "not used" in report and "phase first_view" in report
    assert validate_dataset(root).ok

    meta = json.loads((result.episode_dir / "meta.json").read_text())
    tags = [v["tag"] for v in meta["viewpoints"]]
    assert tags == [f"s{s}_{t}" for s in (0, 2, 4, 6, 8, 10) for t in ("far", "near")]
    assert all(v["in_frustum"] for v in meta["viewpoints"])
    assert all(abs(v["tour_view"]["offset_from_sector_centre_deg"]) <= 4.5 + 1e-6 for v in meta["viewpoints"])
    assert meta["scene_key"] == "kitchen_run_3" and meta["camera_intrinsics"]["width"] == 64

    lines = [json.loads(line) for line in result.index_file.read_text().splitlines()]
    assert [(r["query_object_id"], r["label"], r["pair_type"]) for r in lines] == [
        ("red_mug", 1, "positive"),
        ("blue_mug", 0, "neg_same"),
    ]
    descriptions = json.loads((root / "object_descriptions_with_category.json").read_text())
    assert descriptions["blue_mug"] == {"object_category": "mug", "descriptions": ["blue"]}

    env = PInVerifyEnv([parse_pair_record(lines[0], Where.of("test"))], PInVerifyDataset(root))
    obs = env.reset(0)
    assert env.sector_map.available == (0, 1, 2, 3, 4, 5)
    assert obs.load_image().shape == (48, 64, 3)
    _, _, _, info = env.step(Action.move("back"))
    assert info.outcome.value == "moved" and info.to_sector == (info.from_sector + 3) % 6
    # The camera mount was composed back: imported camera heights are the recorded ones.
    assert all(math.isclose(v["camera_position"][1], 1.31, abs_tol=1e-6) for v in meta["viewpoints"])
