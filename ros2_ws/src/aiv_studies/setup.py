"""ament_python build for aiv_studies: the weight-free verifier's research studies (run with python -m)."""

from setuptools import find_packages, setup

PACKAGE = "aiv_studies"

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
    description="Research studies of the weight-free verifier: oracle audit, classical study, episode sweep.",
    license="Apache-2.0",
)
