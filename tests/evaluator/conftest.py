"""Make ``aiv_verifier`` importable from the source tree when nothing else (PYTHONPATH, install) does."""

import importlib.util
import sys
from pathlib import Path

_PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "ros2_ws" / "src" / "aiv_verifier"
if importlib.util.find_spec("aiv_verifier") is None:
    sys.path.append(str(_PACKAGE_ROOT))


from support.synthetic import micro_root  # noqa: E402,F401 - session fixture
