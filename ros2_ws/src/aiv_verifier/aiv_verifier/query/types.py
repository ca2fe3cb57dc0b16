"""What query understanding hands to the rest of the agent, and the interface every implementation offers.

A :class:`QuerySpec` is computed once per request (first view) and fixed for the episode: the category used
as detector text and in prompts, and the attributes the per-view verifier checks at every step. In direct and
merged modes the "attributes" are whole descriptions (``desc_1..desc_3`` / ``merged_desc``, type ``other``),
which is exactly how the reference treats them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from ..core.types import Attribute


class QueryMode(str, Enum):
    """How descriptions become checkable items (spec §5.3)."""

    ATTRIBUTE = "attribute"
    DIRECT = "direct"
    MERGED = "merged"

    @classmethod
    def parse(cls, value: str) -> QueryMode:
        try:
            return cls(value.strip().lower())
        except ValueError:
            raise ValueError(
                f"unknown query mode {value!r}; expected one of {[mode.value for mode in cls]}"
            ) from None


@dataclass(frozen=True)
class QuerySpec:
    """The interpreted query.

    ``category_source`` says where the category came from: ``hint`` (caller), ``cache``, ``rules`` (keyword
    classifier), ``llm`` or ``fallback``. ``attribute_source`` likewise (``cache``, ``rules``, ``llm``,
    ``descriptions`` for direct mode, ``merged-cache`` / ``merged-llm`` / ``merged-join`` for merged mode).
    ``dialogues`` keeps raw model exchanges for the episode log (empty for the rule-based path). ``notes`` says
    what was noticed about the request without refusing it, one line each (a ``category_hint`` that the
    descriptions contradict); the verifier node logs them and puts them in the Verdict.
    """

    descriptions: tuple[str, ...]
    mode: QueryMode
    category: str
    category_source: str
    attributes: tuple[Attribute, ...]
    attribute_source: str
    dialogues: tuple[dict[str, str], ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = ()

    @property
    def attribute_names(self) -> tuple[str, ...]:
        return tuple(attribute.name for attribute in self.attributes)


class QueryInterpreter(Protocol):
    """Turns descriptions into a :class:`QuerySpec`; implementations must never raise on odd text.

    Empty descriptions are the caller's error (the node rejects such goals); anything else, however long or
    strange, yields a spec, possibly with zero attributes (then the agent can only fall back on the category).
    """

    def interpret(
        self, descriptions: Sequence[str], mode: QueryMode, category_hint: str = ""
    ) -> QuerySpec: ...
