"""The benchmark's one vocabulary: directions, sectors, move outcomes, categories, thresholds, camera.

Every package that speaks about the benchmark (the environment and simulator node, the verifier's core and
episode loop, the capture generator, the evaluation records) takes these names and numbers from here, so
each fact is written down once and a change cannot leave a second copy behind.

Directions (spec §3.6) are relative to the agent, which always faces the goal: "front" is where it stands,
"front-left" is one sector (60 degrees) around the goal to its left, and so on. Policies send free text such
as ``"back-left (MLLM-Reasoning)"``; the reference environment cleans and normalises it, falling back to
"front" (stay) for anything it cannot read. That lenient default is kept; ``strict=True`` turns every string
that is not exactly a direction name (after cleaning) into an error instead of a silent guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType

from .meta import CameraIntrinsics

#: Azimuth sectors of an episode, 60 degrees each.
SECTOR_COUNT = 6


class MoveOutcome(str, Enum):
    """What one step did to the camera. The same values name outcomes in the environment, in the
    MoveToSector result (as integer constants there), in traces and in results.jsonl.

    ``UNREACHABLE`` and ``ALREADY_VISITED`` are the navigation failures; ``REJECTED`` is a move that was not
    attempted (the step budget was exhausted, or a server refused the request); ``DECIDED`` is a Yes/No that
    ended the episode.
    """

    MOVED = "moved"
    STAYED = "stayed"
    UNREACHABLE = "unreachable"
    ALREADY_VISITED = "already_visited"
    REJECTED = "rejected"
    DECIDED = "decided"

    @property
    def navigation_failed(self) -> bool:
        return self in (MoveOutcome.UNREACHABLE, MoveOutcome.ALREADY_VISITED)


#: Names in virtual-index-offset order: DIRECTIONS[k] moves k sectors counter-clockwise (+theta).
DIRECTIONS: tuple[str, ...] = ("front", "front-left", "back-left", "back", "back-right", "front-right")

#: Virtual-sector offset of each direction (what policies add to the current virtual index); read-only
#: because every package shares this one table.
DIRECTION_OFFSETS: Mapping[str, int] = MappingProxyType({name: k for k, name in enumerate(DIRECTIONS)})

# Substring fallback order: longest names first, so "go back-left" is read as back-left, not back. (The
# reference iterates a Python set here, whose order varies between processes; any fixed order is a choice.)
_SUBSTRING_ORDER: tuple[str, ...] = tuple(sorted(DIRECTIONS, key=lambda d: (-len(d), DIRECTIONS.index(d))))


class DirectionError(ValueError):
    """A direction string that strict parsing cannot accept."""


def clean_direction(text: str) -> str:
    """Drop a trailing policy tag and whitespace: ``"Back-Left (MLLM)"`` -> ``"Back-Left"`` (case kept).

    This is the form the reference reports back as ``failed_direction``.
    """
    return text.split("(", 1)[0].strip()


def normalize_direction(text: str, *, strict: bool = False) -> str:
    """Map a requested direction onto one of :data:`DIRECTIONS`.

    Reference rule: clean and lowercase; an exact name wins; otherwise the first name found as a substring
    of the whole lowercased request; otherwise "front". With ``strict`` only the exact form is accepted.
    """
    if not isinstance(text, str):
        raise DirectionError(f"direction must be a string, got {type(text).__name__}")
    cleaned = clean_direction(text).lower()
    if cleaned in DIRECTION_OFFSETS:
        return cleaned
    if strict:
        raise DirectionError(f"unknown direction {text!r}; expected one of {list(DIRECTIONS)}")
    lowered = text.lower()
    for name in _SUBSTRING_ORDER:
        if name in lowered:
            return name
    return "front"


def direction_angle(name: str, sectors: int = SECTOR_COUNT) -> float:
    """Azimuth offset (radians, +theta = agent's left) that a direction asks for, as in the reference.

    Front-left/right are one sector span, back-left/right two spans, and "back" is exactly pi.
    """
    span = 2.0 * math.pi / sectors
    offsets = {
        "front": 0.0,
        "front-left": span,
        "back-left": 2.0 * span,
        "back": math.pi,
        "back-right": -2.0 * span,
        "front-right": -span,
    }
    return offsets[name]


def target_sector(current_sector: int, direction: str, sectors: int = SECTOR_COUNT) -> int:
    """Virtual sector reached by moving in ``direction`` (an exact direction name) from ``current_sector``.

    This is index arithmetic only; whether the move is possible is the environment's business.
    """
    if direction not in DIRECTION_OFFSETS:
        raise DirectionError(f"unknown direction {direction!r}; expected one of {list(DIRECTIONS)}")
    return (current_sector + DIRECTION_OFFSETS[direction]) % sectors


def relative_direction(current_sector: int, target: int, sectors: int = SECTOR_COUNT) -> str:
    """Name of virtual sector ``target`` as seen from ``current_sector`` (the current sector is "front")."""
    return DIRECTIONS[(target - current_sector) % sectors]


#: The 18 object categories of the benchmark (spec §1), in the order the category prompt lists them.
CATEGORIES: tuple[str, ...] = (
    "backpack",
    "bag",
    "ball",
    "book",
    "camera",
    "cellphone",
    "eyeglasses",
    "hat",
    "headphones",
    "keys",
    "laptop",
    "mug",
    "shoes",
    "teddy bear",
    "toy",
    "visor",
    "wallet",
    "watch",
)

#: Mask area (pixels) above which the target counts as visible in a capture, per category (spec §2.3,
#: paper Table 10). The capture generator judges viewpoints with it; the simulator reports it per frame.
CATEGORY_MASK_THRESHOLDS_PX: Mapping[str, int] = MappingProxyType(
    {
        **dict.fromkeys(("keys", "watch"), 100),
        **dict.fromkeys(("eyeglasses", "wallet", "cellphone", "visor", "camera", "mug"), 150),
        **dict.fromkeys(("toy", "ball", "headphones", "hat", "book", "shoes"), 300),
        **dict.fromkeys(("backpack", "bag", "laptop", "teddy bear"), 500),
    }
)
#: Threshold of a category the table does not list.
DEFAULT_MASK_THRESHOLD_PX = 200


def mask_threshold_px(category: str) -> int:
    """Visibility threshold of a category in mask pixels (:data:`DEFAULT_MASK_THRESHOLD_PX` if unlisted)."""
    return CATEGORY_MASK_THRESHOLDS_PX.get(category, DEFAULT_MASK_THRESHOLD_PX)


#: The benchmark camera (spec §2.3): 360x640 portrait, HFOV 42 degrees; the VFOV is
#: 2*atan(tan 21deg * 640/360) rounded as meta.json records it. Used when an episode carries no intrinsics.
BENCHMARK_INTRINSICS = CameraIntrinsics(width=360, height=640, hfov_deg=42.0, vfov_deg=68.62)
