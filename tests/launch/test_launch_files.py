"""Launch files parse, and every package, executable and params file they name is installed.

These checks are static, so they hold on a machine without `launch` (it is not on PyPI; the PyPI project of
that name is unrelated). Where the launch system is installed (apt ROS 2, or `make ros2-tools`) each launch
description is also built for real here, and tests/ros/test_ros2_launch.py runs every file with `ros2 launch`.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from support.ros2_cli import skip_unless_tools

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
LAUNCH_FILES = sorted((REPO_ROOT / "launch").glob("*.launch.py"))


#: The launch actions that start a node: a managed node is a launch_ros LifecycleNode, or, where launch drives its
#: transitions, aiv_common.lifecycle_launch's CleanStopLifecycleNode (a LifecycleNode).
NODE_ACTIONS = ("Node", "LifecycleNode", "CleanStopLifecycleNode")
#: The executables of the managed nodes.
MANAGED = {"verifier", "detector_node"}


def _calls(tree: ast.AST, *names: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in names
    ]


def _action(call: ast.Call) -> str:
    return str(getattr(call.func, "id", getattr(call.func, "attr", "")))


def _keyword(call: ast.Call, key: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == key and isinstance(keyword.value, ast.Constant):
            return keyword.value.value
    return None


def test_there_are_launch_files_and_they_are_installed():
    assert LAUNCH_FILES, "launch/ holds no *.launch.py"
    installed = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "launch"
    for path in LAUNCH_FILES:
        assert (installed / path.name).is_file(), f"{path.name} is not installed to {installed}"


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_names_only_installed_executables_and_params(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)
    nodes = _calls(tree, *NODE_ACTIONS)
    assert nodes, f"{path.name} starts no node"
    for call in nodes:
        package, executable = _keyword(call, "package"), _keyword(call, "executable")
        assert (INSTALL / package / "lib" / package / executable).is_file(), (
            f"{package}/{executable} not installed"
        )
    for call in _calls(tree, "PathJoinSubstitution"):
        parts = call.args[0].elts
        package = parts[0].args[0].value  # FindPackageShare("pkg")
        relative = [part.value for part in parts[1:]]
        assert INSTALL.joinpath(package, "share", package, *relative).is_file(), (
            f"{package}/{relative} missing"
        )


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_description_builds(path):
    skip_unless_tools("launch_ros")
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.generate_launch_description().entities


def test_offline_eval_launch_gives_every_node_a_section_of_the_installed_params_file():
    """The three nodes it starts find their parameters in the default file, which aiv-eval reads too."""
    from aiv_eval.run.spec import EvalSpec

    path = REPO_ROOT / "launch" / "offline_eval.launch.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = {_keyword(call, "name"): call for call in _calls(tree, *NODE_ACTIONS)}
    assert set(names) == {"offline_sim", "verifier", "evaluator"}
    params = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "offline_eval.yaml"
    spec = EvalSpec.load(params)  # unknown nodes or parameters would raise
    assert (
        spec.config_info()["agent_type"] == "aiv:classical" and spec.config_info()["nbv_type"] == "farthest"
    )
    for name in ("offline_sim", "verifier"):
        respawn = [k for k in names[name].keywords if k.arg == "respawn"]
        assert respawn and respawn[0].value.value is True, f"{name} is not respawned"


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_managed_nodes_start_as_lifecycle_nodes_that_one_party_drives(path):
    """The verifier and the detector start as launch_ros LifecycleNodes. Where launch drives their transitions (a
    CleanStopLifecycleNode, whose requests end quietly when launch stops; ``activate_when_started``, switched by the
    ``autostart`` launch argument) their own ``autostart`` parameter is false, so only launch drives them; a
    respawned one drives itself (its parameter left at true), because launch cannot re-drive a respawned node
    (``aiv_common.lifecycle_launch``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    source = ast.unparse(tree)
    for call in _calls(tree, *NODE_ACTIONS):
        if _keyword(call, "executable") not in MANAGED:
            continue
        text = ast.unparse(call)
        respawned = _keyword(call, "respawn") is True
        expected = "LifecycleNode" if respawned else "CleanStopLifecycleNode"
        assert _action(call) == expected, f"{path.name}: {_keyword(call, 'executable')} is a {_action(call)}"
        assert ("'autostart': False" in text) is not respawned, path.name
        assert ("activate_when_started(" in source) is not respawned, path.name
        if not respawned:
            arguments = {ast.literal_eval(c.args[0]) for c in _calls(tree, "DeclareLaunchArgument")}
            assert "autostart" in arguments and "LaunchConfiguration('autostart'))" in source, path.name
