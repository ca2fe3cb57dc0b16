"""Typed loading of the PInVerify formats (spec §2): meta.json both generations, images, index records,
descriptions, caches and distractor maps."""

from __future__ import annotations

import json

import numpy as np
import pytest
from aiv_dataset import (
    DatasetError,
    DescriptionDB,
    Distractor,
    DistractorEntry,
    PInVerifyDataset,
    ProblemReport,
    load_attr_cache,
    load_category_cache,
    load_distractor_map,
    load_merge_cache,
    parse_descriptions,
    parse_meta,
    parse_pair_record,
    read_pair_index,
    save_distractor_map,
    sector_summary,
    validate_dataset,
)
from aiv_dataset.fields import Where
from support.tiny_dataset import (
    FULL_IMAGE,
    PAPER_EXAMPLE_INDEX_RECORD,
    PAPER_EXAMPLE_META,
    EpisodeSpec,
    View,
    image_color,
    ring,
    write_paper_example,
)


def test_paper_listing_1_meta_loads_with_every_field(tiny):
    write_paper_example(tiny.root)
    dataset = PInVerifyDataset(tiny.root)
    assert dataset.capture_splits() == ["train"]
    (path,) = dataset.episode_paths("train")
    assert path == "pin_capture/train/00059-kJxT5qssH4H/0"
    episode = dataset.load_episode(path)
    meta = episode.meta
    assert meta.raw == PAPER_EXAMPLE_META
    assert (meta.scene_key, meta.episode_id, meta.object_category) == ("00059-kJxT5qssH4H", "0", "backpack")
    assert meta.object_id == "2ad86321197a49feb54b7726743d7fd0"
    assert meta.goal_position == (2.612, 3.301, -1.106)
    assert meta.category_mask_threshold == 500 and meta.success is True
    assert meta.format_version == "v2" and meta.captures is None
    intr = meta.camera_intrinsics
    assert (intr.width, intr.height) == (360, 640)
    assert intr.fx == pytest.approx(468.9, abs=0.1) and intr.fy == pytest.approx(469.0, abs=0.3)
    assert (intr.cx, intr.cy) == (179.5, 319.5)
    (view,) = meta.viewpoints
    assert (view.tag, view.sector_index, view.view_type) == ("s0_far", 0, "far")
    assert view.navigable and view.mask_meets_threshold and not view.is_trap
    assert view.mask_bbox_xyxy == (140, 368, 222, 452) and view.mask_area_px == 5111
    assert view.camera_position == (4.261, 4.771, -1.039)
    assert view.camera_rotation_wxyz == (0.697, -0.187, 0.669, 0.179)
    assert view.angle_deg_range == (0, 30) and view.radius_m == 1.65
    rgb = episode.rgb(view).load()
    assert rgb.shape == (FULL_IMAGE[1], FULL_IMAGE[0], 3) and rgb.dtype == np.uint8
    assert tuple(rgb[100, 100]) == image_color(0, "far")
    mask = episode.mask(view).load()
    assert mask.shape == (640, 360) and mask.dtype == np.uint8
    assert int((mask > 0).sum()) == (222 - 140) * (452 - 368)


def test_paper_listing_2_index_record_parses_and_round_trips():
    record = parse_pair_record(PAPER_EXAMPLE_INDEX_RECORD, Where.of("listing2.jsonl", 1))
    assert record.label == 1 and record.pair_type == "positive"
    assert record.valid_start_sectors == (0, 6, 8, 10) and record.n_mask_visible == 4
    assert record.depth_dir is None
    assert record.to_dict() == PAPER_EXAMPLE_INDEX_RECORD


def test_index_defaults_and_unknown_keys_are_kept():
    data = dict(PAPER_EXAMPLE_INDEX_RECORD)
    for key in ("meta_path", "rgb_dir", "n_navigable", "n_mask_visible"):
        del data[key]
    data["captures_meta"] = [{"tag": "s0_far"}]
    record = parse_pair_record(data, Where.of("x.jsonl", 3))
    assert record.meta_path == "pin_capture/val/00813-svBbv1Pavdk/43/meta.json"
    assert record.rgb_dir == "pin_capture/val/00813-svBbv1Pavdk/43/rgb"
    assert (record.n_navigable, record.n_mask_visible) == (6, 4)
    assert record.extra == {"captures_meta": [{"tag": "s0_far"}]}
    assert record.to_dict()["captures_meta"] == [{"tag": "s0_far"}]


def _meta(views, key="viewpoints"):
    return {"scene_key": "s", "episode_id": 3, "object_id": "o", "object_category": "mug", key: views}


