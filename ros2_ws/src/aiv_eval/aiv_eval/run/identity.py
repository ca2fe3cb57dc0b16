"""What identifies an evaluation run, computed the same way from a params file and from running nodes.

The in-process mode reads the parameters from the params YAML; the ``evaluator`` node asks the running
``offline_sim`` and ``verifier`` nodes for theirs over the parameter services. Both hand the values to
:func:`build_run_config`, so a ROS run and an in-process run of one configuration get the same run id and can
resume each other's run directory, and a node started with other values than the file claims is noticed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aiv_verifier.evidence_tables import DEFAULT_CALIBRATION_FILE, DEFAULT_VISIBILITY_FILE, resolve_table_path
from aiv_verifier.model_identity import model_identity

from .. import RunConfig

#: Simulator parameters that change what an episode is (the rest only change transport or logging).
SIM_IDENTITY_KEYS = ("index_file", "max_steps", "seed", "seed_policy", "view_priority")
#: Simulator parameters that enter the identity only when set to another value than this default, so adding
#: them changed no run id: ``height_levels: eye`` plays a dataset with height levels as one-level episodes,
#: another run than the same dataset with every level (a resume must not mix the two).
SIM_IDENTITY_DEFAULTS_LEFT_OUT: Mapping[str, Any] = {"height_levels": "all"}


def fingerprint_config(sim: Mapping[str, Any], agent_flat: Mapping[str, Any]) -> dict[str, Any]:
    """The behaviour-defining configuration: simulator episode rules, every agent/backend parameter and, when
    models are used, their weights' and prompts' fingerprints (:func:`aiv_verifier.model_identity.model_identity`;
    ModelDirError, a ValueError, for an unusable model directory)."""
    missing = [key for key in SIM_IDENTITY_KEYS if key not in sim]
    if missing:
        raise KeyError(f"simulator parameters missing for the run identity: {missing}")
    uses_evidence = evidence_in_use(agent_flat)
    fingerprint: dict[str, Any] = {
        "offline_sim": {key: sim[key] for key in SIM_IDENTITY_KEYS}
        | {
            key: sim[key]
            for key, default in SIM_IDENTITY_DEFAULTS_LEFT_OUT.items()
            if key in sim and sim[key] != default
        },
        "verifier": {
            key: value
            for key, value in sorted(agent_flat.items())
            if (uses_evidence or not key.startswith(EVIDENCE_PARAMETER_PREFIXES))
            and IDENTITY_DEFAULTS_LEFT_OUT.get(key, _NOT_LEFT_OUT) != value
        },
    }
    models = model_identity(agent_flat)
    if models:  # the weight-free default adds nothing, so its run ids stay what they were
        fingerprint["models"] = models
    if uses_evidence:  # other tables, other decisions: a resume must not mix them
        fingerprint["evidence_tables"] = evidence_table_identity(agent_flat)
    return fingerprint


#: Parameters that only the evidential fusion and the uncertainty next-best-view read; a run that uses neither
#: leaves them out of its identity, so adding them changed no existing run id.
EVIDENCE_PARAMETER_PREFIXES = ("agent.evidence.", "verifier.calibration_")


#: Parameters that enter the identity only when set to another value than this default: their default changes
#: no record of a healthy run (``agent.model_outage: fail`` only turns an episode whose every model call failed
#: into an unscored failure), so adding them changed no existing run id; the other value is another run.
IDENTITY_DEFAULTS_LEFT_OUT: Mapping[str, Any] = {
    "agent.model_outage": "fail",
    # Batched decoding of a local chat model: one call at a time is the reference; a batch answers the same in
    # float32 but may change a token in bfloat16, so a batched run is a run of its own.
    "language_model.max_batch": 1,
    "language_model.batch_window_s": 0.01,
    # Batched detector and embedding forwards: the same logits, boxes and scores up to float rounding (tested in
    # float32), but rounding can tip a threshold, so a batched run is a run of its own too.
    "detector.max_batch": 1,
    "detector.batch_window_s": 0.01,
    "embedding.max_batch": 1,
    "embedding.batch_window_s": 0.01,
}
_NOT_LEFT_OUT = object()


def evidence_in_use(agent_flat: Mapping[str, Any]) -> bool:
    return agent_flat.get("agent.fusion") == "evidential" or agent_flat.get("agent.nbv") == "uncertainty"


def evidence_table_identity(agent_flat: Mapping[str, Any]) -> dict[str, str]:
    """Content hashes of the calibration (and, for the uncertainty next-best-view, visibility) file used."""
    calibration = resolve_table_path(
        str(agent_flat.get("verifier.calibration_file", "")), DEFAULT_CALIBRATION_FILE
    )
    out = {"calibration": _file_digest(calibration)}
    if agent_flat.get("agent.nbv") == "uncertainty":
        visibility = resolve_table_path(
            str(agent_flat.get("agent.evidence.visibility_file", "")), DEFAULT_VISIBILITY_FILE
        )
        out["visibility"] = _file_digest(visibility)
    return out


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return f"unreadable:{path}"


def config_info(sim: Mapping[str, Any], agent_flat: Mapping[str, Any]) -> dict[str, Any]:
    """The six ``config_info`` fields of the reference ``metrics.json``."""
    return {
        "agent_type": f"aiv:{_agent_type(agent_flat)}",
        "nbv_type": agent_flat["agent.nbv"],
        "fusion_type": agent_flat["agent.fusion"],
        "bbox_mode": agent_flat["agent.bbox_mode"],
        "max_steps": int(sim["max_steps"]),
        "query_mode": agent_flat["agent.query_mode"],
    }


def _agent_type(agent_flat: Mapping[str, Any]) -> str:
    """The pipeline is named by its per-view verifier, the other agents by their kind."""
    kind = str(agent_flat.get("agent.kind", "pipeline"))
    return str(agent_flat["verifier.backend"]) if kind == "pipeline" else kind


def build_run_config(
    *,
    sim: Mapping[str, Any],
    agent_flat: Mapping[str, Any],
    slice_: tuple[int, int | None],
    unsure_as_negative: bool,
    name: str,
    code_version: str = "",
) -> RunConfig:
    return RunConfig(
        config=fingerprint_config(sim, agent_flat),
        index_file=str(sim["index_file"]),
        slice=slice_,
        seed=int(sim["seed"]),
        code_version=code_version,
        config_info=config_info(sim, agent_flat),
        unsure_as_negative=bool(unsure_as_negative),
        name=name,
    )


def evaluation_slice(start: int, end: int) -> tuple[int, int | None]:
    """``slice_start`` / ``slice_end`` parameters (end -1 = to the end of the index) as a slice tuple."""
    if start < 0:
        raise ValueError(f"slice_start must be >= 0, got {start}")
    if end >= 0 and end < start:
        raise ValueError(f"slice_end {end} is before slice_start {start}")
    return start, (None if end < 0 else end)
