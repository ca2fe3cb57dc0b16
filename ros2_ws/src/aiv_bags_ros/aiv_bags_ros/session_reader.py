"""Reading a session bag back: the recorded requests, verdicts and the frames their transcripts name.

Every problem is a :class:`~.session_bag.SessionBagError` whose one line names the bag, the topic and what is
wrong: a directory that is not a closed bag (a killed recording), a bag rosbags cannot open or that is cut
short, a missing topic, a topic of another or an unknown type, an image the verifier cannot use, a frame
stamp that repeats or goes backwards, a request without a verdict, a step naming a frame that is not there.

A bag recorded before a project message gained fields stores the older layout with its definition; such
messages are decoded with that stored definition and copied into the current classes (:mod:`.message_upgrade`).
Bags whose stored definitions are the installed ones are decoded by rclpy directly, as always.

Two passes keep memory to one episode's frames: the first reads the small messages (requests, verdicts),
the second keeps only the frames a transcript names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from rosbags.rosbag2 import Reader
from rosbags.typesys.store import Typestore

from .message_upgrade import ConnectionDecoder, MessageUpgradeError
from .recorder import message_class
from .session_bag import (
    ROLES,
    ROLES_BY_NAME,
    STAMPED_FRAME_ROLES,
    TOPIC_KEY_PREFIX,
    VERIFIER_PARAMS_KEY,
    SessionBagError,
    header_stamp_ns,
    session_typestore,
)
from .session_writer import INCOMPLETE_SUFFIX, RECORDING_SUFFIX

#: Roles a session bag must have.
REQUIRED_ROLES = ("image", "requests", "verdicts")


def stamp_ns(stamp: Any) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


@dataclass
class RecordedFrame:
    stamp_ns: int
    image: Any = None  # sensor_msgs/Image
    ground_truth: Any = None  # aiv_interfaces/GroundTruthView
    detections: Any = None  # aiv_interfaces/Detection2DArray


@dataclass
class RecordedEpisode:
    goal: Any  # VerifyInstance.Goal as published (effective request id)
    verdict: Any  # Verdict
    frames: dict[int, RecordedFrame] = field(default_factory=dict)

    @property
    def request_id(self) -> str:
        return str(self.goal.request_id)

    @property
    def steps(self) -> list[Any]:
        return list(self.verdict.transcript)


@dataclass
class SessionRecording:
    path: Path
    topics: dict[str, str]
    verifier_params: str
    episodes: list[RecordedEpisode]
    skipped: list[str]  # requests that cannot be replayed, with why
    messages: int = 0


def _bag_error(path: Path, problem: str, topic: str | None = None) -> SessionBagError:
    where = f"bag {path}" + (f": topic {topic}" if topic else "")
    return SessionBagError(f"{where}: {problem}")


def _custom_data(path: Path) -> dict[str, str]:
    try:
        document = yaml.safe_load((path / "metadata.yaml").read_text(encoding="utf-8"))
        info = document["rosbag2_bagfile_information"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as error:
        raise _bag_error(path, f"metadata.yaml is unreadable: {error}") from error
    custom = info.get("custom_data") or {}
    return {str(k): str(v) for k, v in custom.items()} if isinstance(custom, dict) else {}


def _check_directory(path: Path) -> None:
    if not path.is_dir():
        raise _bag_error(path, "no such bag directory")
    if path.name.endswith(INCOMPLETE_SUFFIX):
        raise _bag_error(
            path, "the recorder closed it incomplete (its verdict or frames never came); not replayed"
        )
    if not (path / "metadata.yaml").is_file():
        hint = (
            "the recording was killed before it was closed"
            if path.name.endswith(RECORDING_SUFFIX) or any(path.glob("*.mcap")) or any(path.glob("*.db3"))
            else "not a rosbag2 directory"
        )
        raise _bag_error(path, f"no metadata.yaml ({hint}); nothing in it can be trusted")


class _Messages:
    """The bag's messages of some roles, counted against the metadata (a short count: a truncated bag)."""

    def __init__(self, path: Path, reader: Reader, connections: dict[str, Any]) -> None:
        self.path, self.reader, self.connections = path, reader, connections
        self.by_id = {conn.id: role for role, conn in connections.items()}

    def read(self, roles: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        wanted = [self.connections[role] for role in roles if role in self.connections]
        counts = {conn.id: 0 for conn in wanted}
        topic = "?"
        try:
            for connection, _timestamp, raw in self.reader.messages(connections=wanted):
                topic = connection.topic
                counts[connection.id] += 1
                yield self.by_id[connection.id], bytes(raw)
        except SessionBagError:
            raise
        except Exception as error:  # rosbags / mcap / sqlite report corruption with many types
            raise _bag_error(self.path, f"cut short or corrupt: {error}", topic) from error
        for conn in wanted:
            if counts[conn.id] != conn.msgcount:
                raise _bag_error(
                    self.path,
                    f"{counts[conn.id]} of the {conn.msgcount} messages its metadata lists are readable "
                    "(truncated bag)",
                    conn.topic,
                )


class _Decoders:
    """Each role's :class:`~.message_upgrade.ConnectionDecoder`, made when the role is first decoded: rclpy
    directly where the bag stores the installed definition, else the stored definition and an upgrade."""

    def __init__(self, path: Path, connections: dict[str, Any], store: Typestore) -> None:
        self.path, self.connections, self.store = path, connections, store
        self.decoders: dict[str, ConnectionDecoder] = {}

    def decode(self, role: str, raw: bytes) -> Any:
        connection = self.connections[role]
        msgtype = ROLES_BY_NAME[role].msgtype
        try:
            decoder = self.decoders.get(role)
            if decoder is None:
                decoder = ConnectionDecoder(msgtype, connection.msgdef, message_class(msgtype), self.store)
                self.decoders[role] = decoder
            return decoder(raw)
        except MessageUpgradeError as error:
            raise _bag_error(self.path, str(error), connection.topic) from error
        except Exception as error:
            raise _bag_error(
                self.path, f"a message does not decode as {msgtype}: {error}", connection.topic
            ) from error


def stored_verifier_parameters(path: Path) -> str:
    """The verifier params file the recorder stored in the bag ("" when none)."""
    _check_directory(path)
    return _custom_data(path).get(VERIFIER_PARAMS_KEY, "")


def read_session(
    path: Path, *, need_ground_truth: bool = False, need_detections: bool = False
) -> SessionRecording:
    """Every replayable episode of the bag at ``path`` (see the module docstring for what is refused)."""
    path = Path(path)
    _check_directory(path)
    custom = _custom_data(path)
    topics = {role.role: custom.get(TOPIC_KEY_PREFIX + role.role, role.topic) for role in ROLES}
    store = session_typestore()
    try:
        reader = Reader(path)
        reader.open()
    except Exception as error:
        raise _bag_error(path, f"cannot be opened: {error}") from error
    try:
        by_topic = {conn.topic: conn for conn in reader.connections}
        connections: dict[str, Any] = {}
        for spec in ROLES:
            conn = by_topic.get(topics[spec.role])
            if conn is None:
                continue
            if conn.msgtype != spec.msgtype:
                known = (
                    "" if conn.msgtype in store.fielddefs else " (a type unknown to the session typestore)"
                )
                raise _bag_error(path, f"type {conn.msgtype}{known}, expected {spec.msgtype}", conn.topic)
            connections[spec.role] = conn
        needed_roles = list(REQUIRED_ROLES)
        if need_ground_truth:
            needed_roles.append("ground_truth")
        if need_detections:
            needed_roles.append("detections")
        for role_name in needed_roles:
            if role_name not in connections or connections[role_name].msgcount == 0:
                raise _bag_error(
                    path, "missing (no messages); the verifier configuration needs it", topics[role_name]
                )
        messages = _Messages(path, reader, connections)
        decoders = _Decoders(path, connections, store)

        goals: dict[str, Any] = {}
        verdicts: dict[str, Any] = {}
        order: list[str] = []
        for role, raw in messages.read(["requests", "verdicts"]):
            message = decoders.decode(role, raw)
            if role == "requests":
                if message.request_id not in goals:
                    order.append(message.request_id)
                goals[message.request_id] = message
            else:
                verdicts[message.request_id] = message
        episodes: list[RecordedEpisode] = []
        skipped: list[str] = []
        for request_id in order:
            verdict = verdicts.get(request_id)
            if verdict is None:
                raise _bag_error(
                    path,
                    f"request {request_id} has no verdict (the recording stopped mid-episode)",
                    topics["verdicts"],
                )
            if not verdict.transcript:
                skipped.append(
                    f"request {request_id}: no steps were taken ({verdict.failure_reason or verdict.stop_reason})"
                )
                continue
            episodes.append(RecordedEpisode(goals[request_id], verdict))
        if not episodes:
            raise _bag_error(
                path, "no replayable request (none has a verdict with steps)", topics["requests"]
            )

        wanted: dict[int, list[RecordedEpisode]] = {}
        for episode in episodes:
            for step in episode.steps:
                stamp = stamp_ns(step.image_stamp)
                wanted.setdefault(stamp, []).append(episode)
                episode.frames.setdefault(stamp, RecordedFrame(stamp))
        last: dict[str, int] = {}
        frame_roles = [role for role in STAMPED_FRAME_ROLES if role in connections]
        count = 0
        for role, raw in messages.read(frame_roles):
            count += 1
            try:
                stamp = header_stamp_ns(raw)
            except ValueError as error:
                raise _bag_error(path, str(error), topics[role]) from error
            previous = last.get(role)
            if previous is not None and stamp <= previous:
                problem = "repeats" if stamp == previous else f"goes backwards (after {previous})"
                raise _bag_error(path, f"header stamp {stamp} {problem}", topics[role])
            last[role] = stamp
            if stamp not in wanted or role == "camera_info":
                continue
            message = decoders.decode(role, raw)
            for episode in wanted[stamp]:
                setattr(episode.frames[stamp], role, message)
        for episode in episodes:
            for index, step in enumerate(episode.steps):
                frame = episode.frames[stamp_ns(step.image_stamp)]
                for role_name, present in (
                    ("image", frame.image is not None),
                    ("ground_truth", frame.ground_truth is not None or not need_ground_truth),
                    ("detections", frame.detections is not None or not need_detections),
                ):
                    if not present:
                        raise _bag_error(
                            path,
                            f"no message stamped {frame.stamp_ns} for step {index} of request {episode.request_id}",
                            topics[role_name],
                        )
        return SessionRecording(
            path=path,
            topics=topics,
            verifier_params=custom.get(VERIFIER_PARAMS_KEY, ""),
            episodes=episodes,
            skipped=skipped,
            messages=count,
        )
    finally:
        reader.close()
