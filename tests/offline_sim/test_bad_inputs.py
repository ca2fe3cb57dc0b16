"""Bad input gets a clear error naming file / line / field, and the rest of the dataset is still served."""

from __future__ import annotations

import json
import os

import pytest
from aiv_dataset import (
    DatasetError,
    PInVerifyDataset,
    ProblemReport,
    parse_pair_record,
    read_pair_index,
    validate_dataset,
)
from aiv_dataset.fields import Where
from aiv_dataset.index_builder import scan_raw_index
from aiv_offline_sim.environment import Action, PInVerifyEnv
from support.tiny_dataset import DROP, EpisodeSpec, View, ring


def _corrupt(path, mode):
    data = path.read_bytes()
    if mode == "garbage":
        path.write_bytes(b"this is not a png at all")
    elif mode == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif mode == "bad-crc":
        path.write_bytes(data[:40] + bytes([data[40] ^ 0xFF]) + data[41:])


@pytest.mark.parametrize("mode", ["garbage", "truncated", "bad-crc"])
def test_corrupt_png_is_a_clear_error_and_other_images_load(tiny, mode):
    episode = tiny.add_episode()
    rgb = episode.directory / "rgb" / "rgb_s4_far.png"
    _corrupt(rgb, mode)
    loaded = PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    views = {v.tag: v for v in loaded.meta.viewpoints}
    with pytest.raises(DatasetError) as info:
        loaded.rgb(views["s4_far"]).load()
    assert info.value.path == str(rgb) and info.value.field == "s4_far.rgb"
    assert "expected a readable PNG image" in str(info.value)
    assert loaded.rgb(views["s2_far"]).load().shape == (64, 36, 3)


def test_missing_image_is_named_and_reported_by_validate(tiny):
    episode = tiny.add_episode(EpisodeSpec(views=[View(0), View(2, write_image=False)]))
    loaded = PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    with pytest.raises(DatasetError, match="image file is missing") as info:
        loaded.rgb(loaded.meta.viewpoints[1]).load()
    assert info.value.path.endswith("rgb_s2_far.png")
    result = validate_dataset(tiny.root)
    messages = [str(p) for p in result.report]
    assert any("rgb_s2_far.png" in m and "missing" in m for m in messages)
    assert any("mask_s2_far.png" in m and "missing" in m for m in messages)


@pytest.mark.parametrize(
    ("override", "field", "message"),
    [
        ({"object_id": DROP}, "object_id", "missing required field"),
        ({"scene_key": 17}, "scene_key", "expected a string, got the number 17"),
        ({"viewpoints": DROP}, "viewpoints", "missing required field"),
        ({"viewpoints": {"s0_far": {}}}, "viewpoints", "expected a JSON list"),
        ({"goal_position_nominal": [1, 2]}, "goal_position_nominal", "expected a list of 3 numbers"),
        ({"camera_intrinsics": {"width": 36, "height": 64}}, "camera_intrinsics.hfov_deg", "missing"),
    ],
)
def test_meta_json_with_missing_or_mistyped_fields(tiny, override, field, message):
    episode = tiny.add_episode(EpisodeSpec(meta_overrides=override))
    with pytest.raises(DatasetError) as info:
        PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    assert info.value.path.endswith(f"{episode.episode_path}/meta.json")
    assert info.value.field == field and message in str(info.value)


def test_nan_camera_coordinates_are_rejected_with_their_field(tiny):
    episode = tiny.add_episode(EpisodeSpec(views=[View(0), View(2, position=[1.0, 2.0, float("nan")])]))
    text = (episode.directory / "meta.json").read_text()
    assert "NaN" in text  # json writes the non-standard NaN literal, and json.loads accepts it
    with pytest.raises(DatasetError) as info:
        PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    assert info.value.field == "viewpoints[1].camera_position[2]"
    assert "expected a finite number, got NaN" in str(info.value)


def test_invalid_json_meta_names_the_line(tiny):
    episode = tiny.add_episode()
    (episode.directory / "meta.json").write_text('{\n  "scene_key": "a",\n  oops\n}\n')
    with pytest.raises(DatasetError) as info:
        PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    assert info.value.line == 3 and "invalid JSON" in str(info.value)


