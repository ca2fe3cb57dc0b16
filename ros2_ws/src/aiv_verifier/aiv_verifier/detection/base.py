"""Box sources for the crop stage (spec §5.4) and the interface model detectors implement.

Three ways to get a box, selected by the agent's ``bbox_mode``:
- ``gt``: the simulator's privileged ground-truth box of the shown capture (the benchmark's GT mode);
- ``detections``: boxes someone else published for this frame (a robot's detector node);
- ``detector``: a :class:`Detector` run inside the verifier (Grounding DINO and similar, open-vocabulary, queried
  with the predicted category). Model-backed detectors load weights from a local directory only
  (docs/models.md) and arrive with the model-backends work; anything implementing the protocol plugs in.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import ClassVar, Protocol

import numpy as np

from ..core.crop import (
    CropResult,
    Detection,
    crop_with_detections,
    crop_with_gt_box,
)


class BoxMode(str, Enum):
    GT = "gt"
    DETECTIONS = "detections"
    DETECTOR = "detector"

    @classmethod
    def parse(cls, value: str) -> BoxMode:
        try:
            return cls(value.strip().lower())
        except ValueError:
            raise ValueError(
                f"unknown bbox_mode {value!r}; expected one of {[m.value for m in cls]}"
            ) from None


class Detector(Protocol):
    """Open-vocabulary detector: boxes (absolute pixel xyxy, score in [0, 1]) for ``text`` in an RGB image.

    Must return an empty list rather than raise when nothing is found; ``model_calls`` counts forwards.
    """

    name: ClassVar[str]

    @property
    def model_calls(self) -> int: ...

    def detect(self, image: np.ndarray, text: str) -> list[Detection]: ...


def sanitize_detections(
    raw: Sequence[Detection], width: int, height: int
) -> tuple[list[Detection], list[str]]:
    """Drop boxes a crop cannot use (non-finite, zero area, entirely outside the image) and say why.

    A box partly outside the image is kept; the crop clamps it. The returned notes go to the step log so a
    misbehaving detector is visible instead of silently producing full-image views.
    """
    kept: list[Detection] = []
    notes: list[str] = []
    for detection in raw:
        x1, y1, x2, y2 = (float(v) for v in detection.box_xyxy)
        if not all(np.isfinite([x1, y1, x2, y2])):
            notes.append(f"dropped box with non-finite coordinates {detection.box_xyxy}")
        elif x2 <= x1 or y2 <= y1:
            notes.append(f"dropped zero-area box {detection.box_xyxy}")
        elif x2 <= 0 or y2 <= 0 or x1 >= width or y1 >= height:
            notes.append(f"dropped box outside the {width}x{height} image {detection.box_xyxy}")
        else:
            kept.append(detection)
    return kept, notes


def crop_view(
    image: np.ndarray,
    mode: BoxMode,
    *,
    gt_box: Sequence[float] | None = None,
    detections: Sequence[Detection] = (),
    single_view: bool = False,
) -> tuple[CropResult, list[str]]:
    """The crop and confidence of one view for the given box mode, plus notes on discarded boxes."""
    height, width = image.shape[:2]
    if mode is BoxMode.GT:
        # Reference rule: any non-null GT box gives c = 1.0, even one that clamps away to nothing.
        return crop_with_gt_box(image, gt_box, single_view=single_view), []
    usable, notes = sanitize_detections(detections, width, height)
    return crop_with_detections(image, usable, single_view=single_view), notes
