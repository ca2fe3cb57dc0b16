"""Reproducibility: the same seed gives the same bytes, whatever the number of workers; seeds matter."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from aiv_synth.marker import MARKER_NAME
from aiv_synth.pipeline import ensure_dataset, generate_atomic, make_plan
from aiv_synth.presets import get_preset
from aiv_synth.scene import generate_room


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_a_byte_identical_dataset(tmp_path: Path) -> None:
    preset = get_preset("micro")
    first = generate_atomic(preset, tmp_path / "a", seed=42, workers=1, log=lambda _: None)
    # The second copy replaces a stale cache (an older generator version), as ensure-default does.
    partial = tmp_path / "b"
    (partial / "pin_capture").mkdir(parents=True)
    (partial / "pin_capture" / "junk.txt").write_text("left over")
    (partial / MARKER_NAME).write_text(json.dumps({"preset": "micro", "seed": 42, "version": "0.0.0"}))
    second = ensure_dataset(partial, preset, seed=42, workers=2, log=lambda _: None)
    assert second is not None and second.episodes_written == first.episodes_written == 4
    a, b = _digest(first.root), _digest(partial)
    assert len(a) > 40
    assert a == b
    assert (partial / MARKER_NAME).is_file() and not (partial / "pin_capture" / "junk.txt").exists()
    assert ensure_dataset(partial, preset, seed=42) is None  # now cached
    assert not list(tmp_path.glob(".*tmp-*"))  # no temporary directories left behind


def test_different_seeds_give_different_scenes(tmp_path: Path) -> None:
    preset = get_preset("default")
    plan_a, plan_b = make_plan(preset, 42, tmp_path), make_plan(preset, 43, tmp_path)
    keys_a = {t.scene_key for t in plan_a.tasks}
    keys_b = {t.scene_key for t in plan_b.tasks}
    assert not keys_a & keys_b
    assert {t.instance.object_id for t in plan_a.tasks}.isdisjoint(t.instance.object_id for t in plan_b.tasks)
    key = sorted(keys_a)[0]
    room_a, room_again, room_b = generate_room(key, 42), generate_room(key, 42), generate_room(key, 43)
    layout = lambda room: (room.style, room.width, room.depth, [(p.kind, p.footprint) for p in room.pieces])  # noqa: E731
    assert layout(room_a) == layout(room_again)
    assert layout(room_a) != layout(room_b)


def test_ensure_dataset_never_replaces_a_directory_it_did_not_make(tmp_path: Path) -> None:
    foreign = tmp_path / "pv_dataset"
    (foreign / "pin_capture" / "val").mkdir(parents=True)
    (foreign / "object_descriptions.json").write_text("{}")
    with pytest.raises(FileExistsError):
        ensure_dataset(foreign, get_preset("micro"), seed=42, workers=1, log=lambda _: None)
    assert (foreign / "object_descriptions.json").read_text() == "{}"
