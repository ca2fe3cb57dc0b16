"""What a per-view verifier backend hands the agent's factory: how to build its verifier from the configuration.

A backend is found by the name a configuration gives (``verifier.backend``) in :mod:`.registry`, either one of
aiv_verifier's own (:mod:`.builtin_backends`) or one another package registers under the entry point group
``aiv_verifier.backends`` (as ``aiv_checks`` registers ``classical``). Both are a :class:`VerifierBackend`;
this module is all a backend package needs to import from here besides the verifier interface
(:mod:`.base`), so a lab adds a backend without editing aiv_verifier (``docs/verifier.md``, "Adding a backend").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.types import LanguageModel
from .base import PerViewVerifier


@dataclass(frozen=True)
class BackendContext:
    """What a backend builds its verifier from.

    ``section`` is the configuration's whole ``verifier`` section (``dataset_root`` and the other shared keys);
    ``settings`` the backend's own settings, its :attr:`VerifierBackend.settings` dataclass filled from
    ``verifier.<settings section>`` (None for a backend without settings); ``language_model`` the configured
    chat model (None for ``language_model.transport: none``).
    """

    name: str
    section: Mapping[str, Any]
    settings: Any
    language_model: LanguageModel | None


@dataclass(frozen=True)
class VerifierBackend:
    """A per-view verifier as its package registers it.

    ``build`` makes the verifier (it is called once per process; import heavy libraries inside it, not at the
    top of the module that defines the backend, so that listing backends stays cheap). It raises
    :class:`ValueError` (or :class:`~.base.VerifierError`) with a one-line message naming the key at fault;
    the factory reports it as a configuration error. ``settings`` is a frozen dataclass of
    :func:`aiv_common.setting_fields.setting` fields, read from ``verifier.<settings_key>`` (default: the
    backend's name). ``privileged``: the verifier reads the simulator's ground truth, so a node subscribes to
    it. ``calibration_key`` names the backend's row of the evidence calibration from the whole configuration and
    the backend's settings (default: the backend's name), for a backend whose reliability depends on them.
    """

    build: Callable[[BackendContext], PerViewVerifier]
    settings: type[Any] | None = None
    settings_key: str = ""
    privileged: bool = False
    calibration_key: Callable[[Mapping[str, Any], Any], str] | None = None

    def settings_section(self, name: str) -> str:
        """The key of the ``verifier`` section this backend's settings are read from, when it is named ``name``."""
        return self.settings_key or name


class BackendError(ValueError):
    """No usable backend of a name: none registered, more than one, or its entry point does not load."""


__all__ = ["BackendContext", "BackendError", "VerifierBackend"]
