"""What an agent takes and gives on each step, whatever the agent: the frame it is shown, the step it answers
with (its attribute rows and per-view answers), and the backends it is built from.

These types are the vocabulary of the episode loop (:mod:`.episode_loop`), the ports that feed it and the
records written from it; they are kept apart from the agents themselves (:mod:`.verification_session`,
:mod:`.embedding`, :mod:`.trained`) so a port or a record writer does not import an agent to name a step.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from ..core.crop import CropResult, Detection
from ..core.evidential import EvidenceSummary, EvidentialPolicy
from ..core.fusion import FusionStrategy
from ..core.nbv import NbvChoice, NbvStrategy
from ..core.sector_geometry import SectorGeometry
from ..core.types import AttributeState, Decision
from ..detection.base import Detector
from ..query.types import QuerySpec
from ..verification.base import AttributeAnswer, PerViewVerifier, PrivilegedViewInfo, ViewInput

LANGUAGE_MODEL_FAILED = "language_model_failed"
"""``model_calls`` key: language-model calls of the episode that failed (answered "", then Missing / fallback),
query understanding's included."""


@dataclass(frozen=True)
class ViewFrame:
    """What the agent gets on one step, independent of where it came from (simulator, bag, robot).

    ``step_count`` is s of the stopping rule (0 on the first view); ``navigation_failed`` says the previous
    move was refused, so this image repeats the last one. ``gt_box`` is the privileged ground-truth box (GT box
    mode; None = the capture has no box), ``detections`` the boxes of an external detector for this frame.
    ``target_visible`` is the privileged mask-over-threshold flag (LLM-NBV trap warnings), ``geometry`` the
    capture layout for angular FPS. ``focal_px`` is the camera's horizontal focal length in pixels of
    ``image`` when the camera publishes its calibration (None: unknown; see :mod:`aiv_verifier.camera_model`).
    ``current_level`` is the camera height level of the view (0: eye level) and ``levels`` the levels the
    episode has views at, as far as the port knows ((0,): one level, so the agent never asks for up / down).
    """

    image: np.ndarray
    step_count: int
    current_sector: int
    navigation_failed: bool = False
    image_key: Hashable | None = None
    capture_tag: str = ""
    gt_box: tuple[float, float, float, float] | None = None
    detections: tuple[Detection, ...] = ()
    target_visible: bool | None = None
    privileged: PrivilegedViewInfo | None = None
    geometry: SectorGeometry | None = None
    focal_px: float | None = None
    current_level: int = 0
    levels: tuple[int, ...] = (0,)

    @property
    def episode_levels(self) -> tuple[int, ...]:
        """The episode's levels with the current one (a port that knows none still reports where it is)."""
        return tuple(sorted({*self.levels, self.current_level}))


@dataclass(frozen=True)
class AttributeRow:
    """One attribute after a step: both tracker accumulators and this view's answer."""

    name: str
    type: str
    evidence_phrase: str
    weight: int
    state: AttributeState  # raw-vote final decision (drives attr_majority)
    reconciled_state: AttributeState  # Eq. 3 state (drives majority, LLM-NBV status)
    votes_matched: float
    votes_contradicted: float
    weight_matched: float
    weight_contradicted: float
    weight_missing: float
    converged: bool
    last_answer: str  # "Yes" / "No" / "Unsure", "" when not asked this step
    last_reason: str
    # The evidential opinion (NaN / "" when the session keeps none): belief + disbelief + uncertainty = 1.
    belief: float = math.nan
    disbelief: float = math.nan
    uncertainty: float = math.nan
    claim_kind: str = ""


@dataclass(frozen=True)
class AgentStep:
    """The outcome of one ``observe`` call."""

    step: int
    sector: int
    capture_tag: str
    duplicate_view: bool
    crop: CropResult
    crop_notes: tuple[str, ...]
    decision: Decision  # Yes/No = stop and answer; Unsure = move on (see ``move``)
    step_prediction: Decision  # forced Yes/No now (first-view accuracy, flips)
    stop_reason: str  # "" while continuing
    move: NbvChoice | None
    attributes: tuple[AttributeRow, ...]
    answers: tuple[AttributeAnswer, ...]
    abstained: bool = False  # stopped without deciding: UNDECIDED (evidential fusion; decision is Unsure)
    evidence: EvidenceSummary | None = None  # the evidential fusion's state after this step
    level: int = 0  # camera height level of the view judged (0: eye level)

    @property
    def stopped(self) -> bool:
        return self.decision is not Decision.UNSURE or self.abstained


@dataclass(frozen=True)
class AgentComponents:
    """The backends of an agent, built once per process and shared by all sessions."""

    verifier: PerViewVerifier
    fusion: FusionStrategy | EvidentialPolicy
    nbv: NbvStrategy
    detector: Detector | None = None
    evidence: EvidentialPolicy | None = None  # kept when the evidential fusion or the uncertainty NBV is used


def view_input(
    frame: ViewFrame, crop: CropResult, query: QuerySpec, episode_key: str, step: int
) -> ViewInput:
    """What the per-view verifier is shown of a frame: the crop, the whole image and the query's context."""
    return ViewInput(
        crop=crop.image,
        full_image=frame.image,
        crop_box=crop.box,
        detection_confidence=crop.confidence,
        category=query.category,
        descriptions=query.descriptions,
        episode_key=episode_key,
        step=step,
        privileged=frame.privileged,
        focal_px=frame.focal_px,
    )
