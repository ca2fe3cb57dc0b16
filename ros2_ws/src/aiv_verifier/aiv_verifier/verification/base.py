"""The per-view verifier interface (spec §5.5): one crop in, one Yes / No / Unsure per checked item out.

Backends (classical colour/pattern/OCR, the privileged oracles, and later embedding models and MLLMs) all
implement :class:`PerViewVerifier`. A backend answers several attributes in one call so that it can share work
across them (one OCR pass, one colour histogram, one batched model call). It never raises for a bad view: it
answers Unsure with a reason, because one unreadable frame must not end an episode.

The tracker weights every answer by the *detection* confidence of the view (``ViewInput.detection_confidence``),
not by the backend's own certainty; ``AttributeAnswer.certainty`` is kept for logs and for fusions that want it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

from ..core.crop import PixelBox
from ..core.types import Attribute, Decision


@dataclass(frozen=True)
class PrivilegedViewInfo:
    """Simulator ground truth about the view, only present when the caller opted into the privileged channel.

    ``episode_path`` is the episode directory relative to the dataset root and ``capture_tag`` the capture
    shown (``s4_far``); together they locate the per-capture attribute visibility the oracles read.
    ``visible_attributes`` is that visibility measured on the view itself, from a source that renders any pose
    (the robot stand-in; its ``capture_tag`` is then ``live`` off the capture poses). When it is set the oracles
    judge from it and from ``mask_meets_threshold``; None (the offline simulator, the in-process evaluation)
    means: look the capture up.
    """

    episode_path: str
    capture_tag: str
    target_object_id: str
    mask_meets_threshold: bool
    visible_attributes: frozenset[str] | None = None


@dataclass(frozen=True)
class ViewInput:
    """One view as the verifier sees it.

    ``crop`` is what the backend should judge (H×W×3 uint8 RGB, already padded and upscaled per §5.4);
    ``crop_box`` is where it came from in ``full_image`` (None: no box, the crop is the whole frame).
    ``focal_px`` is the camera's horizontal focal length in pixels of ``full_image`` when the camera says it
    (a robot's CameraInfo); None: a backend that needs one uses its configured field of view.
    """

    crop: np.ndarray
    full_image: np.ndarray
    crop_box: PixelBox | None
    detection_confidence: float
    category: str
    descriptions: tuple[str, ...]
    episode_key: str = ""
    step: int = 0
    privileged: PrivilegedViewInfo | None = None
    focal_px: float | None = None


@dataclass(frozen=True)
class AttributeAnswer:
    """A backend's answer about one attribute in one view.

    ``certainty`` in [0, 1] is the backend's own confidence in ``answer`` (1.0 for oracles).
    """

    attribute: str
    answer: Decision
    reason: str
    certainty: float = 1.0
    debug: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.certainty <= 1.0:
            raise ValueError(f"certainty of {self.attribute!r} must lie in [0, 1], got {self.certainty}")


class VerifierError(RuntimeError):
    """A backend cannot be constructed (missing model directory, missing OCR engine, bad parameters)."""


class PerViewVerifier(Protocol):
    """Judges one view against a list of attributes.

    Contract: the returned list has exactly one answer per requested attribute, in the same order, with
    matching names. ``model_calls`` counts expensive backend invocations (model forwards, OCR passes) since
    construction, for the evaluator's cost statistics.
    """

    name: ClassVar[str]

    @property
    def model_calls(self) -> int: ...

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]: ...


def unsure_for_all(attributes: Sequence[Attribute], reason: str) -> list[AttributeAnswer]:
    """The honest answer when a view cannot be judged at all."""
    return [AttributeAnswer(attribute.name, Decision.UNSURE, reason, 0.0) for attribute in attributes]


def check_answers(attributes: Sequence[Attribute], answers: Sequence[AttributeAnswer], backend: str) -> None:
    """Enforce the one-answer-per-attribute contract; a backend bug surfaces here with the backend's name."""
    expected = [attribute.name for attribute in attributes]
    got = [answer.attribute for answer in answers]
    if expected != got:
        raise ValueError(
            f"verifier {backend!r} answered {got}, expected answers for {expected} in that order"
        )
