"""Reading the trained agent's reply and turning it into an episode action (spec §7.2).

The released checkpoints answer ``<think>…</think>`` then ``<answer>\\nverification: …\\naction: …\\n</answer>``;
a model that strays from the format (a base model, a short generation budget) still has to give the episode an
action, so the reference reads what it can: the ``<answer>`` block's ``key: value`` lines when there is one,
else the first ``MOVE <direction>`` / ``STOP`` in the text and a does-(not-)match phrase. The mapping from
that to a decision or a move is a pure function of the parsed reply and whether the step is the last one, so
every rule can be pinned by a test without a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from aiv_dataset.vocabulary import DIRECTIONS

from ..core.types import Decision, decision_from_answer_text

DEFAULT_VERIFICATION = "Unsure"
DEFAULT_ACTION = "STOP"
STAY_DIRECTION = "front"
"""Where a MOVE without a readable direction goes: stay in place (the environment's successful no-op)."""

_ANSWER_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
# Longest names first in the alternation, so "MOVE back-left" is not read as "MOVE back".
_NAMES_LONGEST_FIRST: tuple[str, ...] = tuple(sorted(DIRECTIONS, key=lambda name: (-len(name), name)))
_FUZZY_ACTION = re.compile(
    r"\bMOVE\s+(" + "|".join(re.escape(name) for name in _NAMES_LONGEST_FIRST) + r")\b|\bSTOP\b",
    re.IGNORECASE,
)

#: Short forms a model writes for a direction when the full name is missing (checked after the names).
DIRECTION_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "left": "front-left",
        "right": "front-right",
        "fl": "front-left",
        "fr": "front-right",
        "bl": "back-left",
        "br": "back-right",
    }
)

#: Phrases that make a reply without an ``<answer>`` block a No (checked first) or a Yes.
MISMATCH_PHRASES: tuple[str, ...] = (
    "does not match",
    "doesn't match",
    "do not match",
    "not the target",
    "not match",
    "mismatch",
    "verification: no",
)
MATCH_PHRASES: tuple[str, ...] = (
    "matches the target",
    "matches the description",
    "is the target",
    "it matches",
    "verification: yes",
)


@dataclass(frozen=True)
class ParsedReply:
    """The two fields of a reply as text, and whether they came from an ``<answer>`` block."""

    verification: str
    action: str
    structured: bool


def _answer_fields(block: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in block.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = value.strip()
    return fields


def parse_reply(text: str) -> ParsedReply:
    """Verification and action text of a reply; missing fields take the defaults (Unsure, STOP)."""
    block = _ANSWER_BLOCK.search(text)
    if block is not None:
        fields = _answer_fields(block.group(1))
        return ParsedReply(
            verification=fields.get("verification", DEFAULT_VERIFICATION),
            action=fields.get("action", DEFAULT_ACTION),
            structured=True,
        )
    action = DEFAULT_ACTION
    found = _FUZZY_ACTION.search(text)
    if found is not None:
        action = f"MOVE {found.group(1).lower()}" if found.group(1) else "STOP"
    lowered = text.lower()
    verification = DEFAULT_VERIFICATION
    if any(phrase in lowered for phrase in MISMATCH_PHRASES):
        verification = "No"
    elif any(phrase in lowered for phrase in MATCH_PHRASES):
        verification = "Yes"
    return ParsedReply(verification=verification, action=action, structured=False)


class ActionKind(str, Enum):
    STOP = "stop"
    MOVE = "move"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class MappedAction:
    """What the episode does with a reply.

    ``decision`` is Yes/No when the step answers (STOP, the last step, or an unreadable action) and Unsure
    when it moves to ``direction``; ``step_prediction`` is the answer it would give if forced now;
    ``verification`` is the reply's own verdict, normalised.
    """

    kind: ActionKind
    verification: Decision
    decision: Decision
    step_prediction: Decision
    direction: str | None
    final_step: bool


def move_direction(argument: str) -> str:
    """The direction of ``MOVE <argument>``: the exact name, else the longest name it contains, else a short
    form (left, right, fl, fr, bl, br), else "front" (stay)."""
    text = argument.strip().lower()
    if text in DIRECTIONS:
        return text
    for name in _NAMES_LONGEST_FIRST:
        if name in text:
            return name
    for token in [text, *re.split(r"[^a-z]+", text)]:
        if token in DIRECTION_ALIASES:
            return DIRECTION_ALIASES[token]
    return STAY_DIRECTION


def map_action(reply: ParsedReply, remaining_steps: int) -> MappedAction:
    """Spec §7.2: STOP or the last step (``remaining_steps <= 0``) answers with the verification (Unsure
    counts as No); MOVE moves; any other action answers No."""
    verification = decision_from_answer_text(reply.verification)
    action = reply.action.strip()
    final = remaining_steps <= 0
    if action.upper().startswith("STOP") or final:
        decision = verification.committed()
        return MappedAction(ActionKind.STOP, verification, decision, decision, None, final)
    if action.upper().startswith("MOVE"):
        forced = Decision.YES if verification is Decision.YES else Decision.NO
        direction = move_direction(action[len("MOVE") :])
        return MappedAction(ActionKind.MOVE, verification, Decision.UNSURE, forced, direction, final)
    return MappedAction(ActionKind.UNKNOWN, verification, Decision.NO, Decision.NO, None, final)


__all__ = [
    "DIRECTION_ALIASES",
    "MATCH_PHRASES",
    "MISMATCH_PHRASES",
    "STAY_DIRECTION",
    "ActionKind",
    "MappedAction",
    "ParsedReply",
    "map_action",
    "move_direction",
    "parse_reply",
]
