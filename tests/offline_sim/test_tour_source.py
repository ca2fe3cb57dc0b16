"""Where the simulator puts the episodes of tour bags (ROS-free part of ``offline_sim`` with ``tour_bags``)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from aiv_bags import export_episode
from aiv_dataset import PInVerifyDataset
from aiv_offline_sim.offline_sim_parameters import SIM_PARAMETERS, check_sim_values, parse_bag_list
from aiv_offline_sim.tour_source import MARKER, TourSourceError, import_tours
from bags.tour_tools import benchmark_like_dataset

DEFAULTS = {spec.name: spec.default for spec in SIM_PARAMETERS}


@pytest.fixture(scope="module")
def tours(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    base = tmp_path_factory.mktemp("tours")
    ds, episodes, index = benchmark_like_dataset(base / "pv_dataset")
    bags = []
    for episode in episodes[:2]:
        bag = base / f"tour_{episode.spec.episode}"
        export_episode(ds.root, episode.episode_path, bag, index=index)
        bags.append(bag)
    return ds.root, bags


def test_the_bag_list_and_the_index_rule() -> None:
    assert parse_bag_list(" a, b ,,c ") == ("a", "b", "c") and parse_bag_list("") == ()
    check_sim_values({**DEFAULTS, "tour_bags": "a", "index_file": "val/pairs.jsonl"})
    check_sim_values({**DEFAULTS, "index_file": "/abs/pairs.jsonl"})  # a dataset may use an absolute index
    for bad in ("/abs/pairs.jsonl", "../pairs.jsonl", "", "~/pairs.jsonl"):
        with pytest.raises(ValueError, match="with tour_bags it names the index"):
            check_sim_values({**DEFAULTS, "tour_bags": "a", "index_file": bad})


def test_pairs_of_all_bags_are_served_in_bag_order_from_a_private_directory(tours) -> None:
    source, bags = tours
    served = import_tours([str(b) for b in reversed(bags)], "", "val/pv_index_all.jsonl")
    try:
        assert served.private and (served.root / MARKER).is_file()
        records = PInVerifyDataset(served.root).read_pair_index(served.index_file)
        assert [r.episode_path for r in records] == [served.episodes[0]] * 3 + [served.episodes[1]] * 3
        assert served.episodes == ("pin_capture/val/00001-tourscene1/1", "pin_capture/val/00000-tourscene0/0")
        assert served.pairs == 6 and not list(served.root.glob("val/.tour_pairs_*"))
        original = {r.key: r for r in PInVerifyDataset(source).read_pair_index("val/pv_index_all.jsonl")}
        for record in records:  # same identity (hence the same episode key) and labels as the original pair
            assert record.key in original and record.label == original[record.key].label
        assert any("no masks" in line for line in served.report)
        assert served.without_boxes == ()  # exported tours carry the ground-truth boxes
        assert any(line.startswith("boxes: from /detections") for line in served.report)
    finally:
        served.cleanup()
    assert not served.root.exists()


def test_a_named_directory_is_created_replaced_on_restart_and_never_a_foreign_one(tours, tmp_path) -> None:
    _, bags = tours
    named = tmp_path / "tour_root"
    first = import_tours([str(bags[0])], str(named), "val/pv_index_all.jsonl")
    assert not first.private and (named / MARKER).is_file()
    first.cleanup()  # a named directory stays (the evaluator reads its labels)
    assert (named / "val" / "pv_index_all.jsonl").is_file()
    again = import_tours([str(bags[1])], str(named), "pairs.jsonl")  # e.g. a respawned simulator
    assert again.episodes == ("pin_capture/val/00001-tourscene1/1",)
    assert not (named / "val" / "pv_index_all.jsonl").exists() and (named / "pairs.jsonl").is_file()

    foreign = tmp_path / "my_dataset"
    foreign.mkdir()
    (foreign / "object_descriptions.json").write_text(json.dumps({}))
    with pytest.raises(TourSourceError, match="holds files offline_sim did not import"):
        import_tours([str(bags[0])], str(foreign), "val/pv_index_all.jsonl")
    assert [p.name for p in foreign.iterdir()] == ["object_descriptions.json"]
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(TourSourceError, match="must be a directory"):
        import_tours([str(bags[0])], str(a_file), "val/pv_index_all.jsonl")


def test_a_bad_bag_is_one_line_naming_it_and_leaves_no_private_directory(
    tours, tmp_path, monkeypatch
) -> None:
    _, bags = tours
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    missing = tmp_path / "no_such_bag"
    with pytest.raises(TourSourceError) as caught:
        import_tours([str(bags[0]), str(missing)], "", "val/pv_index_all.jsonl")
    assert str(missing) in str(caught.value) and "\n" not in str(caught.value)
    assert not list(tmp_path.glob("offline_sim_tours_*"))
    with pytest.raises(TourSourceError, match="more than once"):
        import_tours([str(bags[0]), str(bags[0])], "", "val/pv_index_all.jsonl")
    with pytest.raises(TourSourceError, match="names no bag"):
        import_tours([], "", "val/pv_index_all.jsonl")
