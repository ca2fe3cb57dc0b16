"""The weight-free per-view verifier: colour statistics, pattern geometry and OCR on the object crop.

One call analyses the crop once (object mask, colour names, colour shares; one OCR pass only if some claim
needs text) and answers every attribute from that shared analysis, each by the check its claim kind names
(:mod:`aiv_checks.registry`). Each answer is Yes / No / Unsure with a short reason a person can check against
the image.

Honesty rules, because a wrong "No" costs more than an Unsure (the fusion counts contradictions):

* no box (full-image fallback) ⇒ the object is not localised ⇒ Unsure for everything;
* too few camera pixels on the object ⇒ Unsure;
* a gate (category by size, silhouette or outline; identity by palette) says No for every attribute at once
  only when a physical or palette cue rules the described object out;
* each check says No only where its cue is decisive (see the check modules); materials, shapes, counts and
  relations are Unsure (no sound pixel cue without a learned model).

This class only orders the work: sanitise the crop, run the gates at their stages, analyse the view once,
ask each claim's check, then the follow-ups over all outcomes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from aiv_verifier.claims import DESCRIPTION_KIND, claim_kind
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.description.phrases import analyse_phrase
from aiv_verifier.verification.base import AttributeAnswer, ViewInput, unsure_for_all

from .checks.category import is_open_frame
from .measure import colour as colour_mod
from .measure.ocr import OcrEngine, check_ocr_choice, shared_ocr_engine
from .measure.region import estimate_region
from .outcome import OBJECT_CLAIM, CheckOutcome, unsure
from .registry import FOLLOW_UPS, GATES, judge
from .settings import ClassicalSettings
from .view import Claim, Scene, ViewAnalysis

#: Claim kinds an attribute of type shape or count may still be judged as (a shape word is no pixel cue).
_SHAPE_OR_COUNT_KINDS = ("text", "pattern", "logo")


def sanitise_crop(crop: object) -> tuple[np.ndarray | None, str]:
    """A uint8 H×W×3 RGB array, or None with the reason it cannot be judged."""
    if not isinstance(crop, np.ndarray):
        return None, "crop is not an image array"
    array = crop
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[..., 0]
    if array.ndim == 2:
        array = np.repeat(array[..., None], 3, axis=2)
    if array.ndim != 3 or array.shape[2] not in (3, 4):
        return None, f"crop has unsupported shape {crop.shape}"
    if array.shape[0] < 8 or array.shape[1] < 8:
        return None, f"crop is too small to judge ({array.shape[1]}x{array.shape[0]} px)"
    array = array[..., :3]
    if array.dtype != np.uint8:
        if not np.issubdtype(array.dtype, np.number):
            return None, f"crop has non-numeric dtype {array.dtype}"
        values = array.astype(np.float64)
        if not np.isfinite(values).all():
            return None, "crop contains NaN or infinite values"
        # Float images in [0, 1] are common; anything larger is taken as 0..255.
        if np.issubdtype(array.dtype, np.floating) and values.max() <= 1.0:
            values = values * 255.0
        array = np.clip(np.rint(values), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array), ""


def _gate_answers(scene: Scene, stage: str, attributes: list[Attribute]) -> list[AttributeAnswer] | None:
    """No for every attribute when a gate of ``stage`` rules the object out, else None."""
    for gate in GATES:
        if gate.stage != stage:
            continue
        reason = gate.judge(scene)
        if reason:
            return [
                AttributeAnswer(a.name, Decision.NO, reason, gate.certainty, dict(OBJECT_CLAIM))
                for a in attributes
            ]
    return None


def judge_attribute(attribute: Attribute, analysis: ViewAnalysis) -> CheckOutcome:
    """The outcome on one attribute: its claim kind's check, after the type-level refusals."""
    phrase = attribute.evidence_phrase if isinstance(attribute.evidence_phrase, str) else ""
    if not phrase.strip():
        return unsure("empty evidence phrase")
    if attribute.type == "other":
        return judge(DESCRIPTION_KIND, Claim(phrase), analysis)
    if attribute.type == "relation":
        return unsure("spatial relations are not checkable from colour statistics")
    info = analyse_phrase(phrase)
    if attribute.type in ("shape", "count") and info.kind not in _SHAPE_OR_COUNT_KINDS:
        return unsure(f"{attribute.type} claims need a learned model; not judged here")
    if attribute.type == "material" and info.kind in ("material", "shape", "unknown"):
        return unsure("material cannot be judged from colour pixels")
    return judge(claim_kind(phrase, attribute.name), Claim(phrase, attribute.name), analysis)


