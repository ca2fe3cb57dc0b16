"""Camera height levels: the optional third coordinate of a view, beside its sector and range.

The benchmark captures every view from one camera height (the 1.31 m sensor of the reference agent). A
dataset may add views from other heights at the same sectors: each such viewpoint carries its level (an
integer, 0 = that eye level, +1 one step above, -1 one step below), the camera height it was taken from and
the pitch that aims it at the object. A dataset without those fields is a one-level dataset and everything
behaves exactly as the benchmark defines it.

Moving between levels is a move of its own, ``up`` or ``down`` (one level at the same sector), as in
embodied visual search with 5-DoF viewpoints (E3VS: ``move_up`` / ``move_down`` beside planar moves). The
planar directions keep the current level: a torso that was raised stays up while the base drives.

Every package that speaks about levels (dataset validation, the simulator, the verifier, the robot adapter,
the evaluation records) takes the names and numbers from here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

#: The eye level: the only level of a one-level dataset, and where every episode starts.
EYE_LEVEL = 0
#: The lowest and highest level a dataset may use. The ``elevated`` preset uses -1, 0 and +1.
MIN_LEVEL = -2
MAX_LEVEL = 2

#: Names of the levels in logs, tags and reports.
LEVEL_NAMES: Mapping[int, str] = MappingProxyType(
    {-2: "below2", -1: "below", 0: "eye", 1: "above", 2: "above2"}
)

#: Height moves and the level offset each asks for.
LEVEL_DIRECTIONS: Mapping[str, int] = MappingProxyType({"up": 1, "down": -1})

_TAG_LEVEL = re.compile(r"_(below2|below|above2|above)$")
_NAME_LEVEL: Mapping[str, int] = MappingProxyType({name: level for level, name in LEVEL_NAMES.items()})


def level_name(level: int) -> str:
    """``0`` -> ``"eye"``, ``1`` -> ``"above"``, ``-1`` -> ``"below"``."""
    try:
        return LEVEL_NAMES[level]
    except KeyError:
        raise ValueError(f"height level {level} is outside {MIN_LEVEL}..{MAX_LEVEL}") from None


def level_tag_suffix(level: int) -> str:
    """What a capture tag gains at a level: ``""`` at eye level (today's tags), else ``"_above"`` etc."""
    return "" if level == EYE_LEVEL else f"_{level_name(level)}"


def level_from_tag(tag: str | None) -> int | None:
    """The level a tag names (``"s4_far_above"`` -> 1); ``None`` for a tag without a level suffix."""
    if not tag:
        return None
    match = _TAG_LEVEL.search(tag)
    return _NAME_LEVEL[match.group(1)] if match else None


def level_direction(text: str) -> str | None:
    """``"up"`` / ``"down"`` when a requested direction is a height move (after dropping a policy tag such as
    ``" (MLLM-Reasoning)"``, case-insensitive, exact); ``None`` otherwise.

    Only the exact words count: the benchmark's lenient reading of planar directions (a substring, else
    "front") stays as it was for every other string.
    """
    if not isinstance(text, str):
        return None
    cleaned = text.split("(", 1)[0].strip().lower()
    return cleaned if cleaned in LEVEL_DIRECTIONS else None
