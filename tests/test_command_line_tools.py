"""The command-line tools the docs show (``aiv-eval ...``, ``aiv-pregrasp ...``) run by name once ``.env.sh`` is
sourced: ament installs them under ``install/<package>/lib/<package>``, which is not on PATH, so the bootstrap
links them into the virtual environment's ``bin``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "ros2_ws" / "src"
INSTALL = SRC.parent / "install"
TOOL = re.compile(r"[\"'](aiv-[a-z-]+)\s*=")


def _declared_tools() -> list[tuple[str, str]]:
    tools = []
    for setup in sorted(SRC.glob("*/setup.py")):
        tools += [(setup.parent.name, name) for name in TOOL.findall(setup.read_text(encoding="utf-8"))]
    return tools


def test_the_packages_declare_the_tools_the_docs_use() -> None:
    assert {name for _, name in _declared_tools()} >= {"aiv-eval", "aiv-pregrasp", "aiv-bag", "aiv-dataset"}


@pytest.mark.parametrize(("package", "name"), _declared_tools(), ids=lambda value: value)
def test_each_tool_runs_by_name(package: str, name: str) -> None:
    found = shutil.which(name)
    assert found is not None, f"{name} is not on PATH (scripts/bootstrap.sh links it into .venv/bin)"
    assert Path(found).resolve() == (INSTALL / package / "lib" / package / name).resolve()
    shown = subprocess.run([name, "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert shown.returncode == 0 and "usage" in shown.stdout.lower(), shown.stderr
