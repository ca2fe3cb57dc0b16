"""robot_verify.launch.py, checked statically (tests/ros/test_ros2_verbs.py launches it): it starts the verifier
and the robot adapter (and the stand-in on request) with the right params files, its params files name only declared
parameters, the verifier waits longer for a move than the adapter's worst move takes, and the camera QoS matches
an ordinary driver."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from aiv_common.parameter_spec import check_values, parameter_defaults
from aiv_robot.robot_adapter_parameters import ADAPTER_PARAMETERS
from aiv_verifier.verifier_parameters import verifier_parameters
from support.params_files import node_sections

REPO_ROOT = Path(__file__).resolve().parents[2]
LAUNCH = REPO_ROOT / "launch" / "robot_verify.launch.py"
CONFIG = REPO_ROOT / "ros2_ws" / "src" / "aiv_verifier" / "config"
ADAPTER_YAML = REPO_ROOT / "ros2_ws" / "src" / "aiv_robot" / "config" / "robot_adapter.yaml"
PARAMS_FILES = [CONFIG / "robot_verify.yaml", CONFIG / "robot_verify_standin.yaml"]
#: The launch actions that start a node (the verifier, a managed node that launch drives, is a CleanStopLifecycleNode).
NODE_ACTIONS = ("Node", "LifecycleNode", "CleanStopLifecycleNode")


def _tree() -> ast.Module:
    return ast.parse(LAUNCH.read_text(encoding="utf-8"), filename=str(LAUNCH))


def _nodes(tree: ast.AST) -> dict[str, dict[str, str]]:
    out = {}
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) in NODE_ACTIONS:
            keywords = {k.arg: ast.unparse(k.value) for k in call.keywords}
            out[ast.literal_eval(keywords["name"])] = keywords
    return out


def _tables() -> dict[str, Any]:
    tables: dict[str, Any] = {"verifier": verifier_parameters(), "robot_adapter": ADAPTER_PARAMETERS}
    try:
        from aiv_robot_sim.robot_sim_parameters import ROBOT_SIM_PARAMETERS
    except ImportError:  # the stand-in package is optional for this file
        pass
    else:
        tables["robot_sim"] = ROBOT_SIM_PARAMETERS
    return tables


def test_it_starts_the_verifier_the_adapter_and_on_request_the_stand_in() -> None:
    tree = _tree()
    nodes = _nodes(tree)
    assert set(nodes) == {"verifier", "robot_adapter", "robot_sim"}
    assert (nodes["robot_adapter"]["package"], nodes["robot_adapter"]["executable"]) == (
        "'aiv_robot'",
        "'robot_adapter'",
    )
    assert (nodes["robot_sim"]["package"], nodes["robot_sim"]["executable"]) == (
        "'aiv_robot_sim'",
        "'robot_sim'",
    )
    source = ast.unparse(tree)
    assert "if standin:" in source  # the stand-in only with standin:=true
    arguments = {
        ast.literal_eval(n.args[0])
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "DeclareLaunchArgument"
    }
    assert {"standin", "params_file", "image", "image_transport", "detections", "move_action"} <= arguments
    for name in ("verifier", "robot_adapter"):  # installed defaults first, the robot's file on top
        parameters = nodes[name]["parameters"]
        assert parameters.index("config', '") < parameters.index("params_file")
        assert "('camera/image_raw', image)" in nodes[name]["remappings"]
    for config in ("robot_verify.yaml", "robot_verify_standin.yaml"):
        assert config in source


@pytest.mark.parametrize("path", PARAMS_FILES, ids=lambda p: p.name)
def test_its_params_files_name_only_declared_parameters(path: Path) -> None:
    tables = _tables()
    for node, values in node_sections(path).items():
        if node in tables:
            check_values(tables[node], values)  # refuses an unknown name or a bad value, naming it
        else:
            assert node == "robot_sim", f"{path.name}: section for unknown node {node}"


def test_the_adapter_yaml_lists_every_parameter_at_its_default() -> None:
    assert node_sections(ADAPTER_YAML)["robot_adapter"] == parameter_defaults(ADAPTER_PARAMETERS)


@pytest.mark.parametrize("path", PARAMS_FILES, ids=lambda p: p.name)
def test_the_verifier_outwaits_the_adapters_worst_move_and_takes_driver_qos(path: Path) -> None:
    sections = node_sections(path)
    verifier = {**parameter_defaults(verifier_parameters()), **sections["verifier"]}
    adapter = {**parameter_defaults(ADAPTER_PARAMETERS), **sections["robot_adapter"]}
    drives = 3 if adapter["try_other_distance"] and adapter["return_after_failure"] else 2
    worst = drives * adapter["navigation_timeout_s"] + adapter["frame_timeout_s"] + adapter["frame_settle_s"]
    assert verifier["move_timeout_s"] > worst
    assert (verifier["frame_qos.reliability"], verifier["frame_qos.durability"]) == (
        "best_effort",
        "volatile",
    )
    assert (adapter["camera_qos.reliability"], adapter["camera_qos.durability"]) == (
        "best_effort",
        "volatile",
    )
