"""ament_python build for aiv_dataset (plain setuptools, no rclpy: usable in any Python environment)."""

from setuptools import find_packages, setup

PACKAGE = "aiv_dataset"

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
    description="PInVerify dataset format, validation, index builder and benchmark vocabulary.",
    license="Apache-2.0",
    entry_points={"console_scripts": ["aiv-dataset = aiv_dataset.cli:main"]},
)
