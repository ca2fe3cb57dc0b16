"""The weight-free ("classical") per-view verifier, as a set of small checks: colour, pattern and OCR cues on
the object crop.

It is the default backend because it runs everywhere: it needs no downloaded model weights (the OCR models
ship inside the ``rapidocr-onnxruntime`` wheel) and no GPU.

Layout: :mod:`.checks` holds one module per check (main colour, part colour, pattern, plain surface, text,
logo, whole description, and the identity and category gates), each with its settings dataclass;
:mod:`.registry` maps claim kinds to checks; :mod:`.verifier` orders the work for one view; :mod:`.view` is
the analysis every check of a view shares; :mod:`.measure` holds the pixel measurements (colour naming, the
object region, pattern geometry, marks, OCR). ``TUNING.md`` beside the package records how values were chosen.

aiv_verifier never imports this package: it finds the backend (:mod:`.backend`) by name through the entry point
``classical`` of the group ``aiv_verifier.backends`` (``setup.py``). The names below are imported on first use,
not with the package, so reading the settings never loads the OCR runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .measure.ocr import ENGINE_CHOICES, OcrEngine, OcrItem, make_ocr_engine
    from .registry import CHECKS, GATES
    from .settings import ClassicalSettings
    from .verifier import ClassicalVerifier

_LAZY = {
    "CHECKS": ".registry",
    "ClassicalSettings": ".settings",
    "ClassicalVerifier": ".verifier",
    "ENGINE_CHOICES": ".measure.ocr",
    "GATES": ".registry",
    "OcrEngine": ".measure.ocr",
    "OcrItem": ".measure.ocr",
    "make_ocr_engine": ".measure.ocr",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


__all__ = [
    "CHECKS",
    "ENGINE_CHOICES",
    "GATES",
    "ClassicalSettings",
    "ClassicalVerifier",
    "OcrEngine",
    "OcrItem",
    "make_ocr_engine",
]
