"""Which models and prompts a configuration uses, as content fingerprints: part of a run's identity.

Parameters alone do not identify a model run: the same ``language_model.model_dir`` may hold other weights
tomorrow, and an edited prompt file changes every answer. The evaluator adds :func:`model_identity` to the
fingerprint a resume compares, so a resume against other weights, another served model or other prompt text is
refused instead of mixing two models' results in one ``results.jsonl``. Computed from the flat parameters only
(no model is loaded), so a ROS run and an in-process run of one configuration get the same identity. The
weight-free default uses no model and contributes nothing, which keeps its run ids unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aiv_models.local_weights import check_adapter_dir, check_model_dir, directory_fingerprint

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
#: Parameters naming a prompt file that overrides a package prompt.
PROMPT_PARAMETERS = (
    "query.category_prompt",
    "query.extract_prompt",
    "query.merge_prompt",
    "verifier.mllm.attribute_prompt",
    "verifier.mllm.description_prompt",
    "verifier.mllm.view_prompt",
    "trained.prompt_file",
)


def uses_language_model(flat: Mapping[str, Any]) -> bool:
    """Whether any configured part calls the language model (a configured but unused one changes nothing)."""
    return str(flat.get("language_model.transport", "none")) != "none" and (
        flat.get("verifier.backend") == "mllm"
        or flat.get("query.backend") == "llm"
        or flat.get("agent.nbv") == "llm"
        or flat.get("agent.kind") == "trained"
    )


def model_identity(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{part: identity}`` for every model the configuration uses; {} for the weight-free default.

    Raises :class:`~aiv_models.local_weights.ModelDirError` (one line) for a model directory that cannot be used.
    """
    identity: dict[str, Any] = {}
    if flat.get("agent.bbox_mode") == "detector" and str(flat.get("detector.backend", "none")) != "none":
        identity["detector"] = check_model_dir(
            str(flat.get("detector.model_dir", "")), what="detector", parameter="detector.model_dir"
        ).as_record()
    if flat.get("agent.kind") in ("clip", "siglip"):
        identity["embedding"] = check_model_dir(
            str(flat.get("embedding.model_dir", "")), what="embedding model", parameter="embedding.model_dir"
        ).as_record()
    if uses_language_model(flat):
        identity["language_model"] = _language_model_identity(flat)
        identity["prompts"] = prompt_fingerprints(flat)
    return identity


def _language_model_identity(flat: Mapping[str, Any]) -> dict[str, Any]:
    if flat.get("language_model.transport") == "openai":
        # A server's weights cannot be hashed from here: its URL and served name (adapter names included) are
        # what identifies it.
        return {
            "base_url": str(flat.get("language_model.base_url", "")),
            "model": str(flat.get("language_model.model", "")),
        }
    record: dict[str, Any] = {
        "weights": check_model_dir(
            str(flat.get("language_model.model_dir", "")),
            what="language model",
            parameter="language_model.model_dir",
        ).as_record()
    }
    adapter = str(flat.get("language_model.adapter_dir", ""))
    if adapter:
        record["adapter"] = check_adapter_dir(
            adapter, what="language model", parameter="language_model.adapter_dir"
        ).as_record()
    return record


def prompt_fingerprints(flat: Mapping[str, Any]) -> dict[str, str]:
    """sha256 of the package's prompt files (all of them: any may be the default of a used stage) and of every
    prompt file a parameter points at."""
    prints = {"package": directory_fingerprint(PROMPTS_DIR)}
    for name in PROMPT_PARAMETERS:
        path = str(flat.get(name, "") or "")
        if path:
            try:
                prints[name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            except OSError as error:
                raise ValueError(f"{name}: prompt file {path!r} cannot be read ({error.strerror})") from None
    return prints
