"""Device and dtype resolution for the torch backends; imported only by backends that load a model.

``auto`` picks the first CUDA device when one is usable, else the CPU; dtype ``auto`` is bfloat16 on a GPU (what
the benchmark's models were run in) and float32 on a CPU (bfloat16 matmuls are slow and inexact there). A device
that does not exist is refused at start-up with one line, not at the first forward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .local_weights import ModelDirError, check_device_spec, check_dtype_spec

if TYPE_CHECKING:
    import torch


def resolve_device(spec: str, parameter: str = "device") -> torch.device:
    import torch

    value = check_device_spec(spec, parameter)
    if value == "auto":
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if value.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ModelDirError(
                f"{parameter} {spec!r}: this torch build or machine has no usable CUDA device"
            )
        index = int(value.split(":", 1)[1]) if ":" in value else 0
        if index >= torch.cuda.device_count():
            raise ModelDirError(
                f"{parameter} {spec!r}: only {torch.cuda.device_count()} CUDA device(s) are visible"
            )
        return torch.device(f"cuda:{index}")
    if value == "mps" and not torch.backends.mps.is_available():
        raise ModelDirError(f"{parameter} {spec!r}: MPS is not available on this machine")
    return torch.device(value)


def resolve_dtype(spec: str, device: torch.device, parameter: str = "dtype") -> torch.dtype:
    import torch

    value = check_dtype_spec(spec, parameter)
    if value == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[value]
