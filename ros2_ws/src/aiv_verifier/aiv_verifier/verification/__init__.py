"""Per-view verifiers: given one crop of the candidate object, answer Yes / No / Unsure per attribute.

The weight-free backend (the ``aiv_checks`` package: OpenCV and the OCR runtime) is not imported here: the agent's
factory loads it when a configuration asks for it.
"""

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

__all__ = [
    "AttributeAnswer",
    "NoiseModel",
    "NoisyOracleVerifier",
    "OracleVerifier",
    "PerViewVerifier",
    "PrivilegedViewInfo",
    "VerifierError",
    "ViewInput",
    "check_answers",
    "unsure_for_all",
]
