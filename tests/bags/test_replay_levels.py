"""Replaying a recorded session with camera height levels (issue #41): the replay's port tells the verifier's
episode loop the level of each recorded view, as it tells the sector, so a session recorded without ground
truth (a robot) replays at the levels it was recorded at; and the comparison notices a replayed step whose level
differs from the recording's.

The recording is built in memory (two steps of a robot session without ground truth: an ``up`` move from eye
level, then an answer from the raised camera); the agent is a script that moves ``up`` once and then answers.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

try:
    from aiv_bags_ros.replay import BagPort, step_differences
    from aiv_bags_ros.session_reader import RecordedEpisode, RecordedFrame, SessionRecording
    from aiv_dataset.vocabulary import MoveOutcome
    from aiv_interfaces.action import VerifyInstance
    from aiv_interfaces.msg import StepReport, Verdict
    from aiv_verifier.agent.episode_loop import run_episode
    from aiv_verifier.agent.steps import ViewFrame
    from builtin_interfaces.msg import Time
    from sensor_msgs.msg import Image
except ImportError as error:  # pragma: no cover - depends on the environment
    if os.environ.get("AIV_REQUIRE_ROS") == "1":
        raise
    pytest.skip(f"needs the built workspace: {error} (source .env.sh)", allow_module_level=True)

LEVELS = (-1, 0, 1)


def _image(stamp: Time) -> Image:
    message = Image(height=2, width=2, encoding="rgb8", step=6, data=bytes(12))
    message.header.stamp = stamp
    return message


def _recording() -> tuple[SessionRecording, RecordedEpisode]:
    """A robot session (no ground truth) that moved ``up`` at sector 2 and answered from level 1."""
    stamps = [Time(sec=10), Time(sec=11)]
    steps = [
        StepReport(
            step=0, sector=2, level=0, image_stamp=stamps[0], move_direction="up", move_outcome="moved"
        ),
        StepReport(step=1, sector=2, level=1, image_stamp=stamps[1], action=1, move_outcome="decided"),
    ]
    frames = {
        stamp.sec * 1_000_000_000: RecordedFrame(stamp.sec * 1_000_000_000, image=_image(stamp))
        for stamp in stamps
    }
    episode = RecordedEpisode(
        goal=VerifyInstance.Goal(request_id="r1", episode_key="r1", start_sector=2),
        verdict=Verdict(request_id="r1", transcript=steps),
        frames=frames,
    )
    recording = SessionRecording(
        path=Path("session.bag"), topics={"image": "/camera/image_raw"}, verifier_params="", episodes=[episode],
        skipped=[],
    )  # fmt: skip
    return recording, episode


class UpThenAnswer:
    """Moves ``up`` from the first view, answers at the second; keeps the frames it was given."""

    def __init__(self) -> None:
        self.frames: list[ViewFrame] = []

    def observe(self, frame: ViewFrame) -> Any:
        self.frames.append(frame)
        if len(self.frames) == 1:
            return SimpleNamespace(stopped=False, move=SimpleNamespace(direction="up"))
        return SimpleNamespace(stopped=True, move=None)


def test_the_replayed_loop_follows_the_recorded_levels_without_ground_truth() -> None:
    recording, episode = _recording()
    agent = UpThenAnswer()
    trace = run_episode(
        agent, BagPort(recording, episode, LEVELS), episode_key="r1", budget=4, start_sector=2
    )
    assert not trace.failed, trace.failure_reason
    assert [(f.current_sector, f.current_level) for f in agent.frames] == [(2, 0), (2, 1)]
    assert all(f.levels == LEVELS for f in agent.frames)  # up / down are offered, as in the recording
    assert [(e.move_result, e.level) for e in trace.entries] == [
        (MoveOutcome.MOVED, 0),
        (MoveOutcome.DECIDED, 1),
    ]


def test_a_move_report_names_the_level_of_the_recorded_view_that_followed() -> None:
    recording, episode = _recording()
    port = BagPort(recording, episode)
    port.frame(SimpleNamespace(stamp=None, step_count=0, sector=2, navigation_failed=False, level=0))
    report = port.move("up")
    assert (report.outcome, report.sector, report.level) == (MoveOutcome.MOVED, 2, 1)
    assert report.frame_stamp == 11 * 1_000_000_000


def test_without_levels_a_frame_offers_the_eye_level_alone() -> None:
    recording, episode = _recording()
    frame = BagPort(recording, episode).frame(
        SimpleNamespace(stamp=None, step_count=0, sector=2, navigation_failed=False, level=0)
    )
    assert frame.levels == (0,) and frame.current_level == 0


def test_a_replayed_step_at_another_level_is_a_difference() -> None:
    recorded = StepReport(step=1, sector=2, level=1, move_outcome="decided", action=1)
    replayed = StepReport(step=1, sector=2, level=0, move_outcome="decided", action=1)
    assert step_differences(recorded, replayed) == ["level 1 -> 0"]
    assert step_differences(recorded, recorded) == []
