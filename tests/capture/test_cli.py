"""The ``aiv-capture`` command line: presets, refusal to overwrite, the cached path of ensure-default."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from aiv_synth.cli import main
from aiv_synth.marker import GENERATOR_VERSION, MARKER_NAME, TRUTH_VERSION, is_complete


def test_presets_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    for name in ("micro", "tiny", "default", "medium", "large"):
        assert name in out


def test_generate_refuses_a_non_empty_output_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    assert main(["generate", "--preset", "micro", "--out", str(tmp_path)]) == 2
    assert "exists" in capsys.readouterr().err
    assert (tmp_path / "keep.txt").read_text() == "precious"


def test_generate_rejects_unknown_presets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--preset", "huge", "--out", str(tmp_path / "x")]) == 2
    assert "unknown preset" in capsys.readouterr().err


#: The marker of a complete default dataset made by this generator.
CURRENT_MARKER = {
    "preset": "default",
    "seed": 42,
    "version": GENERATOR_VERSION,
    "truth_version": TRUTH_VERSION,
    "episodes": 1,
    "complete": True,
}


def test_ensure_default_returns_quickly_when_the_marker_matches(tmp_path: Path) -> None:
    (tmp_path / MARKER_NAME).write_text(json.dumps(CURRENT_MARKER))
    start = time.perf_counter()
    assert main(["ensure-default", "--out", str(tmp_path)]) == 0
    assert time.perf_counter() - start < 0.5
    assert sorted(p.name for p in tmp_path.iterdir()) == [MARKER_NAME]


@pytest.mark.parametrize(
    "change",
    [
        {"version": "0.0.1"},
        {"seed": 7},
        {"preset": "tiny"},
        {"complete": False},
        # A cache made before absence surfaces: same images, ground truth without them.
        {"truth_version": None},
    ],
)
def test_a_stale_or_foreign_marker_is_not_complete(tmp_path: Path, change: dict) -> None:
    (tmp_path / MARKER_NAME).write_text(json.dumps({**CURRENT_MARKER, **change}))
    assert not is_complete(tmp_path, "default", 42)
    (tmp_path / MARKER_NAME).write_text("{not json")
    assert not is_complete(tmp_path, "default", 42)
