"""What a next-best-view strategy is asked and what it answers (:mod:`.nbv` holds the strategies).

:class:`NbvRequest` gathers everything a strategy may look at for one decision, :class:`NbvChoice` the move it
asks for; both speak of (sector, level) views (:mod:`.view_sphere`) and reduce to the benchmark's sectors on a
one-level episode. Kept apart from the strategies so that code that builds requests (the policy bookkeeping,
the uncertainty strategy) needs no strategy module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
from aiv_dataset.vocabulary import SECTOR_COUNT

from .evidential import EvidenceLedger, EvidentialPolicy
from .nbv_prompt import AttributeStatus
from .sector_geometry import SectorGeometry
from .view_sphere import View, candidate_views, is_multi_level

DEFAULT_BASE_SEED = 42
QUERY_MODES = ("attribute", "direct")


@dataclass(frozen=True)
class NbvRequest:
    """Everything a strategy may look at for one decision.

    ``visited`` must already include failed targets (see policy bookkeeping). The fields after ``geometry``
    are only read by the LLM strategy: the scene image, the query, reconciled attribute states, privileged
    per-sector visibility of visited sectors (for the trap warning) and the direction of a move refused on the
    previous step.
    """

    episode_key: str
    step: int
    current_sector: int
    visited: frozenset[int]
    failed: frozenset[int] = frozenset()
    geometry: SectorGeometry | None = None
    scene_image: np.ndarray | None = None
    descriptions: tuple[str, ...] = ()
    object_category: str = ""
    query_mode: str = "attribute"
    attributes: tuple[AttributeStatus, ...] = ()
    sector_visibility: Mapping[int, bool] = field(default_factory=dict)
    failed_direction: str | None = None
    evidence: EvidenceLedger | None = None
    """The episode's evidential opinions (uncertainty strategy; None when the session keeps none)."""
    evidence_policy: EvidentialPolicy | None = None
    current_level: int = 0
    """Camera height level of the current view (0: eye level)."""
    levels: tuple[int, ...] = (0,)
    """The levels this episode has views at; more than one makes ``up`` / ``down`` candidates."""
    visited_views: frozenset[View] = frozenset()
    """(sector, level) views observed or refused; ``visited`` / ``failed`` are the sectors used up at the
    current level (what the planar moves are judged against, as on one ring)."""
    failed_views: frozenset[View] = frozenset()
    view_visibility: Mapping[View, bool] = field(default_factory=dict)
    """Privileged mask flag per visited view (the LLM trap warning with levels)."""

    def __post_init__(self) -> None:
        if not 0 <= self.current_sector < SECTOR_COUNT:
            raise ValueError(f"current_sector must lie in 0..{SECTOR_COUNT - 1}, got {self.current_sector}")
        if self.query_mode not in QUERY_MODES:
            raise ValueError(f"query_mode must be one of {QUERY_MODES}, got {self.query_mode!r}")

    @property
    def multi_level(self) -> bool:
        return is_multi_level(self.levels)

    @property
    def current_view(self) -> View:
        return (self.current_sector, self.current_level)

    @property
    def used_views(self) -> frozenset[View]:
        """Views no strategy picks: visited or refused (the current level's sector sets included)."""
        level = self.current_level
        return (
            self.visited_views
            | self.failed_views
            | {(sector, level) for sector in self.visited | self.failed}
            | {self.current_view}
        )

    def candidate_views(self) -> list[View]:
        return candidate_views(self.current_view, self.levels, self.used_views)


@dataclass(frozen=True)
class NbvChoice:
    """The move to request: relative direction name (or ``up`` / ``down``), the virtual sector and height level
    it aims at, and why."""

    direction: str
    target_index: int
    reason: str
    debug: dict[str, Any] = field(default_factory=dict)
    target_level: int = 0

    @property
    def target_view(self) -> View:
        return (self.target_index, self.target_level)


class NbvStrategy(Protocol):
    name: ClassVar[str]

    def choose(self, request: NbvRequest) -> NbvChoice: ...
