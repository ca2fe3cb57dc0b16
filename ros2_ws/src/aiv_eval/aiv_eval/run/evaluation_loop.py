"""The evaluation loop both modes share: resume, attempts, progress, metrics.

A driver (in-process environment or the ROS episode client) only says how to run one episode; everything that
decides *which* episodes run, how often, and what ends up in ``results.jsonl`` lives here, so the two modes
cannot drift apart in resume or retry behaviour.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from aiv_dataset.index_records import PairRecord

from .. import EpisodeRecord, ProgressBar, ResultsStore, RunConfig, make_episode_key, write_metrics
from .in_flight import run_in_flight


@dataclass(frozen=True)
class EpisodeJob:
    """One attempt at one index entry, as a driver sees it."""

    index: int
    pair: PairRecord
    key: str
    attempt: int  # 1-based count of records this key will have after this one
    run_id: str


class RunAborted(RuntimeError):
    """The driver cannot go on (e.g. a node stayed away); what was recorded so far stays, resume later."""


class EmptySelectionError(ValueError):
    """The index and the slice select no pair: there is nothing to evaluate, and a run over zero episodes
    would look like a finished one (accuracy 0.0 over 0 episodes)."""


def selected_range(count: int, slice_: tuple[int, int | None]) -> range:
    """The index positions a slice selects from an index of ``count`` pairs; :class:`EmptySelectionError`
    when it selects none."""
    start, end = slice_
    selected = range(start, count if end is None else min(end, count))
    if not selected:
        shown = "end" if end is None else str(end)
        raise EmptySelectionError(
            f"the slice [{start}, {shown}) selects no pair of an index of {count} pair(s); nothing to evaluate"
        )
    return selected


EpisodeDriver = Callable[[EpisodeJob], EpisodeRecord]


@dataclass
class LoopOutcome:
    run_dir: Path
    selected: int
    ran_now: int = 0
    resumed: int = 0
    failed_keys: list[str] = field(default_factory=list)
    loop_wall_s: float = 0.0
    aborted: str = ""

    @property
    def complete(self) -> bool:
        return not self.failed_keys and not self.aborted


def episode_key(pair: PairRecord) -> str:
    return make_episode_key(pair.scene, pair.episode, pair.query_object_id)


def evaluate_index(
    *,
    run_dir: Path,
    run_config: RunConfig,
    records: Sequence[PairRecord],
    slice_: tuple[int, int | None],
    max_attempts: int,
    run_episode: EpisodeDriver,
    stream: TextIO | None = None,
    episodes_in_flight: int = 1,
    ahead: int = 0,
    stopping: threading.Event | None = None,
) -> LoopOutcome:
    """Run every selected index entry without an "ok" record, up to ``max_attempts`` times each.

    An infrastructure failure is recorded (never scored) and retried at once; a key that fails every attempt
    keeps its failure record and is retried by the next invocation. :class:`RunAborted` from the driver ends
    the loop early; metrics are written for whatever is recorded either way. A selection without a single pair
    raises :class:`EmptySelectionError` before anything is written.

    ``episodes_in_flight`` > 1 runs that many keys at once on worker threads (the driver must be thread-safe:
    :mod:`.in_flight`); records are still appended in index order, each key's attempts together, so the
    results file is the same byte for byte as one key at a time. ``ahead`` and ``stopping`` are
    :func:`.in_flight.run_in_flight`'s: keys started beyond those in flight while an earlier one still runs
    (records still wait for their turn), and an event set when the loop ends early.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    if episodes_in_flight < 1:
        raise ValueError(f"episodes_in_flight must be >= 1, got {episodes_in_flight}")
    selected = selected_range(len(records), slice_)
    outcome = LoopOutcome(run_dir=run_dir, selected=len(selected))
    started = time.perf_counter()
    with ResultsStore.open(run_dir, run_config) as store:
        keys = {index: episode_key(records[index]) for index in selected}
        todo = [index for index in selected if not store.is_complete(keys[index])]
        outcome.resumed = len(selected) - len(todo)
        progress = ProgressBar(len(selected), initial=outcome.resumed, stream=stream)
        earlier = {index: store.attempts(keys[index]) for index in todo}  # read here, never from a worker

        def attempts_of(index: int, on_record: Callable[[EpisodeRecord], None]) -> EpisodeRecord:
            """One key's attempts, numbered from what the store held before this key started."""
            record = None
            for attempt in range(max_attempts):
                job = EpisodeJob(
                    index, records[index], keys[index], earlier[index] + attempt + 1, store.run_id
                )
                record = run_episode(job)
                on_record(record)
                if record.is_ok:
                    break
            assert record is not None
            return record

        def finish(index: int, record: EpisodeRecord) -> None:
            outcome.ran_now += 1
            if not record.is_ok:
                outcome.failed_keys.append(keys[index])
            progress.update(correct=record.is_correct, infra_failure=not record.is_ok)

        try:
            if episodes_in_flight == 1:  # each record reaches the file as soon as it exists
                for index in todo:
                    finish(index, attempts_of(index, store.append))
            else:
                for index, attempts in run_in_flight(
                    todo,
                    lambda index: _collected(attempts_of, index),
                    episodes_in_flight,
                    ahead=ahead,
                    stopping=stopping,
                ):
                    for record in attempts:
                        store.append(record)
                    finish(index, attempts[-1])
        except RunAborted as error:
            outcome.aborted = str(error)
        finally:
            progress.close()
    outcome.loop_wall_s = time.perf_counter() - started
    write_metrics(run_dir, wall_time_s=outcome.loop_wall_s)
    return outcome


def _collected(
    attempts_of: Callable[[int, Callable[[EpisodeRecord], None]], EpisodeRecord], index: int
) -> list[EpisodeRecord]:
    """A key's attempts as a list, for the main thread to append in index order."""
    done: list[EpisodeRecord] = []
    attempts_of(index, done.append)
    return done
