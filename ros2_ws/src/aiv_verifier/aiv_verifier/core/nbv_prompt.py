"""Text side of the LLM next-best-view strategy: prompt slots, template files and answer parsing (spec §5.10).

Prompt wording lives in text files (``aiv_verifier/prompts/nav_attr.txt`` / ``nav_direct.txt`` by default) so
a user can point a parameter at the reference prompts to reproduce a paper run. Only the named slots below are
filled; every other brace (e.g. a JSON example) is left untouched, so templates need no brace escaping.

An episode with camera height levels adds ``up`` / ``down`` to the allowed directions and the direction guide
(as E3VS offers ``move_up`` / ``move_down``), names visited views at other levels, and fills the
``{height_note}`` slot with the current camera height. A one-level episode fills that slot with "" and gets
exactly the prompt it always got.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aiv_dataset.levels import LEVEL_DIRECTIONS, LEVEL_NAMES
from aiv_dataset.vocabulary import SECTOR_COUNT, target_sector

from .sector_geometry import SectorGeometry, relative_direction_by_geometry
from .tracker import AttributeStateTracker
from .types import Attribute, AttributeState

PROMPT_SLOTS: tuple[str, ...] = (
    "desc1",
    "desc2",
    "desc3",
    "object_category",
    "verification_status",
    "visited_directions",
    "allowed_directions",
    "visibility_warning",
    "direction_guide",
    "height_note",
)
_SLOT_PATTERN = re.compile(r"\{(" + "|".join(PROMPT_SLOTS) + r")\}")

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
DEFAULT_TEMPLATE_FILES: Mapping[str, str] = {"attribute": "nav_attr.txt", "direct": "nav_direct.txt"}

CANDIDATE_DIRECTIONS: tuple[str, ...] = ("front-left", "front-right", "back", "back-left", "back-right")
"""Moves the LLM may be offered, in the order the reference lists them ("front" = stay is never offered)."""
EMPTY_ALLOWED_FALLBACK = "back"
"""Offered (and used) when every direction is visited, as in the reference, so the list is never empty."""
EMPTY_ALLOWED_TEXT = '["back"]'
"""How the reference renders that one-element fallback list in the prompt."""
MATCH_KEYS: tuple[str, ...] = (
    "front-right",
    "front-left",
    "back-right",
    "back-left",
    "front",
    "right",
    "left",
    "back",
)
"""Substrings tried on the model's answer, longest first, so "front-right" is not read as "front"."""
DEFAULT_CHOICE = "front"

_DIRECTION_GUIDE: Mapping[str, str] = {
    "front-left": "front-left: walk about 60 degrees around the object towards your left",
    "front-right": "front-right: walk about 60 degrees around the object towards your right",
    "back": "back: go all the way round to the opposite side of the object (180 degrees)",
    "back-left": "back-left: about 120 degrees round to your left, just left of the opposite side",
    "back-right": "back-right: about 120 degrees round to your right, just right of the opposite side",
    "up": "up: stay on this side and raise the camera one height level, tilted down at the object, to see its "
    "top (a lid, a print on top, what is inside an open container) or over something in front of it",
    "down": "down: stay on this side and lower the camera one height level, tilted up at the object, to see "
    "its underside (a sole, the base) or under something in front of it",
}
#: Height moves, in the order the prompt lists them after the planar ones.
HEIGHT_DIRECTIONS: tuple[str, ...] = ("up", "down")

ViewKey = tuple[int, int]


@dataclass(frozen=True)
class AttributeStatus:
    """An attribute as the navigation prompt shows it: its quoted value and its reconciled state."""

    name: str
    evidence_phrase: str
    state: AttributeState


def attribute_statuses(
    attributes: Sequence[Attribute], tracker: AttributeStateTracker
) -> tuple[AttributeStatus, ...]:
    """Pair each attribute with its reconciled (Eq. 3) state, which is what the reference prompt reports."""
    return tuple(
        AttributeStatus(attribute.name, attribute.evidence_phrase, tracker.reconciled_state(attribute.name))
        for attribute in attributes
    )


