"""Per-view verifier backends are found by name: aiv_verifier's own, the classical one through aiv_checks' entry
point, one registered in-process; a name nothing registers, or a broken registration, is a one-line error."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import ClassVar

import pytest
from aiv_common.setting_fields import setting
from aiv_verifier.agent.factory import VERIFIER_BACKENDS, ConfigError, build_verifier, calibration_key
from aiv_verifier.core.types import Attribute
from aiv_verifier.verification import registry
from aiv_verifier.verification.backend import BackendContext, BackendError, VerifierBackend
from aiv_verifier.verification.base import AttributeAnswer, ViewInput, unsure_for_all


def test_the_default_and_aiv_verifiers_own_backends_are_listed_in_order() -> None:
    assert VERIFIER_BACKENDS[:4] == ("classical", "oracle", "noisy_oracle", "mllm")
    assert registry.backend_names()[:4] == VERIFIER_BACKENDS[:4]


def test_an_unknown_backend_is_one_line_naming_those_found() -> None:
    with pytest.raises(ConfigError) as refused:
        build_verifier({"backend": "thermal"})
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(
        "unknown verifier.backend 'thermal'; found: classical, oracle, noisy_oracle, mllm"
    )
    assert registry.ENTRY_POINT_GROUP in message


def test_the_classical_backend_comes_from_the_checks_package_entry_point() -> None:
    from aiv_checks.settings import ClassicalSettings
    from aiv_checks.verifier import ClassicalVerifier

    backend = registry.get_backend("classical")
    assert backend.settings is ClassicalSettings and not backend.privileged
    verifier = build_verifier({"backend": "classical", "classical": {"ocr_engine": "none"}})
    assert isinstance(verifier, ClassicalVerifier)
    assert verifier.settings.ocr_engine == "none"
    with pytest.raises(ConfigError, match=r"verifier\.classical"):
        build_verifier({"classical": {"no_such_setting": 1}})


@dataclass(frozen=True)
class _EchoSettings:
    answer_reason: str = setting("echo", "the reason every answer gives")


class _EchoVerifier:
    name: ClassVar[str] = "test_echo"

    def __init__(self, settings: _EchoSettings) -> None:
        self.settings = settings

    @property
    def model_calls(self) -> int:
        return 0

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        return unsure_for_all(attributes, self.settings.answer_reason)


def _build_echo(context: BackendContext) -> _EchoVerifier:
    if context.section.get("dataset_root"):
        raise ValueError("verifier.backend 'test_echo' takes no verifier.dataset_root")
    return _EchoVerifier(context.settings)


def test_a_backend_registered_by_name_is_built_with_its_settings_section() -> None:
    if "test_echo" not in registry.backend_names():
        registry.register_backend("test_echo", VerifierBackend(build=_build_echo, settings=_EchoSettings))
    verifier = build_verifier({"backend": "test_echo", "test_echo": {"answer_reason": "heard"}})
    assert isinstance(verifier, _EchoVerifier) and verifier.settings == _EchoSettings("heard")
    assert calibration_key({"verifier": {"backend": "test_echo"}}) == "test_echo"
    assert not registry.is_privileged("test_echo")
    with pytest.raises(ConfigError, match=r"^verifier.backend 'test_echo' takes no verifier.dataset_root$"):
        build_verifier({"backend": "test_echo", "dataset_root": "/data"})
    with pytest.raises(BackendError, match="already registered"):
        registry.register_backend("test_echo", VerifierBackend(build=_build_echo))


def test_the_builtin_calibration_keys_are_unchanged() -> None:
    noisy = {"verifier": {"backend": "noisy_oracle", "noise": {"error_rate": 0.1}}}
    assert calibration_key(noisy) == "noisy_oracle:error_rate=0.1,unsure_rate=0"
    mllm = {"verifier": {"backend": "mllm"}, "language_model": {"model_dir": "/models/qwen-vl"}}
    assert calibration_key(mllm) == "mllm:qwen-vl"
    assert calibration_key({"verifier": {"backend": "oracle"}}) == "oracle"
    assert calibration_key({"verifier": {}}) == "classical"
    assert calibration_key({"verifier": {"backend": "unregistered"}}) == "unregistered"
    assert registry.is_privileged("oracle") and registry.is_privileged("noisy_oracle")


def _installed_as(monkeypatch: pytest.MonkeyPatch, *entries: tuple[str, str]) -> None:
    points = [EntryPoint(name, value, registry.ENTRY_POINT_GROUP) for name, value in entries]
    found: dict[str, tuple[EntryPoint, ...]] = {}
    for point in points:
        found[point.name] = (*found.get(point.name, ()), point)
    monkeypatch.setattr(registry, "_installed", lambda: found)


def test_a_broken_or_clashing_registration_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _installed_as(
        monkeypatch,
        ("broken", "no_such_backend_module:BACKEND"),
        ("not_a_backend", "json:dumps"),
        ("oracle", "json:loads"),
        ("twice", "json:dumps"),
        ("twice", "json:loads"),
    )
    cases = {
        "broken": r"^verifier backend 'broken' \(entry point 'no_such_backend_module:BACKEND' .*\) does not "
        r"load: ModuleNotFoundError: No module named 'no_such_backend_module'$",
        "not_a_backend": r"^verifier backend 'not_a_backend' .* is a function, not a VerifierBackend$",
        "oracle": r"^verifier backend 'oracle' is aiv_verifier's own and also registered by",
        "twice": r"^verifier backend 'twice' is registered by more than one package",
    }
    for name, pattern in cases.items():
        with pytest.raises(ConfigError, match=pattern):
            build_verifier({"backend": name})


def test_importing_the_verifier_loads_no_backend_package() -> None:
    """Names are read from the metadata; the classical backend's package (OpenCV, the OCR runtime) is
    imported only when a configuration needs it."""
    script = (
        "import sys\n"
        "import aiv_verifier, aiv_verifier.verification, aiv_verifier.agent.factory\n"
        "from aiv_verifier.agent.factory import VERIFIER_BACKENDS\n"
        "assert 'classical' in VERIFIER_BACKENDS, VERIFIER_BACKENDS\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'aiv_checks', 'cv2', 'rapidocr_onnxruntime'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
