"""ament_python build for aiv_robot (plain setuptools so any ROS 2 colcon build works)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "aiv_robot"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="AIV team",
    maintainer_email="aiv-dev@example.org",
    description="MoveToSector on a mobile base (robot_adapter) and the pre-grasp client (aiv-pregrasp).",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "robot_adapter = aiv_robot.entry:main",
            "aiv-pregrasp = aiv_robot.pregrasp:main",
        ],
    },
)