def load_prompt_template(path: str | Path, stage: str = "navigation") -> str:
    """Read a template file, failing with a message that names the file and the prompt's ``stage``."""
    template_path = Path(path)
    if not template_path.is_file():
        raise FileNotFoundError(f"{stage} prompt template not found: {template_path}")
    try:
        text = template_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{stage} prompt template {template_path} is not valid UTF-8: {error}") from error
    if not text.strip():
        raise ValueError(f"{stage} prompt template {template_path} is empty")
    return text


def default_template_path(query_mode: str) -> Path:
    if query_mode not in DEFAULT_TEMPLATE_FILES:
        raise ValueError(
            f"no navigation prompt for query mode {query_mode!r}; known: {list(DEFAULT_TEMPLATE_FILES)}"
        )
    return PROMPTS_DIR / DEFAULT_TEMPLATE_FILES[query_mode]


def fill_prompt_slots(template: str, slots: Mapping[str, str]) -> str:
    """Replace ``{slot}`` for the known slot names only; a known slot missing from ``slots`` is an error."""
    missing = [name for name in set(_SLOT_PATTERN.findall(template)) if name not in slots]
    if missing:
        raise KeyError(f"no value for prompt slot(s) {sorted(missing)}")
    return _SLOT_PATTERN.sub(lambda match: slots[match.group(1)], template)


def allowed_directions(current_sector: int, visited: frozenset[int]) -> list[str]:
    """Offered moves whose target sector is not visited (visited already contains failed targets)."""
    return [name for name in CANDIDATE_DIRECTIONS if target_sector(current_sector, name) not in visited]


def offered_directions(current_sector: int, visited: frozenset[int]) -> list[str]:
    """What the prompt lists and the parser accepts: the allowed moves, or ``["back"]`` when none is left."""
    return allowed_directions(current_sector, visited) or [EMPTY_ALLOWED_FALLBACK]


def list_text(names: Sequence[str]) -> str:
    """Python-list rendering of direction names (the reference prints ``str(list)``)."""
    return str(list(names))


def allowed_directions_text(current_sector: int, visited: frozenset[int]) -> str:
    """The ``{allowed_directions}`` slot: the allowed list, or the literal ``["back"]`` when none is left."""
    allowed = allowed_directions(current_sector, visited)
    return list_text(allowed) if allowed else EMPTY_ALLOWED_TEXT


def visited_direction_names(
    current_sector: int, visited: frozenset[int], geometry: SectorGeometry | None
) -> list[str]:
    """Visited sectors named relative to the current pose, nearest-left first, without duplicates."""
    named = sorted(
        (
            (sector - current_sector) % SECTOR_COUNT,
            relative_direction_by_geometry(geometry, current_sector, sector),
        )
        for sector in visited
    )
    names: list[str] = []
    for _, name in named:
        if name not in names:
            names.append(name)
    return names


def attribute_status_text(statuses: Sequence[AttributeStatus]) -> str:
    """One line per attribute: verified, contradicted (with the value that was expected) or still open."""
    if not statuses:
        return "(no attributes to verify)"
    lines = []
    for status in statuses:
        if status.state is AttributeState.MATCHED:
            lines.append(f"[VERIFIED] {status.name}: '{status.evidence_phrase}'")
        elif status.state is AttributeState.CONTRADICTED:
            lines.append(f"[CONTRADICTED] {status.name}: expected '{status.evidence_phrase}'")
        else:
            lines.append(f"[UNVERIFIED] {status.name}: '{status.evidence_phrase}'")
    return "\n".join(lines)


