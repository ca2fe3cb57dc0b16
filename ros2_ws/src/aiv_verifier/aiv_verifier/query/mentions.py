"""Mentions: one attribute as one place of one description states it, and how repeated mentions merge.

The decomposer (:mod:`.rules`) reads every description on its own; the same attribute is often stated in
more than one description ("light blue" and "sky blue"). :func:`merge_mentions` makes one attribute of them
(the rules are in the :mod:`.rules` docstring, "Merging across descriptions"); the weights say how
discriminative each kind of attribute is between instances of the same class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WEIGHT_TEXT = 3
WEIGHT_LOGO = 3
WEIGHT_BARE_LOGO = 2
WEIGHT_PATTERN = 3
WEIGHT_COLOUR = 2
WEIGHT_COUNT = 2
WEIGHT_SHAPE = 2
WEIGHT_MATERIAL = 1
WEIGHT_PART = 1
WEIGHT_ABSENCE = 1

_QUALIFIABLE_BASES = ("pattern", "logo", "text")


@dataclass
class Mention:
    """One attribute as stated in one place of one description (before merging)."""

    name: str
    type: str
    weight: int
    description: int
    start: int
    end: int
    evidence: str
    signature: frozenset[str]
    positive: bool = True
    tokens: int = 1

    @property
    def order(self) -> tuple[int, int, int]:
        return (self.description, self.start, self.end)


# --- merging ---------------------------------------------------------------------------------------------------


def _compatible(a: frozenset[str], b: frozenset[str]) -> bool:
    return a <= b or b <= a


def merge_mentions(mentions: Sequence[Mention]) -> list[Mention]:
    """Merge repeated mentions (see module docstring) and return one representative per attribute."""
    richness: dict[int, int] = {}
    for mention in mentions:
        richness[mention.description] = richness.get(mention.description, 0) + 1

    def specificity(mention: Mention) -> tuple[int, int, int, int, int]:
        return (
            -len(mention.signature),
            -richness.get(mention.description, 0),
            -mention.tokens,
            mention.description,
            mention.start,
        )

    groups: dict[tuple[str, bool], list[list[Mention]]] = {}
    for mention in sorted(mentions, key=specificity):
        bucket = groups.setdefault((mention.name, mention.positive), [])
        for group in bucket:
            if _compatible(group[0].signature, mention.signature):
                group.append(mention)
                break
        else:
            bucket.append([mention])

    # An unqualified pattern/logo/text merges into the one part-qualified attribute it agrees with.
    for base in _QUALIFIABLE_BASES:
        for positive in (True, False):
            plain = groups.get((base, positive))
            if not plain:
                continue
            qualified = [
                group
                for (name, pos), bucket in groups.items()
                if pos == positive and name.endswith(f"_{base}")
                for group in bucket
            ]
            remaining = []
            for group in plain:
                targets = [
                    target for target in qualified if _compatible(target[0].signature, group[0].signature)
                ]
                if len(targets) == 1:
                    targets[0].extend(group)
                    targets[0].sort(key=specificity)
                    if targets[0][0].name != targets[0][-1].name or targets[0][0].name == base:
                        # keep the part-qualified name with the most specific qualified evidence
                        qualified_members = [m for m in targets[0] if m.name != base]
                        best = qualified_members[0]
                        targets[0].remove(best)
                        targets[0].insert(0, best)
                else:
                    remaining.append(group)
            groups[(base, positive)] = remaining

    merged: list[tuple[tuple[int, int, int], Mention]] = []
    for bucket in groups.values():
        for group in bucket:
            representative = group[0]
            first_seen = min(member.order for member in group)
            merged.append((first_seen, representative))
    merged.sort(key=lambda item: item[0])
    return [mention for _, mention in merged]
