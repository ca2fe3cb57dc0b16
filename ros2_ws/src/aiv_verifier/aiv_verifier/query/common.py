"""Post-processing shared by every attribute source (spec §5.3): drop unusable evidence, rename duplicates."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from ..core.types import Attribute

UNUSABLE_EVIDENCE: frozenset[str] = frozenset({"unknown", "unspecified", "not mentioned", "n/a", "none"})
"""Evidence values the reference drops (compared after stripping and lower-casing)."""


def is_unusable_evidence(evidence: object) -> bool:
    """Empty (or whitespace) evidence, or one of :data:`UNUSABLE_EVIDENCE`."""
    if not isinstance(evidence, str):
        return True
    text = evidence.strip()
    return not text or text.lower() in UNUSABLE_EVIDENCE


def drop_unusable(attributes: Iterable[Attribute]) -> list[Attribute]:
    return [attribute for attribute in attributes if not is_unusable_evidence(attribute.evidence_phrase)]


def rename_duplicates(attributes: Sequence[Attribute]) -> tuple[Attribute, ...]:
    """Every name that occurs more than once becomes ``name_1, name_2, ...`` in list order (the first one too).

    A generated name that is already taken by another attribute is skipped (``color_1`` present ⇒ the
    duplicates of ``color`` become ``color_2, color_3``), so the result always has unique names, which the
    tracker needs. Nothing is dropped and nothing is truncated.
    """
    counts = Counter(attribute.name for attribute in attributes)
    taken = {name for name, count in counts.items() if count == 1}
    next_suffix: dict[str, int] = {}
    renamed: list[Attribute] = []
    for attribute in attributes:
        name = attribute.name
        if counts[name] > 1:
            suffix = next_suffix.get(name, 1)
            while f"{name}_{suffix}" in taken:
                suffix += 1
            new_name = f"{name}_{suffix}"
            next_suffix[name] = suffix + 1
            taken.add(new_name)
            attribute = Attribute(new_name, attribute.type, attribute.weight, attribute.evidence_phrase)
        renamed.append(attribute)
    return tuple(renamed)
