"""The weight-free ("classical") per-view verifier backend: colour, pattern and OCR cues on the crop.

It is the default backend because it runs everywhere: it needs no downloaded model weights (the OCR models
ship inside the ``rapidocr-onnxruntime`` wheel) and no GPU. See :mod:`.backend` for the answer rules.
"""

from .backend import ClassicalParams, ClassicalVerifier
from .ocr import OcrEngine, OcrItem, make_ocr_engine

__all__ = ["ClassicalParams", "ClassicalVerifier", "OcrEngine", "OcrItem", "make_ocr_engine"]