def description_status_text(statuses: Sequence[AttributeStatus]) -> str:
    """Direct mode: how many descriptions match, conflict or are still unclear, and what that implies."""
    matched = sum(status.state is AttributeState.MATCHED for status in statuses)
    contradicted = sum(status.state is AttributeState.CONTRADICTED for status in statuses)
    unclear = len(statuses) - matched - contradicted
    summary = (
        f"Descriptions that match what has been seen: {matched} of {len(statuses)}; "
        f"contradicted: {contradicted}; still unclear: {unclear}."
    )
    if contradicted:
        advice = "Warning: a description conflicts with the views so far; look for a side that settles it."
    elif unclear:
        advice = "More views are needed to judge the unclear descriptions."
    else:
        advice = "All descriptions agree with the views so far."
    return f"{summary}\n{advice}"


def direction_guide_text(offered: Sequence[str]) -> str:
    return "\n".join(f"- {_DIRECTION_GUIDE[name]}" for name in offered)


def _level_label(level: int) -> str:
    return LEVEL_NAMES.get(level, f"level {level}")


def offered_view_directions(
    current: ViewKey, levels: Sequence[int], used: frozenset[ViewKey] | set[ViewKey]
) -> list[str]:
    """With height levels: the planar moves whose view at the current level is unused (reference order), then
    ``up`` / ``down`` where that level exists and its view here is unused; ``["back"]`` when nothing is left."""
    sector, level = current
    planar = [name for name in CANDIDATE_DIRECTIONS if (target_sector(sector, name), level) not in used]
    vertical = [
        name
        for name in HEIGHT_DIRECTIONS
        if level + LEVEL_DIRECTIONS[name] in levels and (sector, level + LEVEL_DIRECTIONS[name]) not in used
    ]
    return planar + vertical or [EMPTY_ALLOWED_FALLBACK]


def allowed_view_directions_text(offered: Sequence[str]) -> str:
    """The ``{allowed_directions}`` slot with height levels (the ``["back"]`` fallback rendered as on a ring)."""
    return EMPTY_ALLOWED_TEXT if list(offered) == [EMPTY_ALLOWED_FALLBACK] else list_text(offered)


def visited_view_names(
    current: ViewKey, visited: frozenset[ViewKey] | set[ViewKey], geometry: SectorGeometry | None
) -> list[str]:
    """Visited views named from the current one: the planar name, with the height when it is another level
    ("back (above)"); the current level first, nearest-left first within a level, no duplicates."""
    sector, level = current
    named = sorted(
        (
            abs(view_level - level),
            -view_level,
            (view_sector - sector) % SECTOR_COUNT,
            relative_direction_by_geometry(geometry, sector, view_sector)
            + ("" if view_level == level else f" ({_level_label(view_level)})"),
        )
        for view_sector, view_level in visited
    )
    names: list[str] = []
    for *_, name in named:
        if name not in names:
            names.append(name)
    return names


def height_note_text(current_level: int, levels: Sequence[int]) -> str:
    """The ``{height_note}`` slot: "" for one level, else a line saying the camera height and the levels."""
    if len(set(levels)) <= 1:
        return ""
    names = ", ".join(_level_label(level) for level in sorted(set(levels)))
    return (
        f"\n- Camera height: {_level_label(current_level)} level (this place has views at: {names}); "
        '"up" and "down" change the height without walking round the object'
    )


def view_visibility_warning_text(
    current: ViewKey,
    view_visibility: Mapping[ViewKey, bool],
    geometry: SectorGeometry | None,
    failed_direction: str | None,
) -> str:
    """:func:`visibility_warning_text` with height levels: the trap block names each view's height."""
    sector, level = current
    blocks = []
    if any(visible is False for visible in view_visibility.values()):
        ordered = sorted(
            view_visibility,
            key=lambda view: (abs(view[1] - level), -view[1], (view[0] - sector) % SECTOR_COUNT),
        )
        lines = ["Visibility warning (views taken so far):"]
        for view in ordered:
            name = relative_direction_by_geometry(geometry, sector, view[0])
            seen = "target visible" if view_visibility[view] else "target NOT visible (trap view)"
            lines.append(f"- {name} ({_level_label(view[1])}): {seen}")
        lines.append("Prefer directions away from the sides and heights where the target could not be seen.")
        blocks.append("\n".join(lines))
    if failed_direction:
        blocks.append(
            f'Navigation failure: the last move "{failed_direction}" was impossible because that view cannot be '
            "reached, so you are still at the same place. Pick a different direction."
        )
    return "\n\n".join(blocks)