def test_one_bad_episode_is_reported_and_skipped_by_scans(tiny):
    good = [tiny.add_episode(EpisodeSpec(episode=str(i))) for i in (0, 2)]
    tiny.add_episode(EpisodeSpec(episode="1", meta_overrides={"object_category": DROP}))
    report = ProblemReport()
    dataset = PInVerifyDataset(tiny.root)
    loaded = [e.episode_path for e in dataset.iter_episodes("val", report)]
    assert loaded == [g.episode_path for g in good]
    assert len(report) == 1 and report.problems[0].field == "object_category"
    scan = scan_raw_index(dataset, "val")
    assert len(scan.entries) == 2 and len(scan.report) == 1


@pytest.mark.parametrize(
    ("line", "line_field", "message"),
    [
        ("{not json", None, "invalid JSON"),
        ("[1, 2]", None, "expected a JSON object"),
        ('{"episode_path": "pin_capture/val/a/0"}', "scene", "missing required field"),
    ],
)
def test_invalid_index_lines_are_reported_and_good_lines_served(tiny, line, line_field, message):
    episode = tiny.add_episode()
    good = tiny.pair(episode)
    other = tiny.pair(tiny.add_episode(EpisodeSpec(episode="1")))  # an index lists every pair once
    path = tiny.write_index("pv_index_all.jsonl", [good, line, "", other])
    with pytest.raises(DatasetError) as info:
        read_pair_index(path)
    assert info.value.line == 2 and info.value.field == line_field and message in str(info.value)
    report = ProblemReport()
    records = read_pair_index(path, report=report)
    assert len(records) == 2 and len(report) == 1 and report.problems[0].line == 2
    assert str(report).startswith(f"{path}:2:")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"label": 0}, "label", "contradicts pair_type 'positive'"),
        ({"pair_type": "negative"}, "pair_type", "one of"),
        ({"query_object_id": "other"}, "query_object_id", "requires the query id to equal"),
        ({"label": True}, "label", "expected a finite number, got the boolean true"),
        ({"valid_start_sectors": [4, 0]}, "valid_start_sectors", "sorted list"),
        ({"navigable_sectors": [0, 13]}, "navigable_sectors[1]", "<= 11"),
        ({"n_navigable": 3}, "n_navigable", "disagrees with len(navigable_sectors)"),
        ({"target_object_id": None}, "target_object_id", "required field is null"),
    ],
)
def test_index_field_validation(tiny, change, field, message):
    record = tiny.pair(tiny.add_episode())
    record.update(change)
    with pytest.raises(DatasetError) as info:
        parse_pair_record(record, Where.of("idx.jsonl", 7))
    assert (info.value.path, info.value.line, info.value.field) == ("idx.jsonl", 7, field)
    assert message in str(info.value)


def test_negative_pair_categories_are_checked(tiny):
    record = tiny.pair(tiny.add_episode())
    record.update(query_object_id="x", label=0, pair_type="neg_diff")  # same category -> not neg_diff
    with pytest.raises(DatasetError, match="different from the target"):
        parse_pair_record(record, Where.of("idx.jsonl", 1))


@pytest.mark.parametrize(
    ("episode_path", "message"),
    [
        ("pin_capture/val/../../outside", "contains '..'"),
        ("/etc", "is absolute"),
        ("C:/data/ep", "is absolute"),
        ("pin_capture\\val\\..\\..\\x", "contains '..'"),
    ],
)
def test_episode_path_escaping_the_root_is_rejected(tiny, episode_path, message):
    record = tiny.pair(tiny.add_episode())
    record["episode_path"] = episode_path
    with pytest.raises(DatasetError) as info:
        parse_pair_record(record, Where.of("idx.jsonl", 4))
    assert info.value.field == "episode_path" and message in str(info.value)
    with pytest.raises(DatasetError, match=message.replace("'", ".")):
        PInVerifyDataset(tiny.root).load_episode(episode_path)


def test_symlinked_episode_leading_out_of_the_root_is_refused(tiny, tmp_path):
    inside = tiny.add_episode(EpisodeSpec(episode="0"))
    outside = tmp_path / "secret_episode"
    outside.mkdir()
    (outside / "meta.json").write_text((inside.directory / "meta.json").read_text())
    link = inside.directory.parent / "1"
    os.symlink(outside, link)
    dataset = PInVerifyDataset(tiny.root)
    with pytest.raises(DatasetError, match="leads outside the dataset root"):
        dataset.load_episode("pin_capture/val/00001-aaaaaaaaaaa/1")
    report = ProblemReport()
    assert dataset.episode_paths("val", report=report) == [inside.episode_path]
    assert len(report) == 1 and "outside" in str(report)
    result = validate_dataset(tiny.root, images="none")
    assert any("leads outside" in str(p) for p in result.report)


