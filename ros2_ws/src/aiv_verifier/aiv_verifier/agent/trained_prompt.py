"""The trained agent's prompt: the template file, and the state it is filled from (spec §7.1).

Wording lives in a text file (``prompts/trained_agent.txt`` by default, ``trained.prompt_file`` otherwise)
because the released checkpoints were trained on the reference's own sentences: a user reproduces a paper run
by pointing the parameter at a file holding those, without touching code. The file has named sections, each
introduced by a line ``[[name]]``; a section's text is everything up to the line before the next marker, taken
verbatim (leading blank lines included, so a section can say how it joins the text before it). Lines before
the first marker are comments. Sections:

``system``               the system message ("" = send none);
``user``                 the user message, with the slots {target} {category} {visited} {remaining}
                         {available} {warning} {history};
``warning_unreachable``  the warning after a refused move, slot {direction} (the refused direction);
``warning_trap``         the warning when the current view does not show the target clearly;
``history``              the block of previous observations, slot {lines};
``history_line``         one previous step, slots {step} {position} {verification} {action}.

Only the named slots are replaced; any other brace stays as written.

Every direction in the prompt is relative to the current pose (the current sector is "front"), by index
arithmetic on the virtual sectors as in the reference's training data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aiv_dataset.vocabulary import DIRECTIONS, relative_direction

from ..core.nbv_prompt import PROMPTS_DIR, load_prompt_template

DEFAULT_PROMPT_FILE = PROMPTS_DIR / "trained_agent.txt"
SECTIONS: Mapping[str, tuple[str, ...]] = {
    "system": (),
    "user": ("target", "category", "visited", "remaining", "available", "warning", "history"),
    "warning_unreachable": ("direction",),
    "warning_trap": (),
    "history": ("lines",),
    "history_line": ("step", "position", "verification", "action"),
}
_MARKER = re.compile(r"^\[\[([a-z_]+)\]\]\s*$")
NO_SECTORS = "none"
"""What the available list shows when every direction is used up."""


def _fill(text: str, slots: Mapping[str, str]) -> str:
    if not slots:
        return text
    pattern = re.compile(r"\{(" + "|".join(re.escape(name) for name in slots) + r")\}")
    return pattern.sub(lambda match: slots[match.group(1)], text)


@dataclass(frozen=True)
class TrainedPromptTemplate:
    """The sections of a prompt file, checked: every section present, no unknown section or slot missing
    from the user message (a template that never shows the target would run and answer garbage)."""

    sections: Mapping[str, str]
    source: str

    @classmethod
    def load(cls, path: str | Path = "") -> TrainedPromptTemplate:
        """Read ``path`` ("" = the package's own wording); a missing, empty or malformed file is a ValueError
        (FileNotFoundError for a missing one) naming the file and what is wrong."""
        file = Path(path) if str(path) else DEFAULT_PROMPT_FILE
        return cls.parse(load_prompt_template(file, "trained agent"), str(file))

    @classmethod
    def parse(cls, text: str, source: str = "<text>") -> TrainedPromptTemplate:
        sections: dict[str, list[str]] = {}
        current: list[str] | None = None
        for line in text.split("\n"):
            marker = _MARKER.match(line)
            if marker is not None:
                name = marker.group(1)
                if name not in SECTIONS:
                    raise ValueError(f"{source}: unknown section [[{name}]]; expected {list(SECTIONS)}")
                if name in sections:
                    raise ValueError(f"{source}: section [[{name}]] appears twice")
                current = sections[name] = []
            elif current is not None:
                current.append(line)
        missing = [name for name in SECTIONS if name not in sections]
        if missing:
            raise ValueError(f"{source}: missing section(s) {['[[' + name + ']]' for name in missing]}")
        bodies = {name: "\n".join(lines).rstrip("\n") for name, lines in sections.items()}
        for name in ("target", "category", "remaining"):
            if "{" + name + "}" not in bodies["user"]:
                raise ValueError(f"{source}: the [[user]] section has no {{{name}}} slot")
        return cls(bodies, source)

    def section(self, name: str, **slots: str) -> str:
        unknown = set(slots) - set(SECTIONS[name])
        if unknown:
            raise KeyError(f"section {name!r} has no slot(s) {sorted(unknown)}")
        return _fill(self.sections[name], slots)

    @property
    def system(self) -> str:
        return self.sections["system"].strip()


@dataclass(frozen=True)
class HistoryEntry:
    """One earlier step: where it was taken, what the model said, and where it asked to go (absolute
    virtual sectors; named relative to the pose at the time the prompt is written)."""

    sector: int
    verification: str
    target_sector: int | None
    raw_action: str


@dataclass(frozen=True)
class PromptState:
    """Everything of the episode that the user message shows, for one step."""

    descriptions: Sequence[str]
    category: str
    current_sector: int
    visited: frozenset[int]  # observed sectors and refused targets
    remaining_steps: int  # T - s - 1
    history: Sequence[HistoryEntry]
    failed_direction: str | None  # the previous move was refused: its direction
    target_visible: bool | None  # privileged flag of the current view (None: unknown)


def target_text(descriptions: Sequence[str]) -> str:
    return "; ".join(descriptions)


def visited_names(current_sector: int, visited: frozenset[int]) -> list[str]:
    """Visited sectors by virtual index, each named relative to the current one (which is "front")."""
    return [relative_direction(current_sector, sector) for sector in sorted(visited)]


def available_names(current_sector: int, visited: frozenset[int]) -> list[str]:
    """The direction names whose sector is neither visited nor refused, in the names' order."""
    return [
        name
        for offset, name in enumerate(DIRECTIONS)
        if (current_sector + offset) % len(DIRECTIONS) not in visited
    ]


def bracket_list(names: Sequence[str]) -> str:
    return ", ".join(names) if names else NO_SECTORS


def history_action(entry: HistoryEntry, current_sector: int) -> str:
    if entry.target_sector is None:
        return entry.raw_action
    return f"MOVE {relative_direction(current_sector, entry.target_sector)}"


def warning_text(template: TrainedPromptTemplate, state: PromptState) -> str:
    """At most one warning: a refused move first, else a view that does not show the target (spec §3.8)."""
    if state.failed_direction:
        return template.section("warning_unreachable", direction=state.failed_direction)
    if state.target_visible is False:
        return template.section("warning_trap")
    return ""


def history_text(template: TrainedPromptTemplate, state: PromptState) -> str:
    if not state.history:
        return ""
    lines = [
        template.section(
            "history_line",
            step=str(number),
            position=relative_direction(state.current_sector, entry.sector),
            verification=entry.verification,
            action=history_action(entry, state.current_sector),
        )
        for number, entry in enumerate(state.history, start=1)
    ]
    return template.section("history", lines="\n".join(lines))


def user_message(template: TrainedPromptTemplate, state: PromptState) -> str:
    return template.section(
        "user",
        target=target_text(state.descriptions),
        category=state.category,
        visited=bracket_list(visited_names(state.current_sector, state.visited)),
        remaining=str(state.remaining_steps),
        available=bracket_list(available_names(state.current_sector, state.visited)),
        warning=warning_text(template, state),
        history=history_text(template, state),
    )


__all__ = [
    "DEFAULT_PROMPT_FILE",
    "NO_SECTORS",
    "SECTIONS",
    "HistoryEntry",
    "PromptState",
    "TrainedPromptTemplate",
    "available_names",
    "history_text",
    "user_message",
    "visited_names",
    "warning_text",
]
