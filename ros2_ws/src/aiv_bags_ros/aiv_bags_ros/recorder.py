"""The session recorder node: subscribes to the verifier's inputs and outputs and streams them into bags.

``aiv-bag record OUT`` records everything into one bag until Ctrl-C; ``--split-dir DIR`` (what
``aiv-eval run --record-bags`` starts) writes one bag per verification request to ``DIR/<episode key>``.
Subscriptions are raw (serialized bytes): nothing is decoded on the way to the writer except the requests
and verdicts that split episodes. See :mod:`.session_bag` for the topics and :mod:`.session_writer` for how a
killed recording is recognised.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .session_bag import (
    ROLES,
    ROLES_BY_NAME,
    STORAGES,
    VERIFIER_PARAMS_KEY,
    SessionBagError,
)
from .session_writer import RECORDING_SUFFIX, BagStream, EpisodeSplitter

#: Seconds between checks of an episode waiting for its last frames, and of the ready condition.
POLL_PERIOD_S = 0.2
#: Subscriber history: deep enough that a slow write never drops a message the publisher sent reliably.
SUBSCRIBER_DEPTH = 100


def message_class(msgtype: str) -> Any:
    """The rclpy message class of a rosbag2 type name (``pkg/msg/Name`` or ``pkg/action/Name_Goal``)."""
    package, kind, name = msgtype.split("/")
    if kind == "action":
        action, part = name.rsplit("_", 1)
        return getattr(getattr(importlib.import_module(f"{package}.action"), action), part)
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def parse_topics(items: Sequence[str]) -> dict[str, str]:
    topics: dict[str, str] = {}
    for item in items:
        role, sep, name = item.partition("=")
        if not sep or role not in ROLES_BY_NAME or not name:
            raise SessionBagError(
                f"--topic {item!r}: expected ROLE=NAME with ROLE one of {', '.join(ROLES_BY_NAME)}"
            )
        topics[role] = name
    return topics


def verifier_params_text(path: Path) -> str:
    """The params file as text, to embed in the bag (replay starts from the configuration it names)."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise SessionBagError(f"--verifier-params {path}: {error.strerror or error}") from error


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("out", nargs="?", help="bag directory to create (must not exist)")
    target.add_argument("--split-dir", help="one bag per verification request under DIR/<episode key>")
    parser.add_argument("--storage", choices=list(STORAGES), default="mcap", help="default mcap")
    parser.add_argument(
        "--topic",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="topic of a role (" + ", ".join(f"{r.role}: {r.topic}" for r in ROLES) + ")",
    )
    parser.add_argument(
        "--verifier-params", help="params YAML the verifier runs with; stored in the bag for replay"
    )
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        choices=["camera_info", "ground_truth", "detections", "steps"],
        help="--split-dir: an episode bag is complete only with this topic's message for every step",
    )
    parser.add_argument("--ready-file", help="written once the verifier's and camera's publishers are seen")


class SessionRecorder:
    """The node and its sink; built by :func:`run`. rclpy is imported here, not at module import."""

    def __init__(self, args: argparse.Namespace, context: Any = None) -> None:
        from rclpy.node import Node
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

        self.node = Node("session_recorder", context=context)
        self.ready_file = Path(args.ready_file) if args.ready_file else None
        overrides = parse_topics(args.topic)
        self.topics = {
            role.role: self.node.resolve_topic_name(overrides.get(role.role, role.topic)) for role in ROLES
        }
        custom = {}
        if args.verifier_params:
            custom[VERIFIER_PARAMS_KEY] = verifier_params_text(Path(args.verifier_params))
        logger = self.node.get_logger()

        def log(text: str) -> None:
            logger.info(text)

        self.splitter: EpisodeSplitter | None = None
        self.stream: BagStream | None = None
        if args.split_dir:
            self.splitter = EpisodeSplitter(
                Path(args.split_dir),
                storage=args.storage,
                topics=self.topics,
                custom_data=custom,
                required=("image", *args.require),
                log=log,
            )
        else:
            out = Path(args.out)
            if out.exists():
                raise SessionBagError(f"bag {out}: exists already; choose a new directory")
            self.stream = BagStream(out, storage=args.storage, topics=self.topics, custom_data=custom)
            log(f"recording into {out}{RECORDING_SUFFIX} (renamed to {out} when closed)")
        for role in ROLES:
            qos = QoSProfile(
                history=HistoryPolicy.KEEP_LAST,
                depth=SUBSCRIBER_DEPTH,
                reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL if role.latched else DurabilityPolicy.VOLATILE,
            )
            self.node.create_subscription(
                message_class(role.msgtype),
                self.topics[role.role],
                self._callback(role.role),
                qos,
                raw=True,
            )
        self._ready = self.ready_file is None
        self.node.create_timer(POLL_PERIOD_S, self._tick)

    def _callback(self, role: str) -> Any:
        def on_message(raw: bytes) -> None:
            now = time.time_ns()
            if self.splitter is not None:
                self.splitter.on_message(role, raw, now)
            elif self.stream is not None:
                self.stream.write(role, raw, now)

        return on_message

    def _tick(self) -> None:
        if self.splitter is not None:
            self.splitter.poll()
        if not self._ready and all(
            self.node.count_publishers(self.topics[role]) > 0
            for role in ("requests", "steps", "image", "verdicts")
        ):
            self._ready = True
            assert self.ready_file is not None
            self.ready_file.parent.mkdir(parents=True, exist_ok=True)
            self.ready_file.write_text("ready\n", encoding="utf-8")
            self.node.get_logger().info("the verifier's and the camera's publishers are matched: recording")

    def close(self) -> str:
        if self.splitter is not None:
            self.splitter.close()
            stats = self.splitter.stats
            return (
                f"{stats.complete} episode bag(s) complete, {stats.incomplete} incomplete, "
                f"{stats.dropped} message(s) outside any episode"
            )
        assert self.stream is not None
        path = self.stream.close()
        return f"{self.stream.messages} messages ({self.stream.bytes / 1e6:.1f} MB) in {path}"


def run(args: argparse.Namespace, ros_args: Sequence[str] = ()) -> int:
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

    rclpy.init(args=["session_recorder", *ros_args])
    try:
        recorder = SessionRecorder(args)
    except (SessionBagError, ValueError) as error:
        print(f"aiv-bag record: error: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    executor = SingleThreadedExecutor()
    executor.add_node(recorder.node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        summary = recorder.close()
        print(f"aiv-bag record: {summary}", file=sys.stderr)
        executor.shutdown(timeout_sec=2.0)
        recorder.node.destroy_node()
        rclpy.try_shutdown()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``session_recorder`` executable: ``aiv-bag record``'s arguments, then optional ``--ros-args``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ros_args: list[str] = []
    if "--ros-args" in argv:
        at = argv.index("--ros-args")
        argv, ros_args = argv[:at], argv[at:]
    parser = argparse.ArgumentParser(prog="session_recorder", description=__doc__.split("\n\n")[0])
    add_record_arguments(parser)
    return run(parser.parse_args(argv), ros_args)


if __name__ == "__main__":
    sys.exit(main())