def test_symlinked_image_leading_out_of_the_root_is_refused(tiny, tmp_path):
    episode = tiny.add_episode()
    secret = tmp_path / "secret.png"
    secret.write_bytes((episode.directory / "rgb" / "rgb_s0_far.png").read_bytes())
    target = episode.directory / "rgb" / "rgb_s4_far.png"
    target.unlink()
    os.symlink(secret, target)
    loaded = PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    views = {v.tag: v for v in loaded.meta.viewpoints}
    with pytest.raises(DatasetError) as info:
        loaded.rgb(views["s4_far"])
    assert info.value.field == "s4_far.rgb" and "leads outside the dataset root" in str(info.value)
    assert loaded.rgb(views["s0_far"]).load().shape == (64, 36, 3)


def test_symlink_inside_the_root_is_allowed(tiny):
    episode = tiny.add_episode()
    target = episode.directory / "rgb" / "rgb_s4_far.png"
    target.unlink()
    os.symlink(episode.directory / "rgb" / "rgb_s2_far.png", target)
    loaded = PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    view = next(v for v in loaded.meta.viewpoints if v.tag == "s4_far")
    assert loaded.rgb(view).load().shape == (64, 36, 3)


@pytest.mark.parametrize("rgb", ["../../../../etc/passwd", "/etc/passwd"])
def test_image_path_escaping_in_meta_is_a_field_error(tiny, rgb):
    episode = tiny.add_episode(EpisodeSpec(views=[View(0), View(2, rgb=rgb)]))
    with pytest.raises(DatasetError) as info:
        PInVerifyDataset(tiny.root).load_episode(episode.episode_path)
    assert info.value.field == "viewpoints[1].rgb"


def test_environment_serves_the_rest_of_an_index_with_broken_entries(tiny):
    episodes = [tiny.add_episode(EpisodeSpec(episode=str(i), views=ring(traps={8}))) for i in range(4)]
    (episodes[1].directory / "meta.json").write_text(json.dumps({"scene_key": "x"}))
    _corrupt(episodes[2].directory / "rgb" / "rgb_s8_far.png", "truncated")  # header intact: found when shown
    _corrupt(episodes[3].directory / "rgb" / "rgb_s8_far.png", "garbage")  # not an image: refused at load
    records = [parse_pair_record(tiny.pair(e), Where.of("t")) for e in episodes]
    env = PInVerifyEnv(records, PInVerifyDataset(tiny.root))
    assert env.reset(0).load_image().shape == (64, 36, 3)
    with pytest.raises(DatasetError, match="missing required field"):
        env.reset(1)
    obs = env.reset(2)
    obs.load_image()  # the start view is fine
    obs, _, _, _ = env.step(Action.move("front-left"))
    with pytest.raises(DatasetError, match="readable PNG"):
        obs.load_image()
    with pytest.raises(DatasetError, match="readable PNG"):
        env.reset(3)
    assert env.reset(0).step_count == 0


def test_validate_lists_every_problem_of_a_damaged_dataset(tiny):
    ok = tiny.add_episode(EpisodeSpec(episode="0"))
    nan = tiny.add_episode(EpisodeSpec(episode="1", views=[View(0, position=[float("nan"), 0.0, 0.0])]))
    corrupt = tiny.add_episode(EpisodeSpec(episode="2"))
    _corrupt(corrupt.directory / "mask" / "mask_s6_near.png", "truncated")
    (ok.directory.parent / "3").mkdir()  # an episode directory without meta.json
    tiny.write_descriptions()
    bad_line = dict(tiny.pair(corrupt), target_object_category="keys", query_object_category="keys")
    tiny.write_index("pv_index_all.jsonl", [tiny.pair(ok), "{", bad_line, tiny.pair(nan)])
    result = validate_dataset(tiny.root)
    text = str(result.report)
    assert "viewpoints[0].camera_position[0]" in text
    assert "mask_s6_near.png" in text and "readable PNG" in text
    assert "no meta.json" in text
    assert "pv_index_all.jsonl:2:" in text
    assert "pv_index_all.jsonl:3: field 'target_object_category': differs from meta.json" in text
    assert (
        "pv_index_all.jsonl:4: field 'episode_path': episode 'pin_capture/val/00001-aaaaaaaaaaa/1' cannot"
        in text
    )
    assert result.episodes_checked == 3 and result.episodes_ok == 1
    assert not result.ok and len(result.report) == 6
