"""The weight-free ("classical") per-view verifier backend: colour, pattern and OCR cues on the crop.

It is the default backend because it runs everywhere: it needs no downloaded model weights (the OCR models
ship inside the ``rapidocr-onnxruntime`` wheel) and no GPU. See :mod:`.backend` for the answer rules.

The backend and the OCR engine are imported on first use of their names, not with the package, so a process
whose verifier is another backend never loads OpenCV and the OCR runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import ClassicalParams, ClassicalVerifier
    from .ocr import OcrEngine, OcrItem, make_ocr_engine

_LAZY = {
    "ClassicalParams": ".backend",
    "ClassicalVerifier": ".backend",
    "OcrEngine": ".ocr",
    "OcrItem": ".ocr",
    "make_ocr_engine": ".ocr",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


__all__ = ["ClassicalParams", "ClassicalVerifier", "OcrEngine", "OcrItem", "make_ocr_engine"]
