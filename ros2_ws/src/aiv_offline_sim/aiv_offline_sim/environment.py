"""The PInVerify episode environment: ``reset(i)`` / ``step(action)`` over pre-captured views (spec §3).

Transitions are deterministic look-ups in the captured images, exactly as the reference ``PInVerifyEnv``:
the agent starts in a sector where the target is visible, each step either decides (Yes/No, episode over)
or asks to move in one of six relative directions, every step costs one unit of the budget, and the budget
running out forces an "Unsure" stop.

What differs from the reference is the *interface*, not the rules:

* Observations are typed (:class:`Observation`) and carry no ground truth. The reference hands every policy
  the full index record (label and pair type included) as ``obs["meta"]``; here the GT box, mask flags and
  pair labels reach the agent only through ``Observation.privileged``, which is filled only when the
  environment is built with ``privileged=True`` (the GT-box and oracle modes opt in; spec §9).
* ``StepInfo`` is for the caller (evaluator / sim node), not the agent: it says what happened
  (a :class:`~aiv_dataset.vocabulary.MoveOutcome`, trap flag, a readable warning) and tells "already
  visited" apart from "unreachable", which the reference lumps together (both still count as
  ``navigation_failed``).
* Misuse raises instead of misbehaving: stepping before ``reset`` or after the episode ended, or (with
  ``strict_directions=True``) a direction or decision string that is not one of the known names.
* The start-sector seed is selectable by name, because the reference seeds episode ``i`` of the list it was
  given with ``seed + i`` (§3.1), and what that list is depends on how it was launched (§3.3):
  ``"per_episode_fixed"`` (every episode seeded with ``seed``: the multi-GPU launcher runs each episode as a
  one-record slice, which is what produced the paper's numbers), ``"seed_plus_slice_index"`` (``seed + i -
  slice_start``: one ``evaluate.py`` process over ``+start_idx/+end_idx``, which counts ``i`` from the start of
  its slice) and ``"seed_plus_index"`` (``seed + i`` over the whole index: the same as the previous one only
  for a slice that starts at 0). ``reset`` takes the slice start for the policy that needs it.

Camera height levels (:mod:`aiv_dataset.levels`, issue #41) add a third coordinate to the agent's view: the state
is (virtual sector, level) and ``up`` / ``down`` move one level at the same sector. Planar directions resolve
exactly as the benchmark defines them among the views of the current level, and the level stays. A one-level
episode (every episode of today's datasets) plays exactly as before; there ``up`` / ``down`` are refused without
a step (``REJECTED``, :attr:`StepInfo.refusal`), because no move can ever serve them. ``height_levels="eye"``
drops every view of another level first, so the same episodes play as one-level episodes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from aiv_dataset.descriptions import DescriptionDB
from aiv_dataset.episode_checks import check_episode
from aiv_dataset.errors import DatasetError
from aiv_dataset.fields import Where, as_list, as_vector
from aiv_dataset.images import ImageRef
from aiv_dataset.index_records import PairRecord
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.levels import EYE_LEVEL, level_direction
from aiv_dataset.meta import CameraIntrinsics, Viewpoint, parse_viewpoint
from aiv_dataset.vocabulary import (
    SECTOR_COUNT,
    DirectionError,
    MoveOutcome,
    clean_direction,
    normalize_direction,
)

from .episode_types import (
    TRAP_WARNING,
    Action,
    EpisodeEnvError,
    EpisodeFinishedError,
    EpisodeNotStartedError,
    EpisodeTruth,
    InvalidActionError,
    LayoutEntry,
    LoadedEpisode,
    Observation,
    PrivilegedView,
    StepInfo,
    StepResult,
    compose_warning,
    one_level_refusal,
)
from .sector_map import LevelMaps, SectorMap, build_level_maps, resolve_level_move, resolve_move

#: Names of the start-sector seeding policies (see module docstring).
SEED_POLICIES: tuple[str, ...] = ("per_episode_fixed", "seed_plus_index", "seed_plus_slice_index")
#: Which view of a sector is shown when it has both.
VIEW_PRIORITIES: tuple[str, ...] = ("far", "near")
#: Decisions an action may carry; anything else is treated as "Unsure" unless strict.
DECISIONS: tuple[str, ...] = ("Yes", "No", "Unsure")
#: Which height levels an environment serves: every level the episode has, or eye level only.
HEIGHT_LEVEL_CHOICES: tuple[str, ...] = ("all", "eye")

_RGB_SCAN = re.compile(r"^rgb_s(\d+)_(far|near)\.png$")

#: The value types live in :mod:`.episode_types`; they are named here too because callers have always
#: imported them from the environment.
__all__ = [
    "DECISIONS",
    "HEIGHT_LEVEL_CHOICES",
    "SEED_POLICIES",
    "TRAP_WARNING",
    "VIEW_PRIORITIES",
    "Action",
    "EpisodeEnvError",
    "EpisodeFinishedError",
    "EpisodeNotStartedError",
    "EpisodeTruth",
    "InvalidActionError",
    "LayoutEntry",
    "LoadedEpisode",
    "Observation",
    "PInVerifyEnv",
    "PrivilegedView",
    "StepInfo",
    "StepResult",
    "compose_warning",
    "one_level_refusal",
]


@dataclass
class _EpisodeState:
    index: int
    seed: int
    record: PairRecord
    maps: LevelMaps
    file_order: tuple[Viewpoint, ...]
    episode_path: str
    intrinsics: CameraIntrinsics | None
    current: int  # capture index in the current level's map
    visited: set[tuple[int, int]]  # (virtual sector, level)
    level: int = EYE_LEVEL
    step: int = 0
    done: bool = False
    last_failed: bool = False
    last_failed_direction: str | None = None
    query_descriptions: tuple[str, ...] = ()
    history: list[StepInfo] = field(default_factory=list)

    @property
    def smap(self) -> SectorMap:
        """The current level's sector map (the only one of a one-level episode)."""
        return self.maps[self.level]

    @property
    def sector(self) -> int:
        return self.smap.capture_sector.get(self.current, -1)

    def visited_at(self, level: int) -> set[int]:
        """Sectors visited at ``level``: what the planar rules check, as in a one-level episode."""
        return {sector for sector, at in self.visited if at == level}


