"""A dataset with height levels made from a one-level one, for tests of what the evaluation does with levels.

Every eye-level viewpoint of every episode gets a twin one level up (tag ``<tag>_above``): the same image
and mask, the camera raised to ``height_m`` and pitched toward the object so that the dataset validation
accepts it, and the privileged per-view truth of the eye-level view. The twin shows exactly what the eye-level
view shows, so an agent that judges it sees nothing new: what changes is only where the agent may go.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

from aiv_dataset.levels import level_tag_suffix

#: Where the raised camera sits (the eye level of the synthetic captures is 1.31 m).
RAISED_HEIGHT_M = 1.71


def _renamed(path: str, tag: str, new_tag: str) -> str:
    folder, _, name = path.rpartition("/")
    return f"{folder}/{name.replace(tag, new_tag)}" if folder else name.replace(tag, new_tag)


def leveled_copy(
    source: Path,
    target: Path,
    level: int = 1,
    height_m: float = RAISED_HEIGHT_M,
    *,
    only_off_eye_level: bool = False,
) -> Path:
    """Copy the dataset ``source`` to ``target`` and add a twin of every eye-level view at ``level``.

    ``only_off_eye_level`` moves every view-dependent attribute out of the eye-level views' privileged truth
    (the oracle can no longer judge it there) and leaves it in the twins': attributes that only the other level
    shows, as a lid shows only from above."""
    shutil.copytree(source, target)
    suffix = level_tag_suffix(level)
    twins: dict[str, dict[str, str]] = {}  # episode dir (relative) -> eye tag -> twin tag
    for meta_path in sorted(target.glob("pin_capture/*/*/*/meta.json")):
        episode_dir = meta_path.parent
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        goal = meta.get("goal_position_nominal")
        added = []
        for view in meta["viewpoints"]:
            if view.get("height_level", 0) != 0:
                continue
            tag = view["tag"]
            twin = copy.deepcopy(view)
            twin["tag"] = tag + suffix
            twin["height_level"] = level
            twin["camera_height_m"] = height_m
            position = view.get("camera_position")
            if position is not None:
                raised = [position[0], height_m, position[2]]
                twin["camera_position"] = raised
                if goal is not None:
                    horizontal = math.hypot(goal[0] - raised[0], goal[2] - raised[2])
                    twin["camera_pitch_deg"] = round(
                        math.degrees(math.atan2(goal[1] - height_m, horizontal)), 2
                    )
            for key in ("rgb", "mask_raw_path"):
                if view.get(key):
                    twin[key] = _renamed(view[key], tag, tag + suffix)
                    if (episode_dir / view[key]).is_file():
                        shutil.copyfile(episode_dir / view[key], episode_dir / twin[key])
            added.append(twin)
            twins.setdefault(episode_dir.relative_to(target).as_posix(), {})[tag] = tag + suffix
        meta["viewpoints"] = [*meta["viewpoints"], *added]
        meta_path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    for truth_path in sorted(target.glob("privileged_gt/*/*.json")):
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        hidden = {a["name"] for a in truth.get("attributes", []) if a.get("view_dependent")}
        for episode, captures in truth.get("captures", {}).items():
            for tag, twin_tag in twins.get(episode, {}).items():
                if tag in captures:
                    captures[twin_tag] = copy.deepcopy(captures[tag])
                    if only_off_eye_level:
                        captures[tag]["visible"] = [
                            n for n in captures[tag].get("visible", []) if n not in hidden
                        ]
        truth_path.write_text(json.dumps(truth), encoding="utf-8")
    return target
