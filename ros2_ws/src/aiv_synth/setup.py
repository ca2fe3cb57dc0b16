"""ament_python build for aiv_synth, the synthetic capture generator (no rclpy)."""

from setuptools import find_packages, setup

PACKAGE = "aiv_synth"

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
    description="Synthetic PInVerify-format dataset generator and renderer.",
    license="Apache-2.0",
    entry_points={"console_scripts": ["aiv-capture = aiv_synth.cli:main"]},
)
