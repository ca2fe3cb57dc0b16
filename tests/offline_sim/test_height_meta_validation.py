"""meta.json height-level fields that do not fit together are refused with one line naming the field and file.

Each case breaks one view of an episode of the leveled ``micro`` dataset (:mod:`support.leveled_dataset`) the
way a writer could: the loader, and the simulator's episode load that goes through it, must refuse the file
with one line that names the file and the field, so the dataset's author can find and fix it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiv_dataset import PInVerifyDataset
from aiv_dataset.errors import DatasetError
from aiv_dataset.meta import load_meta
from aiv_offline_sim.environment import PInVerifyEnv

Views = list[dict[str, Any]]


def first(views: Views, suffix: str) -> dict[str, Any]:
    return next(view for view in views if view["tag"].endswith(suffix) and view.get("rgb"))


def drop_height(views: Views) -> int:
    view = first(views, "_above")
    del view["camera_height_m"]
    return views.index(view)


def level_disagrees_with_tag(views: Views) -> int:
    view = first(views, "_below")
    view["height_level"] = 1
    return views.index(view)


def tag_without_level(views: Views) -> int:
    view = first(views, "_above")
    del view["height_level"]
    return views.index(view)


def duplicate_view(views: Views) -> int:
    view = dict(first(views, "_above"))
    view["tag"] = view["tag"].replace("_above", "_again_above")
    views.append(view)
    return len(views) - 1


def impossible_pitch(views: Views) -> int:
    view = first(views, "_below")
    view["camera_pitch_deg"] = 60.0
    return views.index(view)


def level_out_of_range(views: Views) -> int:
    view = first(views, "_above")
    view["height_level"] = 3
    return views.index(view)


CASES: list[tuple[Callable[[Views], int], str, str]] = [
    (drop_height, "camera_height_m", "must say the camera height"),
    (level_disagrees_with_tag, "height_level", "disagrees with tag"),
    (tag_without_level, "height_level", "names the 'above' level"),
    (duplicate_view, "height_level", "duplicate view"),
    (impossible_pitch, "camera_pitch_deg", "cannot see the object"),
    (level_out_of_range, "height_level", ""),
]


@pytest.fixture
def episode(leveled_root: Path, tmp_path: Path) -> Path:
    """A private copy of the leveled dataset (each test breaks one of its files)."""
    root = tmp_path / "pv"
    shutil.copytree(leveled_root, root)
    return root


@pytest.mark.parametrize(("breaker", "field", "words"), CASES, ids=[case[0].__name__ for case in CASES])
def test_inconsistent_height_fields_are_refused_in_one_line(episode, breaker, field, words):
    dataset = PInVerifyDataset(episode)
    records = dataset.read_pair_index("val/pv_index_all.jsonl")
    meta_file = episode / records[0].meta_path
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    position = breaker(meta["viewpoints"])
    meta_file.write_text(json.dumps(meta), encoding="utf-8")

    with pytest.raises(DatasetError) as caught:
        load_meta(meta_file)
    message = str(caught.value)
    assert "\n" not in message
    assert str(meta_file) in message
    assert f"viewpoints[{position}].{field}" in message
    assert words in message

    # The simulator refuses the episode with the same line (the environment stays usable for the others).
    env = PInVerifyEnv(records, dataset)
    with pytest.raises(DatasetError) as refused:
        env.reset(0)
    assert f"viewpoints[{position}].{field}" in str(refused.value) and "\n" not in str(refused.value)
    other = next(i for i, record in enumerate(records) if record.meta_path != records[0].meta_path)
    assert env.reset(other).levels == (-1, 0, 1)


def test_the_leveled_dataset_itself_is_valid(leveled_root):
    """The cases above break a dataset that loads: each failure is the one the case introduced."""
    for meta_file in sorted(leveled_root.glob("pin_capture/*/*/*/meta.json")):
        meta = load_meta(meta_file)
        assert {view.height_level for view in meta.env_views} == {-1, 0, 1}
