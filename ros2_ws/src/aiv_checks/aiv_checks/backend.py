"""The weight-free verifier as a backend of the agent: what ``verifier.backend: classical`` builds.

aiv_verifier does not import this package; it finds this module's :data:`BACKEND` by name through the entry
point this package's ``setup.py`` declares (group ``aiv_verifier.backends``, name ``classical``). The settings
dataclass is handed to the configuration as the ``verifier.classical`` section; the verifier module, which
starts the OCR runtime on demand, is imported only when a configuration builds it.
"""

from __future__ import annotations

from aiv_verifier.verification.backend import BackendContext, VerifierBackend
from aiv_verifier.verification.base import PerViewVerifier

from .settings import ClassicalSettings


def build(context: BackendContext) -> PerViewVerifier:
    """The classical verifier with the configuration's ``verifier.classical`` settings."""
    from .verifier import ClassicalVerifier

    return ClassicalVerifier(context.settings)


BACKEND = VerifierBackend(build=build, settings=ClassicalSettings)

__all__ = ["BACKEND", "build"]
