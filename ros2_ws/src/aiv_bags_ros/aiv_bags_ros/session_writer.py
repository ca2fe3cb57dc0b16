"""Streaming a session into bags, without rclpy: one bag for everything, or one bag per verification episode.

Messages arrive serialized (the recorder subscribes raw) and go straight to the rosbags writer, which keeps
at most one open mcap chunk (1 MiB) per open bag in memory; besides that only a bounded ring of the latest
frame messages (to give each per-episode bag its start view, published before the request) and the frame
stamps of the few open episodes are kept, so memory does not grow with the length of a recording.

A bag is written into ``<name>.recording`` and renamed to ``<name>`` when it is closed; a recorder that is
killed leaves the ``.recording`` directory (without metadata.yaml), which readers refuse with that reason, so
a bag under its final name is always complete. Per episode, a bag is complete when the verdict of its request
and every frame its transcript names (image, and camera_info / ground truth / detections when those topics
carry anything in this episode) are in it; one closed without them (several later requests came first, the
frames did not arrive within ``close_timeout_s`` after the verdict, or the recording stopped) is renamed
``<name>.incomplete``.
"""

from __future__ import annotations

import re
import shutil
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rosbags.interfaces import (
    Connection,
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import Writer

from .session_bag import (
    FORMAT_KEY,
    FORMAT_VERSION,
    ROLES_BY_NAME,
    STAMPED_FRAME_ROLES,
    STORAGES,
    TOPIC_KEY_PREFIX,
    header_stamp_ns,
    session_typestore,
)

RECORDING_SUFFIX = ".recording"
INCOMPLETE_SUFFIX = ".incomplete"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]+")

Log = Callable[[str], None]


def _qos(latched: bool) -> Qos:
    zero = QosTime(0, 0)
    return Qos(
        QosHistory.KEEP_LAST,
        1 if latched else 10,
        QosReliability.RELIABLE,
        QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
        zero,
        zero,
        QosLiveliness.AUTOMATIC,
        zero,
        False,
    )


def episode_dir_name(key: str) -> Path:
    """A relative directory for an episode key ``scene/episode/digest``: one safe component per part."""
    parts = [_UNSAFE.sub("_", part).strip(".") for part in key.split("/")]
    parts = [part for part in parts if part]
    return Path(*parts) if parts else Path("episode")


class BagStream:
    """One bag being written: every role's connection, messages streamed to the storage plugin."""

    def __init__(
        self,
        path: Path,
        *,
        storage: str,
        topics: Mapping[str, str],
        custom_data: Mapping[str, str] | None = None,
    ) -> None:
        if storage not in STORAGES:
            raise ValueError(f"storage {storage!r}: expected one of {', '.join(STORAGES)}")
        self.path = path
        self.recording_path = path.with_name(path.name + RECORDING_SUFFIX)
        if self.recording_path.exists():  # left by a recorder that was killed: it is not a bag
            shutil.rmtree(self.recording_path)
        self.recording_path.parent.mkdir(parents=True, exist_ok=True)
        self.writer = Writer(self.recording_path, version=9, storage_plugin=STORAGES[storage])
        store = session_typestore()
        self.writer.set_custom_data(FORMAT_KEY, FORMAT_VERSION)
        for role, topic in topics.items():
            self.writer.set_custom_data(TOPIC_KEY_PREFIX + role, topic)
        for key, value in (custom_data or {}).items():
            self.writer.set_custom_data(key, value)
        self.writer.open()
        self.connections: dict[str, Connection] = {
            role: self.writer.add_connection(
                topic,
                ROLES_BY_NAME[role].msgtype,
                typestore=store,
                offered_qos_profiles=[_qos(ROLES_BY_NAME[role].latched)],
            )
            for role, topic in topics.items()
        }
        self.messages = 0
        self.bytes = 0

    def write(self, role: str, raw: bytes | memoryview, received_ns: int) -> None:
        self.writer.write(self.connections[role], received_ns, raw)
        self.messages += 1
        self.bytes += len(raw)

    def close(self, *, complete: bool = True) -> Path:
        """Close and give the bag its final name (``.incomplete`` appended unless ``complete``)."""
        self.writer.close()
        final = self.path if complete else self.path.with_name(self.path.name + INCOMPLETE_SUFFIX)
        if final.exists():  # an earlier attempt of the same episode: the newest one is kept
            shutil.rmtree(final)
        self.recording_path.rename(final)
        return final


