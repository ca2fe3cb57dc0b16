"""Per-episode bookkeeping the policy does before perception on every step (spec §5.9).

It keeps the NBV strategies from re-requesting sectors that are used up (visited or refused), tells the caller
when the observation merely repeats the previous image after a refused move (so the tracker must not count it
twice), assigns tracker view ids, and remembers the privileged visibility flag of each visited sector for the
LLM-NBV trap warning. One instance per episode.

With camera height levels a view is a (sector, level) pair: visited and refused views are kept as such, the
sector sets (:attr:`EpisodeBookkeeping.visited`, :attr:`~EpisodeBookkeeping.failed`,
:attr:`~EpisodeBookkeeping.sector_visibility`) are those of the current level -- what the planar moves are
judged against, and everything there is in a one-level episode, where the rules above are unchanged.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from aiv_dataset.vocabulary import SECTOR_COUNT

View = tuple[int, int]


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
    current_level: int = 0
    newly_failed_level: int = 0  # the level of the refused view (``newly_failed`` is its sector)


class EpisodeBookkeeping:
    """Visited / failed views, the pending NBV target, distinct views and per-view visibility."""

    def __init__(self) -> None:
        self._visited: set[View] = set()
        self._failed: set[View] = set()
        self._current: int | None = None
        self._level = 0
        self._pending_target: View | None = None
        self._pending_direction: str | None = None
        self._visibility: dict[View, bool] = {}
        self._view_keys: list[Hashable] = []

    @property
    def visited(self) -> frozenset[int]:
        """Sectors observed or refused at the current level; NBV strategies never pick these."""
        return frozenset(sector for sector, level in self._visited if level == self._level)

    @property
    def failed(self) -> frozenset[int]:
        return frozenset(sector for sector, level in self._failed if level == self._level)

    @property
    def visited_views(self) -> frozenset[View]:
        """(sector, level) views observed or refused, at every level."""
        return frozenset(self._visited)

    @property
    def failed_views(self) -> frozenset[View]:
        return frozenset(self._failed)

    @property
    def current_level(self) -> int:
        return self._level

    @property
    def view_visibility(self) -> Mapping[View, bool]:
        """Privileged GT flag per visited (sector, level) view, when the caller supplied it."""
        return MappingProxyType(self._visibility)

    @property
    def current_sector(self) -> int | None:
        return self._current

    @property
    def pending_target(self) -> int | None:
        return None if self._pending_target is None else self._pending_target[0]

    @property
    def sector_visibility(self) -> Mapping[int, bool]:
        """Privileged GT flag (mask over threshold) per visited sector of the current level, when the caller
        supplied it."""
        return MappingProxyType(
            {sector: flag for (sector, level), flag in self._visibility.items() if level == self._level}
        )

    def begin_step(
        self,
        current_sector: int,
        navigation_failed: bool,
        target_visible: bool | None = None,
        image_key: Hashable | None = None,
        current_level: int = 0,
    ) -> StepBookkeeping:
        """Account for the observation of this step, before any perception runs.

        A refused move turns the pending target into a failed-and-visited sector and marks this step a
        duplicate. ``image_key`` identifies the image for view ids (default: the sector, which maps to one
        capture, or the (sector, level) view at another level); ``target_visible`` is the privileged visibility
        flag of the observed capture, if known; ``current_level`` the view's height level.
        """
        if not 0 <= current_sector < SECTOR_COUNT:
            raise ValueError(f"current_sector must lie in 0..{SECTOR_COUNT - 1}, got {current_sector}")
        newly_failed: View | None = None
        failed_direction = None
        if navigation_failed:
            failed_direction = self._pending_direction
            if self._pending_target is not None:
                newly_failed = self._pending_target
                self._failed.add(newly_failed)
                self._visited.add(newly_failed)
        self._pending_target = None
        self._pending_direction = None

        view = (current_sector, current_level)
        self._current = current_sector
        self._level = current_level
        self._visited.add(view)
        if target_visible is not None:
            self._visibility[view] = bool(target_visible)

        if image_key is not None:
            key: Hashable = image_key
        else:
            key = current_sector if current_level == 0 else view
        if key not in self._view_keys:
            self._view_keys.append(key)
        return StepBookkeeping(
            current_sector=current_sector,
            view_id=self._view_keys.index(key),
            is_duplicate=navigation_failed,
            newly_failed=None if newly_failed is None else newly_failed[0],
            failed_direction=failed_direction,
            current_level=current_level,
            newly_failed_level=0 if newly_failed is None else newly_failed[1],
        )

    def set_pending_move(self, target_index: int, direction: str, target_level: int | None = None) -> None:
        """Remember the NBV target requested this step (sector, and level: the current one unless given), so a
        refusal can be charged to that view next step."""
        if not 0 <= target_index < SECTOR_COUNT:
            raise ValueError(f"target_index must lie in 0..{SECTOR_COUNT - 1}, got {target_index}")
        self._pending_target = (target_index, self._level if target_level is None else target_level)
        self._pending_direction = direction
