"""A damaged checkpoint ends every model load in one line naming the parameter, the file and the remedy.

For each loader -- the Grounding DINO detector, the embedding models (CLIP), the local chat model and its LoRA
adapter -- a copy of a working tiny checkpoint is damaged the ways copies break: a weights file cut in half, a
corrupt safetensors header, a missing tokenizer file, a shard named by an index but absent (or lacking the tensors
the index puts in it). The load must raise :class:`ModelDirError` with one line, before torch reads the weights
where the damage shows in the header; the verifier node started on such a directory exits 2 with that line and no
traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from aiv_models.local_weights import ModelDirError
from support.offline_models import no_network, shared_model_dir  # noqa: F401 - fixture
from support.tiny_embedding import clip_dir_fixture  # noqa: F401 - fixture clip_dir

pytestmark = pytest.mark.usefixtures("no_network")

REPO_ROOT = Path(__file__).resolve().parents[2]
VERIFIER = REPO_ROOT / "ros2_ws" / "install" / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _corrupt_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[8:24] = b"\xff" * 16  # the JSON header starts at byte 8
    path.write_bytes(bytes(data))


def _weights(root: Path) -> Path:
    return next(root.glob("*.safetensors"))


def _shard_missing(root: Path) -> None:
    """Split the weights under an index that names a second shard which is not there."""
    weights = _weights(root)
    from safetensors import safe_open

    with safe_open(str(weights), "np") as handle:
        names = list(handle.keys())
    shard = "model-00001-of-00002.safetensors"
    weights.rename(root / shard)
    index = {"metadata": {}, "weight_map": {name: shard for name in names}}
    index["weight_map"][names[-1]] = "model-00002-of-00002.safetensors"
    (root / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")


def _shard_short_of_tensors(root: Path) -> None:
    """An index that puts a tensor into a shard which does not hold it."""
    weights = _weights(root)
    from safetensors import safe_open

    with safe_open(str(weights), "np") as handle:
        names = list(handle.keys())
    index = {"metadata": {}, "weight_map": {name: weights.name for name in [*names, "extra.weight"]}}
    (root / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")


def _no_tokenizer(root: Path) -> None:
    for name in (
        "tokenizer.json",
        "vocab.txt",
        "vocab.json",
        "merges.txt",
        "tokenizer.model",
        "spiece.model",
    ):
        (root / name).unlink(missing_ok=True)


DAMAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (lambda root: _truncate(_weights(root)), "cut short"),
    "corrupt_header": (lambda root: _corrupt_header(_weights(root)), "damaged"),
    "no_tokenizer": (_no_tokenizer, "no tokenizer file"),
    "shard_missing": (_shard_missing, "is missing"),
    "shard_short": (_shard_short_of_tensors, "lack 1 tensor"),
}


def _damaged_copy(source: Path, tmp_path: Path, damage: str) -> Path:
    copy = tmp_path / f"{source.name}-{damage}"
    shutil.copytree(source, copy)
    DAMAGES[damage][0](copy)
    return copy


def _assert_one_line(error: ModelDirError, parameter: str, path: Path, expected: str) -> None:
    text = str(error)
    assert "\n" not in text, text
    assert parameter in text and str(path) in text, text
    assert expected in text, text


@pytest.fixture(scope="module")
def detector_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once

    return Path(save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny")))


@pytest.fixture(scope="module")
def vlm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from aiv_models.tiny.qwen_vl_checkpoint import build_tiny_qwen_vl

    return build_tiny_qwen_vl(tmp_path_factory.mktemp("vlm") / "tiny-qwen-vl", family="qwen3_vl")


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_the_embedding_loader(clip_dir: Path, tmp_path: Path, damage: str) -> None:
    from aiv_models.embedding import EmbeddingModel

    broken = _damaged_copy(clip_dir, tmp_path, damage)
    with pytest.raises(ModelDirError) as raised:
        EmbeddingModel.load(broken, device="cpu", dtype="float32", parameter="embedding.model_dir")
    _assert_one_line(raised.value, "embedding.model_dir", broken, DAMAGES[damage][1])


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_the_detector_loader(detector_dir: Path, tmp_path: Path, damage: str) -> None:
    from aiv_verifier.detection.grounding_dino import GroundingDinoDetector
    from aiv_verifier.model_config import DetectorParams

    broken = _damaged_copy(detector_dir, tmp_path, damage)
    expected = "has no tokenizer" if damage == "no_tokenizer" else DAMAGES[damage][1]
    with pytest.raises(ModelDirError) as raised:
        GroundingDinoDetector.from_params(
            DetectorParams(backend="grounding_dino", model_dir=str(broken), device="cpu", dtype="float32")
        )
    _assert_one_line(raised.value, "detector.model_dir", broken, expected)


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_the_local_chat_loader(vlm_dir: Path, tmp_path: Path, damage: str) -> None:
    from aiv_models.chat.local import LocalChatTransport

    broken = _damaged_copy(vlm_dir, tmp_path, damage)
    with pytest.raises(ModelDirError) as raised:
        LocalChatTransport(broken, device="cpu", dtype="float32")
    _assert_one_line(raised.value, "language_model.model_dir", broken, DAMAGES[damage][1])


@pytest.mark.parametrize("damage", ["truncated", "corrupt_header"])
def test_the_lora_adapter_loader(vlm_dir: Path, tmp_path: Path, damage: str) -> None:
    import torch
    from aiv_models.chat.local import LocalChatTransport
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    adapter = tmp_path / "adapter"
    model = AutoModelForImageTextToText.from_pretrained(vlm_dir, local_files_only=True)
    get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj"])).save_pretrained(adapter)
    DAMAGES[damage][0](adapter)
    with pytest.raises(ModelDirError) as raised:
        LocalChatTransport(vlm_dir, adapter_dir=adapter, device="cpu", dtype="float32")
    _assert_one_line(raised.value, "language_model.adapter_dir", adapter, DAMAGES[damage][1])


def test_a_verifier_on_a_truncated_checkpoint_exits_2_with_one_line(clip_dir: Path, tmp_path: Path) -> None:
    broken = _damaged_copy(clip_dir, tmp_path, "truncated")
    completed = subprocess.run(
        [str(VERIFIER), "--ros-args", "-p", "agent.kind:=clip", "-p", f"embedding.model_dir:={broken}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = completed.stderr.strip().splitlines()
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    assert any("embedding.model_dir" in line and "cut short" in line for line in lines), lines
