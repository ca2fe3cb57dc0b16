"""Per-view verifiers: given one crop of the candidate object, answer Yes / No / Unsure per attribute.

Backends are found by name (:mod:`.registry`): aiv_verifier's own (:mod:`.builtin_backends`) and those other
packages register under the entry point group ``aiv_verifier.backends``, such as the weight-free ``classical``
backend of ``aiv_checks`` (OpenCV and the OCR runtime), which is therefore never imported here: the registry
loads it when a configuration names it. A backend package builds on :mod:`.backend` and :mod:`.base`.
"""

from .backend import BackendContext, BackendError, VerifierBackend
from .base import (
    AttributeAnswer,
    PerViewVerifier,
    PrivilegedViewInfo,
    VerifierError,
    ViewInput,
    check_answers,
    unsure_for_all,
)
from .oracle import NoiseModel, NoisyOracleVerifier, OracleVerifier
from .registry import ENTRY_POINT_GROUP, backend_names, get_backend, register_backend

__all__ = [
    "ENTRY_POINT_GROUP",
    "AttributeAnswer",
    "BackendContext",
    "BackendError",
    "NoiseModel",
    "NoisyOracleVerifier",
    "OracleVerifier",
    "PerViewVerifier",
    "PrivilegedViewInfo",
    "VerifierBackend",
    "VerifierError",
    "ViewInput",
    "backend_names",
    "check_answers",
    "get_backend",
    "register_backend",
    "unsure_for_all",
]