@dataclass
class _Episode:
    stream: BagStream
    request_id: str
    key: str
    start_ns: int  # stamp of its first frame: later frames and steps are routed by stamp
    #: Header stamps written per frame role (bounded by the episode's steps).
    stamps: dict[str, set[int]] = field(default_factory=dict)
    needed: set[int] | None = None  # image stamps the verdict's transcript names, once the verdict is in
    needed_steps: set[int] = field(default_factory=set)  # step numbers of the verdict's transcript
    steps: set[int] = field(default_factory=set)  # step numbers of the step reports written
    verdict_at: float = 0.0

    def write_frame(self, role: str, raw: bytes, received_ns: int, stamp: int) -> None:
        self.stream.write(role, raw, received_ns)
        self.stamps.setdefault(role, set()).add(stamp)

    def write_step(self, raw: bytes, received_ns: int, step: int) -> None:
        self.stream.write("steps", raw, received_ns)
        self.steps.add(step)

    def complete(self, required: Sequence[str]) -> bool:
        """The verdict, and every frame its transcript names on the ``required`` frame topics and on each
        other one (camera_info, ground truth, detections) that carried anything in this episode; likewise
        every step report the transcript lists, when ``steps`` is required or this episode got one. (Each
        topic is a stream of its own: step reports published before the verdict can arrive after it.)"""
        if self.needed is None:
            return False
        if not all(self.needed <= self.stamps.get(role, set()) for role in required if role != "steps"):
            return False
        if ("steps" in required or self.steps) and not self.needed_steps <= self.steps:
            return False
        return all(self.needed <= stamps for stamps in self.stamps.values())

    def missing(self) -> str:
        """What the verdict names that has not arrived, for the log line of an incomplete bag."""
        images = sorted((self.needed or set()) - self.stamps.get("image", set()))
        steps = sorted(self.needed_steps - self.steps)
        return f"missing images: {images[:3]}, missing step reports: {steps[:3]}"


@dataclass
class SplitStats:
    complete: int = 0
    incomplete: int = 0
    dropped: int = 0  # step reports / verdicts that belonged to no open episode


