"""Build the agent's backends once from one configuration mapping, and sessions from them per request.

The configuration is a nested mapping with one section per part, the same in the node's params YAML (as
dotted parameter names) and in the evaluator's in-process mode: ``agent`` (:class:`AgentSettings`),
``verifier`` (``backend``: a name of :mod:`..verification.registry`, classical | oracle | noisy_oracle | mllm
or one another package registers; ``dataset_root``, the calibration file, and each backend's settings section:
``noise`` / ``classical`` / ``mllm``), ``query``, ``detector``, ``embedding``,
``language_model`` and ``trained``. Their dataclasses, names and defaults are declared once, in
:mod:`aiv_verifier.verifier_parameters` (which imports this module to learn its backends, never the other way
round); each section is turned into its dataclass here with :func:`aiv_common.setting_tree.dataclass_from_mapping`,
which refuses unknown keys.

Backends are expensive (OCR engines, ground-truth indexes, neural models), so :class:`AgentFactory` builds them
once, and only those the configuration uses: a model library is imported by the backend that needs it, so the
weight-free default never imports torch. Fusion and NBV objects are cheap and are cached per name because a goal
may choose them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aiv_common.setting_tree import dataclass_from_mapping
from aiv_models.local_weights import ModelDirError

from ..core.evidential import EvidentialPolicy
from ..core.fusion import EVIDENTIAL, FusionStrategy, make_fusion
from ..core.nbv import UNCERTAINTY_NBV, NbvStrategy, make_nbv
from ..core.types import LanguageModel
from ..core.visibility import VisibilityModel
from ..detection.base import BoxMode, Detector
from ..evidence_tables import (
    DEFAULT_CALIBRATION_FILE,
    DEFAULT_VISIBILITY_FILE,
    EvidenceFileError,
    load_calibration,
    load_visibility,
    resolve_table_path,
)
from ..model_config import DetectorParams, EmbeddingParams, LanguageModelParams, TrainedAgentParams
from ..query.types import QueryInterpreter, QueryMode, QuerySpec
from ..verification.backend import BackendContext, BackendError, VerifierBackend
from ..verification.base import PerViewVerifier, VerifierError
from ..verification.builtin_backends import BUILTIN_BACKENDS
from ..verification.registry import DEFAULT_BACKEND, backend_names, get_backend, is_privileged
from .protocol import AgentSession
from .settings import AgentSettings
from .steps import AgentComponents
from .verification_session import VerificationSession

#: The backends a configuration may name (``verifier.backend``): aiv_verifier's own and those installed packages
#: register under the entry point group ``aiv_verifier.backends`` (:mod:`..verification.registry`).
VERIFIER_BACKENDS = backend_names()


def classical_settings_class() -> type[Any]:
    """The weight-free verifier's settings dataclass (``verifier.classical``), from the backend registered as
    ``classical`` (the ``aiv_checks`` package's entry point: this package never imports it by name)."""
    try:
        settings = get_backend(DEFAULT_BACKEND).settings
    except BackendError as error:
        raise ConfigError(str(error)) from error
    if settings is None:
        raise ConfigError(f"verifier backend {DEFAULT_BACKEND!r} declares no settings for verifier.classical")
    return settings


#: aiv_verifier's own backends that read the simulator's ground truth (an installed backend says so itself:
#: :func:`~..verification.registry.is_privileged`).
PRIVILEGED_VERIFIERS = frozenset(name for name, backend in BUILTIN_BACKENDS.items() if backend.privileged)


class ConfigError(ValueError):
    """The configuration names an unknown backend or has an invalid value; the message says which key."""


def _section(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = config.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"config section {name!r} must be a mapping, got {type(value).__name__}")
    return value


def _params(cls: type[Any], config: Mapping[str, Any], name: str, where: str = "") -> Any:
    """The dataclass ``cls`` of ``config[name]`` (``where``: its dotted place, for messages)."""
    try:
        return dataclass_from_mapping(cls, _section(config, name), where or name)
    except ValueError as error:
        raise ConfigError(str(error)) from error


class ModelAgent(Protocol):
    """An agent other than the modular pipeline (embedding baselines, the trained agent): built once per
    process from its section, it starts one session per request."""

    def new_session(self, query: QuerySpec, *, episode_key: str, max_steps: int) -> AgentSession: ...


def build_language_model(config: Mapping[str, Any]) -> LanguageModel | None:
    """The chat model of ``config['language_model']`` (None for transport ``none``)."""
    params: LanguageModelParams = _params(LanguageModelParams, config, "language_model")
    if params.transport == "none":
        return None
    from ..language_model import language_model_from_params

    try:
        return language_model_from_params(params)
    except (ModelDirError, ValueError) as error:
        raise ConfigError(str(error)) from error


def build_detector(config: Mapping[str, Any]) -> Detector | None:
    """The in-verifier detector of ``config['detector']`` (None for backend ``none``)."""
    params: DetectorParams = _params(DetectorParams, config, "detector")
    if params.backend == "none":
        return None
    if params.backend == "grounding_dino":
        from ..detection.grounding_dino import GroundingDinoDetector

        try:
            return GroundingDinoDetector.from_params(params)
        except (ModelDirError, ValueError) as error:
            raise ConfigError(str(error)) from error
    raise ConfigError(f"unknown detector.backend {params.backend!r}; expected none or grounding_dino")


def build_model_agent(
    settings: AgentSettings,
    config: Mapping[str, Any],
    language_model: LanguageModel | None,
    detector: Detector | None = None,
) -> ModelAgent | None:
    """The agent of ``agent.kind`` when it is not the pipeline (None for the pipeline)."""
    try:
        if settings.kind in ("clip", "siglip"):
            from .embedding import EmbeddingAgent

            params: EmbeddingParams = _params(EmbeddingParams, config, "embedding")
            return EmbeddingAgent.from_params(settings.kind, params, settings, detector)
        if settings.kind == "trained":
            from .trained import TrainedAgent

            if language_model is None:
                raise ConfigError("agent.kind 'trained' needs language_model.transport local or openai")
            trained: TrainedAgentParams = _params(TrainedAgentParams, config, "trained")
            return TrainedAgent.from_params(trained, language_model, settings, detector)
    except (ModelDirError, ValueError) as error:
        raise ConfigError(str(error)) from error
    return None


def _backend(name: str) -> VerifierBackend:
    try:
        return get_backend(name)
    except BackendError as error:
        raise ConfigError(str(error)) from error


def _backend_settings(backend: VerifierBackend, name: str, section: Mapping[str, Any]) -> Any:
    """The backend's settings dataclass filled from its part of the ``verifier`` section (None without)."""
    if backend.settings is None:
        return None
    key = backend.settings_section(name)
    return _params(backend.settings, section, key, f"verifier.{key}")


def build_verifier(
    section: Mapping[str, Any], language_model: LanguageModel | None = None
) -> PerViewVerifier:
    """The per-view verifier named by ``section['backend']`` (default: classical), found by name in the
    registry of backends (:mod:`..verification.registry`)."""
    name = str(section.get("backend", DEFAULT_BACKEND))
    backend = _backend(name)
    settings = _backend_settings(backend, name, section)
    try:
        return backend.build(BackendContext(name, section, settings, language_model))
    except ConfigError:
        raise
    except ValueError as error:
        raise ConfigError(str(error)) from error


def calibration_key(config: Mapping[str, Any]) -> str:
    """The name a calibration file knows this configuration's per-view verifier by: ``verifier.calibration_key``
    when set, else the backend's own key (:attr:`~..verification.backend.VerifierBackend.calibration_key`:
    the noise rates of the noisy oracle and the model of the MLLM verifier, whose answers, and so their
    reliability, depend on them), else the backend's name."""
    section = _section(config, "verifier")
    explicit = str(section.get("calibration_key", "") or "").strip()
    if explicit:
        return explicit
    name = str(section.get("backend", DEFAULT_BACKEND))
    if name not in backend_names():
        return name
    backend = _backend(name)
    if backend.calibration_key is None:
        return name
    try:
        return backend.calibration_key(config, _backend_settings(backend, name, section))
    except ConfigError:
        raise
    except ValueError as error:
        raise ConfigError(str(error)) from error


def build_evidence(config: Mapping[str, Any], settings: AgentSettings) -> EvidentialPolicy:
    """The evidential policy of this configuration: the calibration of its verifier backend, the configured
    prior and thresholds. A file that cannot be used is a :class:`ConfigError` naming it."""
    section = _section(config, "verifier")
    path = resolve_table_path(str(section.get("calibration_file", "") or ""), DEFAULT_CALIBRATION_FILE)
    try:
        calibration = load_calibration(path).for_backend(calibration_key(config))
    except EvidenceFileError as error:
        raise ConfigError(f"verifier.calibration_file: {error}") from None
    model = calibration.model
    if settings.evidence.target_share > 0:
        model = model.with_target_share(settings.evidence.target_share)
    return EvidentialPolicy(calibration.table, model, settings.evidence.thresholds)


def build_visibility(settings: AgentSettings) -> VisibilityModel:
    path = resolve_table_path(settings.evidence.visibility_file, DEFAULT_VISIBILITY_FILE)
    try:
        return load_visibility(path).model
    except EvidenceFileError as error:
        raise ConfigError(f"agent.evidence.visibility_file: {error}") from None


@dataclass(frozen=True)
class GoalOverrides:
    """What a single request may change relative to the configured defaults ("" = keep the default)."""

    query_mode: str = ""
    nbv: str = ""
    fusion: str = ""


NO_OVERRIDES = GoalOverrides()


class AgentFactory:
    """Holds the process-wide backends and hands out per-request sessions."""

    def __init__(
        self,
        settings: AgentSettings,
        verifier: PerViewVerifier,
        interpreter: QueryInterpreter,
        *,
        detector: Detector | None = None,
        language_model: LanguageModel | None = None,
        verifier_backend: str = "",
        model_agent: ModelAgent | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.verifier = verifier
        self.interpreter = interpreter
        self.detector = detector
        self.language_model = language_model
        self.verifier_backend = verifier_backend or getattr(verifier, "name", "")
        self.model_agent = model_agent
        if settings.kind != "pipeline" and model_agent is None:
            raise ConfigError(f"agent.kind {settings.kind!r} has no agent; build it with build_model_agent")
        self._nbv: dict[str, NbvStrategy] = {}
        self._fusion: dict[str, FusionStrategy] = {}
        self._config = dict(config or {})
        self._evidence: EvidentialPolicy | None = None
        if settings.bbox_mode is BoxMode.DETECTOR and detector is None:
            raise ConfigError("agent.bbox_mode 'detector' needs a detector backend; none is configured")
        self.resolve(GoalOverrides())  # fail at start-up, not on the first request

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        detector: Detector | None = None,
        language_model: LanguageModel | None = None,
        model_agent: ModelAgent | None = None,
    ) -> AgentFactory:
        """``model_agent`` replaces the one ``agent.kind`` would build (the evaluator's worker threads share
        one thread-safe agent, so an embedding model is loaded once, not once per thread)."""
        from ..query import build_query_interpreter

        settings: AgentSettings = _params(AgentSettings, config, "agent")
        verifier_section = _section(config, "verifier")
        if language_model is None:
            language_model = build_language_model(config)
        if detector is None:
            detector = build_detector(config)
        try:
            verifier = build_verifier(verifier_section, language_model)
        except VerifierError as error:
            raise ConfigError(str(error)) from error
        try:
            interpreter = build_query_interpreter(_section(config, "query"), language_model)
        except (TypeError, ValueError, OSError) as error:
            raise ConfigError(f"query: {error}") from error
        return cls(
            settings,
            verifier,
            interpreter,
            detector=detector,
            language_model=language_model,
            verifier_backend=str(verifier_section.get("backend", DEFAULT_BACKEND)),
            model_agent=model_agent or build_model_agent(settings, config, language_model, detector),
            config=config,
        )

    def model_devices(self) -> dict[str, str]:
        """Where each configured model runs, for diagnostics and logs: ``{"detector": "cuda:0", "embedding":
        "cpu", "language_model": "http://host:8000/v1"}``; empty for the weight-free default."""
        devices: dict[str, str] = {}
        for part, backend in (
            ("detector", self.detector),
            ("embedding", getattr(self.model_agent, "model", None)),
            ("language_model", getattr(self.language_model, "transport", self.language_model)),
        ):
            if backend is None:
                continue
            device = getattr(backend, "device", None)
            url = getattr(backend, "base_url", None)
            if device is not None:
                devices[part] = str(device)
            elif isinstance(url, str) and url:
                devices[part] = url
        return devices

    def diagnostic_values(self) -> list[tuple[str, str]]:
        """What the node's diagnostics say about the agent: its backend, kind, devices and settings, and what
        the detector and the language model report about themselves (latency, calls, failed calls)."""
        devices = self.model_devices()
        values = [
            ("verifier_backend", self.verifier_backend),
            ("agent_kind", self.settings.kind),
            # The weight-free default runs on the CPU; each model reports its own device (or server URL).
            ("device", ", ".join(f"{part}: {device}" for part, device in devices.items()) or "cpu"),
            ("settings", str(self.settings.to_dict())),
        ]
        describe = getattr(self.detector, "describe", None)
        if callable(describe):
            values += [(f"detector.{key}", str(value)) for key, value in describe().items()]
        chat_stats = getattr(self.language_model, "stats", None)  # calls, failed calls (Missing), retries
        if callable(chat_stats):
            values += [
                (f"language_model.{key}", str(value)) for key, value in chat_stats().as_record().items()
            ]
        return values

    @property
    def needs_privileged_view(self) -> bool:
        """Whether sessions need the simulator's ground-truth channel (GT boxes or an oracle verifier)."""
        return self.settings.bbox_mode is BoxMode.GT or is_privileged(self.verifier_backend)

    def resolve(self, overrides: GoalOverrides) -> tuple[AgentSettings, AgentComponents]:
        """Settings and components for one request; raises ValueError naming a bad override."""
        settings = self.settings.with_overrides(
            query_mode=overrides.query_mode, nbv=overrides.nbv, fusion=overrides.fusion
        )
        evidence = self._evidence_for(settings) if settings.uses_evidence else None
        fusion: FusionStrategy | EvidentialPolicy
        if settings.fusion == EVIDENTIAL:
            assert evidence is not None
            fusion = evidence
        else:
            fusion = self._fusion_for(settings.fusion)
        return settings, AgentComponents(
            verifier=self.verifier,
            fusion=fusion,
            nbv=self._nbv_for(settings),
            detector=self.detector,
            evidence=evidence,
        )

    def _evidence_for(self, settings: AgentSettings) -> EvidentialPolicy:
        """The evidential policy, loaded once (the configured settings' thresholds; a goal cannot change them)."""
        if self._evidence is None:
            self._evidence = build_evidence(self._config, self.settings)
        return self._evidence

    def _fusion_for(self, name: str) -> FusionStrategy:
        if name not in self._fusion:
            self._fusion[name] = make_fusion(name)
        return self._fusion[name]

    def _nbv_for(self, settings: AgentSettings) -> NbvStrategy:
        name = settings.nbv
        if name not in self._nbv:
            if name == "llm":
                if self.language_model is None:
                    raise ConfigError("nbv 'llm' needs a language model backend; none is configured")
                self._nbv[name] = make_nbv(name, model=self.language_model, base_seed=settings.base_seed)
            elif name == UNCERTAINTY_NBV:
                self._nbv[name] = make_nbv(
                    name, visibility=build_visibility(self.settings), base_seed=settings.base_seed
                )
            else:
                self._nbv[name] = make_nbv(name, base_seed=settings.base_seed)
        return self._nbv[name]

    def new_session(
        self,
        descriptions: Sequence[str],
        *,
        episode_key: str,
        max_steps: int,
        category_hint: str = "",
        overrides: GoalOverrides = NO_OVERRIDES,
    ) -> AgentSession:
        """A session of the configured agent for one request (the pipeline, or the model agent of its kind)."""
        settings, components = self.resolve(overrides)
        query = self.interpreter.interpret(tuple(descriptions), QueryMode(settings.query_mode), category_hint)
        if self.model_agent is not None:
            return self.model_agent.new_session(query, episode_key=episode_key, max_steps=max_steps)
        return VerificationSession(query, components, settings, episode_key=episode_key, max_steps=max_steps)
