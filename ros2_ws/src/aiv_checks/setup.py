"""ament_python build for aiv_checks."""

from setuptools import find_packages, setup

PACKAGE = "aiv_checks"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml", "TUNING.md"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="AIV team",
    maintainer_email="aiv-dev@example.org",
    description="The weight-free per-view verifier's checks: colour, pattern, text, logo, identity, category.",
    license="Apache-2.0",
    # aiv_verifier finds its per-view verifier backends by name through this group, never by import.
    entry_points={"aiv_verifier.backends": ["classical = aiv_checks.backend:BACKEND"]},
)
