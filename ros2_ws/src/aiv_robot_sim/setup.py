"""ament_python build for aiv_robot_sim: the live-rendering robot stand-in (the only run-time user of aiv_synth)."""

from setuptools import find_packages, setup

PACKAGE = "aiv_robot_sim"

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
    description="A simulated mobile base with a camera that renders a synthetic aiv_synth scene live.",
    license="Apache-2.0",
    entry_points={"console_scripts": ["robot_sim = aiv_robot_sim.entry:main"]},
)
