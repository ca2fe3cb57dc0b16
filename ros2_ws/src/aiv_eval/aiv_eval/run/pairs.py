"""Several simulator + verifier pairs serving one evaluation (``evaluator.pairs``), without ROS.

One pair answers one episode at a time, and on the weight-free default a verifier keeps a CPU core busy, so an
evaluation on a machine with more cores (or on several machines of one DDS domain) runs faster with more pairs.
Each pair lives in its own namespace (``pair0`` holds ``/pair0/offline_sim`` and ``/pair0/verifier`` and the
names they serve); the evaluator hands the next episode to whichever pair is free and writes the records in
index order, so the results file is the one a single pair writes.

This module holds what does not need ROS: the names (parsed and checked the same way by ``aiv-eval`` and by the
node), the rule ``make demo`` uses to pick a pair count, and :class:`PairPool`, which decides which pair an
attempt goes to. A pair on another machine may come up after the run started: it joins once its servers answer
(its configuration checked against the run's), and a pair that lost its servers is passed over until they are
back, so a pair that never comes up only costs speed.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from aiv_common.parameter_spec import ParameterError

#: One namespace token: what ROS accepts in a name, without substitutions (``~``, ``{node}``).
_TOKEN = r"[A-Za-z_][A-Za-z0-9_]*"
#: A pair's namespace: relative (``pair0``, resolved in the evaluator's namespace) or absolute (``/lab_pc2/p0``).
PAIR_NAME = re.compile(rf"/?{_TOKEN}(?:/{_TOKEN})*")
#: Evaluator parameters naming an entity inside each pair; they must be relative to move into its namespace.
PAIR_RELATIVE_NAMES = ("simulator_node", "verifier_node", "start_episode_service", "verify_action")
#: ``make demo``'s pair count never goes above this (one evaluator drives them all; not measured beyond 2).
MAX_DEMO_PAIRS = 8
#: Memory one more pair needs on the weight-free default: the simulator's and the verifier's peak RSS in
#: ``aiv-eval bench`` (48 val pairs, OCR models loaded) came to 500-600 MiB together (PSS 410-490 MiB); rounded
#: up for a longer run's heap.
PAIR_MEMORY_MIB = 700


def parse_pairs(text: str) -> tuple[str, ...]:
    """The pair namespaces of ``evaluator.pairs`` (comma-separated; empty = no named pairs).

    Refused in one line: an empty entry, a name ROS would refuse as a namespace, a name given twice.
    """
    if not text.strip():
        return ()
    names = tuple(part.strip() for part in text.split(","))
    for name in names:
        if not name:
            raise ParameterError(f"parameter 'pairs' = {text!r}; an entry between commas is empty")
        if not PAIR_NAME.fullmatch(name):
            raise ParameterError(
                f"parameter 'pairs' = {text!r}; {name!r} is no namespace (letters, digits and _ in tokens "
                "separated by /, a token not starting with a digit, e.g. pair0 or /lab_pc2/pair0)"
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ParameterError(f"parameter 'pairs' = {text!r}; {name!r} is named twice")
        seen.add(name)
    return names


def check_pair_values(values: Mapping[str, Any]) -> None:
    """The evaluator's pairs checked with the parameters they depend on (node and ``aiv-eval`` alike)."""
    if parse_pairs(str(values.get("pairs", ""))):
        for name in PAIR_RELATIVE_NAMES:
            value = str(values.get(name, ""))
            if value.startswith(("/", "~")):
                raise ParameterError(
                    f"parameter {name!r} = {value!r}; with pairs set it must be a relative name, which each "
                    "pair's namespace is put in front of"
                )


def in_pair(pair: str, name: str) -> str:
    """``name`` (relative) inside the pair's namespace; the name itself when there are no named pairs."""
    return f"{pair.rstrip('/')}/{name}" if pair else name


def node_namespace(pair: str) -> str:
    """The namespace a node of ``pair`` is started in by a supervisor that is itself un-namespaced."""
    return pair if pair.startswith("/") else f"/{pair}"


