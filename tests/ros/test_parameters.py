"""Node parameters that cannot mislead, on the real executables over real DDS.

A typo, a wrong type or an out-of-range value given to a node (``-p`` or a params file) stops its start-up with
exit code 2 and one line on stderr, never a traceback and never a silently ignored setting; ``ros2 param set``
on a parameter the node read once at start-up is refused; ``/**/node`` sections of a params file reach a node
in any namespace.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from support.ros_harness import wait_until
from support.tiny_dataset import EpisodeSpec, TinyDataset, ring

INSTALL = Path(__file__).resolve().parents[2] / "ros2_ws" / "install"
EXECUTABLES = {
    "offline_sim": INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim",
    "verifier": INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier",
    "evaluator": INSTALL / "aiv_eval" / "lib" / "aiv_eval" / "evaluator",
}
START_UP_TIMEOUT_S = 60.0


def _start_up_stderr(node: str, *ros_args: str) -> list[str]:
    """Run ``node`` until it exits; assert exit code 2 and no traceback; return the lines of its stderr."""
    completed = subprocess.run(
        [str(EXECUTABLES[node]), "--ros-args", *ros_args],
        capture_output=True,
        text=True,
        timeout=START_UP_TIMEOUT_S,
        env=dict(os.environ),
        check=False,
    )
    assert completed.returncode == 2 and "Traceback" not in completed.stderr, completed.stderr
    return completed.stderr.strip().splitlines()


def _start_up_failure(node: str, *ros_args: str) -> str:
    """The one line on stderr of a node whose start-up is refused (exit code 2)."""
    lines = _start_up_stderr(node, *ros_args)
    assert len(lines) == 1, lines
    return lines[0]


def _params_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("node", "args", "line"),
    [
        (
            "offline_sim",
            ["-p", "max_steps:=abc"],
            "offline_sim: parameter 'max_steps' = 'abc' (a string); expected an integer >= 1",
        ),
        (
            "offline_sim",
            ["-p", "frame_qos.reliability:=sometimes"],
            "offline_sim: parameter 'frame_qos.reliability' = 'sometimes'; expected one of reliable, best_effort",
        ),
        (
            "offline_sim",
            ["-p", "seed_policy:=per_episode"],
            "offline_sim: parameter 'seed_policy' = 'per_episode'; expected one of per_episode_fixed, "
            "seed_plus_index, seed_plus_slice_index",
        ),
        (
            "offline_sim",
            ["-p", "sped:=3"],
            "offline_sim: unknown parameter 'sped' given to /offline_sim; did you mean seed?",
        ),
        (
            "verifier",
            ["-p", "agent.nvb:=random"],
            "verifier: unknown parameter 'agent.nvb' given to /verifier; did you mean agent.nbv?",
        ),
        (
            "verifier",
            ["-p", "frame_cache_size:=0"],
            "verifier: parameter 'frame_cache_size' = 0; expected an integer >= 1",
        ),
        (
            "verifier",
            ["-p", "frame_timeout_s:=abc"],
            "verifier: parameter 'frame_timeout_s' = 'abc' (a string); expected a number > 0.0",
        ),
        (
            "verifier",
            ["-p", "agent.nbv:=rand"],
            "verifier: parameter 'agent.nbv' = 'rand'; expected one of farthest, llm, random, uncertainty",
        ),
        (
            "verifier",
            ["-p", "agent.evidence.accept:=1.5"],
            "verifier: parameter 'agent.evidence.accept' = 1.5; expected a number >= 0.0 and <= 1.0",
        ),
        (
            "verifier",
            [
                "-p",
                "agent.fusion:=evidential",
                "-p",
                "agent.evidence.accept:=0.4",
                "-p",
                "agent.evidence.reject:=0.6",
            ],
            "verifier: agent.evidence: accept / reject: reject probability 0.6 must not exceed accept "
            "probability 0.4",
        ),
        (
            "verifier",
            [
                "-p",
                "agent.fusion:=evidential",
                "-p",
                "verifier.calibration_file:=/nonexistent/calibration.json",
            ],
            "verifier: verifier.calibration_file: /nonexistent/calibration.json: no such file",
        ),
        (
            "evaluator",
            ["-p", "max_attempts:=0"],
            "evaluator: parameter 'max_attempts' = 0; expected an integer >= 1",
        ),
        (
            "evaluator",
            ["-p", "verify_actoin:=x"],
            "evaluator: unknown parameter 'verify_actoin' given to /evaluator; did you mean verify_action?",
        ),
    ],
)
def test_bad_values_and_unknown_keys_stop_start_up_with_one_line(
    node: str, args: list[str], line: str
) -> None:
    assert _start_up_failure(node, *args) == line


def test_params_file_keys_reach_a_namespaced_node_and_are_checked_there(tmp_path: Path) -> None:
    params = _params_file(
        tmp_path,
        "/**/offline_sim:\n  ros__parameters:\n    max_steps: 3\n    frame_qos:\n      depth: 0\n",
    )
    line = _start_up_failure("offline_sim", "-r", "__ns:=/robot_7", "--params-file", str(params))
    assert line == "offline_sim: parameter 'frame_qos.depth' = 0; keep_last needs depth >= 1"


def test_an_unreadable_params_file_ends_in_a_message_not_a_traceback(tmp_path: Path) -> None:
    params = _params_file(tmp_path, "/**/verifier:\n  ros__parameters:\n    agent.nbv: [random\n")
    lines = _start_up_stderr("verifier", "--params-file", str(params))
    # rcl logs its own "Failed to parse global arguments" line first; ours names the file.
    assert lines[-1].startswith("verifier: bad command line or params file: ") and str(params) in lines[-1]


def _tiny_dataset(root: Path) -> Path:
    data = TinyDataset(root / "pv")
    episode = data.add_episode(EpisodeSpec(views=ring()))
    data.write_descriptions()
    data.write_index("pv_index_all.jsonl", [data.pair(episode)])
    return data.root


def test_namespaced_node_takes_wildcard_keys_and_refuses_set_parameters(
    ros_executor, node_process, tmp_path: Path
) -> None:
    root = _tiny_dataset(tmp_path)
    params = _params_file(
        tmp_path,
        f"/**/offline_sim:\n  ros__parameters:\n    dataset_root: {root}\n    max_steps: 4\n"
        "    seed_policy: seed_plus_index\n    frame_qos: {depth: 2}\n",
    )
    process = node_process(
        [str(EXECUTABLES["offline_sim"]), "--ros-args", "-r", "__ns:=/robot_7", "--params-file", str(params)],
        name="offline_sim",
    )
    client_node = ros_executor.create_node("parameter_test_client")
    client = AsyncParameterClient(client_node, "/robot_7/offline_sim")
    wait_until(lambda: not process.running or client.services_are_ready(), "the namespaced node's parameters")
    process.assert_running()

    names = ["max_steps", "seed_policy", "frame_qos.depth"]
    values = ros_executor.ask(lambda: client.get_parameters(names), "GetParameters").values
    got = [values[0].integer_value, values[1].string_value, values[2].integer_value]
    assert got == [4, "seed_plus_index", 2]

    # What `ros2 param set /robot_7/offline_sim max_steps 2` sends: refused, the value stays.
    results = ros_executor.ask(
        lambda: client.set_parameters([Parameter("max_steps", value=2)]), "SetParameters"
    ).results
    assert not results[0].successful and "read-only" in results[0].reason
    after = ros_executor.ask(lambda: client.get_parameters(["max_steps"]), "GetParameters").values
    assert after[0].integer_value == 4

    described = ros_executor.ask(
        lambda: client.describe_parameters(["max_steps", "seed_policy"]), "Describe"
    ).descriptors
    assert described[0].read_only and described[0].integer_range[0].from_value == 1
    assert "seed_plus_index" in described[1].additional_constraints and described[1].description
    process.assert_running()


def test_the_verifier_refuses_changes_to_its_agent_and_unknown_overrides_in_process(ros_executor) -> None:
    from aiv_common.parameter_spec import ParameterError
    from aiv_verifier.verifier_node import VerifierNode

    quiet = Parameter("verifier.classical.ocr_engine", value="none")  # no OCR model to load for this test
    node = VerifierNode(context=ros_executor.context, parameter_overrides=[quiet])
    try:
        for name, value in (("agent.nbv", "random"), ("frame_timeout_s", 1.0), ("frame_qos.depth", 5)):
            (result,) = node.set_parameters([Parameter(name, value=value)])
            assert not result.successful and "read-only" in result.reason, name
        assert node.get_parameter("agent.nbv").value == "farthest"
        descriptor = node.describe_parameter("verifier.noise.error_rate")
        assert descriptor.read_only and descriptor.floating_point_range[0].to_value == 1.0
    finally:
        node.goal_node.destroy_node()
        node.destroy_node()

    with pytest.raises(
        ParameterError, match=r"^unknown parameter 'agent\.nvb' given to /verifier; did you mean"
    ):
        VerifierNode(
            context=ros_executor.context, parameter_overrides=[quiet, Parameter("agent.nvb", value="random")]
        )