class EpisodeSplitter:
    """One bag per verification request under ``out_dir/<episode key>``, opened when the request is seen.

    Topics are independent streams, so the recorder may see the next request (and its start view) before the
    previous verdict: several episodes can be open at once. Frames and step reports go to the newest open
    episode that started at or before their stamp, verdicts to their request. The start view is published
    before the goal is sent, so the last ``buffer_size`` frame messages are also kept in a ring, and a new
    episode gets those from the request's start stamp on (the newest image when the goal names none).
    ``required`` names the frame roles every step must have (a side channel may arrive after the verdict), and
    ``steps`` when every step report must be in.
    """

    #: Open episodes still waiting for their verdict beyond this many: the oldest is closed incomplete.
    MAX_OPEN = 3

    def __init__(
        self,
        out_dir: Path,
        *,
        storage: str,
        topics: Mapping[str, str],
        custom_data: Mapping[str, str] | None = None,
        required: Sequence[str] = ("image",),
        buffer_size: int = 12,
        close_timeout_s: float = 5.0,
        log: Log = print,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out_dir = out_dir
        self.storage = storage
        self.topics = dict(topics)
        self.custom_data = dict(custom_data or {})
        self.required = tuple(required)
        self.ring: deque[tuple[str, bytes, int, int]] = deque(maxlen=buffer_size)
        self.open: list[_Episode] = []
        self.close_timeout_s = close_timeout_s
        self.log = log
        self.clock = clock
        self.stats = SplitStats()
        self.store = session_typestore()

    def on_message(self, role: str, raw: bytes, received_ns: int) -> None:
        if role == "requests":
            self._start(raw, received_ns)
        elif role in STAMPED_FRAME_ROLES:
            stamp = header_stamp_ns(raw)
            self.ring.append((role, raw, received_ns, stamp))
            episode = self._route(stamp)
            if episode is not None:
                episode.write_frame(role, raw, received_ns, stamp)
        elif role == "steps":
            step: Any = self.store.deserialize_cdr(raw, ROLES_BY_NAME["steps"].msgtype)
            episode = self._route(_ns(step.image_stamp))
            if episode is None:
                self.stats.dropped += 1
            else:
                episode.write_step(raw, received_ns, int(step.step))
        elif role == "verdicts":
            verdict: Any = self.store.deserialize_cdr(raw, ROLES_BY_NAME["verdicts"].msgtype)
            owner = next((e for e in self.open if e.request_id == verdict.request_id), None)
            self._write_or_drop(owner, role, raw, received_ns)
            if owner is not None:
                owner.needed = {_ns(step.image_stamp) for step in verdict.transcript}
                owner.needed_steps = {int(step.step) for step in verdict.transcript}
                owner.verdict_at = self.clock()
        self._close_complete()

    def poll(self) -> None:
        """Close episodes whose frames or step reports did not all arrive within the timeout after their
        verdict."""
        for episode in list(self.open):
            if episode.needed is not None and self.clock() - episode.verdict_at > self.close_timeout_s:
                self._close(episode, f"what its verdict names never all arrived ({episode.missing()})")

    def close(self) -> None:
        """End of recording: open episodes are closed (incomplete unless their verdict and frames are in)."""
        self._close_complete()
        for episode in list(self.open):
            self._close(episode, "the recording stopped before its verdict and frames were in")

    def _route(self, stamp: int) -> _Episode | None:
        candidates = [episode for episode in self.open if episode.start_ns <= stamp]
        if candidates:
            return candidates[-1]
        return self.open[0] if self.open else None

    def _write_or_drop(self, episode: _Episode | None, role: str, raw: bytes, received_ns: int) -> None:
        if episode is None:
            self.stats.dropped += 1
        else:
            episode.stream.write(role, raw, received_ns)

    def _start(self, raw: bytes, received_ns: int) -> None:
        goal: Any = self.store.deserialize_cdr(raw, ROLES_BY_NAME["requests"].msgtype)
        if any(episode.request_id == goal.request_id for episode in self.open):
            return  # the latched request again (a recorder restart): already recording it
        waiting = [episode for episode in self.open if episode.needed is None]
        if len(waiting) >= self.MAX_OPEN:
            self._close(waiting[0], f"{self.MAX_OPEN} later requests came before its verdict")
        key = str(goal.episode_key or goal.request_id)
        start_ns = _ns(goal.start_stamp)
        if start_ns == 0:
            images = [stamp for role, _, _, stamp in self.ring if role == "image"]
            start_ns = max(images) if images else 0
        stream = BagStream(
            self.out_dir / episode_dir_name(key),
            storage=self.storage,
            topics=self.topics,
            custom_data=self.custom_data,
        )
        episode = _Episode(stream, str(goal.request_id), key, start_ns)
        for role, message, at, stamp in self.ring:
            if stamp >= start_ns:
                episode.write_frame(role, message, at, stamp)
        stream.write("requests", raw, received_ns)
        self.open.append(episode)
        self.open.sort(key=lambda item: item.start_ns)

    def _close_complete(self) -> None:
        for episode in [episode for episode in self.open if episode.complete(self.required)]:
            self.open.remove(episode)
            path = episode.stream.close(complete=True)
            self.stats.complete += 1
            self.log(f"episode {episode.key}: {episode.stream.messages} messages in {path}")

    def _close(self, episode: _Episode, why: str) -> None:
        self.open.remove(episode)
        path = episode.stream.close(complete=False)
        self.stats.incomplete += 1
        self.log(f"episode {episode.key}: INCOMPLETE bag {path}: {why}")


def _ns(stamp: Any) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)
