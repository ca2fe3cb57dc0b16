"""Model weights from a local directory only: checked before anything is loaded, identified for resumes.

Robots and CI machines reach no model hub, so every backend loads from a directory the user provides (or a model
id resolved from a local cache with the hub disabled). :func:`check_model_dir` runs at start-up, before torch or
transformers are imported, and refuses a missing, incomplete or wrong-kind directory with one line that names the
path, what was expected there and how to get it on a machine with internet. Only safetensors weights are accepted:
a ``pytorch_model.bin`` is a pickle, and unpickling a downloaded file can run arbitrary code.

:class:`ModelIdentity` is what a resumed run compares: the directory's model type and a fingerprint of its
content, so a resume against different weights is refused instead of mixing two models' results.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Weight files that are pickles: refused, with a hint to convert them.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
#: Files larger than this are fingerprinted by size, safetensors header and their first and last chunk
#: instead of read whole: hashing 16 GB of weights at every start would cost more than loading them.
_WHOLE_HASH_LIMIT = 64 * 1024 * 1024
_CHUNK = 4 * 1024 * 1024
_DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?|mps)$")
DTYPES = ("auto", "float32", "bfloat16", "float16")


class ModelDirError(ValueError):
    """A model directory cannot be used; the message is one line naming the path and the remedy."""


@dataclass(frozen=True)
class ModelIdentity:
    """What identifies the weights a run used (recorded with the run, compared on resume)."""

    path: str
    model_type: str
    fingerprint: str

    def as_record(self) -> dict[str, str]:
        return {"path": self.path, "model_type": self.model_type, "fingerprint": self.fingerprint}


def _download_hint(what: str, example: str) -> str:
    source = f" (e.g. {example})" if example else ""
    return (
        f"on a machine with internet, download the {what} checkpoint{source} with "
        f"`hf download <model-id> --local-dir DIR` and copy DIR here"
    )


def check_model_dir(
    path: str | os.PathLike[str],
    *,
    what: str,
    model_types: Sequence[str] = (),
    example: str = "",
    parameter: str = "",
) -> ModelIdentity:
    """Check that ``path`` holds a loadable transformers model of one of ``model_types`` in safetensors.

    ``what`` names the model in messages ("Grounding DINO detector"), ``example`` a published checkpoint id and
    ``parameter`` the parameter that sets the path. Raises :class:`ModelDirError` with one line otherwise.
    """
    where = f" ({parameter})" if parameter else ""
    hint = _download_hint(what, example)
    if not str(path).strip():
        raise ModelDirError(f"the {what} needs a local model directory{where}; none is set: {hint}")
    root = Path(path).expanduser()
    if not root.exists():
        raise ModelDirError(f"{what} model directory {str(root)!r}{where} does not exist: {hint}")
    if not root.is_dir():
        raise ModelDirError(f"{what} model path {str(root)!r}{where} is not a directory: {hint}")
    config = _read_json(root / "config.json", what, where, hint)
    model_type = str(config.get("model_type", ""))
    if model_types and model_type not in model_types:
        raise ModelDirError(
            f"{what} model directory {str(root)!r}{where} holds a {model_type or 'untyped'!r} model, "
            f"expected {' or '.join(repr(t) for t in model_types)}: {hint}"
        )
    _check_safetensors(root, what, where, hint)
    return ModelIdentity(str(root.resolve()), model_type, directory_fingerprint(root))


def check_adapter_dir(path: str | os.PathLike[str], *, what: str, parameter: str = "") -> ModelIdentity:
    """Check a PEFT (LoRA) adapter directory: ``adapter_config.json`` + ``adapter_model.safetensors``."""
    where = f" ({parameter})" if parameter else ""
    hint = "save the adapter with peft's `save_pretrained` (safetensors) and copy its directory here"
    root = Path(path).expanduser()
    if not root.is_dir():
        raise ModelDirError(f"{what} adapter directory {str(root)!r}{where} does not exist: {hint}")
    config = _read_json(root / "adapter_config.json", what, where, hint)
    if not (root / "adapter_model.safetensors").is_file():
        pickled = [p.name for p in root.iterdir() if p.suffix in PICKLE_SUFFIXES]
        found = f" (found only the pickle {pickled[0]!r}, which is refused)" if pickled else ""
        raise ModelDirError(
            f"{what} adapter directory {str(root)!r}{where} has no adapter_model.safetensors{found}: {hint}"
        )
    check_safetensors_file(root / "adapter_model.safetensors", f"{what} adapter", where, hint)
    return ModelIdentity(str(root.resolve()), str(config.get("peft_type", "")), directory_fingerprint(root))


def _read_json(path: Path, what: str, where: str, hint: str) -> dict[str, object]:
    if not path.is_file():
        raise ModelDirError(f"{what} model directory {str(path.parent)!r}{where} has no {path.name}: {hint}")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelDirError(f"{str(path)!r}{where} is not readable JSON ({error}): {hint}") from None
    if not isinstance(value, dict):
        raise ModelDirError(f"{str(path)!r}{where} must hold a JSON object: {hint}")
    return value


def _check_safetensors(root: Path, what: str, where: str, hint: str) -> None:
    index = root / "model.safetensors.index.json"
    if index.is_file():
        data = _read_json(index, what, where, hint)
        weight_map = data.get("weight_map")
        shards = sorted(set(weight_map.values())) if isinstance(weight_map, dict) else []
        missing = [name for name in shards if not (root / str(name)).is_file()]
        if not shards or missing:
            detail = f"shard {missing[0]!r} is missing" if missing else "the index names no shards"
            raise ModelDirError(
                f"{what} model directory {str(root)!r}{where} is incomplete: {detail}: {hint}"
            )
        assert isinstance(weight_map, dict)
        for shard in shards:
            tensors = check_safetensors_file(root / str(shard), what, where, hint)
            absent = sorted(
                name for name, file in weight_map.items() if file == shard and name not in tensors
            )
            if absent:
                raise ModelDirError(
                    f"{what} weights {str(root / str(shard))!r}{where} lack {len(absent)} tensor(s) the index "
                    f"puts there (e.g. {absent[0]!r}): the shard is from another checkpoint or cut short: {hint}"
                )
        return
    weights = sorted(root.glob("*.safetensors"))
    if weights:
        for path in weights:
            check_safetensors_file(path, what, where, hint)
        return
    pickled = sorted(p.name for p in root.iterdir() if p.suffix in PICKLE_SUFFIXES)
    if pickled:
        raise ModelDirError(
            f"{what} model directory {str(root)!r}{where} has only pickle weights ({pickled[0]}), which are "
            "refused because loading a pickle can run code: re-save the model with "
            "`save_pretrained(DIR, safe_serialization=True)` on a trusted machine"
        )
    raise ModelDirError(f"{what} model directory {str(root)!r}{where} has no *.safetensors weights: {hint}")


#: A safetensors header larger than this is not a header (the format caps it at 100 MB).
_MAX_HEADER_BYTES = 100 * 1024 * 1024


def check_safetensors_file(path: Path, what: str, where: str = "", hint: str = "") -> set[str]:
    """The tensor names of a safetensors file, after checking its header and size; ModelDirError otherwise.

    Cheap (reads the header only) and catches what a copy most often breaks: a file cut short (its tensors end
    past the end of the file), a damaged or foreign header. safetensors itself would fail later, at load time,
    with ``SafetensorError: ... incomplete metadata`` and a traceback.
    """
    remedy = hint or "copy the checkpoint again (a file was damaged or cut short)"
    size = path.stat().st_size
    problem = ""
    names: set[str] = set()
    with path.open("rb") as handle:
        head = handle.read(8)
        length = int.from_bytes(head, "little") if len(head) == 8 else -1
        if length < 2 or length > min(_MAX_HEADER_BYTES, size - 8):
            problem = f"its header length field ({length}) does not fit the file's {size} bytes"
        else:
            try:
                header = json.loads(handle.read(length).decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                header, problem = None, f"its header is not JSON ({error.__class__.__name__})"
            if header is not None and not isinstance(header, dict):
                problem = "its header is not a JSON object"
            elif isinstance(header, dict):
                end = 0
                for name, entry in header.items():
                    if name == "__metadata__":
                        continue
                    offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
                    if not (isinstance(offsets, list) and len(offsets) == 2):
                        problem = f"tensor {name!r} has no data_offsets in its header"
                        break
                    names.add(name)
                    end = max(end, int(offsets[1]))
                if not problem and 8 + length + end != size:
                    problem = (
                        f"its tensors need {8 + length + end} bytes but the file has {size} "
                        f"({'cut short' if size < 8 + length + end else 'trailing bytes'})"
                    )
    if problem:
        raise ModelDirError(f"{what} weights {str(path)!r}{where} are damaged: {problem}: {remedy}")
    return names


#: Files one of which a text model's tokenizer needs (fast tokenizer, WordPiece, BPE, SentencePiece).
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model")


def check_tokenizer_files(root: str | os.PathLike[str], *, what: str, parameter: str = "") -> None:
    """Refuse a checkpoint directory without tokenizer files (one line), before transformers gets to it."""
    base = Path(root)
    where = f" ({parameter})" if parameter else ""
    if any((base / name).is_file() for name in TOKENIZER_FILES):
        bpe_without_merges = (
            (base / "vocab.json").is_file()
            and not (base / "tokenizer.json").is_file()
            and not (base / "merges.txt").is_file()
        )
        if bpe_without_merges:
            raise ModelDirError(
                f"{what} model directory {str(base)!r}{where} has vocab.json but no merges.txt (a BPE "
                "tokenizer needs both): copy the checkpoint's tokenizer files again"
            )
        return
    raise ModelDirError(
        f"{what} model directory {str(base)!r}{where} has no tokenizer file (one of {', '.join(TOKENIZER_FILES)}): "
        "copy the checkpoint's tokenizer files again"
    )


def load_failure(error: BaseException, *, what: str, path: str, parameter: str = "") -> ModelDirError:
    """One line for a load that failed after the checks: the parameter, the path, the cause and the remedy."""
    where = f" ({parameter})" if parameter else ""
    lines = str(error).strip().splitlines()
    cause = f"{type(error).__name__}: {lines[0] if lines else ''}".strip().rstrip(":")
    return ModelDirError(
        f"{what} model directory {path!r}{where} could not be loaded ({cause[:300]}): check that it is a complete "
        "copy of a transformers checkpoint of the expected kind"
    )


def directory_fingerprint(root: str | os.PathLike[str]) -> str:
    """A sha256 over every file's relative path and content (large files: size, header and end chunks).

    Deterministic across machines and copies (names are relative, modification times are ignored).
    """
    digest = hashlib.sha256()
    base = Path(root)
    for path in _files(base):
        digest.update(path.relative_to(base).as_posix().encode("utf-8") + b"\0")
        digest.update(_file_digest(path).encode("ascii"))
    return digest.hexdigest()


def _files(base: Path) -> Iterator[Path]:
    for directory, subdirectories, names in os.walk(base):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                yield Path(directory) / name


def _file_digest(path: Path) -> str:
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode("ascii"))
    with path.open("rb") as handle:
        if size <= _WHOLE_HASH_LIMIT:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
        else:
            digest.update(handle.read(_CHUNK))  # a safetensors header (tensor names, shapes) sits here
            handle.seek(size - _CHUNK)
            digest.update(handle.read(_CHUNK))
    return digest.hexdigest()


def check_device_spec(spec: str, parameter: str = "device") -> str:
    """Validate a device name without importing torch: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``."""
    value = spec.strip().lower()
    if not _DEVICE_PATTERN.match(value):
        raise ModelDirError(f"{parameter} {spec!r} is not a device; expected auto, cpu, cuda, cuda:N or mps")
    return value


def check_dtype_spec(spec: str, parameter: str = "dtype") -> str:
    value = spec.strip().lower()
    if value not in DTYPES:
        raise ModelDirError(f"{parameter} {spec!r} is not a dtype; expected one of {list(DTYPES)}")
    return value


def offline_hub() -> None:
    """Disable every hub access before transformers or huggingface_hub are imported (they read these once), and
    load weights on the calling thread."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    # Load the weights on the calling thread. transformers 5 otherwise converts tensors in a 4-thread pool; a test
    # worker once hung for good inside it (all pool threads idle in torch's state_dict code), and for the models
    # this package loads the pool saves nothing worth that risk. A user who wants the pool sets the variable to 0.
    os.environ.setdefault("HF_DEACTIVATE_ASYNC_LOAD", "1")
