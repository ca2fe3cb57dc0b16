"""A generated dataset (the ``tiny`` preset) read back through the data layer.

Everything here goes through :mod:`aiv_dataset`, the index builder's output and the episode
environment, i.e. through exactly what the main job will use.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
from aiv_dataset import (
    PInVerifyDataset,
    ProblemReport,
    episode_stats,
    load_mask,
    validate_dataset,
)
from aiv_dataset.vocabulary import mask_threshold_px
from aiv_offline_sim.environment import Action, PInVerifyEnv
from aiv_synth.attributes import differing_attributes
from aiv_synth.descriptions import absence_phrase
from aiv_synth.objects import CATALOGUE
from aiv_synth.objects.model import NONE, Recipe
from aiv_synth.pipeline import GenerationReport, ensure_dataset
from aiv_synth.presets import get_preset
from PIL import Image

V2_FIELDS = {
    "tag",
    "navigable",
    "in_frustum",
    "has_mask",
    "mask_area_px",
    "mask_bbox_xyxy",
    "mask_area_fraction",
    "mask_meets_threshold",
    "rgb",
    "mask_raw_path",
    "camera_position",
    "camera_rotation_quat_wxyz",
    "sector_index",
    "angle_deg_range",
    "range_label",
    "radius_m",
}
TOP_FIELDS = {
    "scene_id",
    "scene_key",
    "episode_id",
    "goal_position_nominal",
    "object_category",
    "object_id",
    "camera_intrinsics",
    "sensor_mount_offset_y",
    "n_sectors",
    "sector_order",
    "sector_skip",
    "ranges",
    "category_mask_threshold",
    "viewpoints",
    "navigable_count",
    "valid_mask_count",
    "success",
}


def _metas(root: Path) -> list[tuple[Path, dict]]:
    return [(p.parent, json.loads(p.read_text())) for p in sorted(root.glob("pin_capture/*/*/*/meta.json"))]


def test_every_planned_episode_was_written(tiny_generation: GenerationReport) -> None:
    assert tiny_generation.episodes_written == tiny_generation.episodes_planned == 18
    assert not tiny_generation.failed


def test_data_layer_validates_the_output_without_problems(tiny_root: Path) -> None:
    result = validate_dataset(tiny_root, images="decode")
    assert result.ok, result.report.format(20)
    assert result.episodes_checked == result.episodes_ok == 18
    assert result.index_records > 0


def test_meta_json_has_every_spec_field_and_consistent_counts(tiny_root: Path) -> None:
    for directory, meta in _metas(tiny_root):
        assert set(meta) >= TOP_FIELDS
        assert directory.name == meta["episode_id"] and directory.parent.name == meta["scene_key"]
        assert meta["camera_intrinsics"] == {"width": 360, "height": 640, "hfov_deg": 42.0, "vfov_deg": 68.62}
        assert meta["sensor_mount_offset_y"] == 1.31 and meta["sector_order"] == [0, 2, 4, 6, 8, 10]
        assert meta["ranges"] == {"near": [0.9, 1.2], "far": [1.4, 1.7]}
        assert meta["category_mask_threshold"] == mask_threshold_px(meta["object_category"])
        views = meta["viewpoints"]
        assert [v["tag"] for v in views] == [
            f"s{s}_{r}" for s in (0, 2, 4, 6, 8, 10) for r in ("far", "near")
        ]
        for view in views:
            assert set(view) >= V2_FIELDS
        assert meta["navigable_count"] == sum(v["navigable"] for v in views) >= 6
        assert meta["valid_mask_count"] == sum(v["mask_meets_threshold"] for v in views) >= 3
        assert meta["success"] is True
        with Image.open(directory / "overview.png") as overview:
            assert overview.mode == "RGB" and min(overview.size) >= 200


def test_masks_agree_with_area_box_and_threshold_flags(tiny_root: Path) -> None:
    checked = 0
    for directory, meta in _metas(tiny_root):
        threshold = meta["category_mask_threshold"]
        for view in meta["viewpoints"]:
            if not view["navigable"]:
                assert view["rgb"] is None and view["mask_area_px"] == 0 and not view["mask_meets_threshold"]
                continue
            mask = load_mask(directory / view["mask_raw_path"]) > 0
            area = int(mask.sum())
            assert area == view["mask_area_px"]
            assert view["has_mask"] == (area > 0)
            assert view["mask_meets_threshold"] == (area > threshold)
            assert view["mask_area_fraction"] == round(area / (360 * 640), 4)
            if area:
                rows, cols = np.nonzero(mask)
                assert view["mask_bbox_xyxy"] == [cols.min(), rows.min(), cols.max(), rows.max()]
            else:
                assert view["mask_bbox_xyxy"] is None
            checked += 1
    assert checked > 100


def test_sector_statistics_are_in_the_benchmark_range(tiny_root: Path) -> None:
    dataset = PInVerifyDataset(tiny_root)
    report = ProblemReport()
    rows = [
        episode_stats(ep.meta, ep.episode_path)
        for split in ("train", "val")
        for ep in dataset.iter_episodes(split, report)
    ]
    assert report.ok and len(rows) == 18
    navigable = np.mean([r.navigable_sectors for r in rows])
    visible = np.mean([r.visible_sectors for r in rows])
    trap = np.mean([r.trap_sectors for r in rows])
    # Paper App. E: 4.66 / 3.88 / 0.78 per episode; 18 episodes only, hence the loose bounds.
    assert 3.8 <= navigable <= 5.6
    assert 3.0 <= visible <= 5.2
    assert 0.1 <= trap <= 1.6
    assert any(r.trap_sectors for r in rows), "no trap view at all"
    assert any(r.navigable_sectors < 6 for r in rows), "no unreachable sector at all"


def test_splits_have_disjoint_scenes_and_instances(tiny_root: Path) -> None:
    scenes: dict[str, set[str]] = {}
    objects: dict[str, set[str]] = {}
    for directory, meta in _metas(tiny_root):
        split = directory.parts[-3]
        scenes.setdefault(split, set()).add(meta["scene_key"])
        objects.setdefault(split, set()).add(meta["object_id"])
    assert set(scenes) == {"train", "val"}
    assert not scenes["train"] & scenes["val"]
    assert not objects["train"] & objects["val"]
    gt_train = {p.stem for p in (tiny_root / "privileged_gt" / "train").glob("*.json")}
    gt_val = {p.stem for p in (tiny_root / "privileged_gt" / "val").glob("*.json")}
    assert objects["train"] <= gt_train and objects["val"] <= gt_val and not gt_train & gt_val


def _gt(root: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in root.glob("privileged_gt/*/*.json")}


def test_ground_truth_lists_absent_slots_and_slot_order_as_the_catalogue_has_them(tiny_root: Path) -> None:
    """The oracles read absences and slot order from the GT file instead of importing the generator, so the
    file must say exactly what the catalogue says: every slot the recipe leaves "none", with its absence phrase,
    parts and view dependence, and the catalogue order of all slots."""
    absent_seen = surfaces_seen = 0
    for doc in _gt(tiny_root).values():
        spec = CATALOGUE[doc["object_category"]]
        defs = spec.attributes_for(doc["subtype"])
        assert doc["slot_order"] == [attr.name for attr in defs]
        expected = [
            {
                "name": attr.name,
                "type": attr.type,
                "phrase": absence_phrase(attr, doc["subtype"]) if attr.optional else "",
                "parts": list(attr.parts),
                "view_dependent": attr.view_dependent,
                "optional": attr.optional,
            }
            for attr in defs
            if doc["recipe"][attr.name] == NONE
        ]
        # Absent logos / prints also say where they would be (the absence surface); nothing else does.
        surfaces = [item.pop("surface", None) for item in doc["absent_attributes"]]
        assert doc["absent_attributes"] == expected
        for item, surface in zip(expected, surfaces, strict=True):
            is_print = any(part.startswith("decal:") for part in item["parts"])
            assert surface is None or (is_print and surface["region"] == f"decal:{item['name']}")
            surfaces_seen += surface is not None
        present = {item["name"] for item in doc["attributes"]}
        absent = {item["name"] for item in doc["absent_attributes"]}
        assert not present & absent and present | absent == set(doc["slot_order"])
        absent_seen += len(absent)
    assert absent_seen > 0 and surfaces_seen > 0


def test_index_pairs_are_balanced_and_neg_same_differs_in_one_or_two_attributes(tiny_root: Path) -> None:
    dataset = PInVerifyDataset(tiny_root)
    records = dataset.read_pair_index("val/pv_index_all.jsonl")
    counts = Counter(r.pair_type for r in records)
    assert counts["positive"] == counts["neg_same"] == counts["neg_diff"] > 0
    gt = _gt(tiny_root)
    for record in records:
        target, query = gt[record.target_object_id], gt[record.query_object_id]
        if record.pair_type == "neg_same":
            a = Recipe(target["object_category"], target["subtype"], target["scale"], target["recipe"])
            b = Recipe(query["object_category"], query["subtype"], query["scale"], query["recipe"])
            assert 1 <= len(differing_attributes(a, b)) <= 2
        elif record.pair_type == "neg_diff":
            assert target["object_category"] != query["object_category"]


def test_some_attributes_are_visible_only_from_some_views(tiny_root: Path) -> None:
    """An attribute seen in one well-visible capture and missed in another well-visible one of the same episode."""
    found = []
    for object_id, doc in _gt(tiny_root).items():
        for captures in doc["captures"].values():
            good = [c for c in captures.values() if c["mask_meets_threshold"]]
            for attr in doc["attributes"]:
                seen = [attr["name"] in c["visible"] for c in good]
                if any(seen) and not all(seen):
                    found.append((object_id, attr["name"], attr["view_dependent"]))
    assert found
    assert any(view_dependent for _, _, view_dependent in found)


def test_descriptions_cover_every_instance_and_load(tiny_root: Path) -> None:
    dataset = PInVerifyDataset(tiny_root)
    db = dataset.load_descriptions()
    assert db is not None
    ids = set(_gt(tiny_root))
    assert set(db) == ids
    for object_id in ids:
        entry = db[object_id]
        assert len(entry.descriptions) == 3 and entry.category is not None
        assert len(set(entry.descriptions)) >= 2
    plain = json.loads((tiny_root / "object_descriptions.json").read_text())
    assert {k: v for k, v in plain.items()} == {k: list(db[k].descriptions) for k in plain}
    for object_id, doc in _gt(tiny_root).items():
        pngs = sorted((tiny_root / "image_gt" / doc["object_category"]).glob(f"{object_id}_*.png"))
        assert [p.name for p in pngs] == [f"{object_id}_{i}.png" for i in range(3)]


def test_environment_plays_generated_episodes(tiny_root: Path) -> None:
    dataset = PInVerifyDataset(tiny_root)
    records = dataset.read_pair_index("val/pv_index_all.jsonl")
    env = PInVerifyEnv(records, dataset, max_steps=6)
    outcomes = Counter()
    for index in range(len(records)):
        obs = env.reset(index)
        assert obs.load_image().shape == (640, 360, 3)
        for direction in ("back", "front-left", "back-right"):
            result = env.step(Action.move(direction))
            outcomes[result.info.outcome.name] += 1
        result = env.step(Action.yes())
        assert result.done
    assert sum(outcomes.values()) == 3 * len(records)


def test_ensure_dataset_returns_at_once_for_a_complete_dataset(tiny_root: Path) -> None:
    assert ensure_dataset(tiny_root, get_preset("tiny"), seed=42) is None
    stats = json.loads((tiny_root / "capture_stats.json").read_text())
    assert stats["preset"] == "tiny" and set(stats["splits"]) == {"train", "val"}
    assert (tiny_root / "capture_stats.txt").read_text().count("Avg navigable / visible / trap") == 2
