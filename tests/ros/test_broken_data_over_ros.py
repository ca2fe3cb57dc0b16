"""Broken data over ROS (issue 13): the simulator node and ``aiv-eval run --mode ros``.

- the ``offline_sim`` node refuses StartEpisode for a broken episode (image sizes against the camera, an absurd
  camera, numbers beyond float32) with the file and field, and keeps serving the others;
- it refuses to start, with one line naming the file (and line), on an index that repeats a pair, names a key
  twice or holds none, and on a description file that leads outside the dataset root — whose text is never
  published;
- ``aiv-eval`` in ROS mode records and skips broken episodes exactly as the in-process mode does (byte-identical
  ``results.jsonl``), and refuses an unusable index or description file before any node starts.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.cli import main as aiv_eval
from aiv_offline_sim.environment import PInVerifyEnv
from support.broken_data import (
    BROKEN_BY_NAME,
    BROKEN_INDEXES,
    OUTSIDE_TEXT,
    BrokenIndex,
    broken_episode_dataset,
    broken_index_dataset,
    escaping_descriptions_dataset,
    eval_params,
    refusal_reason,
)
from support.tiny_dataset import EpisodeSpec, ring
from test_offline_sim_node import SimClient, _sim_argv  # tests/ros is on sys.path (no package)

#: One episode of each per-episode kind: images against the camera, an absurd camera, a number beyond float32.
ONE_OF_EACH = ("images-90x160-camera-360x640", "width-1e10", "box-1e39")


def _where(index: Path, case: BrokenIndex) -> str:
    return f"{index}:{case.line}: field '{case.field}': " if case.line else f"{index}: "


def test_the_simulator_refuses_broken_episodes_and_keeps_serving(ros_executor, node_process, tmp_path):
    cases = [BROKEN_BY_NAME[name] for name in (*ONE_OF_EACH, "hfov-1e-40-degrees", "goal-minus-1e39")]
    broken = broken_episode_dataset(tmp_path / "pv", cases)
    index = broken.root / "val" / "pv_index_all.jsonl"
    process = node_process(_sim_argv(broken.root, index, "privileged_output:=true"), name="offline_sim")
    client = SimClient(ros_executor)
    client.wait_ready(process)

    for number, (case, episode) in enumerate(broken.broken, start=1):
        response = client.start(index=number)
        assert not response.success, case.name
        reason = refusal_reason(broken, case, episode).removeprefix("the simulator refused the episode: ")
        assert response.message.startswith(reason) and case.message in response.message
        assert not response.descriptions  # nothing of a refused episode is handed out
    good = client.start(index=0)
    assert good.success and len(good.descriptions) == 3
    image, info = client.frame(good.frame_stamp)
    assert (image.width, image.height) == (info.width, info.height) == (36, 64)
    process.assert_running()


@pytest.mark.parametrize("case", BROKEN_INDEXES, ids=lambda case: case.name)
def test_the_simulator_refuses_to_start_on_an_unusable_index(node_process, tmp_path, case: BrokenIndex):
    data, index = broken_index_dataset(tmp_path / "pv", case)
    process = node_process(_sim_argv(data.root, index), name="offline_sim")
    assert process.process.wait(timeout=60) == 2
    lines = [line for line in process.output().splitlines() if line.startswith("offline_sim: ")]
    assert len(lines) == 1, process.output()
    assert lines[0].startswith(f"offline_sim: {_where(index, case)}") and case.message in lines[0]


def test_the_simulator_refuses_a_description_file_leading_out_of_the_root(node_process, tmp_path):
    data, link = escaping_descriptions_dataset(tmp_path / "pv", tmp_path / "elsewhere" / "descriptions.json")
    index = data.root / "val" / "pv_index_all.jsonl"
    process = node_process(_sim_argv(data.root, index), name="offline_sim")
    assert process.process.wait(timeout=60) == 2
    output = process.output()
    assert f"offline_sim: {link}: path 'object_descriptions_with_category.json' leads outside" in output
    assert OUTSIDE_TEXT not in output


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def _logs(run_dir: Path) -> str:
    return "\n".join(
        f"--- {p}\n{p.read_text(errors='replace')}" for p in sorted((run_dir / "logs").glob("*.log"))
    )


def test_both_modes_record_and_skip_broken_episodes_identically(tmp_path: Path) -> None:
    cases = [BROKEN_BY_NAME[name] for name in ONE_OF_EACH]
    broken = broken_episode_dataset(tmp_path / "pv", cases)
    ros_params, ip_params = eval_params(tmp_path, "ros"), eval_params(tmp_path, "inprocess")
    ros_code = aiv_eval(["run", str(ros_params), "--dataset", str(broken.root), "--mode", "ros"])
    # 1: infrastructure failures (the refused episodes) are left
    assert ros_code == 1, _logs(tmp_path / "ros")
    assert aiv_eval(["run", str(ip_params), "--dataset", str(broken.root), "--mode", "inprocess"]) == 1

    ros_bytes = (tmp_path / "ros" / "results.jsonl").read_bytes()
    assert ros_bytes == (tmp_path / "inprocess" / "results.jsonl").read_bytes()
    records = _records(tmp_path / "ros")
    assert [r["status"] for r in records] == ["ok"] + ["infra_failure"] * 6
    for number, (case, episode) in enumerate(broken.broken):
        for record in records[1 + 2 * number : 3 + 2 * number]:
            assert record["object_id"] == episode.object_id
            assert record["failure_reason"].startswith(refusal_reason(broken, case, episode))
            assert case.message in record["failure_reason"]
    ros_metrics = json.loads((tmp_path / "ros" / "metrics.json").read_text())
    ip_metrics = json.loads((tmp_path / "inprocess" / "metrics.json").read_text())
    ros_metrics.pop("wall_time_s", None)
    ip_metrics.pop("wall_time_s", None)
    assert ros_metrics == ip_metrics and ros_metrics["total_episodes"] == 1


@pytest.mark.parametrize("case", BROKEN_INDEXES, ids=lambda case: case.name)
def test_ros_mode_refuses_an_unusable_index_before_starting_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: BrokenIndex
) -> None:
    data, index = broken_index_dataset(tmp_path / "pv", case)
    params = eval_params(tmp_path, "ros")
    assert aiv_eval(["run", str(params), "--dataset", str(data.root), "--mode", "ros"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f": error: {_where(index, case)}" in err[0] and case.message in err[0]
    assert not (tmp_path / "ros" / "logs").exists()  # no node was started


def test_ros_mode_refuses_a_description_file_leading_out_of_the_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, link = escaping_descriptions_dataset(tmp_path / "pv", tmp_path / "elsewhere" / "descriptions.json")
    params = eval_params(tmp_path, "ros")
    assert aiv_eval(["run", str(params), "--dataset", str(data.root), "--mode", "ros"]) == 2
    err = capsys.readouterr().err
    assert f": error: {link}: path 'object_descriptions_with_category.json' leads outside" in err
    assert OUTSIDE_TEXT not in err and not (tmp_path / "ros" / "logs").exists()


def _truncate(path: Path) -> None:
    """Cut the end of the pixel data: the header (and so the size check) still reads, decoding fails."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_both_modes_record_undecodable_views_identically(tmp_path: Path) -> None:
    """A first view and a later view whose files pass the header check but cannot be decoded: the simulator
    refuses the start, or refuses the move that would show the view; both modes record the same thing."""
    broken = broken_episode_dataset(tmp_path / "pv", [])
    first = broken.data.add_episode(EpisodeSpec(scene="00002-first", episode="2", object_id="mug_first"))
    # Boxes of a few pixels: the weight-free verifier answers Unsure and the episode moves on from its first view.
    specks = [replace(view, bbox=[16, 30, 19, 33]) for view in ring()]
    later = broken.data.add_episode(
        EpisodeSpec(scene="00003-later", episode="3", object_id="mug_later", views=specks)
    )
    broken.data.write_descriptions(texts={later.object_id: ["a red mug"]})
    index = broken.data.write_index(
        "pv_index_all.jsonl", [broken.data.pair(e) for e in (broken.good, first, later)]
    )
    # The view the simulator shows first in episode 3 (seeded), so every other one can be cut.
    dataset = PInVerifyDataset(broken.root)
    env = PInVerifyEnv(dataset.read_pair_index(index), dataset, descriptions=dataset.load_descriptions())
    shown_first = Path(str(env.reset(2).rgb_path)).name
    for image in (broken.root / first.episode_path / "rgb").glob("*.png"):
        _truncate(image)
    for image in (broken.root / later.episode_path / "rgb").glob("*.png"):
        if image.name != shown_first:
            _truncate(image)

    ros_params, ip_params = eval_params(tmp_path, "ros"), eval_params(tmp_path, "inprocess")
    assert aiv_eval(["run", str(ros_params), "--dataset", str(broken.root), "--mode", "ros"]) == 1, _logs(
        tmp_path / "ros"
    )
    assert aiv_eval(["run", str(ip_params), "--dataset", str(broken.root), "--mode", "inprocess"]) == 1
    ros_bytes = (tmp_path / "ros" / "results.jsonl").read_bytes()
    assert ros_bytes == (tmp_path / "inprocess" / "results.jsonl").read_bytes()
    records = _records(tmp_path / "ros")
    by_object = {}
    for record in records:
        by_object.setdefault(record["object_id"], []).append(record)
    assert [r["status"] for r in by_object[broken.good.object_id]] == ["ok"]
    for record in by_object["mug_first"]:
        assert record["status"] == "infra_failure"
        assert "cannot be loaded" in record["failure_reason"] and "rgb_s" in record["failure_reason"]
    for record in by_object["mug_later"]:
        assert record["status"] == "infra_failure"
        assert "the new view cannot be shown" in record["failure_reason"]