class PInVerifyEnv:
    """Episode environment over a list of pair records (one episode per record).

    Args:
        records: the pair index, in order; ``reset(i)`` plays ``records[i]``.
        dataset: where episodes, meta.json files and images are read from.
        max_steps: the budget T (6 for the reported multi-view runs, 1 for single view).
        sectors: number of virtual sectors (6).
        view_priority: "far" (reference) or "near": which view a sector shows when it has both.
        seed: base seed (42).
        seed_policy: one of :data:`SEED_POLICIES`.
        strict_directions: reject directions/decisions that are not exact names instead of normalising
            them the reference way (unknown direction -> "front", unknown decision -> "Unsure").
        privileged: fill ``Observation.privileged`` with ground truth.
        descriptions: if given, observations carry the query object's descriptions.
        seed_global_rngs: also re-seed Python's and NumPy's global RNGs at reset, as the reference does
            (some reference policies draw from them); off by default because it is a global side effect.
        height_levels: "all" serves every camera height level an episode has; "eye" drops the views of
            every other level before anything is built, so the same episodes play as one-level episodes
            (the eye-level-only side of a with/without-heights comparison).
    """

    def __init__(
        self,
        records: Sequence[PairRecord],
        dataset: PInVerifyDataset,
        *,
        max_steps: int = 6,
        sectors: int = SECTOR_COUNT,
        view_priority: str = "far",
        seed: int = 42,
        seed_policy: str = "per_episode_fixed",
        strict_directions: bool = False,
        privileged: bool = False,
        descriptions: DescriptionDB | None = None,
        seed_global_rngs: bool = False,
        height_levels: str = "all",
    ) -> None:
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        if not isinstance(sectors, int) or sectors < 1:
            raise ValueError(f"sectors must be a positive integer, got {sectors!r}")
        if view_priority not in VIEW_PRIORITIES:
            raise ValueError(f"view_priority must be one of {VIEW_PRIORITIES}, got {view_priority!r}")
        if seed_policy not in SEED_POLICIES:
            raise ValueError(f"seed_policy must be one of {SEED_POLICIES}, got {seed_policy!r}")
        if height_levels not in HEIGHT_LEVEL_CHOICES:
            raise ValueError(f"height_levels must be one of {HEIGHT_LEVEL_CHOICES}, got {height_levels!r}")
        self.records = list(records)
        self.dataset = dataset
        self.max_steps = max_steps
        self.sectors = sectors
        self.view_priority = view_priority
        self.seed = seed
        self.seed_policy = seed_policy
        self.strict_directions = strict_directions
        self.privileged = privileged
        self.descriptions = descriptions
        self.seed_global_rngs = seed_global_rngs
        self.height_levels = height_levels
        self._state: _EpisodeState | None = None
        self._last_load: tuple[int, PairRecord, LoadedEpisode] | None = None

    def __len__(self) -> int:
        return len(self.records)

    # -- public state ---------------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._state is not None

    @property
    def done(self) -> bool:
        return self._require_state().done

    @property
    def step_count(self) -> int:
        return self._require_state().step

    @property
    def current_sector(self) -> int:
        return self._require_state().sector

    @property
    def current_level(self) -> int:
        return self._require_state().level

    @property
    def visited_sectors(self) -> frozenset[int]:
        """Sectors visited at the current level (every visited sector of a one-level episode)."""
        state = self._require_state()
        return frozenset(state.visited_at(state.level))

    @property
    def visited_views(self) -> frozenset[tuple[int, int]]:
        """Every visited (sector, level)."""
        return frozenset(self._require_state().visited)

    @property
    def sector_map(self) -> SectorMap:
        """The eye-level sector map (the episode's whole map when it has one level)."""
        return self._require_state().maps.eye

    @property
    def level_maps(self) -> LevelMaps:
        """The sector map of every height level of the episode."""
        return self._require_state().maps

    @property
    def history(self) -> tuple[StepInfo, ...]:
        return tuple(self._require_state().history)

    @property
    def ground_truth(self) -> EpisodeTruth:
        """Labels of the current episode, for the evaluator (the agent never gets this object)."""
        state = self._require_state()
        return self._truth(state)

    def episode_seed(self, index: int, slice_start: int = 0) -> int:
        """Seed of episode ``index`` under the configured policy, for an evaluation whose slice starts at
        ``slice_start`` (only ``seed_plus_slice_index`` reads it)."""
        if self.seed_policy == "per_episode_fixed":
            return self.seed
        if self.seed_policy == "seed_plus_slice_index":
            if not 0 <= slice_start <= index:
                raise ValueError(
                    f"seed_policy seed_plus_slice_index: episode {index} is outside a slice starting at "
                    f"{slice_start}"
                )
            return self.seed + index - slice_start
        return self.seed + index

    # -- reset ----------------------------------------------------------------------------------------------

    def reset(self, index: int, *, slice_start: int = 0) -> Observation:
        """Start episode ``index`` of the record list and return its first observation.

        ``slice_start`` is the first index of the slice being evaluated; the ``seed_plus_slice_index`` policy
        seeds by the position within it (a ValueError when ``index`` lies before it), the others ignore it.
        Raises :class:`DatasetError` if the episode's files are broken (the caller can record that and move
        on to the next index; the environment stays usable): an episode whose meta.json is invalid, whose
        images are missing, unreadable or of another size than its ``camera_intrinsics``, or whose directory
        disagrees with its ids is refused here, before anything of it is observed.
        """
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise TypeError(f"episode index must be an integer, got {type(index).__name__}")
        index = int(index)
        if not 0 <= index < len(self.records):
            raise IndexError(f"episode index {index} out of range (0..{len(self.records) - 1})")
        seed = self.episode_seed(index, slice_start)
        if self.seed_global_rngs:
            np.random.seed(seed)
            random.seed(seed)
        record = self.records[index]
        self._state = None  # a failed reset must not leave the previous episode playable
        views, goal, intrinsics = self.load_episode(index)
        if self.height_levels == "eye":
            views = tuple(view for view in views if view.height_level == EYE_LEVEL)
        maps = build_level_maps(views, goal, self.sectors)
        smap = maps.eye
        if not smap.captures:
            raise DatasetError("episode has no captures to observe", path=record.meta_path, field="captures")
        start = self._choose_start(smap, seed)
        state = _EpisodeState(
            index=index,
            seed=seed,
            record=record,
            maps=maps,
            file_order=tuple(views),
            episode_path=record.episode_path,
            intrinsics=intrinsics,
            current=start,
            visited={(smap.capture_sector.get(start, -1), EYE_LEVEL)},
        )
        if self.descriptions is not None and record.query_object_id in self.descriptions:
            state.query_descriptions = self.descriptions[record.query_object_id].descriptions
        self._state = state
        return self._observe(state)

    def _choose_start(self, smap: SectorMap, seed: int) -> int:
        """Spec §3.3: uniform (legacy RandomState) choice among sectors whose shown capture is visible."""
        available = list(smap.available)
        valid = [
            sector
            for sector in available
            if smap.captures[smap.capture_for(sector, self.view_priority)].mask_meets_threshold  # type: ignore[index]
        ]
        if not valid:
            valid = available
        if not valid:
            return 0  # reference: no mappable capture -> the first capture of the sorted list
        start_sector = int(np.random.RandomState(seed).choice(valid))
        capture = smap.capture_for(start_sector, self.view_priority)
        assert capture is not None
        return capture

    def load_episode(self, index: int) -> LoadedEpisode:
        """Read and check the files of episode ``index`` without starting it; :class:`DatasetError` if broken.

        The checks (:func:`aiv_dataset.episode_checks.check_episode`: image headers against the intrinsics,
        directory against ids) run once per load, never per step. The last successful load is kept, so the
        ``reset`` that follows a check of the same episode (the in-process evaluator asks first, as the
        simulator's StartEpisode does) reads nothing again.
        """
        if not 0 <= index < len(self.records):
            raise IndexError(f"episode index {index} out of range (0..{len(self.records) - 1})")
        record = self.records[index]
        if self._last_load is not None and self._last_load[0] == index and self._last_load[1] is record:
            return self._last_load[2]
        loaded = LoadedEpisode(*self._load_captures(record))
        self._last_load = (index, record, loaded)
        return loaded

    def _load_captures(
        self, record: PairRecord
    ) -> tuple[tuple[Viewpoint, ...], tuple[float, ...] | None, CameraIntrinsics | None]:
        """Capture list, goal and intrinsics of an episode, from the first source that has them (spec §3.1):
        captures embedded in the record, else meta.json, else a scan of the rgb directory."""
        where = Where.of(f"<index record {record.scene}/{record.episode}>")
        embedded = record.extra.get("captures_meta") or record.extra.get("captures")
        if embedded:
            key = "captures_meta" if record.extra.get("captures_meta") else "captures"
            items = as_list(embedded, where.at(key))
            views = tuple(
                parse_viewpoint(item, where.at(key).at(i), list_position=i, generation="v1")
                for i, item in enumerate(items)
            )
            goal_raw = record.extra.get("goal_position_nominal")
            goal = None if goal_raw is None else as_vector(goal_raw, where.at("goal_position_nominal"), 3)
            return views, goal, None
        meta_file = self.dataset.root.resolve(record.meta_path, where=where.at("meta_path"))
        if meta_file.exists():
            episode = self.dataset.load_episode(record.episode_path, meta_path=record.meta_path)
            check_episode(episode)
            return episode.meta.env_views, episode.meta.goal_position, episode.meta.camera_intrinsics
        return self._scan_rgb_dir(record, where), None, None

    def _scan_rgb_dir(self, record: PairRecord, where: Where) -> tuple[Viewpoint, ...]:
        """Reference last resort: captures without positions, inferred from ``rgb_s{S}_{far|near}.png``."""
        rgb_dir = self.dataset.root.resolve(record.rgb_dir, where=where.at("rgb_dir"))
        if not rgb_dir.is_dir():
            raise DatasetError(
                "episode has neither a meta.json nor an rgb directory",
                path=record.meta_path,
                field="meta_path",
            )
        views: list[Viewpoint] = []
        for file in sorted(rgb_dir.iterdir()):
            match = _RGB_SCAN.match(file.name)
            if match:
                views.append(
                    Viewpoint(
                        list_position=len(views),
                        tag=None,
                        sector_index=int(match.group(1)),
                        view_type=match.group(2),
                        navigable=True,
                        mask_meets_threshold=True,
                        rgb=f"rgb/{file.name}",
                    )
                )
        return tuple(views)

    # -- step -----------------------------------------------------------------------------------------------

    def step(self, action: Action | Mapping[str, Any]) -> StepResult:
        """Apply one action (spec §3.5). Returns ``(observation, reward=0.0, done, info)``."""
        state = self._state
        if state is None:
            raise EpisodeNotStartedError("step() called before reset()")
        if state.done:
            raise EpisodeFinishedError(
                f"episode {state.index} is over (after {state.step} step(s)); call reset() to start another"
            )
        decision, raw_direction = self._parse_action(action)
        from_sector = state.sector
        from_level = state.level
        height_move = level_direction(raw_direction) if decision not in ("Yes", "No") else None
        if height_move is not None and state.maps.one_level:
            # Refused like a malformed request: nothing moved, no step spent, the episode goes on.
            info = StepInfo(
                state.step,
                "Unsure",
                MoveOutcome.REJECTED,
                requested_direction=raw_direction,
                direction=height_move,
                from_sector=from_sector,
                to_sector=from_sector,
                from_level=from_level,
                to_level=from_level,
                refusal=one_level_refusal(height_move),
            )
            return StepResult(self._observe(state), 0.0, state.done, info)
        state.step += 1

        if decision in ("Yes", "No"):
            state.done = True
            info = StepInfo(
                state.step,
                decision,
                MoveOutcome.DECIDED,
                from_sector=from_sector,
                to_sector=from_sector,
                from_level=from_level,
                to_level=from_level,
            )
        elif state.step >= self.max_steps:
            state.done = True
            info = StepInfo(
                state.step,
                "Unsure",
                MoveOutcome.REJECTED,
                requested_direction=raw_direction,
                from_sector=from_sector,
                to_sector=from_sector,
                from_level=from_level,
                to_level=from_level,
            )
        elif height_move is not None:
            info = self._change_level(state, raw_direction, height_move, from_sector)
        else:
            info = self._navigate(state, raw_direction, from_sector)
        state.history.append(info)
        return StepResult(self._observe(state), 0.0, state.done, info)

    def _parse_action(self, action: Action | Mapping[str, Any]) -> tuple[str, str]:
        if isinstance(action, Mapping):
            action = Action.from_mapping(action)
        if not isinstance(action, Action):
            raise InvalidActionError(f"expected an Action or a mapping, got {type(action).__name__}")
        decision = action.decision
        if not isinstance(decision, str):
            raise InvalidActionError(f"decision must be a string, got {type(decision).__name__}")
        if decision in ("Yes", "No"):
            return decision, action.nav_rel if isinstance(action.nav_rel, str) else ""
        if self.strict_directions and decision != "Unsure":
            raise InvalidActionError(f"unknown decision {decision!r}; expected one of {list(DECISIONS)}")
        direction = action.nav_rel
        if direction is None and not self.strict_directions:
            direction = "front"
        if not isinstance(direction, str):
            raise InvalidActionError(f"nav_rel must be a direction string, got {type(direction).__name__}")
        if self.strict_directions and level_direction(direction) is None:
            try:
                normalize_direction(direction, strict=True)
            except DirectionError as exc:
                raise InvalidActionError(str(exc)) from None
        return "Unsure", direction

    def _navigate(self, state: _EpisodeState, raw_direction: str, from_sector: int) -> StepInfo:
        direction = normalize_direction(raw_direction, strict=self.strict_directions)
        resolution = resolve_move(
            state.smap, state.current, direction, state.visited_at(state.level), self.view_priority
        )
        if resolution.capture is not None:
            state.current = resolution.capture
            to_sector = state.smap.capture_sector.get(resolution.capture, -1)
            state.visited.add((to_sector, state.level))
            state.last_failed = False
            state.last_failed_direction = None
            trap = not state.smap.captures[resolution.capture].mask_meets_threshold
            outcome = MoveOutcome.STAYED if resolution.outcome is MoveOutcome.STAYED else MoveOutcome.MOVED
        else:
            to_sector = from_sector
            state.last_failed = True
            state.last_failed_direction = clean_direction(raw_direction)
            trap = False
            outcome = (
                MoveOutcome.ALREADY_VISITED
                if resolution.outcome is MoveOutcome.ALREADY_VISITED
                else MoveOutcome.UNREACHABLE
            )
        return StepInfo(
            step=state.step,
            decision="Unsure",
            outcome=outcome,
            trap_view=trap,
            requested_direction=raw_direction,
            direction=direction,
            from_sector=from_sector,
            to_sector=to_sector,
            target_sector=resolution.target_sector,
            visibility_warning=compose_warning(outcome, direction, trap),
            from_level=state.level,
            to_level=state.level,
        )

    def _change_level(
        self, state: _EpisodeState, raw_direction: str, direction: str, from_sector: int
    ) -> StepInfo:
        """``up`` / ``down`` in an episode with height levels: one level, the same sector, one step."""
        from_level = state.level
        resolution = resolve_level_move(
            state.maps, from_level, from_sector, direction, state.visited, self.view_priority
        )
        trap = False
        if resolution.capture is not None:
            state.level = resolution.target_level
            state.current = resolution.capture
            state.visited.add((from_sector, state.level))
            state.last_failed = False
            state.last_failed_direction = None
            trap = not state.smap.captures[resolution.capture].mask_meets_threshold
        else:
            state.last_failed = True
            state.last_failed_direction = clean_direction(raw_direction)
        return StepInfo(
            step=state.step,
            decision="Unsure",
            outcome=resolution.outcome,
            trap_view=trap,
            requested_direction=raw_direction,
            direction=direction,
            from_sector=from_sector,
            to_sector=state.sector,
            target_sector=from_sector,
            visibility_warning=compose_warning(resolution.outcome, direction, trap),
            from_level=from_level,
            to_level=state.level,
        )

    # -- observation ----------------------------------------------------------------------------------------

    def observe(self) -> Observation:
        """The current observation again (e.g. for a node that republishes it)."""
        return self._observe(self._require_state())

    def survey(self, sector: int, level: int = EYE_LEVEL) -> Observation | None:
        """The observation a move to ``sector`` at ``level`` would show, without taking a step or changing the
        episode (calibration surveys look at every view the maps serve); None when none is served there."""
        state = self._require_state()
        smap = state.maps.maps.get(level)
        index = None if smap is None else smap.capture_for(sector, self.view_priority)
        if index is None:
            return None
        return self._observe(replace(state, current=index, level=level))

    def _observe(self, state: _EpisodeState) -> Observation:
        view = state.smap.captures[state.current]
        image: ImageRef | None = None
        rgb_path: str | None = None
        if view.rgb:
            where = Where.of(state.record.meta_path).at(view.name).at("rgb")
            path: Path = self.dataset.root.resolve(state.episode_path, view.rgb, where=where)
            image = ImageRef(path, "rgb", f"{view.name}.rgb")
            rgb_path = str(path)
        return Observation(
            episode_index=state.index,
            episode_seed=state.seed,
            rgb_path=rgb_path,
            image=image,
            current_sector=state.sector,
            step_count=state.step,
            max_steps=self.max_steps,
            available_sectors=state.smap.available,
            navigation_failed=state.last_failed,
            failed_direction=state.last_failed_direction,
            query_descriptions=state.query_descriptions,
            camera_intrinsics=state.intrinsics,
            privileged=self._privileged(state, view) if self.privileged else None,
            current_level=state.level,
            levels=state.maps.levels,
        )

    def _privileged(self, state: _EpisodeState, view: Viewpoint) -> PrivilegedView:
        smap = state.smap
        visibility: dict[int, bool] = {}
        for sector in sorted(state.visited_at(state.level)):
            index = smap.capture_for(sector, self.view_priority)
            if index is not None:
                visibility[sector] = smap.captures[index].mask_meets_threshold
        view_visibility: dict[tuple[int, int], bool] = {}
        for sector, level in sorted(state.visited):
            level_map = state.maps[level]
            index = level_map.capture_for(sector, self.view_priority)
            if index is not None:
                view_visibility[(sector, level)] = level_map.captures[index].mask_meets_threshold
        return PrivilegedView(
            capture_tag=view.name,
            raw_sector=view.sector_index,
            view_type=view.view_type,
            mask_bbox_xyxy=view.mask_bbox_xyxy,
            mask_area_px=view.mask_area_px,
            mask_meets_threshold=view.mask_meets_threshold,
            visited_visibility=visibility,
            camera_position=view.camera_position,
            goal_position=smap.goal,
            viewpoints=state.file_order,
            truth=self._truth(state),
            layout=self._layout(state),
            level=state.level,
            visited_view_visibility=view_visibility,
        )

    @staticmethod
    def _layout(state: _EpisodeState) -> tuple[LayoutEntry, ...]:
        """Observable captures in meta.json order, each with the virtual sector its level's map gave it and
        that level (every level's captures: a verifier learns the episode's levels from here).

        File order matters: the reference FPS takes its angular reference from the first listed capture.
        """
        sector_of = {
            id(smap.captures[index]): sector
            for smap in state.maps.maps.values()
            for index, sector in smap.capture_sector.items()
        }
        entries = []
        for view in state.file_order:
            sector = sector_of.get(id(view))
            if sector is None:
                continue
            entries.append(
                LayoutEntry(sector, view.view_type, view.name or "", view.camera_position, view.height_level)
            )
        return tuple(entries)

    def _truth(self, state: _EpisodeState) -> EpisodeTruth:
        record = state.record
        return EpisodeTruth(
            episode_index=state.index,
            episode_path=record.episode_path,
            scene=record.scene,
            episode=record.episode,
            label=record.label,
            pair_type=record.pair_type,
            query_object_id=record.query_object_id,
            query_object_category=record.query_object_category,
            target_object_id=record.target_object_id,
            target_object_category=record.target_object_category,
        )

    def _require_state(self) -> _EpisodeState:
        if self._state is None:
            raise EpisodeNotStartedError("no episode is running; call reset() first")
        return self._state
