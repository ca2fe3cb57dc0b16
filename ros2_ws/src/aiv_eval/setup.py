"""ament_python build for aiv_eval: records, metrics, reports, runners and the evaluator node."""

from setuptools import find_packages, setup

PACKAGE = "aiv_eval"

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
    description="PInVerify evaluation: records, results store, metrics, reports, runners, evaluator node.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "evaluator = aiv_eval.entry:main",
            "aiv-eval = aiv_eval.cli:main",
        ],
    },
)