def visibility_warning_text(
    current_sector: int,
    sector_visibility: Mapping[int, bool],
    geometry: SectorGeometry | None,
    failed_direction: str | None,
) -> str:
    """Warnings composed from privileged visibility flags and the last move's outcome; empty when nothing to
    say.

    The trap block appears only if some visited sector hid the target, and then lists every visited sector
    with a visibility record; the failure paragraph appears only if the previous move was refused.
    """
    blocks = []
    if any(visible is False for visible in sector_visibility.values()):
        ordered = sorted(sector_visibility, key=lambda sector: (sector - current_sector) % SECTOR_COUNT)
        lines = ["Visibility warning (views taken so far):"]
        for sector in ordered:
            name = relative_direction_by_geometry(geometry, current_sector, sector)
            seen = "target visible" if sector_visibility[sector] else "target NOT visible (trap view)"
            lines.append(f"- {name}: {seen}")
        lines.append("Prefer directions away from the sides where the target could not be seen.")
        blocks.append("\n".join(lines))
    if failed_direction:
        blocks.append(
            f'Navigation failure: the last move towards "{failed_direction}" was impossible because that '
            "side cannot be reached, so you are still at the same place. Pick a different direction."
        )
    return "\n\n".join(blocks)


@dataclass(frozen=True)
class ParsedDirection:
    """What the model asked for: the raw ``chosen_direction`` value and its canonical key (or None)."""

    raw_choice: str
    canonical: str | None
    parsed_json: bool


def parse_direction_response(response: str, height_moves: bool = False) -> ParsedDirection:
    """Read ``chosen_direction`` from the JSON between the first "{" and the last "}" of the answer.

    Unparsable text, a missing key or a non-text value fall back to "front" (which is never allowed, so the
    caller's seeded fallback then applies). The value is lower-cased, spaces become hyphens, and the first
    direction key contained in it (longest keys first) is its canonical form. With ``height_moves`` (an episode
    with levels) the whole value "up" or "down" (also "move_up" / "move up", E3VS's names) reads as that height
    move; it is never a substring match, and a one-level episode reads answers exactly as before.
    """
    start, end = response.find("{"), response.rfind("}")
    data: object = None
    if start != -1 and end > start:
        try:
            data = json.loads(response[start : end + 1])
        except json.JSONDecodeError:
            data = None
    parsed_json = isinstance(data, dict)
    raw = data.get("chosen_direction", DEFAULT_CHOICE) if isinstance(data, dict) else DEFAULT_CHOICE
    if not isinstance(raw, str):
        raw = DEFAULT_CHOICE
    cleaned = raw.strip().lower().replace(" ", "-")
    if height_moves:
        height = cleaned.replace("_", "-").removeprefix("move-")
        if height in HEIGHT_DIRECTIONS:
            return ParsedDirection(raw_choice=raw, canonical=height, parsed_json=parsed_json)
    canonical = next((key for key in MATCH_KEYS if key in cleaned), None)
    return ParsedDirection(raw_choice=raw, canonical=canonical, parsed_json=parsed_json)


def resolve_direction(
    parsed: ParsedDirection, offered: Sequence[str], rng: random.Random
) -> tuple[str, bool]:
    """The direction to use and whether it came from the fallback (uniform over ``offered``, private RNG)."""
    if parsed.canonical is not None and parsed.canonical in offered:
        return parsed.canonical, False
    return rng.choice(list(offered)), True
