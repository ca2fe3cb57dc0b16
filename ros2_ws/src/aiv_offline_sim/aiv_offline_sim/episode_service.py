"""ROS-free core of the simulator node: episode selection, move requests and what each frame shows.

The node (:mod:`aiv_offline_sim.sim_node`) only translates between these plain objects and ROS
messages, so every rule here is testable without DDS, and the ROS integration test can compare the
node's answers with :class:`~aiv_offline_sim.environment.PInVerifyEnv` directly.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from aiv_dataset.descriptions import DescriptionDB
from aiv_dataset.errors import DatasetError
from aiv_dataset.index_records import PairRecord
from aiv_dataset.levels import EYE_LEVEL, LEVEL_DIRECTIONS, level_direction
from aiv_dataset.meta import CameraIntrinsics
from aiv_dataset.query_rules import description_problem
from aiv_dataset.vocabulary import (
    BENCHMARK_INTRINSICS,
    DIRECTIONS,
    DirectionError,
    MoveOutcome,
    normalize_direction,
)

from .environment import Action, Observation, PInVerifyEnv, StepInfo


def pair_key(record: PairRecord) -> str:
    """A stable, opaque key for one verification pair.

    It names the scene and episode (useful in logs) plus a digest of the full pair identity, so it is
    unique per pair without revealing the query object id or the pair type to the verifier.
    """
    identity = "\x1f".join(record.key)
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:12]
    return f"{record.scene}/{record.episode}/{digest}"


@dataclass(frozen=True)
class EpisodeStart:
    """What StartEpisode returns: everything a verifier may know about the new episode."""

    index: int
    key: str
    descriptions: tuple[str, ...]
    max_steps: int
    observation: Observation


@dataclass(frozen=True)
class MoveReply:
    """The answer to one MoveToSector request (``outcome`` is never ``DECIDED``: a move decides nothing)."""

    outcome: MoveOutcome
    sector: int
    level: int  # camera height level now (0 = eye level; always 0 in a one-level episode)
    trap_view: bool
    warning: str
    steps_taken: int
    steps_remaining: int
    message: str
    new_view: bool  # a different capture is now shown: publish a new frame
    observation: Observation | None  # None when the request was refused or its view cannot be shown


class EpisodeRequestError(ValueError):
    """A StartEpisode request that cannot be served (unknown key, index out of range, broken episode, a query
    that must not be handed out)."""


def served_descriptions(descriptions: DescriptionDB | None, record: PairRecord) -> tuple[str, ...]:
    """The query descriptions the simulator hands out for ``record``, or :class:`EpisodeRequestError`.

    The query rules (:mod:`aiv_dataset.query_rules`) are applied here, before anything is published: a NUL
    would be cut off silently by the ROS string field, and a query without visible text or with an entry that
    is not text cannot be verified by anyone. The count and length limits are the verifier's own parameters
    and stay with it. The in-process evaluator calls this same function, so both modes refuse the same
    queries with the same words.
    """
    key = pair_key(record)
    if descriptions is None or record.query_object_id not in descriptions:
        raise EpisodeRequestError(
            f"no descriptions for the query object of pair {key} in the description file"
        )
    texts = tuple(descriptions[record.query_object_id].descriptions)
    problem = description_problem(texts, max_descriptions=sys.maxsize, max_chars=sys.maxsize)
    if problem is not None:
        raise EpisodeRequestError(f"the query of pair {key} cannot be served: {problem}")
    return texts


def reset_or_refuse(env: PInVerifyEnv, index: int, slice_start: int = 0) -> Observation:
    """Start episode ``index`` of ``env``, or :class:`EpisodeRequestError` when its files are broken.

    This is the simulator's StartEpisode load, in the words it refuses with: meta.json that does not validate,
    images that are missing, unreadable or of another size than the episode's camera, ids that disagree with
    the directory (:mod:`aiv_dataset.episode_checks`). The in-process evaluator calls it at the same point of
    an episode, so a broken episode is refused, recorded and skipped with the same record in both modes.
    """
    try:
        return env.reset(index, slice_start=slice_start)
    except DatasetError as error:
        raise EpisodeRequestError(
            f"episode {pair_key(env.records[index])} cannot be loaded: {error}"
        ) from error


class EpisodeService:
    """Serves one episode at a time from an index, with the environment's rules."""

    def __init__(self, env: PInVerifyEnv, descriptions: DescriptionDB | None) -> None:
        self.env = env
        self.descriptions = descriptions
        self.keys = [pair_key(record) for record in env.records]
        self._index_of_key = {key: i for i, key in enumerate(self.keys)}
        self._image_cache: dict[str, np.ndarray] = {}

    @property
    def size(self) -> int:
        return len(self.keys)

    def start(self, index: int = -1, key: str = "", slice_start: int = 0) -> EpisodeStart:
        """Load an episode by index, or by key when ``index`` is -1; ``slice_start`` is the first index of the
        evaluated slice (the ``seed_plus_slice_index`` policy seeds by the position within it)."""
        if index == -1:
            if key not in self._index_of_key:
                raise EpisodeRequestError(f"unknown episode key {key!r} ({self.size} pairs loaded)")
            index = self._index_of_key[key]
        if not 0 <= index < self.size:
            raise EpisodeRequestError(
                f"episode index {index} out of range: the index holds {self.size} pairs"
            )
        if slice_start < 0:
            raise EpisodeRequestError(f"slice_start {slice_start} is negative")
        if self.env.seed_policy == "seed_plus_slice_index" and index < slice_start:
            raise EpisodeRequestError(
                f"episode index {index} lies before slice_start {slice_start} (seed_policy seed_plus_slice_index)"
            )
        record = self.env.records[index]
        descriptions = served_descriptions(self.descriptions, record)
        self._image_cache.clear()
        observation = reset_or_refuse(self.env, index, slice_start)
        try:
            self.image_of(observation)  # decoded here, so a frame that cannot be shown refuses the start
        except DatasetError as error:
            raise EpisodeRequestError(f"episode {self.keys[index]} cannot be loaded: {error}") from error
        return EpisodeStart(index, self.keys[index], descriptions, self.env.max_steps, observation)

    def move(self, direction: str) -> MoveReply:
        """Apply one MoveToSector request; refusals never consume a step.

        Besides the six planar directions, ``up`` / ``down`` change the camera height level; in a one-level
        episode the environment refuses them (no step), and so does this reply, with its reason."""
        if not self.env.started:
            return self._refusal("no episode is loaded; call StartEpisode first")
        if self.env.done:
            return self._refusal("the episode is over; call StartEpisode to start another")
        name = level_direction(direction) if isinstance(direction, str) else None
        if name is None:
            try:
                name = normalize_direction(direction, strict=True)
            except DirectionError:
                return self._refusal(self._unknown_direction(direction))
        before = (self.env.current_sector, self.env.current_level)
        observation, _, _, info = self.env.step(Action.move(name))
        if info.refusal is not None:
            return self._refusal(info.refusal)
        reply = self._reply(info, observation, before)
        if reply.new_view:
            try:
                self.image_of(observation)
            except DatasetError as error:
                # The step is spent but nothing can be shown: the episode ends here, as a refusal.
                return replace(
                    reply,
                    outcome=MoveOutcome.REJECTED,
                    message=f"the new view cannot be shown: {error}",
                    new_view=False,
                    observation=None,
                )
        return reply

    def _unknown_direction(self, direction: object) -> str:
        """The refusal of a direction that is no name at all (the height moves listed where they exist)."""
        names = list(DIRECTIONS)
        if len(self.env.level_maps.levels) > 1:
            names += list(LEVEL_DIRECTIONS)
        return f"unknown direction {direction!r}; expected one of {', '.join(names)}"

    def _reply(self, info: StepInfo, observation: Observation, before: tuple[int, int]) -> MoveReply:
        outcome = info.outcome
        message = ""
        if outcome is MoveOutcome.REJECTED:
            message = f"step budget of {self.env.max_steps} exhausted; the episode ended undecided"
        now = (observation.current_sector, observation.current_level)
        return MoveReply(
            outcome=outcome,
            sector=observation.current_sector,
            level=observation.current_level,
            trap_view=info.trap_view,
            warning=info.visibility_warning or "",
            steps_taken=info.step,
            steps_remaining=max(0, self.env.max_steps - info.step),
            message=message,
            new_view=outcome is MoveOutcome.MOVED and now != before,
            observation=observation,
        )

    def _refusal(self, message: str) -> MoveReply:
        started = self.env.started
        steps = self.env.step_count if started else 0
        return MoveReply(
            outcome=MoveOutcome.REJECTED,
            sector=self.env.current_sector if started else -1,
            level=self.env.current_level if started else EYE_LEVEL,
            trap_view=False,
            warning="",
            steps_taken=steps,
            steps_remaining=max(0, self.env.max_steps - steps) if started else 0,
            message=message,
            new_view=False,
            observation=None,
        )

    def image_of(self, observation: Observation) -> np.ndarray:
        """The observation's RGB frame, decoded once per episode and capture.

        ``start`` and ``move`` decode each new view before they answer, so an image that cannot be decoded
        is a refusal in the reply, the same for the simulator node and the in-process evaluator."""
        if observation.rgb_path is None:
            raise DatasetError("the current capture has no rgb image")
        cached = self._image_cache.get(observation.rgb_path)
        if cached is None:
            cached = observation.load_image()
            self._image_cache[observation.rgb_path] = cached
        return cached


def camera_matrix(intrinsics: CameraIntrinsics | None) -> tuple[int, int, Sequence[float]]:
    """Image size and row-major K for CameraInfo (benchmark camera when the episode has none)."""
    model = intrinsics or BENCHMARK_INTRINSICS
    k = [model.fx, 0.0, model.cx, 0.0, model.fy, model.cy, 0.0, 0.0, 1.0]
    return model.width, model.height, k
