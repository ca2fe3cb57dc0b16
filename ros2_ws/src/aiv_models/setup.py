"""ament_python build for aiv_models."""

from setuptools import find_packages, setup

PACKAGE = "aiv_models"

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
    description="Local model weights, devices and chat transports of the AIV model backends (ROS-free).",
    license="Apache-2.0",
)
