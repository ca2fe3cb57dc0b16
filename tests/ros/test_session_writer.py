"""The session writer without DDS: memory stays bounded while recording, and per-episode splitting copes with
topics that arrive out of order (the next request before the previous verdict) without losing a frame."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from aiv_bags_ros.session_bag import ROLES
from aiv_bags_ros.session_reader import read_session
from aiv_bags_ros.session_writer import BagStream, EpisodeSplitter
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import StepReport, Verdict
from builtin_interfaces.msg import Time
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Image

TOPICS = {role.role: role.topic for role in ROLES}
FRAME_BYTES = 640 * 360 * 3


def _image(stamp_ns: int) -> bytes:
    message = Image(height=360, width=640, encoding="rgb8", step=640 * 3, data=bytes(FRAME_BYTES))
    message.header.stamp = Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9)
    return serialize_message(message)


def _stamp(ns: int) -> Time:
    return Time(sec=ns // 10**9, nanosec=ns % 10**9)


def test_recording_streams_to_disk_with_bounded_memory(tmp_path: Path) -> None:
    frame = _image(1)
    stream = BagStream(tmp_path / "bag", storage="mcap", topics=TOPICS)
    tracemalloc.start()
    try:
        for index in range(300):  # 300 x 691 kB = 207 MB through the writer
            stream.write("image", frame, 1_000 + index)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    path = stream.close()
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB while writing {300 * len(frame) / 2**20:.0f} MiB"
    assert sum(file.stat().st_size for file in path.iterdir()) > 300 * FRAME_BYTES


def test_episodes_are_split_although_the_next_request_comes_before_the_previous_verdict(
    tmp_path: Path,
) -> None:
    closed: list[str] = []
    splitter = EpisodeSplitter(tmp_path, storage="mcap", topics=TOPICS, log=closed.append)
    at = iter(range(10**6, 10**7, 1000))

    def goal(key: str, start: int) -> bytes:
        return serialize_message(VerifyInstance.Goal(request_id=key, episode_key=key, descriptions=["a mug"],
                                                     start_stamp=_stamp(start)))  # fmt: skip

    def verdict(key: str, stamps: list[int]) -> bytes:
        transcript = [StepReport(step=k, image_stamp=_stamp(s)) for k, s in enumerate(stamps)]
        return serialize_message(Verdict(request_id=key, transcript=transcript))

    second_start = 3 * 10**9
    splitter.on_message("image", _image(10**9), next(at))  # start view of a/0, before its request
    splitter.on_message("requests", goal("a/0", 10**9), next(at))
    splitter.on_message("image", _image(2 * 10**9), next(at))  # after a move
    splitter.on_message("image", _image(second_start), next(at))  # start view of b/0 ...
    splitter.on_message("requests", goal("b/0", second_start), next(at))  # ... and its request
    splitter.on_message("verdicts", verdict("a/0", [10**9, 2 * 10**9]), next(at))  # a/0's verdict comes late
    assert len(closed) == 1 and "a/0" in closed[0] and "INCOMPLETE" not in closed[0]
    splitter.on_message("verdicts", verdict("b/0", [second_start]), next(at))
    splitter.close()
    assert splitter.stats.complete == 2 and splitter.stats.incomplete == 0
    first = read_session(tmp_path / "a" / "0").episodes[0]
    second = read_session(tmp_path / "b" / "0").episodes[0]
    assert sorted(first.frames) == [10**9, 2 * 10**9] and sorted(second.frames) == [second_start]


def test_an_episode_whose_verdict_never_comes_is_closed_incomplete(tmp_path: Path) -> None:
    closed: list[str] = []
    splitter = EpisodeSplitter(tmp_path, storage="sqlite3", topics=TOPICS, log=closed.append)
    splitter.on_message("image", _image(10**9), 1)
    splitter.on_message(
        "requests", serialize_message(VerifyInstance.Goal(request_id="r", episode_key="s/1/x")), 2
    )
    splitter.close()
    assert (tmp_path / "s" / "1" / "x.incomplete" / "metadata.yaml").is_file()
    assert not (tmp_path / "s" / "1" / "x").exists() and "INCOMPLETE" in closed[0]


def test_step_reports_that_arrive_after_their_verdict_are_still_in_the_episode_bag(tmp_path: Path) -> None:
    closed: list[str] = []
    now = [0.0]
    splitter = EpisodeSplitter(
        tmp_path, storage="mcap", topics=TOPICS, required=("image", "steps"), log=closed.append,
        clock=lambda: now[0],
    )  # fmt: skip
    stamps = [10**9, 2 * 10**9, 3 * 10**9]
    steps = [StepReport(step=k, image_stamp=_stamp(s)) for k, s in enumerate(stamps)]
    goal = VerifyInstance.Goal(request_id="r", episode_key="s/1/x", start_stamp=_stamp(stamps[0]))
    splitter.on_message("requests", serialize_message(goal), 1)
    for at, stamp in enumerate(stamps, start=2):
        splitter.on_message("image", _image(stamp), at)
    splitter.on_message("steps", serialize_message(steps[0]), 10)
    # The verdict overtakes the last two step reports (each topic is a stream of its own).
    splitter.on_message("verdicts", serialize_message(Verdict(request_id="r", transcript=steps)), 11)
    assert closed == []
    splitter.on_message("steps", serialize_message(steps[1]), 12)
    assert closed == []
    splitter.on_message("steps", serialize_message(steps[2]), 13)
    assert len(closed) == 1 and "INCOMPLETE" not in closed[0]
    assert splitter.stats.dropped == 0
    episode = read_session(tmp_path / "s" / "1" / "x").episodes[0]
    assert [int(step.step) for step in episode.steps] == [0, 1, 2]


def test_an_episode_whose_step_reports_never_all_arrive_is_closed_incomplete_saying_which(
    tmp_path: Path,
) -> None:
    closed: list[str] = []
    now = [0.0]
    splitter = EpisodeSplitter(
        tmp_path, storage="mcap", topics=TOPICS, required=("image", "steps"), log=closed.append,
        clock=lambda: now[0], close_timeout_s=5.0,
    )  # fmt: skip
    steps = [StepReport(step=k, image_stamp=_stamp(10**9)) for k in range(2)]
    goal = VerifyInstance.Goal(request_id="r", episode_key="s/1/x", start_stamp=_stamp(10**9))
    splitter.on_message("requests", serialize_message(goal), 1)
    splitter.on_message("image", _image(10**9), 2)
    splitter.on_message("steps", serialize_message(steps[0]), 3)
    splitter.on_message("verdicts", serialize_message(Verdict(request_id="r", transcript=steps)), 4)
    splitter.poll()
    assert closed == []
    now[0] = 6.0
    splitter.poll()
    assert len(closed) == 1 and "INCOMPLETE" in closed[0] and "missing step reports: [1]" in closed[0]
