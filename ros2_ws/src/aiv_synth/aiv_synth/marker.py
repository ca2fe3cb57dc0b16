"""The completion marker of a generated dataset (``capture_complete.json``) and the generator version.

Kept free of heavy imports: ``aiv-capture ensure-default`` reads it on every start of the main job and must
answer "already there" in milliseconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Bump whenever the output for a given preset and seed changes; a cached dataset of another version is rebuilt.
#: 1.1.0: privileged ground truth gained ``absent_attributes`` and ``slot_order`` (images unchanged).
GENERATOR_VERSION = "1.1.0"
#: Version of the privileged ground truth (``privileged_gt/``), which can change while every image, meta.json
#: and index stays byte for byte as it was (so GENERATOR_VERSION, which meta.json records, stays). A cached
#: dataset whose marker lacks it or has another one is rebuilt.
#: 2: absence surfaces (``absent_attributes[].surface``, per capture ``absent_in_view`` / ``absence_pixels``)
#: and, for datasets with height levels, ``levels_by_episode``.
TRUTH_VERSION = 2
MARKER_NAME = "capture_complete.json"
#: What ``aiv-capture ensure-default`` builds (the main job's dataset).
DEFAULT_PRESET = "default"
DEFAULT_SEED = 42


def marker_document(preset: str, seed: int, episodes: int) -> dict[str, Any]:
    """What the marker records: enough to tell whether a cached dataset is the one asked for."""
    return {
        "preset": preset,
        "seed": seed,
        "version": GENERATOR_VERSION,
        "truth_version": TRUTH_VERSION,
        "episodes": episodes,
        "complete": True,
    }


def read_marker(root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((root / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_complete(root: Path, preset: str, seed: int) -> bool:
    """Whether ``root`` holds a finished dataset of this preset, seed and generator version."""
    marker = read_marker(root)
    return bool(
        marker
        and marker.get("complete") is True
        and marker.get("preset") == preset
        and marker.get("seed") == seed
        and marker.get("version") == GENERATOR_VERSION
        and marker.get("truth_version") == TRUTH_VERSION
    )