def test_missing_flags_take_the_generation_specific_defaults():
    v2 = parse_meta(_meta([{"tag": "s2_far", "rgb": "rgb/rgb_s2_far.png"}]), "m.json")
    v1 = parse_meta(_meta([{"tag": "s2_far", "rgb": "rgb/rgb_s2_far.png"}], "captures"), "m.json")
    assert v2.episode_id == "3"  # integer ids are stringified
    assert not v2.viewpoints[0].navigable and not v2.viewpoints[0].mask_meets_threshold
    assert v1.captures[0].navigable and v1.captures[0].mask_meets_threshold
    assert sector_summary(v2.index_views) == ((), ())
    assert sector_summary(v1.index_views) == ((2,), (2,))


def test_sector_and_view_type_are_derived_from_tag_or_file_name():
    meta = parse_meta(
        _meta(
            [
                {
                    "tag": "s4_near",
                    "rgb": "rgb/x.png",
                },  # sector from tag; view type from the rgb name ("near")
                {"rgb_filename": "rgb/rgb_s10_far.png"},  # alias; sector and type from the file name
                {"tag": "s6_far", "rgb": "rgb/rgb_s6_far.png", "view_type": "near", "sector_index": 6},
            ],
            "captures",
        ),
        "m.json",
    )
    a, b, c = meta.captures
    assert (a.sector_index, a.view_type) == (4, "near")
    assert (b.sector_index, b.view_type, b.rgb) == (10, "far", "rgb/rgb_s10_far.png")
    assert (c.sector_index, c.view_type) == (6, "near")  # an explicit view_type wins


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ({"tag": "s4_far", "sector_index": 2}, "viewpoints[0].sector_index", "disagrees with tag"),
        ({"tag": "x", "rgb": "rgb/none.png"}, "viewpoints[0]", "cannot determine the sector"),
        ({"tag": "s14_far"}, "viewpoints[0].sector_index", "0..11"),
        ({"tag": "s0_far", "range_label": "near"}, "viewpoints[0].range_label", "disagrees"),
        ({"tag": "s0_far", "rgb": "a.png", "rgb_filename": "b.png"}, "viewpoints[0].rgb_filename", "alias"),
        ({"tag": "s0_far", "mask_bbox_xyxy": [5, 5, 1, 9]}, "viewpoints[0].mask_bbox_xyxy", "xmin <= xmax"),
        ({"tag": "s0_far", "navigable": "yes"}, "viewpoints[0].navigable", "expected true or false"),
    ],
)
def test_inconsistent_viewpoint_fields_are_rejected(record, field, message):
    with pytest.raises(DatasetError) as info:
        parse_meta(_meta([record]), "pin/ep/meta.json")
    assert info.value.field == field and info.value.path == "pin/ep/meta.json"
    assert message in str(info.value)


def test_duplicate_tags_are_rejected():
    with pytest.raises(DatasetError, match="duplicate tag 's0_far'"):
        parse_meta(_meta([{"tag": "s0_far"}, {"tag": "s0_far"}]), "m.json")


def test_environment_and_builder_precedence_when_both_lists_exist():
    data = _meta([{"tag": "s0_far", "navigable": True, "rgb": "r.png"}])
    data["captures"] = [{"tag": "s2_far", "rgb": "q.png"}]
    meta = parse_meta(data, "m.json")
    assert [v.tag for v in meta.index_views] == ["s0_far"]  # builder: viewpoints first
    assert [v.tag for v in meta.env_views] == ["s2_far"]  # environment: captures first


def test_episodes_are_listed_sorted_and_lazily_loaded(tiny):
    for scene, episode in (("00003-c", "1"), ("00001-a", "10"), ("00001-a", "2")):
        tiny.add_episode(EpisodeSpec(scene=scene, episode=episode))
    dataset = PInVerifyDataset(tiny.root)
    paths = dataset.episode_paths("val")
    assert paths == sorted(paths) and len(paths) == 3
    report = ProblemReport()
    episodes = list(dataset.iter_episodes("val", report))
    assert report.ok and [e.episode_path for e in episodes] == paths
    ref = episodes[0].rgb(episodes[0].meta.viewpoints[3])
    assert ref.exists() and ref.kind == "rgb" and ref.path.name == "rgb_s2_near.png"


def test_index_file_round_trip_through_the_dataset(tiny):
    episode = tiny.add_episode(EpisodeSpec(views=ring(traps={4}, unreachable={10})))
    tiny.add_object("mug_b", "mug")
    tiny.add_object("keys_a", "keys")
    lines = [tiny.pair(episode), tiny.pair(episode, "mug_b"), tiny.pair(episode, "keys_a")]
    path = tiny.write_index("pv_index_all.jsonl", lines)
    records = PInVerifyDataset(tiny.root).read_pair_index("val/pv_index_all.jsonl")
    assert [r.pair_type for r in records] == ["positive", "neg_same", "neg_diff"]
    assert [r.label for r in records] == [1, 0, 0]
    assert records[0].valid_start_sectors == (0, 2, 6, 8) and records[0].navigable_sectors == (0, 2, 4, 6, 8)
    assert read_pair_index(path) == records


