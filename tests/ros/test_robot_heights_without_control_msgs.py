"""A robot adapter whose params file configures height levels, on a machine without control_msgs (the PyPI
wheels alone, no ../shared): it starts, says so in one warning line, serves planar moves as always and answers
``up`` / ``down`` as unreachable. Runs everywhere: control_msgs is hidden from the adapter's process when it is
installed here."""

from __future__ import annotations

import os
from typing import Any

import pytest
from action_msgs.msg import GoalStatus
from aiv_interfaces.action import MoveToSector
from rclpy.action import ActionClient
from support.robot_nodes import move, start_adapter
from support.ros_harness import wait_until

pytestmark = pytest.mark.ros

WARNING = "height levels are configured (height_joint_names) but control_msgs is not installed"


def _without_control_msgs() -> dict[str, str]:
    """The process environment with the tools underlay (where control_msgs lives) off the Python path."""
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return {"PYTHONPATH": os.pathsep.join(p for p in paths if p and ".ros2-tools" not in p)}


def test_levels_configured_without_control_msgs_leave_up_and_down_unreachable(
    ros_executor: Any, node_process: Any
) -> None:
    # The stand-in's parameter file configures its torso: levels -1, 0, 1.
    adapter = start_adapter(node_process, {"request_topic": "''"}, env=_without_control_msgs())
    node = ros_executor.create_node("heights_absent_test")
    client = ActionClient(node, MoveToSector, "move_to_sector")
    assert client.wait_for_server(timeout_sec=60.0), adapter.output()
    wait_until(lambda: WARNING in adapter.output(), "the adapter's warning")
    assert sum(WARNING in line for line in adapter.output().splitlines()) == 1

    for direction in ("up", "down"):
        status, result = move(client, direction, 30.0)
        assert status == GoalStatus.STATUS_SUCCEEDED
        assert result.outcome == MoveToSector.Result.OUTCOME_UNREACHABLE and result.level == 0
        assert result.visibility_warning == (
            f"{direction!r} is unreachable: this robot has no camera height levels (control_msgs is not "
            "installed); the camera did not move"
        )
    adapter.assert_running()
