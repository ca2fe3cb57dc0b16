"""ament_python build for aiv_verifier; also installs the launch files and params YAML."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "aiv_verifier"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.xml")),
    ],
    # Prompt templates are loaded by path at run time, so they ship inside the Python package.
    package_data={PACKAGE: ["prompts/*.txt", "evidence_tables/*.json"]},
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="AIV team",
    maintainer_email="aiv-dev@example.org",
    description="Active instance verification agent and ROS 2 verifier node.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "verifier = aiv_verifier.entry:verifier",
            "detector_node = aiv_verifier.entry:detector",
        ],
    },
)
