"""Make ``aiv_verifier`` importable from the source tree when nothing else (PYTHONPATH, install) does."""

import importlib.util
import sys
from pathlib import Path

_PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "ros2_ws" / "src" / "aiv_verifier"
if importlib.util.find_spec("aiv_verifier") is None:
    sys.path.append(str(_PACKAGE_ROOT))

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def verifier():
    """One verifier per test session (its OCR models load, ~1 s, on the first text claim it judges)."""
    from aiv_checks import ClassicalVerifier

    return ClassicalVerifier()


@pytest.fixture(scope="session")
def verifier_without_ocr():
    from aiv_checks import ClassicalSettings, ClassicalVerifier

    return ClassicalVerifier(ClassicalSettings(ocr_engine="none"))
