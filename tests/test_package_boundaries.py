"""Which package may import which: the layout's rules, checked on the source (every import, also lazy ones).

- ``aiv_verifier`` runs on a robot: none of its modules imports the simulator, the generator or the evaluation.
- ``aiv_dataset`` is the format alone: no ROS, no other project package.
- ``aiv_synth`` (the generator) is a tool: no run-time package imports it, and it needs nothing but the format.
- ``aiv_bags`` (tour bags) reads and writes bags with rosbags, not rclpy, on top of the format alone.
- ``aiv_bags_ros`` (session recording and replay) is the ROS side of bags: it may use rclpy and the verifier,
  never the simulator, the generator or the evaluation (the evaluation starts its recorder as a process).
- Only node modules import rclpy; the ROS-free cores stay importable without a ROS installation.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "ros2_ws" / "src"
PROJECT_PACKAGES = (
    "aiv_common",
    "aiv_dataset",
    "aiv_synth",
    "aiv_offline_sim",
    "aiv_verifier",
    "aiv_eval",
    "aiv_bags",
    "aiv_bags_ros",
)

FORBIDDEN: dict[str, set[str]] = {
    "aiv_verifier": {"aiv_offline_sim", "aiv_synth", "aiv_eval"},
    "aiv_dataset": {"aiv_common", "aiv_synth", "aiv_offline_sim", "aiv_verifier", "aiv_eval", "rclpy"},
    "aiv_synth": {"aiv_common", "aiv_offline_sim", "aiv_verifier", "aiv_eval", "rclpy"},
    "aiv_offline_sim": {"aiv_synth", "aiv_verifier", "aiv_eval"},
    "aiv_eval": {"aiv_synth"},
    "aiv_bags": {
        "aiv_common",
        "aiv_synth",
        "aiv_offline_sim",
        "aiv_verifier",
        "aiv_eval",
        "aiv_bags_ros",
        "rclpy",
    },
    "aiv_bags_ros": {"aiv_synth", "aiv_offline_sim", "aiv_eval"},
}


def _imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _modules(package: str) -> list[Path]:
    return sorted((SRC / package / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_what_the_layout_allows(package: str) -> None:
    modules = _modules(package)
    assert modules, f"no modules found for {package} under {SRC}"
    offenders = {
        str(path.relative_to(SRC)): sorted(_imported_top_levels(path) & FORBIDDEN[package])
        for path in modules
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_rclpy_stays_in_node_and_ros_helper_modules() -> None:
    ros_free_cores = [
        SRC / "aiv_verifier" / "aiv_verifier" / sub
        for sub in ("core", "query", "verification", "detection", "agent")
    ]
    users = [
        str(path.relative_to(SRC))
        for core in ros_free_cores
        for path in sorted(core.rglob("*.py"))
        if "rclpy" in _imported_top_levels(path)
    ]
    assert users == []


def test_every_project_package_is_a_ros_package_of_its_own() -> None:
    for package in PROJECT_PACKAGES:
        assert (SRC / package / "package.xml").is_file(), package
        assert (SRC / package / package / "__init__.py").is_file(), package
