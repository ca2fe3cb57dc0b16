"""A run's identity names the models and prompts it used, so a resume against other weights is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval.run.identity import build_run_config, config_info
from aiv_models.local_weights import ModelDirError
from aiv_verifier.model_identity import model_identity
from aiv_verifier.verifier_parameters import config_parameter_defaults

SIM = {
    "index_file": "val/pv_index_all.jsonl",
    "max_steps": 6,
    "seed": 42,
    "seed_policy": "x",
    "view_priority": "y",
}


def _run_id(flat: dict[str, object]) -> str:
    return build_run_config(
        sim=SIM, agent_flat=flat, slice_=(0, None), unsure_as_negative=False, name="r"
    ).run_id


def _weights(text: bytes) -> bytes:
    """A well-formed safetensors file holding ``text`` as one uint8 tensor (the loaders check the header)."""
    import numpy as np
    from safetensors.numpy import save

    return save({"weights": np.frombuffer(text, dtype=np.uint8)})


def _model_dir(root: Path, weights: bytes, model_type: str = "clip") -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"model_type": model_type}), encoding="utf-8")
    (root / "model.safetensors").write_bytes(_weights(weights))
    return root


def test_the_weight_free_default_adds_nothing_to_the_identity() -> None:
    flat = config_parameter_defaults()
    assert model_identity(flat) == {}
    # A configured but unused language model changes nothing either.
    assert model_identity({**flat, "language_model.transport": "openai"}) == {}


def test_other_weights_in_the_same_directory_give_another_run_id(tmp_path: Path) -> None:
    directory = _model_dir(tmp_path / "clip", b"first weights")
    flat = {**config_parameter_defaults(), "agent.kind": "clip", "embedding.model_dir": str(directory)}
    first = _run_id(flat)
    assert first == _run_id(flat)
    (directory / "model.safetensors").write_bytes(_weights(b"other weights"))
    assert _run_id(flat) != first
    assert config_info(SIM, flat)["agent_type"] == "aiv:clip"


def test_a_served_model_is_identified_by_url_and_name_and_prompts_count(tmp_path: Path) -> None:
    prompt = tmp_path / "attribute.txt"
    prompt.write_text("Is the object {attribute}?", encoding="utf-8")
    flat = {
        **config_parameter_defaults(),
        "verifier.backend": "mllm",
        "language_model.transport": "openai",
        "language_model.base_url": "http://127.0.0.1:8000/v1",
        "language_model.model": "qwen3-vl-8b",
        "verifier.mllm.attribute_prompt": str(prompt),
    }
    identity = model_identity(flat)
    assert identity["language_model"] == {"base_url": "http://127.0.0.1:8000/v1", "model": "qwen3-vl-8b"}
    first = _run_id(flat)
    assert _run_id({**flat, "language_model.model": "qwen3-vl-4b"}) != first
    prompt.write_text("Does the object show {attribute}?", encoding="utf-8")
    assert _run_id(flat) != first


def test_an_unusable_model_directory_is_one_line_naming_it(tmp_path: Path) -> None:
    flat = {
        **config_parameter_defaults(),
        "agent.kind": "siglip",
        "embedding.model_dir": str(tmp_path / "nope"),
    }
    with pytest.raises(ModelDirError) as raised:
        model_identity(flat)
    message = str(raised.value)
    assert "\n" not in message and str(tmp_path / "nope") in message and "embedding.model_dir" in message
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text('{"model_type": "clip"}', encoding="utf-8")
    (pickled / "pytorch_model.bin").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelDirError, match="only pickle weights"):
        model_identity({**flat, "embedding.model_dir": str(pickled)})