def demo_pair_count(cores: int | None = None, available_mib: float | None = None) -> int:
    """How many pairs ``make demo`` starts: one per CPU core this process may use, while the memory available
    holds :data:`PAIR_MEMORY_MIB` per pair, at most :data:`MAX_DEMO_PAIRS`, at least one.

    A verifier on the weight-free default keeps about one core busy while the simulator and the evaluator wait
    on it most of the time, so a core per pair is what keeps every core working without pairs queueing for one.
    """
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if available_mib is None:
        available_mib = _available_memory_mib()
    by_memory = int(available_mib // PAIR_MEMORY_MIB) if available_mib is not None else cores
    return max(1, min(cores, by_memory, MAX_DEMO_PAIRS))


def demo_pair_names(count: int) -> tuple[str, ...]:
    """``pair0`` … ``pair{count-1}``; none for one pair, which keeps the single un-namespaced pair."""
    return () if count <= 1 else tuple(f"pair{number}" for number in range(count))


def _available_memory_mib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


class Named(Protocol):
    @property
    def name(self) -> str: ...


P = TypeVar("P", bound=Named)


class NoPairAvailableError(RuntimeError):
    """No pair could take an attempt for as long as the caller allows, and none was busy with one either."""


class PairPoolStopped(RuntimeError):
    """The evaluation is stopping; no further attempt is handed out."""


class PairNotReady(RuntimeError):
    """Raised by a pool's ``join`` when the pair stopped answering while it was being checked: try it later."""


#: States of a pair in the pool.
NEW, JOINED, AWAY, REFUSED = "not seen yet", "joined", "lost its servers", "refused"


class PairPool(Generic[P]):
    """Hands each attempt a free pair, oldest-released first, and takes it back afterwards.

    ``ready(pair)`` says without waiting whether the pair's servers are there; ``join(pair)`` is called once,
    when a pair is first found ready, and returns why the pair cannot serve this run (another configuration),
    or None. A pair that was refused is never handed out; one marked :meth:`away` is handed out again once it
    is ready. :meth:`acquire` waits for a usable pair; it gives up with :class:`NoPairAvailableError` only
    after ``timeout_s`` in which no pair was usable and no other caller held one (a held pair comes back).
    """

    def __init__(
        self,
        pairs: Sequence[P],
        *,
        ready: Callable[[P], bool],
        join: Callable[[P], str | None],
        poll_s: float = 0.1,
    ) -> None:
        if not pairs:
            raise ValueError("a pair pool needs at least one pair")
        self._pairs = list(pairs)
        self._free: deque[P] = deque(pairs)
        self._state: dict[str, str] = {pair.name: NEW for pair in pairs}
        self.refusals: dict[str, str] = {}
        self._ready = ready
        self._join = join
        self._poll_s = poll_s
        self._held = 0
        self._condition = threading.Condition()

    def state(self, pair: P) -> str:
        with self._condition:
            return self._state[pair.name]

    def describe(self) -> str:
        """Each pair and its state, for messages: ``pair0 joined, pair1 not seen yet``."""
        with self._condition:
            return ", ".join(
                f"{pair.name or '(own namespace)'} {self._state[pair.name]}" for pair in self._pairs
            )

    def mark_joined(self, pair: P) -> None:
        """Record that ``pair`` has been checked already (e.g. the pair whose configuration defines the run)."""
        with self._condition:
            self._state[pair.name] = JOINED

    def away(self, pair: P) -> None:
        """``pair`` lost its servers: hand it out again only once they answer."""
        with self._condition:
            if self._state[pair.name] == JOINED:
                self._state[pair.name] = AWAY

    def acquire(self, timeout_s: float, stopping: Callable[[], bool] = lambda: False) -> P:
        idle_since: float | None = None
        tried: set[str] = set()
        while True:
            with self._condition:
                if stopping():
                    raise PairPoolStopped("the evaluation is stopping")
                pair = next(
                    (p for p in self._free if p.name not in tried and self._state[p.name] != REFUSED),
                    None,
                )
                if pair is None:
                    if all(state == REFUSED for state in self._state.values()):
                        raise NoPairAvailableError(f"every pair was refused ({self._refusal_lines()})")
                    if self._held:
                        idle_since = None
                    else:
                        now = time.monotonic()
                        idle_since = now if idle_since is None else idle_since
                        if now - idle_since >= timeout_s:
                            raise NoPairAvailableError(
                                f"no simulator + verifier pair could take an episode within {timeout_s:.0f} s "
                                f"({self.describe()})"
                            )
                    tried.clear()
                    self._condition.wait(self._poll_s)
                    continue
                self._free.remove(pair)
                self._held += 1
                state = self._state[pair.name]
            if state == JOINED:
                return pair
            usable = self._try(pair, state)
            if usable:
                return pair
            tried.add(pair.name)
            self.release(pair)

    def _try(self, pair: P, state: str) -> bool:
        """Outside the lock (a join asks the pair for its parameters): whether ``pair`` can be handed out now."""
        try:
            if not self._ready(pair):
                return False
            reason = self._join(pair) if state == NEW else None
        except PairNotReady:
            return False
        except BaseException:
            self.release(pair)
            raise
        with self._condition:
            if reason is not None:
                self._state[pair.name] = REFUSED
                self.refusals[pair.name] = reason
                return False
            self._state[pair.name] = JOINED
        return True

    def _refusal_lines(self) -> str:
        return "; ".join(f"{name}: {reason}" for name, reason in self.refusals.items())

    def release(self, pair: P) -> None:
        with self._condition:
            self._free.append(pair)
            self._held -= 1
            self._condition.notify_all()


#: The most pairs a command line may ask for.
MAX_PAIRS_ARGUMENT = 64


def pair_count_argument(text: str) -> int:
    """argparse type of a ``--pairs N`` option: an integer from 1 to :data:`MAX_PAIRS_ARGUMENT`."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_PAIRS_ARGUMENT:
        raise argparse.ArgumentTypeError(
            f"{text!r} is no pair count; expected an integer from 1 to {MAX_PAIRS_ARGUMENT}"
        )
    return value


__all__ = [
    "MAX_DEMO_PAIRS",
    "MAX_PAIRS_ARGUMENT",
    "PAIR_MEMORY_MIB",
    "NoPairAvailableError",
    "PairNotReady",
    "PairPool",
    "PairPoolStopped",
    "check_pair_values",
    "demo_pair_count",
    "demo_pair_names",
    "in_pair",
    "node_namespace",
    "pair_count_argument",
    "parse_pairs",
]
