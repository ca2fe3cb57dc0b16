"""The interface package builds, installs into the workspace and serialises through type support."""

from __future__ import annotations

import os
from pathlib import Path

import aiv_interfaces
import pytest
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import (
    AttributeState,
    Detection2D,
    Detection2DArray,
    GroundTruthView,
    StageTiming,
    StepReport,
    Verdict,
)
from aiv_interfaces.srv import StartEpisode
from rclpy.serialization import deserialize_message, serialize_message

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_generated_python_comes_from_the_workspace_install_space():
    # Not resolved: with --symlink-install the install space links into the build space.
    module_path = Path(os.path.abspath(aiv_interfaces.__file__))
    assert (REPO_ROOT / "ros2_ws" / "install") in module_path.parents, module_path


def test_documented_constants():
    assert (Verdict.DECISION_NO, Verdict.DECISION_YES) == (0, 1)
    assert AttributeState.STATE_CONTRADICTED == 2
    assert MoveToSector.Goal.DIRECTION_FRONT_RIGHT == "front-right"
    assert MoveToSector.Result.OUTCOME_ALREADY_VISITED == 3
    assert StartEpisode.Request().index == -1  # default: load by key
    assert StartEpisode.Request().slice_start == 0  # default: the slice is the whole index


@pytest.mark.parametrize(
    "message",
    [
        Verdict(
            request_id="r",
            decision=Verdict.DECISION_FAILED,
            failure_reason="move timeout",
            step_predictions=[0, 1, 1],
            visited_sectors=[0, 3, -1],
            attributes=[AttributeState(name="body_color", votes_matched=1.5)],
            timings=[StageTiming(stage="verify", seconds=0.25, calls=3)],
        ),
        StepReport(
            step=2,
            sector=4,
            move_direction="back",
            move_outcome="unreachable",
            move_note="Nav2 aborted the goal: error code 9002 (TF_ERROR)",
            attributes=[AttributeState(name="logo")],
        ),
        Detection2DArray(
            detections=[Detection2D(x_min=1.0, y_min=2.0, x_max=30.5, y_max=40.0, score=0.875, label="mug")],
            query="mug.",
        ),
        GroundTruthView(
            capture_tag="s4_far", sector=2, has_box=True, mask_area_px=3113, mask_meets_threshold=True
        ),
        MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_MOVED, sector=3, trap_view=True),
        VerifyInstance.Goal(descriptions=["a", "b"], step_budget=6),
        StartEpisode.Response(success=True, descriptions=["x"], index_size=12),
    ],
    ids=lambda m: type(m).__name__,
)
def test_messages_round_trip_through_type_support(message):
    assert deserialize_message(serialize_message(message), type(message)) == message
