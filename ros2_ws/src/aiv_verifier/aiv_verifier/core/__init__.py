"""ROS-free decision core of the verifier: tracker, fusion, stopping, next-best-view, crop and bookkeeping.

Everything here is plain Python (numpy and Pillow only) so the in-process evaluator, the ROS nodes and the
tests share one implementation of the reference rules in docs/benchmark.md (spec §5.4–5.10).
"""

from .crop import CropResult, Detection, PixelBox, crop_with_detections, crop_with_gt_box
from .fusion import (
    AttributeMajorityFusion,
    FusionResult,
    FusionStrategy,
    MajorityFusion,
    VetoFusion,
    available_fusions,
    make_fusion,
    register_fusion,
)
from .nbv import (
    FarthestNbv,
    LlmNbv,
    NbvChoice,
    NbvRequest,
    NbvStrategy,
    RandomNbv,
    available_nbv_strategies,
    make_nbv,
    register_nbv,
)
from .nbv_prompt import AttributeStatus
from .policy_bookkeeping import EpisodeBookkeeping, StepBookkeeping
from .sector_geometry import SectorCapture, SectorGeometry
from .seeding import derive_seed, seeded_rng
from .stopping import DecisionMode, StopOutcome, available_stop_rules, evaluate_stop
from .tracker import AttributeRecord, AttributeStateTracker, ViewEvidence
from .types import (
    ATTRIBUTE_TYPES,
    ATTRIBUTE_WEIGHTS,
    Attribute,
    AttributeState,
    Decision,
    LanguageModel,
    ViewJudgement,
    decision_from_answer_text,
)

__all__ = [
    "ATTRIBUTE_TYPES",
    "ATTRIBUTE_WEIGHTS",
    "Attribute",
    "AttributeMajorityFusion",
    "AttributeRecord",
    "AttributeState",
    "AttributeStateTracker",
    "AttributeStatus",
    "CropResult",
    "Decision",
    "DecisionMode",
    "Detection",
    "EpisodeBookkeeping",
    "FarthestNbv",
    "FusionResult",
    "FusionStrategy",
    "LanguageModel",
    "LlmNbv",
    "MajorityFusion",
    "NbvChoice",
    "NbvRequest",
    "NbvStrategy",
    "PixelBox",
    "RandomNbv",
    "SectorCapture",
    "SectorGeometry",
    "StepBookkeeping",
    "StopOutcome",
    "VetoFusion",
    "ViewEvidence",
    "ViewJudgement",
    "available_fusions",
    "available_nbv_strategies",
    "available_stop_rules",
    "crop_with_detections",
    "crop_with_gt_box",
    "decision_from_answer_text",
    "derive_seed",
    "evaluate_stop",
    "make_fusion",
    "make_nbv",
    "register_fusion",
    "register_nbv",
    "seeded_rng",
]
