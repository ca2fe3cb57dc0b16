"""The ``aiv-dataset`` command (called through ``main([...])``) and the App. E statistics."""

from __future__ import annotations

import json

import pytest
from aiv_dataset import PInVerifyDataset, episode_stats, summarize
from aiv_dataset.cli import main
from support.tiny_dataset import EpisodeSpec, build_small_benchmark, ring


@pytest.fixture
def bench(tmp_path):
    return build_small_benchmark(
        tmp_path / "pv_dataset", objects_per_category=2, episodes_per_object=2, images=True
    )


def test_validate_clean_dataset_exits_zero(bench, capsys):
    assert main(["validate", str(bench.root)]) == 0
    out = capsys.readouterr()
    assert "12 episode(s) checked, 12 without problems" in out.out and "0 problem(s)" in out.out
    assert out.err == ""


def test_validate_reports_every_problem_and_exits_one(bench, tmp_path, capsys):
    first, second = bench.episodes[0], bench.episodes[1]
    (first.directory / "rgb" / "rgb_s0_far.png").write_bytes(b"junk")
    (second.directory / "meta.json").write_text(json.dumps({**second.meta, "object_id": None}))
    report_file = tmp_path / "report.json"
    assert main(["validate", str(bench.root), "--json", str(report_file)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert any("rgb_s0_far.png: field 's0_far.rgb': expected a readable PNG image" in line for line in err)
    assert any(line.endswith("meta.json: field 'object_id': required field is null") for line in err)
    data = json.loads(report_file.read_text())
    assert not data["ok"] and len(data["problems"]) == len(err) == 2
    assert data["episodes_checked"] == 12 and data["episodes_ok"] == 10


def test_validate_header_only_misses_truncation_but_not_missing_files(bench, capsys):
    rgb = bench.episodes[0].directory / "rgb" / "rgb_s0_far.png"
    rgb.write_bytes(rgb.read_bytes()[:-20])  # header intact, pixel data cut
    assert main(["validate", str(bench.root), "--images", "header"]) == 0
    assert main(["validate", str(bench.root)]) == 1
    rgb.unlink()
    assert main(["validate", str(bench.root), "--images", "header"]) == 1
    assert main(["validate", str(bench.root), "--images", "none"]) == 0
    capsys.readouterr()


def test_validate_unusable_root(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope")]) == 1
    assert "dataset root does not exist" in capsys.readouterr().err


def test_build_index_command(bench, tmp_path, capsys):
    out = tmp_path / "index"
    assert (
        main(["build-index", str(bench.root), "--split", "val", "--out", str(out), "--subsets", "10", "20"])
        == 0
    )
    text = capsys.readouterr().out
    assert "Pairs: positive=12, neg_same=12, neg_diff=12" in text
    assert sorted(p.name for p in out.iterdir()) == [
        "object_goal_distractors_map.json",
        "pv_index_10.jsonl",
        "pv_index_20.jsonl",
        "pv_index_all.jsonl",
    ]
    # The built index validates against the dataset (copied to the default location).
    assert main(["build-index", str(bench.root), "--max-episodes", "6", "--seed", "42"]) == 0
    assert (bench.root / "val" / "pv_index_all_36.jsonl").is_file()
    assert len((bench.root / "val" / "pv_index_all.jsonl").read_text().splitlines()) == 18
    assert main(["validate", str(bench.root), "--images", "none"]) == 0
    capsys.readouterr()


def test_build_index_reports_bad_episodes_and_still_builds(bench, tmp_path, capsys):
    broken = bench.episodes[0]
    (broken.directory / "meta.json").write_text("{")
    assert main(["build-index", str(bench.root), "--out", str(tmp_path / "o"), "--subsets"]) == 0
    captured = capsys.readouterr()
    assert "invalid JSON" in captured.err and "1 unreadable" in captured.out
    assert len((tmp_path / "o" / "pv_index_all.jsonl").read_text().splitlines()) == 33


def test_build_index_errors(tmp_path, capsys):
    assert main(["build-index", str(tmp_path), "--split", "val"]) == 2
    assert "has no capture directory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["build-index", str(tmp_path), "--max-episodes", "0"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main([])


def test_stats_command_prints_tables_and_writes_json(bench, tmp_path, capsys):
    out = tmp_path / "stats.json"
    assert main(["stats", str(bench.root), "--split", "val", "--json", str(out), "--per-episode"]) == 0
    text = capsys.readouterr().out
    assert f"{bench.episodes[0].episode_path}" in text
    assert "Avg navigable / visible / trap sectors per episode: 5.00 / 4.00 / 1.00" in text
    assert "mug" in text and "Total / Avg" in text
    data = json.loads(out.read_text())
    assert data["summary"]["episodes"] == 12 and data["summary"]["unique_objects"] == 6
    assert data["per_category"]["keys"]["episodes"] == 4
    assert len(data["episodes"]) == 12
    assert data["distributions"]["trap_sectors"] == {"1": 12}


def test_episode_stats_definitions(tiny):
    spec = EpisodeSpec(views=ring(traps={4}, unreachable={10}, near_traps={2}))
    episode = tiny.add_episode(spec)
    meta = PInVerifyDataset(tiny.root).load_episode(episode.episode_path).meta
    stats = episode_stats(meta, episode.episode_path)
    assert (stats.navigable_sectors, stats.visible_sectors, stats.trap_sectors) == (5, 4, 1)
    assert (stats.navigable_viewpoints, stats.valid_mask_viewpoints) == (10, 7)
    assert len(stats.mask_areas_far) == 5 and len(stats.mask_areas_near) == 5
    summary = summarize([stats], "val")
    assert summary["summary"]["avg_trap_sectors"] == 1.0
    assert summary["mask_area_px"]["far"]["count"] == 5


def test_stats_skip_unreadable_episodes(bench, capsys):
    meta = {k: v for k, v in bench.episodes[3].meta.items() if k != "viewpoints"}
    (bench.episodes[3].directory / "meta.json").write_text(json.dumps(meta))
    assert main(["stats", str(bench.root)]) == 0
    captured = capsys.readouterr()
    assert "episodes 12" not in captured.out and "episodes 11" in captured.out
