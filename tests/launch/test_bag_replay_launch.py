"""bag_replay.launch.py, checked statically (tests/ros/test_ros2_launch.py launches it): the simulator serves the tour
bags, every node follows one use_sim_time, the evaluator is optional and reads the tours' labels."""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LAUNCH = REPO_ROOT / "launch" / "bag_replay.launch.py"
#: The launch_ros actions that start a node (the verifier, a managed node, is a LifecycleNode).
NODE_ACTIONS = ("Node", "LifecycleNode")


def _tree() -> ast.Module:
    return ast.parse(LAUNCH.read_text(encoding="utf-8"), filename=str(LAUNCH))


def _name(node: ast.AST) -> str | None:
    return getattr(node, "id", getattr(node, "attr", None))


def _nodes(tree: ast.AST) -> dict[str, ast.Call]:
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) in NODE_ACTIONS]
    out = {}
    for call in calls:
        keywords = {k.arg: k.value for k in call.keywords}
        out[ast.literal_eval(keywords["name"])] = call
    return out


def _launch_arguments(tree: ast.AST) -> set[str]:
    return {
        ast.literal_eval(n.args[0])
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and _name(n.func) == "DeclareLaunchArgument"
    }


def _overrides(call: ast.Call) -> dict[str, str]:
    """Parameter dict of a Node: name -> source text of its value."""
    (parameters,) = [k.value for k in call.keywords if k.arg == "parameters"]
    assert isinstance(parameters, ast.List)
    out: dict[str, str] = {}
    for item in parameters.elts:
        if isinstance(item, ast.Dict):
            for key, value in zip(item.keys, item.values, strict=True):
                out[ast.literal_eval(key)] = ast.unparse(value)
    return out


def test_the_simulator_serves_the_tour_bags_and_all_nodes_share_the_clock_setting():
    tree = _tree()
    nodes = _nodes(tree)
    assert set(nodes) == {"offline_sim", "verifier", "evaluator"}
    assert {"tour_bags", "tour_root", "use_sim_time", "evaluate", "params_file"} <= _launch_arguments(tree)
    sim = _overrides(nodes["offline_sim"])
    assert sim["tour_bags"] == "LaunchConfiguration('tour_bags')"
    assert sim["dataset_root"] == "LaunchConfiguration('tour_root')"
    assert (
        "use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)"
        in ast.unparse(tree)
    )
    for name, call in nodes.items():
        assert _overrides(call)["use_sim_time"] == "use_sim_time", f"{name} does not follow use_sim_time"
    evaluator = {k.arg: ast.unparse(k.value) for k in nodes["evaluator"].keywords}
    assert evaluator["condition"] == "IfCondition(LaunchConfiguration('evaluate'))"
    assert _overrides(nodes["evaluator"])["dataset_root"] == "LaunchConfiguration('tour_root')"


def test_its_default_params_file_declares_every_name_it_overrides():
    """The overrides are parameters the nodes declare (a typo would stop the node at start-up)."""
    from aiv_eval.run.spec import node_table

    nodes = _nodes(_tree())
    for name, call in nodes.items():
        declared = {spec.name for spec in node_table(name)} | {"use_sim_time"}
        assert set(_overrides(call)) <= declared, name
    assert 'FindPackageShare("aiv_verifier"), "config", "offline_eval.yaml"' in LAUNCH.read_text()