@pytest.mark.parametrize(
    "value",
    [
        ["d1", "d2", "d3"],
        {"object_category": "mug", "descriptions": ["d1", "d2", "d3"]},
        {"text": ["d1", "d2", "d3"]},
        {"a": "d1", "b": "d2", "c": "d3"},
    ],
)
def test_description_entry_variants(value):
    db = parse_descriptions({"obj": value}, "desc.json")
    assert db.descriptions_for("obj") == ("d1", "d2", "d3")


def test_description_files_written_by_the_builder_load(tiny):
    tiny.add_object("mug_a", "mug")
    _, with_cat = tiny.write_descriptions()
    dataset = PInVerifyDataset(tiny.root)
    assert dataset.descriptions_file() == with_cat
    db = dataset.load_descriptions()
    assert isinstance(db, DescriptionDB) and db["mug_a"].category == "mug"
    assert len(db["mug_a"].descriptions) == 3
    with pytest.raises(DatasetError, match="no descriptions for object id 'nope'"):
        db.descriptions_for("nope")
    with_cat.unlink()
    assert dataset.load_descriptions()["mug_a"].category is None  # the plain file


def test_bad_description_entries_are_reported_and_skipped():
    report = ProblemReport()
    db = parse_descriptions({"ok": ["a"], "bad": 7, "empty": []}, "desc.json", report=report)
    assert list(db) == ["ok"]
    assert [p.field for p in report] == ["bad", "empty"]


def test_caches_load_and_validate(tmp_path):
    (tmp_path / "category_cache.json").write_text(json.dumps({"o1": {"pred_coarse": "mug", "raw": "mug"}}))
    attrs = {
        "o1": {
            "attributes": [{"name": "color", "type": "color", "weight": 3, "evidence_phrase": "blue"}],
            "target_class": "mug",
            "raw": "{}",
            "max_attrs": 8,
        }
    }
    (tmp_path / "attr_cache.json").write_text(json.dumps(attrs))
    (tmp_path / "merge_cache.json").write_text(
        json.dumps({"o1": {"merged_description": "a blue mug", "raw": ""}})
    )
    assert load_category_cache(tmp_path / "category_cache.json")["o1"].pred_coarse == "mug"
    entry = load_attr_cache(tmp_path / "attr_cache.json")["o1"]
    assert entry.attributes[0].name == "color" and entry.attributes[0].weight == 3 and entry.max_attrs == 8
    assert load_merge_cache(tmp_path / "merge_cache.json")["o1"].merged_description == "a blue mug"
    (tmp_path / "category_cache.json").write_text(json.dumps({"o1": {"raw": "mug"}}))
    with pytest.raises(DatasetError) as info:
        load_category_cache(tmp_path / "category_cache.json")
    assert info.value.field == "o1.pred_coarse" and "missing required field" in str(info.value)


def test_distractor_map_round_trip(tmp_path):
    mapping = {"a": DistractorEntry("mug", (Distractor("b", "mug"), Distractor("k", "keys")))}
    save_distractor_map(tmp_path / "map.json", mapping)
    loaded = load_distractor_map(tmp_path / "map.json")
    assert loaded == mapping
    assert loaded["a"].same_category() == [Distractor("b", "mug")]
    bad = {"a": {"object_category": "mug", "distractors": [{"object_id": "a", "object_category": "mug"}]}}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(DatasetError, match="own distractor"):
        load_distractor_map(tmp_path / "bad.json")


def test_non_navigable_views_have_no_image_and_do_not_count(tiny):
    episode = tiny.add_episode(EpisodeSpec(views=[View(0), View(2, navigable=False, visible=False)]))
    meta = PInVerifyDataset(tiny.root).load_episode(episode.episode_path).meta
    assert meta.viewpoints[1].rgb is None and meta.viewpoints[1].camera_position is None
    assert sector_summary(meta.index_views) == ((0,), (0,))


def test_full_size_episode_validates_against_its_intrinsics(tiny):
    episode = tiny.add_episode(EpisodeSpec(image_size=FULL_IMAGE, views=ring(near=False)))
    loaded = PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    assert loaded.meta.camera_intrinsics.vfov_deg == pytest.approx(68.62, abs=0.01)
    assert loaded.rgb(loaded.meta.viewpoints[0]).load().shape == (640, 360, 3)
    assert validate_dataset(tiny.root).ok
    meta = json.loads((episode.directory / "meta.json").read_text())
    meta["camera_intrinsics"]["width"] = 320
    (episode.directory / "meta.json").write_text(json.dumps(meta))
    problems = list(validate_dataset(tiny.root).report)
    assert len(problems) == 12 and "image is 360x640, expected 320x640" in problems[0].message
