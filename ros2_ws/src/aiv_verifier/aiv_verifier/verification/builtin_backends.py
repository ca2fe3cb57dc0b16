"""aiv_verifier's own per-view verifier backends: the privileged oracles and the multimodal language model.

They are declared like any other package's backend (:class:`~.backend.VerifierBackend`), so the factory builds
every backend the same way; :mod:`.registry` lists them before those other packages register. The MLLM
verifier's module is imported only when a configuration builds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model_config import MllmVerifierParams
from .backend import BackendContext, VerifierBackend
from .base import PerViewVerifier
from .oracle import NoiseModel, NoisyOracleVerifier, OracleVerifier


def _oracle(context: BackendContext) -> OracleVerifier:
    root = str(context.section.get("dataset_root", "") or "")
    if not root:
        raise ValueError(
            f"verifier.backend {context.name!r} needs verifier.dataset_root (a synthetic dataset)"
        )
    return OracleVerifier.for_dataset(root)


def _noisy_oracle(context: BackendContext) -> NoisyOracleVerifier:
    return NoisyOracleVerifier(_oracle(context), context.settings)


def _noisy_oracle_key(config: Mapping[str, Any], noise: NoiseModel) -> str:
    """Its answers, and so their reliability, depend on the noise rates."""
    return f"noisy_oracle:error_rate={noise.error_rate:g},unsure_rate={noise.unsure_rate:g}"


def _mllm(context: BackendContext) -> PerViewVerifier:
    from .mllm import MllmVerifier

    if context.language_model is None:
        raise ValueError("verifier.backend 'mllm' needs language_model.transport local or openai")
    try:
        return MllmVerifier.from_params(context.settings, context.language_model)
    except (OSError, ValueError) as error:
        raise ValueError(f"verifier.mllm: {error}") from error


def _mllm_key(config: Mapping[str, Any], params: MllmVerifierParams) -> str:
    """Its answers, and so their reliability, depend on the model (``language_model.model`` or its directory)."""
    model = config.get("language_model", {})
    if not isinstance(model, Mapping):
        raise ValueError(f"config section 'language_model' must be a mapping, got {type(model).__name__}")
    name = str(model.get("model", "") or "") or Path(str(model.get("model_dir", "") or "")).name
    return f"mllm:{name}"


#: Name -> backend, in the order the configuration's parameter table lists them.
BUILTIN_BACKENDS: MappingProxyType[str, VerifierBackend] = MappingProxyType(
    {
        "oracle": VerifierBackend(build=_oracle, privileged=True),
        "noisy_oracle": VerifierBackend(
            build=_noisy_oracle,
            settings=NoiseModel,
            settings_key="noise",
            privileged=True,
            calibration_key=_noisy_oracle_key,
        ),
        "mllm": VerifierBackend(build=_mllm, settings=MllmVerifierParams, calibration_key=_mllm_key),
    }
)

__all__ = ["BUILTIN_BACKENDS"]
