"""Checks a run's configuration passes before anything runs: its evidence tables load as the verifier's would.

Apart from :mod:`aiv_eval.cli` because the heights / A-B comparison (:mod:`aiv_eval.heights`) checks every arm
the same way and :mod:`aiv_eval.cli` imports that module to add its subcommand: both import this one instead
of each other.
"""

from __future__ import annotations

from .spec import EvalSpec, SpecError


def check_evidence_tables(spec: EvalSpec) -> None:
    """Load the calibration (and visibility) file the configuration uses, as the verifier will at start-up."""
    from aiv_verifier.agent.factory import ConfigError, build_evidence, build_visibility
    from aiv_verifier.agent.settings import AgentSettings
    from aiv_verifier.core.nbv import UNCERTAINTY_NBV

    from .identity import evidence_in_use

    if not evidence_in_use(spec.agent_flat()):
        return
    config = spec.agent_config()
    try:
        settings = AgentSettings.from_mapping(config.get("agent", {}))
        build_evidence(config, settings)
        if settings.nbv == UNCERTAINTY_NBV:
            build_visibility(settings)
    except (ConfigError, ValueError) as error:
        raise SpecError(str(error)) from None


__all__ = ["check_evidence_tables"]
