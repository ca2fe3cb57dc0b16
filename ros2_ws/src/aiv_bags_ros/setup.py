"""ament_python build for aiv_bags_ros: recording verification sessions (rclpy) and replaying them open-loop."""

from setuptools import find_packages, setup

PACKAGE = "aiv_bags_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="AIV team",
    maintainer_email="aiv-dev@example.org",
    description="Verification sessions as rosbag2 files: aiv-bag record and aiv-bag replay.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": ["session_recorder = aiv_bags_ros.recorder:main"],
        # Subcommands this package adds to `aiv-bag` (aiv_bags.cli looks them up by this group).
        "aiv_bags.commands": [
            "record = aiv_bags_ros.commands:add_record_command",
            "replay = aiv_bags_ros.commands:add_replay_command",
        ],
    },
)
