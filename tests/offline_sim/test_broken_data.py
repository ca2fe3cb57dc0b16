"""Broken data is refused with its file, line and field, never served (issue 13) — the ROS-free entry points:
``aiv-dataset validate`` (the command), the episode environment and the simulator's episode service.

The same datasets go through the simulator node and both ``aiv-eval`` modes in
``tests/evaluator/test_broken_data_evaluation.py`` and ``tests/ros/test_broken_data_over_ros.py``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from aiv_dataset import DatasetError, PInVerifyDataset, ProblemReport, read_pair_index, validate_dataset
from aiv_dataset.cli import main as aiv_dataset
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import EpisodeRequestError, EpisodeService
from support.broken_data import (
    BROKEN_EPISODES,
    BROKEN_INDEXES,
    OUTSIDE_TEXT,
    BrokenEpisode,
    BrokenIndex,
    broken_episode_dataset,
    broken_index_dataset,
    escaping_descriptions_dataset,
)
from support.tiny_dataset import EpisodeSpec, TinyDataset

REPO_ROOT = Path(__file__).resolve().parents[2]
AIV_DATASET = REPO_ROOT / "ros2_ws" / "install" / "aiv_dataset" / "lib" / "aiv_dataset" / "aiv-dataset"


def _lines(text: str) -> list[str]:
    return text.splitlines()


# -- kinds 1 and 2: one broken episode -----------------------------------------------------------------------


@pytest.mark.parametrize("case", BROKEN_EPISODES, ids=lambda case: case.name)
def test_a_broken_episode_is_named_by_validate_and_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: BrokenEpisode
) -> None:
    broken = broken_episode_dataset(tmp_path / "pv", [case])
    _, episode = broken.broken[0]
    located = broken.located(case, episode)

    assert aiv_dataset(["validate", str(broken.root), "--images", "header"]) == 1
    err = _lines(capsys.readouterr().err)
    assert any(line.startswith(located) and case.message in line for line in err), err

    # The environment the simulator and the in-process evaluator play refuses it when loading, with the
    # same file and field, and goes on serving the good episode.
    dataset = PInVerifyDataset(broken.root)
    env = PInVerifyEnv(dataset.read_pair_index("val/pv_index_all.jsonl"), dataset)
    with pytest.raises(DatasetError) as info:
        env.reset(1)
    assert str(info.value).startswith(located) and case.message in str(info.value)
    assert env.reset(0).load_image().shape == (64, 36, 3)

    # The simulator's StartEpisode answers with a refusal naming the episode, the file and the field.
    service = EpisodeService(env, dataset.load_descriptions())
    with pytest.raises(EpisodeRequestError) as refused:
        service.start(index=1)
    assert f"episode {service.keys[1]} cannot be loaded: {located}" in str(refused.value)
    assert service.start(index=0).index == 0


def test_the_installed_command_exits_one_with_one_line_per_problem(tmp_path: Path) -> None:
    case = BROKEN_EPISODES[0]  # 90 x 160 images, a 360 x 640 camera
    broken = broken_episode_dataset(tmp_path / "pv", [case])
    _, episode = broken.broken[0]
    completed = subprocess.run(
        [str(AIV_DATASET), "validate", str(broken.root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr
    problems = _lines(completed.stderr)
    assert len(problems) == 24  # 12 rgb frames and 12 masks, each named with its field
    first = broken.root.absolute() / episode.episode_path / "rgb" / "rgb_s0_far.png"
    assert f"{first}: field 's0_far.rgb': image is 90x160, expected 360x640" in problems[0]
    assert "24 problem(s)" in completed.stdout


def test_the_image_check_at_load_reads_headers_once_per_episode(tmp_path: Path, monkeypatch) -> None:
    import aiv_dataset.episode_checks as checks

    broken = broken_episode_dataset(tmp_path / "pv", [])
    dataset = PInVerifyDataset(broken.root)
    env = PInVerifyEnv(dataset.read_pair_index("val/pv_index_all.jsonl"), dataset, max_steps=6)
    probes: list[bool] = []
    real_probe = checks.probe_image

    def counting_probe(path, *, decode=True, field=None):
        probes.append(decode)
        return real_probe(path, decode=decode, field=field)

    monkeypatch.setattr(checks, "probe_image", counting_probe)
    env.reset(0)
    assert len(probes) == 24 and not any(probes)  # every rgb and mask, header only
    for direction in ("front-left", "back", "front-right"):
        env.step({"decision": "Unsure", "nav_rel": direction})
    env.reset(0)  # the same episode again: already checked
    assert len(probes) == 24


def test_valid_dataset_is_unchanged(tmp_path: Path) -> None:
    broken = broken_episode_dataset(tmp_path / "pv", [])
    result = validate_dataset(broken.root)
    assert result.ok, str(result.report)


# -- kind 3: files leading out of the dataset root, no description file -------------------------------------------


def test_a_description_file_leading_out_of_the_root_is_refused_and_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, link = escaping_descriptions_dataset(tmp_path / "pv", tmp_path / "elsewhere" / "descriptions.json")
    assert aiv_dataset(["validate", str(data.root)]) == 1
    err = capsys.readouterr().err
    expected = f"{link}: path 'object_descriptions_with_category.json' leads outside the dataset root"
    assert any(line.startswith(expected) for line in _lines(err)), err
    assert OUTSIDE_TEXT not in err
    dataset = PInVerifyDataset(data.root)
    for report in (None, ProblemReport()):
        with pytest.raises(DatasetError) as info:
            dataset.load_descriptions(report=report)
        assert str(info.value).startswith(expected)


@pytest.mark.parametrize(
    ("parts", "loader"),
    [
        (("category_cache.json",), "load_category_cache"),
        (("attr_cache.json",), "load_attr_cache"),
        (("merge_cache.json",), "load_merge_cache"),
        (("val", "object_goal_distractors_map.json"), "load_distractor_map"),
        (("object_descriptions.json",), "load_descriptions"),
    ],
    ids=lambda value: value if isinstance(value, str) else "/".join(value),
)
def test_caches_and_maps_leading_out_of_the_root_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parts: tuple[str, ...], loader: str
) -> None:
    data = TinyDataset(tmp_path / "pv")
    data.add_episode(EpisodeSpec())
    data.write_descriptions()
    (data.root / "object_descriptions_with_category.json").unlink()  # the plain file is the one in use
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}", encoding="utf-8")
    link = data.root.joinpath(*parts)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(outside)
    assert aiv_dataset(["validate", str(data.root)]) == 1
    expected = f"{link}: path '{'/'.join(parts)}' leads outside the dataset root"
    assert expected in capsys.readouterr().err
    dataset = PInVerifyDataset(data.root)
    args = ("val",) if loader == "load_distractor_map" else ()
    with pytest.raises(DatasetError, match="leads outside the dataset root"):
        getattr(dataset, loader)(*args)


def test_validate_reports_an_index_whose_queries_have_no_description_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = TinyDataset(tmp_path / "pv")
    index = data.write_index("pv_index_all.jsonl", [data.pair(data.add_episode(EpisodeSpec()))])
    assert aiv_dataset(["validate", str(data.root)]) == 1
    err = _lines(capsys.readouterr().err)
    assert err == [
        f"{index}: the queries of its 1 pair(s) have no descriptions: the dataset root has neither "
        "object_descriptions_with_category.json nor object_descriptions.json"
    ]
    data.write_descriptions()
    assert aiv_dataset(["validate", str(data.root)]) == 0


# -- kind 4: indexes that cannot be served -----------------------------------------------------------------------


def _where(index: Path, case: BrokenIndex) -> str:
    return f"{index}:{case.line}: field '{case.field}': " if case.line else f"{index}: "


@pytest.mark.parametrize("case", BROKEN_INDEXES, ids=lambda case: case.name)
def test_an_unusable_index_is_refused_by_validate_and_by_the_one_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: BrokenIndex
) -> None:
    data, index = broken_index_dataset(tmp_path / "pv", case)
    where = _where(index, case)
    assert aiv_dataset(["validate", str(data.root)]) == 1
    err = _lines(capsys.readouterr().err)
    assert any(line.startswith(where) and case.message in line for line in err), err
    # Refused as a whole, also by a caller that asks to skip bad lines (the simulator reads that way).
    for report in (None, ProblemReport()):
        with pytest.raises(DatasetError) as info:
            read_pair_index(index, report=report)
        assert str(info.value).startswith(where) and case.message in str(info.value)


def test_pairs_filed_under_one_results_key_are_the_same_pair(tmp_path: Path) -> None:
    data = TinyDataset(tmp_path / "pv")
    episode = data.add_episode(EpisodeSpec())
    first = data.pair(episode)
    copy = dict(first, episode_path="pin_capture/val/elsewhere/0")  # same scene / episode / query
    index = data.write_index("pv_index_all.jsonl", [first, "", copy])
    with pytest.raises(DatasetError) as info:
        read_pair_index(index)
    assert info.value.line == 3 and info.value.field == "query_object_id"
    assert "is already listed on line 1, which files its results under the same key" in str(info.value)


def test_an_index_of_blank_lines_or_only_bad_lines_is_empty(tmp_path: Path) -> None:
    data = TinyDataset(tmp_path / "pv")
    blank = data.write_index("blank.jsonl", ["", "   "])
    with pytest.raises(DatasetError, match=r"no verification pairs \(the file has no lines\)"):
        read_pair_index(blank)
    bad = data.write_index("bad.jsonl", ["{", json.dumps({"scene": "x"})])
    report = ProblemReport()
    with pytest.raises(DatasetError, match=r"none of its 2 line\(s\) is a valid pair"):
        read_pair_index(bad, report=report)
    assert [problem.line for problem in report] == [1, 2]
