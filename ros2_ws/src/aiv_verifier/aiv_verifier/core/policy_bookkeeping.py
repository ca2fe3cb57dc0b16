"""Per-episode bookkeeping the policy does before perception on every step (spec §5.9).

It keeps the NBV strategies from re-requesting sectors that are used up (visited or refused), tells the caller
when the observation merely repeats the previous image after a refused move (so the tracker must not count it
twice), assigns tracker view ids, and remembers the privileged visibility flag of each visited sector for the
LLM-NBV trap warning. One instance per episode.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from aiv_dataset.vocabulary import SECTOR_COUNT


@dataclass(frozen=True)
class StepBookkeeping:
    """What the policy needs to know about the observation it is about to process.

    ``is_duplicate``: the previous move was refused, the image is the one already processed; verify if you
    like, but do not update the tracker. ``newly_failed``: the refused target now counted as visited and
    failed. ``failed_direction``: the refused move's direction, for the next prompt's failure notice.
    """

    current_sector: int
    view_id: int
    is_duplicate: bool
    newly_failed: int | None
    failed_direction: str | None


class EpisodeBookkeeping:
    """Visited / failed sectors, the pending NBV target, distinct views and per-sector visibility."""

    def __init__(self) -> None:
        self._visited: set[int] = set()
        self._failed: set[int] = set()
        self._current: int | None = None
        self._pending_target: int | None = None
        self._pending_direction: str | None = None
        self._visibility: dict[int, bool] = {}
        self._view_keys: list[Hashable] = []

    @property
    def visited(self) -> frozenset[int]:
        """Sectors observed or refused; NBV strategies never pick these."""
        return frozenset(self._visited)

    @property
    def failed(self) -> frozenset[int]:
        return frozenset(self._failed)

    @property
    def current_sector(self) -> int | None:
        return self._current

    @property
    def pending_target(self) -> int | None:
        return self._pending_target

    @property
    def sector_visibility(self) -> Mapping[int, bool]:
        """Privileged GT flag (mask over threshold) per visited sector, when the caller supplied it."""
        return MappingProxyType(self._visibility)

    def begin_step(
        self,
        current_sector: int,
        navigation_failed: bool,
        target_visible: bool | None = None,
        image_key: Hashable | None = None,
    ) -> StepBookkeeping:
        """Account for the observation of this step, before any perception runs.

        A refused move turns the pending target into a failed-and-visited sector and marks this step a
        duplicate. ``image_key`` identifies the image for view ids (default: the sector, which maps to one
        capture); ``target_visible`` is the privileged visibility flag of the observed capture, if known.
        """
        if not 0 <= current_sector < SECTOR_COUNT:
            raise ValueError(f"current_sector must lie in 0..{SECTOR_COUNT - 1}, got {current_sector}")
        newly_failed = None
        failed_direction = None
        if navigation_failed:
            failed_direction = self._pending_direction
            if self._pending_target is not None:
                newly_failed = self._pending_target
                self._failed.add(newly_failed)
                self._visited.add(newly_failed)
        self._pending_target = None
        self._pending_direction = None

        self._current = current_sector
        self._visited.add(current_sector)
        if target_visible is not None:
            self._visibility[current_sector] = bool(target_visible)

        key = current_sector if image_key is None else image_key
        if key not in self._view_keys:
            self._view_keys.append(key)
        return StepBookkeeping(
            current_sector=current_sector,
            view_id=self._view_keys.index(key),
            is_duplicate=navigation_failed,
            newly_failed=newly_failed,
            failed_direction=failed_direction,
        )

    def set_pending_move(self, target_index: int, direction: str) -> None:
        """Remember the NBV target requested this step, so a refusal can be charged to it next step."""
        if not 0 <= target_index < SECTOR_COUNT:
            raise ValueError(f"target_index must lie in 0..{SECTOR_COUNT - 1}, got {target_index}")
        self._pending_target = target_index
        self._pending_direction = direction
