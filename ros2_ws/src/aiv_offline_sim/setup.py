"""ament_python build for aiv_offline_sim (plain setuptools so any ROS 2 colcon build works)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "aiv_offline_sim"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.xml")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="AIV team",
    maintainer_email="aiv-dev@example.org",
    description="PInVerify episode environment and the offline simulator node.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "offline_sim = aiv_offline_sim.entry:main",
        ],
    },
)
