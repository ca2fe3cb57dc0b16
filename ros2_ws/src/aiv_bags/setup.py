"""ament_python build for aiv_bags (plain setuptools, no rclpy: bags are read and written with rosbags)."""

from setuptools import find_packages, setup

PACKAGE = "aiv_bags"

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
    description="Object tours as rosbag2 files: export dataset episodes, import robot tours as episodes.",
    license="Apache-2.0",
    entry_points={"console_scripts": ["aiv-bag = aiv_bags.cli:main"]},
)
