"""A dataset with camera height levels, made from a one-level dataset by adding views above and below.

The ``elevated`` generator preset renders such views; the simulator's tests need a few of them with every
property chosen on purpose instead, next to the one-level episodes they came from, so that the planar
transitions of both can be compared. :func:`add_height_levels` copies a one-level dataset (the ``micro``
preset in the tests) and gives every navigable eye-level view a copy one level above (camera 0.45 m higher)
and one below (0.5 m lower), each pitched at the object so validation accepts it, with an image of its own
(the eye-level frame with inverted colours above, swapped channels below, so a test can tell from the pixels
which view it is shown). :data:`RULES` makes some of them otherwise:

* above raw sector 6: the views are listed but not navigable (a shelf in the way): ``up`` there is unreachable;
* above raw sector 10: trap views (the mask misses the threshold);
* below raw sector 8: no view at all (a table edge): ``down`` there is unreachable;
* below raw sector 0: the near view only, so the far-first choice falls back to it.

The eye-level views keep their records, gaining ``height_level: 0`` and ``camera_height_m``, as a dataset
with levels writes them.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from aiv_dataset.levels import level_tag_suffix
from PIL import Image

#: How far each level's camera is raised (m) from the eye-level camera.
LEVEL_OFFSETS_M: dict[int, float] = {1: 0.45, -1: -0.5}


@dataclass(frozen=True)
class LevelRule:
    """What one level's copies of a raw sector's views are: absent, listed but blocked, traps, or only some."""

    missing: bool = False
    blocked: bool = False
    trap: bool = False
    view_types: tuple[str, ...] = ("far", "near")


#: (level, raw sector) -> rule; sectors not named get a plain navigable, visible copy of each eye-level view.
RULES: dict[tuple[int, int], LevelRule] = {
    (1, 6): LevelRule(blocked=True),
    (1, 10): LevelRule(trap=True),
    (-1, 8): LevelRule(missing=True),
    (-1, 0): LevelRule(view_types=("near",)),
}


def rule(level: int, raw_sector: int) -> LevelRule:
    return RULES.get((level, raw_sector), LevelRule())


def expected_view(level: int, raw_sector: int, priority: str = "far") -> tuple[str, bool] | None:
    """(view type shown, trap) at ``level`` of a raw sector whose eye-level views are both navigable, or None
    when nothing can be shown there (what ``up`` / ``down`` from that sector must call unreachable)."""
    found = rule(level, raw_sector)
    if found.missing or found.blocked:
        return None
    kind = priority if priority in found.view_types else found.view_types[0]
    return kind, found.trap


def recolour(image: np.ndarray, level: int) -> np.ndarray:
    """The frame a level's copy shows: inverted above, channels reversed below."""
    return (255 - image) if level > 0 else image[..., ::-1].copy()


def add_height_levels(source: Path, dest: Path) -> Path:
    """Copy the dataset at ``source`` to ``dest`` with views above and below (see module docstring)."""
    shutil.copytree(source, dest)
    for meta_file in sorted(dest.glob("pin_capture/*/*/*/meta.json")):
        _add_levels_to_episode(meta_file)
    return dest


def _add_levels_to_episode(meta_file: Path) -> None:
    episode_dir = meta_file.parent
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    goal = meta["goal_position_nominal"]
    eye_views = meta["viewpoints"]
    added: list[dict[str, Any]] = []
    for level in (1, -1):
        for view in eye_views:
            if not view.get("navigable") or not view.get("camera_position"):
                continue
            raw_sector, kind = int(view["sector_index"]), view["range_label"]
            found = rule(level, raw_sector)
            if found.missing or kind not in found.view_types:
                continue
            added.append(_level_copy(episode_dir, view, level, goal, found))
    for view in eye_views:
        if view.get("camera_position"):
            view["height_level"] = 0
            view["camera_height_m"] = float(view["camera_position"][1])
    meta["viewpoints"] = eye_views + added
    meta_file.write_text(json.dumps(meta, indent=1), encoding="utf-8")


def _level_copy(
    episode_dir: Path, view: dict[str, Any], level: int, goal: list[float], found: LevelRule
) -> dict[str, Any]:
    copy = json.loads(json.dumps(view))
    tag = f"{view['tag']}{level_tag_suffix(level)}"
    x, y, z = view["camera_position"]
    y = float(y) + LEVEL_OFFSETS_M[level]
    horizontal = math.hypot(goal[0] - x, goal[2] - z)
    copy.update(
        tag=tag,
        camera_position=[x, y, z],
        height_level=level,
        camera_height_m=y,
        camera_pitch_deg=round(math.degrees(math.atan2(goal[1] - y, horizontal)), 3),
    )
    if found.blocked:
        copy.update(navigable=False, rgb=None, mask_raw_path=None, mask_meets_threshold=False, has_mask=False)
        copy.update(camera_position=None)
        copy.update(mask_area_px=0, mask_bbox_xyxy=None)
        return copy
    source_rgb = episode_dir / view["rgb"]
    rgb = np.asarray(Image.open(source_rgb).convert("RGB"))
    copy["rgb"] = f"rgb/rgb_{tag}.png"
    Image.fromarray(recolour(rgb, level)).save(episode_dir / copy["rgb"])
    if view.get("mask_raw_path"):
        copy["mask_raw_path"] = f"mask/mask_{tag}.png"
        shutil.copyfile(episode_dir / view["mask_raw_path"], episode_dir / copy["mask_raw_path"])
    if found.trap:
        copy["mask_meets_threshold"] = False
    return copy
