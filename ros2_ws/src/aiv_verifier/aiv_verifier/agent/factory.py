"""Build the agent's backends once from one configuration mapping, and sessions from them per request.

The configuration has three sections, the same in the node's params YAML (as dotted parameter names) and in
the evaluator's in-process mode:

``agent``     :class:`AgentSettings` fields (query mode, fusion, nbv, decision mode, bbox mode, seed);
``verifier``  ``backend`` (classical | oracle | noisy_oracle), ``dataset_root`` (oracles), ``noise`` {error_rate,
              unsure_rate, seed} (noisy oracle), ``classical`` {backend parameters};
``query``     passed to :func:`aiv_verifier.query.build_query_interpreter` (rules or LLM, caches).

Backends are expensive (OCR engines, ground-truth indexes, later neural models), so :class:`AgentFactory`
builds them once; fusion and NBV objects are cheap and are cached per name because a goal may choose them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config_schema import dataclass_from_mapping
from ..core.fusion import FusionStrategy, make_fusion
from ..core.nbv import NbvStrategy, make_nbv
from ..core.types import LanguageModel
from ..detection.base import BoxMode, Detector
from ..query.types import QueryInterpreter, QueryMode
from ..verification.base import PerViewVerifier, VerifierError
from .session import AgentComponents, VerificationSession
from .settings import AgentSettings

VERIFIER_BACKENDS = ("classical", "oracle", "noisy_oracle")
PRIVILEGED_VERIFIERS = frozenset({"oracle", "noisy_oracle"})


class ConfigError(ValueError):
    """The configuration names an unknown backend or has an invalid value; the message says which key."""


def _section(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = config.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"config section {name!r} must be a mapping, got {type(value).__name__}")
    return value


def build_verifier(section: Mapping[str, Any]) -> PerViewVerifier:
    """The per-view verifier named by ``section['backend']`` (default: classical)."""
    backend = str(section.get("backend", "classical"))
    if backend == "classical":
        from ..verification.classical.backend import ClassicalParams, ClassicalVerifier

        try:
            params = dataclass_from_mapping(
                ClassicalParams, _section(section, "classical"), "verifier.classical"
            )
        except ValueError as error:
            raise ConfigError(str(error)) from error
        return ClassicalVerifier(params)
    if backend in PRIVILEGED_VERIFIERS:
        from ..verification.oracle import GroundTruthLibrary, NoiseModel, NoisyOracleVerifier, OracleVerifier

        root = str(section.get("dataset_root", "") or "")
        if not root:
            raise ConfigError(
                f"verifier.backend {backend!r} needs verifier.dataset_root (a synthetic dataset)"
            )
        oracle = OracleVerifier(GroundTruthLibrary(root))
        if backend == "oracle":
            return oracle
        noise = _section(section, "noise")
        try:
            model = NoiseModel(
                error_rate=float(noise.get("error_rate", 0.0)),
                unsure_rate=float(noise.get("unsure_rate", 0.0)),
                seed=int(noise.get("seed", 42)),
            )
        except (TypeError, ValueError) as error:
            raise ConfigError(f"verifier.noise: {error}") from error
        return NoisyOracleVerifier(oracle, model)
    raise ConfigError(f"unknown verifier.backend {backend!r}; expected one of {list(VERIFIER_BACKENDS)}")


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
    ) -> None:
        self.settings = settings
        self.verifier = verifier
        self.interpreter = interpreter
        self.detector = detector
        self.language_model = language_model
        self.verifier_backend = verifier_backend or getattr(verifier, "name", "")
        self._nbv: dict[str, NbvStrategy] = {}
        self._fusion: dict[str, FusionStrategy] = {}
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
    ) -> AgentFactory:
        from ..query import build_query_interpreter

        try:
            settings = AgentSettings.from_mapping(_section(config, "agent"))
        except ValueError as error:
            raise ConfigError(f"agent: {error}") from error
        verifier_section = _section(config, "verifier")
        try:
            verifier = build_verifier(verifier_section)
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
            verifier_backend=str(verifier_section.get("backend", "classical")),
        )

    @property
    def needs_privileged_view(self) -> bool:
        """Whether sessions need the simulator's ground-truth channel (GT boxes or an oracle verifier)."""
        return self.settings.bbox_mode is BoxMode.GT or self.verifier_backend in PRIVILEGED_VERIFIERS

    def resolve(self, overrides: GoalOverrides) -> tuple[AgentSettings, AgentComponents]:
        """Settings and components for one request; raises ValueError naming a bad override."""
        settings = self.settings.with_overrides(
            query_mode=overrides.query_mode, nbv=overrides.nbv, fusion=overrides.fusion
        )
        return settings, AgentComponents(
            verifier=self.verifier,
            fusion=self._fusion_for(settings.fusion),
            nbv=self._nbv_for(settings),
            detector=self.detector,
        )

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
    ) -> VerificationSession:
        settings, components = self.resolve(overrides)
        query = self.interpreter.interpret(tuple(descriptions), QueryMode(settings.query_mode), category_hint)
        return VerificationSession(query, components, settings, episode_key=episode_key, max_steps=max_steps)