class ClassicalVerifier:
    """Per-view verifier from colour, pattern and OCR cues; needs no model weights beyond the OCR wheel.

    Build once and call :meth:`verify` every step. The OCR engine named by ``settings.ocr_engine`` is checked
    here but built on the first attribute that needs text (:func:`.measure.ocr.shared_ocr_engine`): its models
    and onnxruntime are most of the verifier's memory, and most views and many whole runs never need them.
    Pass ``ocr`` (an engine, or None for no OCR) to use that engine instead.
    """

    name: ClassVar[str] = "classical"

    def __init__(
        self, settings: ClassicalSettings | None = None, ocr: OcrEngine | str | None = "params"
    ) -> None:
        self.settings = settings or ClassicalSettings()
        self._ocr: OcrEngine | None = None
        self._ocr_ready = not isinstance(ocr, str)
        if isinstance(ocr, str):
            check_ocr_choice(self.settings.ocr_engine)  # a bad name fails now, not at the first printed word
        else:
            self._ocr = ocr
        self._ocr_lock = threading.Lock()
        self._model_calls = 0
        self.last_timing: dict[str, float] = {}
        colour_mod.warm_up()  # build the colour-naming table now, not inside the first step

    @property
    def ocr_engine_name(self) -> str:
        """The OCR engine's name ("none" without one); builds the engine if no text was read yet."""
        engine = self._ocr_engine()
        return engine.name if engine is not None else "none"

    @property
    def ocr_loaded(self) -> bool:
        """Whether the OCR engine has been built (or was given): False until an attribute needed text."""
        return self._ocr_ready

    def _ocr_engine(self) -> OcrEngine | None:
        """The OCR engine, built on the first call (by one thread, when episodes run on several)."""
        if not self._ocr_ready:
            with self._ocr_lock:
                if not self._ocr_ready:
                    self._ocr = shared_ocr_engine(self.settings.ocr_engine)
                    self._ocr_ready = True
        return self._ocr

    @property
    def model_calls(self) -> int:
        return self._model_calls

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        attributes = list(attributes)
        if not attributes:
            return []
        try:
            answers = self._verify(view, attributes)
        except Exception as error:  # one unreadable frame must not end the episode
            return unsure_for_all(
                attributes, f"classical verifier failed on this view: {type(error).__name__}"
            )
        return answers

    def _verify(self, view: ViewInput, attributes: list[Attribute]) -> list[AttributeAnswer]:
        start = time.perf_counter()
        settings = self.settings
        crop, problem = sanitise_crop(getattr(view, "crop", None))
        if crop is None:
            return unsure_for_all(attributes, problem)
        if view.crop_box is None:
            return unsure_for_all(
                attributes, "no box for this view: the object is not localised in the full image"
            )
        full = view.full_image if isinstance(view.full_image, np.ndarray) else None
        image_hw = (int(full.shape[0]), int(full.shape[1])) if full is not None and full.ndim >= 2 else None
        scene = Scene(view, image_hw, settings)
        gated = _gate_answers(scene, "box", attributes)
        if gated is not None:
            return gated
        usable_full = full if full is not None and full.dtype == np.uint8 and full.ndim == 3 else None
        region = estimate_region(crop, view.crop_box, image_hw, settings.region, usable_full)
        if region.source_pixels < settings.min_object_pixels:
            return unsure_for_all(
                attributes,
                f"object covers only ~{region.source_pixels:.0f} camera pixels: too little evidence",
            )
        scene.region = region
        gated = _gate_answers(scene, "region", attributes)
        if gated is not None:
            return gated
        descriptions = view.descriptions if isinstance(view.descriptions, tuple) else ()
        open_frame = settings.open_frame_palette_unreliable and is_open_frame(view.category)
        analysis = ViewAnalysis(region, self._ocr_engine, crop, settings, descriptions, open_frame)
        region_done = time.perf_counter()
        scene.analysis = analysis
        gated = _gate_answers(scene, "palette", attributes)
        if gated is not None:
            return gated
        outcomes = [(attribute, judge_attribute(attribute, analysis)) for attribute in attributes]
        for follow_up in FOLLOW_UPS:
            outcomes = follow_up(outcomes, analysis)
        answers = [
            AttributeAnswer(
                attribute.name,
                outcome.answer,
                outcome.reason,
                float(np.clip(outcome.certainty, 0.0, 1.0)),
                {"region": region.method, "colours": analysis.stats.summary(3)},
            )
            for attribute, outcome in outcomes
        ]
        self._model_calls += analysis.ocr_calls
        self.last_timing = {
            "region_s": region_done - start,
            "ocr_s": analysis.ocr_seconds,
            "total_s": time.perf_counter() - start,
        }
        return answers


__all__ = ["ClassicalVerifier", "judge_attribute", "sanitise_crop"]
