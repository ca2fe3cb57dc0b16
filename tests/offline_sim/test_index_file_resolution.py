"""A relative ``index_file`` names a file under the dataset root, never one in the working directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from aiv_dataset import DatasetError, PInVerifyDataset
from support.tiny_dataset import EpisodeSpec, ring


def _dataset_with_index(tiny) -> Path:
    episode = tiny.add_episode(EpisodeSpec(views=ring()))
    tiny.add_object("mug_b", "mug")
    return tiny.write_index("pv_index_all.jsonl", [tiny.pair(episode), tiny.pair(episode, "mug_b")])


def test_a_stray_file_in_the_working_directory_is_not_served(
    tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _dataset_with_index(tiny)
    cwd = tmp_path / "elsewhere"
    (cwd / "val").mkdir(parents=True)
    stray = cwd / "val" / "pv_index_all.jsonl"
    shutil.copy(real, stray)
    with stray.open("a", encoding="utf-8") as handle:  # one extra pair: serving it would show
        handle.write(real.read_text(encoding="utf-8").splitlines()[0] + "\n")
    monkeypatch.chdir(cwd)
    dataset = PInVerifyDataset(tiny.root)
    assert dataset.index_path("val/pv_index_all.jsonl") == real.absolute()
    assert dataset.index_path("val/pv_index_all.jsonl").is_absolute()
    assert len(dataset.read_pair_index("val/pv_index_all.jsonl")) == 2
    # An absolute path is still taken as given.
    assert dataset.index_path(stray) == stray


def test_a_relative_index_found_only_in_the_working_directory_says_how_to_use_it(
    tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _dataset_with_index(tiny)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    shutil.copy(real, cwd / "mine.jsonl")
    monkeypatch.chdir(cwd)
    with pytest.raises(DatasetError) as caught:
        PInVerifyDataset(tiny.root).read_pair_index("mine.jsonl")
    message = str(caught.value)
    assert "\n" not in message and "dataset root only" in message and str(cwd / "mine.jsonl") in message
    with pytest.raises(DatasetError, match="missing"):
        PInVerifyDataset(tiny.root).read_pair_index("val/none.jsonl")
