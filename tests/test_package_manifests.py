"""Every package.xml is a valid format-3 manifest that colcon and rosdep can read.

A manifest that does not parse is not an error for colcon: it silently treats the package as plain Python,
installs it without its ROS dependencies' environment hooks, and ``ros2``/``ament_index`` no longer find it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

catkin_pkg = pytest.importorskip("catkin_pkg.package")

SRC = Path(__file__).resolve().parents[1] / "ros2_ws" / "src"
MANIFESTS = sorted(SRC.glob("*/package.xml"))


def test_every_package_has_a_manifest():
    assert {path.parent.name for path in MANIFESTS} == {
        "aiv_bags",
        "aiv_bags_ros",
        "aiv_checks",
        "aiv_common",
        "aiv_dataset",
        "aiv_eval",
        "aiv_interfaces",
        "aiv_models",
        "aiv_offline_sim",
        "aiv_robot",
        "aiv_robot_sim",
        "aiv_studies",
        "aiv_synth",
        "aiv_verifier",
    }


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.parent.name)
def test_manifest_parses_and_declares_its_build_type(path: Path):
    package = catkin_pkg.parse_package(str(path))  # raises InvalidPackage with the XML error
    assert package.package_format == 3 and package.name == path.parent.name
    build_type = package.get_build_type()
    expected = "ament_python" if (path.parent / "setup.py").is_file() else "ament_cmake"
    assert build_type == expected
    workspace = {manifest.parent.name for manifest in MANIFESTS}
    for dependency in package.exec_depends + package.build_depends:
        if dependency.name.startswith("aiv_"):
            assert dependency.name in workspace, f"{package.name} depends on unknown {dependency.name}"
