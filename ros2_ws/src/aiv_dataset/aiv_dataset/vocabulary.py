"""The benchmark's one vocabulary: relative directions, sectors and move outcomes (spec §3).

Every package that speaks about moves (the environment, the simulator node, the verifier's episode loop,
the evaluation records) takes these names from here, so a direction or an outcome is written down once.

The six relative directions an agent may request, and how free text is mapped onto them (spec §3.6).

Directions are relative to the agent, which always faces the goal: "front" is where it stands, "front-left"
is one sector (60 degrees) around the goal to its left, and so on. Policies send free text such as
``"back-left (MLLM-Reasoning)"``; the reference environment cleans and normalises it, falling back to
"front" (stay) for anything it cannot read. That lenient default is kept; ``strict=True`` turns every string
that is not exactly a direction name (after cleaning) into an error instead of a silent guess.
"""

from __future__ import annotations

import math
from enum import Enum

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

#: Virtual-sector offset of each direction (what policies add to the current virtual index).
DIRECTION_OFFSETS: dict[str, int] = {name: k for k, name in enumerate(DIRECTIONS)}

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


def direction_angle(name: str, sectors: int = 6) -> float:
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


def relative_name(offset: int, sectors: int = 6) -> str:
    """Direction name of a virtual-index offset (``(target - current) mod 6``)."""
    return DIRECTIONS[offset % sectors]
