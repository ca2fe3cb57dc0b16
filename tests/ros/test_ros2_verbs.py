"""The `ros2` verbs a ROS user types first, against our nodes started by `ros2 launch robot_verify.launch.py
standin:=true` (verifier + robot adapter + the live-rendering robot stand-in), and `aiv-pregrasp` deciding there.

- ``ros2 param describe`` shows a descriptor's description, range and read-only flag;
- ``ros2 param set`` on a read-only parameter is refused with the reason, and the value stays;
- ``ros2 action send_goal /verify_instance ... --feedback`` prints the step reports and the verdict, which
  ``ros2 topic echo verifier/verdict`` shows too;
- ``ros2 run aiv_robot aiv-pregrasp`` asks for a verdict and exits with its documented code;
- ``ros2 interface show`` prints our action.
Every verb runs with --no-daemon where it has the flag (support.ros2_cli).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.ros2_cli import Ros2Process, require_tools, ros2, ros2_until

require_tools("launch_ros", "ros2launch", "ros2param", "ros2action", "ros2topic")

pytestmark = pytest.mark.ros

QUERY = "an orange backpack with blue shoulder straps and a green front pocket"


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ros2Process]:
    """robot_verify.launch.py with the stand-in, up until the verifier serves goals."""
    log = tmp_path_factory.mktemp("standin") / "robot_verify.log"
    launch = Ros2Process(["launch", "aiv_verifier", "robot_verify.launch.py", "standin:=true"], log)
    try:
        ros2_until(
            ["node", "info", "/verifier_goals"],
            lambda out: "/verify_instance: aiv_interfaces/action/VerifyInstance" in out,
            "the verifier's VerifyInstance server",
            timeout_s=60.0,
        )
        ros2_until(
            ["node", "list"],
            lambda out: {"/robot_adapter", "/robot_sim"} <= set(out.split()),
            "the adapter and the stand-in",
        )
        yield launch
    finally:
        code = launch.stop()
        assert code == 0, launch.output()


def test_param_describe_shows_the_range_and_the_read_only_flag(standin: Ros2Process) -> None:
    output = ros2("param", "describe", "/verifier", "agent.evidence.accept").stdout
    assert "Type: double" in output
    assert "Read only: true" in output
    assert "Min value: 0.0" in output and "Max value: 1.0" in output
    assert "answer YES once the probability" in output


def test_param_set_on_a_read_only_parameter_is_refused_with_the_reason(standin: Ros2Process) -> None:
    before = ros2("param", "get", "/verifier", "verifier.backend").stdout
    refused = ros2("param", "set", "/verifier", "verifier.backend", "oracle", check=False)
    assert "Setting parameter failed" in refused.stdout + refused.stderr
    assert "read-only" in refused.stdout + refused.stderr
    assert ros2("param", "get", "/verifier", "verifier.backend").stdout == before


def test_send_goal_prints_steps_and_a_verdict_that_topic_echo_shows_too(
    standin: Ros2Process, ros2_process
) -> None:
    echo = ros2_process(["topic", "echo", "--once", "verifier/verdict", "aiv_interfaces/msg/Verdict"], "echo")
    # The echo subscribes before the goal goes out: wait until the verdict topic has it as a subscriber.
    ros2_until(
        ["topic", "info", "/verifier/verdict"],
        lambda out: "Subscription count: 0" not in out,
        "the echo's subscription",
    )
    sent = ros2(
        "action", "send_goal", "/verify_instance", "aiv_interfaces/action/VerifyInstance",
        f"{{descriptions: ['{QUERY}'], request_id: 'cli-check'}}", "--feedback",
        timeout_s=240.0,
    )  # fmt: skip
    output = sent.stdout
    assert "Goal accepted" in output, output
    assert output.count("Feedback:") >= 1 and "step:" in output, output
    assert "Goal finished with status: SUCCEEDED" in output, output
    decision = re.search(r"^\s+decision: (\d+)$", output, re.MULTILINE)
    assert decision is not None, output
    assert echo.wait(timeout_s=30.0) == 0, echo.output()
    echoed = echo.output()
    assert "request_id: cli-check" in echoed, echoed
    assert f"decision: {decision.group(1)}" in echoed, echoed


def test_aiv_pregrasp_through_ros2_run_decides(standin: Ros2Process) -> None:
    completed = ros2("run", "aiv_robot", "aiv-pregrasp", QUERY, timeout_s=240.0, check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode in (0, 1, 3), output  # YES, NO, UNDECIDED: a decision, not a failure
    assert re.search(r"\b(YES|NO|UNDECIDED)\b", output), output


def test_interface_show_prints_the_verify_instance_action(tmp_path: Path) -> None:
    output = ros2("interface", "show", "aiv_interfaces/action/VerifyInstance").stdout
    assert "string[] descriptions" in output and "Verdict verdict" in output and "StepReport step" in output
