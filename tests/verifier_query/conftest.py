"""Fixtures for query-understanding tests: make ``aiv_verifier`` importable and provide the synthetic
description database (regenerated from the capture pipeline's planner, no rendering, ~50 ms)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "ros2_ws" / "src" / "aiv_verifier"
if importlib.util.find_spec("aiv_verifier") is None:
    sys.path.append(str(_PACKAGE_ROOT))


def synthetic_descriptions(root: Path, seed: int = 42, preset: str = "default") -> Path:
    """Write the capture pipeline's two description files for ``preset``/``seed`` under ``root``."""
    from aiv_synth.pipeline import make_plan, write_descriptions
    from aiv_synth.presets import get_preset

    root.mkdir(parents=True, exist_ok=True)
    write_descriptions(root, make_plan(get_preset(preset), seed, root))
    return root


@pytest.fixture(scope="session")
def synthetic_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding ``object_descriptions[_with_category].json`` of the default preset, seed 42 (the
    same database as data/pv_synthetic_default)."""
    return synthetic_descriptions(tmp_path_factory.mktemp("synthetic_descriptions"))


@pytest.fixture(scope="session")
def synthetic_db(synthetic_root: Path) -> dict[str, dict]:
    """``{object_id: {"object_category": c, "descriptions": [d1, d2, d3]}}``."""
    return json.loads((synthetic_root / "object_descriptions_with_category.json").read_text(encoding="utf-8"))
