"""Topic, service, action and node names given as parameters are checked when they are declared.

rclpy refuses a malformed name only when the node creates the entity, with a multi-line traceback that never
names the parameter; the nodes refuse it at start-up instead, like any other bad value: exit code 2 and one
line naming the parameter.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

INSTALL = Path(__file__).resolve().parents[2] / "ros2_ws" / "install"
EXECUTABLES = {
    "offline_sim": INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim",
    "verifier": INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier",
    "evaluator": INSTALL / "aiv_eval" / "lib" / "aiv_eval" / "evaluator",
}


@pytest.mark.parametrize(
    ("node", "argument", "line"),
    [
        (
            "offline_sim",
            "image_topic:=camera image",
            "offline_sim: parameter 'image_topic' = 'camera image'; expected a valid ROS name: topic name must "
            "not contain characters other than alphanumerics, '_', '~', '{', or '}'",
        ),
        (
            "verifier",
            "verify_action:=verify//instance",
            "verifier: parameter 'verify_action' = 'verify//instance'; expected a valid ROS name: topic name "
            "must not contain repeated '/'",
        ),
        (
            "evaluator",
            "simulator_node:=2nd_sim",
            "evaluator: parameter 'simulator_node' = '2nd_sim'; expected a valid ROS name: topic name token "
            "must not start with a number",
        ),
    ],
)
def test_a_malformed_name_stops_start_up_with_one_line(node: str, argument: str, line: str) -> None:
    completed = subprocess.run(
        [str(EXECUTABLES[node]), "--ros-args", "-p", argument],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.strip().splitlines() == [line]


def test_private_and_substituted_names_are_accepted(ros_executor) -> None:
    from aiv_common.parameters import ros_name_problem

    node = ros_executor.create_node("name_checker", namespace="/robot_7")
    for name in ("camera/image_raw", "/abs/topic", "~/debug", "{node}/verdict", "offline_sim"):
        assert ros_name_problem(node, name) is None, name
    assert ros_name_problem(node, "a b") is not None and ros_name_problem(node, "x/") is not None
