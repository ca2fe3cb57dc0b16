"""The ``verifier`` node's configuration: one tree of settings dataclasses, and every table derived from it.

:class:`VerifierConfig` is the root of the agent's and the backends' settings; each section is the dataclass
of the part it configures, declared next to that part (``agent`` → :class:`~.agent.settings.AgentSettings`,
``verifier.noise`` → the noisy oracle's :class:`~.verification.oracle.NoiseModel`, ``query`` →
:class:`~.query.config.QueryConfig`, ``detector`` / ``embedding`` / ``language_model`` / ``trained`` /
``verifier.mllm`` → :mod:`.model_config`, ``verifier.classical`` → the classical backend's settings, which the
factory names). :class:`GoalLimits` and :class:`Wiring` hold the node's own top-level parameters; the camera
frames' QoS comes from :mod:`aiv_common.qos`. Every field says what it means and accepts
(:func:`aiv_common.setting_fields.setting`), so from these classes alone come:

- :func:`config_parameter_defaults`: the dotted agent/backend names with their defaults;
- :func:`verifier_parameters`: the node's whole :class:`~aiv_common.parameter_spec.ParameterSpec` table, which
  the node declares, ``aiv-eval`` and bag replay check params files against, and ``docs/parameters.md`` lists;
- :func:`factory_config`: the nested mapping :meth:`~.agent.factory.AgentFactory.from_config` builds from;
- :func:`node_settings`: the checked, typed values the node runs with.

ROS-free, so every tool reads the same table. This module imports the factory (to learn its backends); the
factory never imports it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiv_common.parameter_spec import ParameterError, ParameterSpec
from aiv_common.qos import LATCHED_FRAME, QoSSettings, qos_parameter_specs, qos_settings_from
from aiv_common.setting_fields import section, setting
from aiv_common.setting_tree import dataclass_from_mapping, flatten_defaults, nested_config, setting_specs
from aiv_dataset.levels import EYE_LEVEL, MAX_LEVEL, MIN_LEVEL
from aiv_dataset.query_rules import description_problem
from aiv_dataset.vocabulary import SECTOR_COUNT

from .agent.factory import VERIFIER_BACKENDS, classical_settings_class
from .agent.settings import AgentSettings
from .model_config import (
    DetectorParams,
    EmbeddingParams,
    LanguageModelParams,
    MllmVerifierParams,
    TrainedAgentParams,
)
from .query.config import QueryConfig
from .verification.oracle import NoiseModel

#: Prefix of the camera frames' QoS parameters.
FRAME_QOS = "frame_qos"
#: Values of ``image_transport``.
IMAGE_TRANSPORTS = ("raw", "compressed")
#: Values of ``detections_type``.
DETECTIONS_TYPES = ("auto", "aiv", "vision_msgs")


@dataclass(frozen=True)
class VerifierSettings:
    """The per-view verifier: which backend answers, and each backend's settings."""

    backend: str = setting(
        "classical",
        "per-view verifier: classical (weight-free), oracle / noisy_oracle (privileged ground truth of a "
        "synthetic dataset), mllm (a multimodal language model on language_model.*)",
        choices=VERIFIER_BACKENDS,
    )
    dataset_root: str = setting("", "dataset with privileged_gt/ (the oracle verifiers only)")
    calibration_file: str = setting(
        "",
        "reliability of the per-view answers for the evidential fusion and the uncertainty next-best-view, "
        "written by aiv-eval calibrate ('' = the shipped table); read and checked at start-up",
    )
    calibration_key: str = setting(
        "",
        "which backend table of the calibration file to use ('' = the backend's own name: classical, oracle, "
        "noisy_oracle:error_rate=E,unsure_rate=U, mllm:MODEL)",
    )
    noise: NoiseModel = section(NoiseModel, "the noisy oracle's per-answer corruption")
    classical: Any = section(classical_settings_class(), "the weight-free classical verifier's thresholds")
    mllm: MllmVerifierParams = section(MllmVerifierParams, "the MLLM verifier's prompts")


@dataclass(frozen=True)
class VerifierConfig:
    """The root of the agent's and the backends' settings: one section per part the factory builds."""

    agent: AgentSettings = section(AgentSettings, "the agent: kind, query mode, fusion, next-best-view, ...")
    verifier: VerifierSettings = section(VerifierSettings, "the per-view verifier")
    query: QueryConfig = section(QueryConfig, "query understanding")
    detector: DetectorParams = section(DetectorParams, "the open-vocabulary detector")
    embedding: EmbeddingParams = section(EmbeddingParams, "the embedding agents")
    language_model: LanguageModelParams = section(LanguageModelParams, "the chat model")
    trained: TrainedAgentParams = section(TrainedAgentParams, "the trained end-to-end agent")


@dataclass(frozen=True)
class GoalLimits:
    """What a VerifyInstance goal may ask for; anything beyond is refused before any work."""

    default_step_budget: int = setting(6, "step budget of a goal that asks for 0", minimum=1)
    max_step_budget: int = setting(24, "larger step budgets are refused as absurd", minimum=1)
    max_descriptions: int = setting(10, "most descriptions one goal may carry", minimum=1)
    max_description_chars: int = setting(20000, "longest accepted description, in characters", minimum=1)


@dataclass(frozen=True)
class Wiring:
    """The node's topics, actions and waits."""

    image_topic: str = setting("camera/image_raw", "camera images (any 8-bit colour or mono encoding)")
    image_transport: str = setting(
        "raw",
        "raw: image_topic carries sensor_msgs/Image; compressed: sensor_msgs/CompressedImage (jpeg/png, as a "
        "camera driver's .../compressed topic), decoded once per frame",
        choices=IMAGE_TRANSPORTS,
    )
    ground_truth_topic: str = setting(
        "sim/ground_truth_view",
        "GroundTruthView topic, subscribed only when GT boxes or an oracle verifier are configured",
    )
    camera_info_topic: str = setting(
        "camera/camera_info",
        "sensor_msgs/CameraInfo of the camera (frame QoS): its focal length turns box pixels into metres for the "
        "classical backend's size cue instead of verifier.classical.category.hfov_deg; '' = do not subscribe",
    )
    detections_topic: str = setting("detections", "Detection2DArray topic (agent.bbox_mode detections only)")
    detections_type: str = setting(
        "auto",
        "message type of detections_topic: aiv (aiv_interfaces/Detection2DArray: corners, score, the query "
        "run), vision_msgs (vision_msgs/Detection2DArray as isaac_ros_grounding_dino publishes it: centre + "
        "size in pixels, results[].hypothesis class_id = prompt phrase and score; no query, so any is "
        "accepted), auto (the type the topic's publisher offers, looked up until one appears; aiv until then)",
        choices=DETECTIONS_TYPES,
    )
    detection_query_topic: str = setting(
        "detector/query",
        "agent.bbox_mode detections: each request's predicted category, as the detector's text query, is "
        "published here (std_msgs/String, latched; the detector node's query_topic) and only detections "
        "computed for it (or saying no query) are accepted; '' = publish nothing and accept any detections",
    )
    verdict_topic: str = setting("verifier/verdict", "every Verdict is also published here")
    request_topic: str = setting(
        "verifier/requests",
        "every accepted VerifyInstance goal (with its effective request_id) is published here, latched, so a "
        "recorder can replay the request",
    )
    step_topic: str = setting(
        "verifier/steps",
        "every StepReport (view, answers, move request, its outcome and the frame stamp) is published here",
    )
    debug_image_topic: str = setting("verifier/debug_image", "view + box, crop and attribute table per step")
    publish_debug_image: bool = setting(True, "draw the debug image (only while someone subscribes)")
    move_action: str = setting("move_to_sector", "MoveToSector action the verifier calls to move")
    verify_action: str = setting("verify_instance", "VerifyInstance action this node serves")
    move_timeout_s: float = setting(
        10.0, "seconds a move may take before the request fails", minimum=0.0, exclusive_minimum=True
    )
    move_server_wait_s: float = setting(
        5.0, "seconds to wait for the MoveToSector server to appear", minimum=0.0
    )
    frame_timeout_s: float = setting(
        5.0, "seconds to wait for the frame a move result names", minimum=0.0, exclusive_minimum=True
    )
    frame_stamp_window_s: float = setting(
        0.0,
        "when the frame a move result names never arrives (a lossy best-effort camera link), take the first "
        "frame stamped up to this many seconds after it (the robot has not moved since); 0 = only that exact "
        "frame (the benchmark's simulator sends each view once, reliably)",
        minimum=0.0,
    )
    detections_timeout_s: float = setting(
        60.0,
        "agent.bbox_mode detections: seconds to wait, once the frame is in, for the detections of that frame (or "
        "of a newer one when the detector skipped it); a Grounding DINO detector node takes ~15-20 s per frame "
        "for grounding-dino-tiny on a CPU (and a request's first view may wait for two forwards: the one in "
        "flight for the previous query, then its own) and well under 1 s on a GPU, where a few seconds suffice",
        minimum=0.0,
        exclusive_minimum=True,
    )
    frame_cache_size: int = setting(16, "frames kept by stamp while a request waits for one", minimum=1)
    height_levels: str = setting(
        "",
        "camera height levels the move server offers, comma-separated (e.g. '-1,0,1'; 0 = eye level), for an agent "
        "without the ground-truth channel (a robot with a torso or mast); '' = the levels of the ground truth's "
        "capture layout when it is subscribed, else one level (the agent never asks for up / down)",
    )
    max_stamp_ahead_s: float = setting(
        10.0,
        "an image stamped more seconds than this ahead of the node's clock (ROS time: follows use_sim_time) "
        "is never taken as the newest frame by a request without a start stamp; a request naming its stamp "
        "still gets it",
        minimum=0.0,
        exclusive_minimum=True,
    )


def config_parameter_defaults() -> dict[str, Any]:
    """Every agent/backend knob as a dotted parameter name with its default (they nest into the factory config)."""
    return dict(_config_defaults())


@functools.cache
def _config_defaults() -> dict[str, Any]:
    # Built once: an evaluation spec consults it for every parameter it sets.
    return flatten_defaults(VerifierConfig())


def config_parameter_specs() -> tuple[ParameterSpec, ...]:
    """Every agent/backend knob as a parameter spec (same names, order and defaults as above)."""
    return _config_specs()


@functools.cache
def _config_specs() -> tuple[ParameterSpec, ...]:
    return setting_specs(VerifierConfig())


@functools.cache
def verifier_parameters() -> tuple[ParameterSpec, ...]:
    """The node's whole table: the agent/backend knobs, the goal limits, the wiring and the frames' QoS."""
    return (
        *config_parameter_specs(),
        *setting_specs(GoalLimits()),
        *setting_specs(Wiring()),
        *qos_parameter_specs(FRAME_QOS, LATCHED_FRAME),
    )


def check_verifier_values(values: Mapping[str, Any]) -> None:
    """Rules between parameters (each value is already checked on its own); ParameterError names the rule."""
    default_budget, max_budget = values["default_step_budget"], values["max_step_budget"]
    if default_budget > max_budget:
        raise ParameterError(
            f"parameter 'default_step_budget' = {default_budget}; expected at most max_step_budget ({max_budget})"
        )
    qos_settings_from(values, FRAME_QOS)
    parse_height_levels(values.get("height_levels", ""))


def parse_height_levels(text: str) -> tuple[int, ...]:
    """The ``height_levels`` parameter as sorted levels (() for ''); ParameterError in one line for a value
    that is not a list of levels in MIN_LEVEL..MAX_LEVEL holding the eye level."""
    if not text.strip():
        return ()
    try:
        levels = {int(item) for item in text.split(",")}
    except ValueError:
        raise ParameterError(
            f"parameter 'height_levels' = {text!r}; expected comma-separated integers such as '-1,0,1'"
        ) from None
    outside = sorted(level for level in levels if not MIN_LEVEL <= level <= MAX_LEVEL)
    if outside:
        raise ParameterError(
            f"parameter 'height_levels' = {text!r}; level(s) {outside} outside {MIN_LEVEL}..{MAX_LEVEL}"
        )
    if EYE_LEVEL not in levels:
        raise ParameterError(
            f"parameter 'height_levels' = {text!r}; must include the eye level {EYE_LEVEL}, where episodes start"
        )
    return tuple(sorted(levels))


def factory_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """The nested mapping the agent factory builds from: the agent/backend knobs of ``values`` (defaults for
    those it lacks), e.g. ``{"agent": {"nbv": ...}, "verifier": {"classical": {...}}, ...}``."""
    defaults = _config_defaults()
    return nested_config({name: values.get(name, default) for name, default in defaults.items()})


@dataclass(frozen=True)
class NodeSettings:
    """What the node runs with, read from its checked parameter values."""

    factory_config: dict[str, Any]
    limits: GoalLimits
    wiring: Wiring
    frame_qos: QoSSettings


def node_settings(values: Mapping[str, Any]) -> NodeSettings:
    """The node's settings from its declared values (each already checked by its spec); the rules between
    parameters are checked here (ParameterError)."""
    check_verifier_values(values)
    return NodeSettings(
        factory_config=factory_config(values),
        limits=_section_of(GoalLimits, values),
        wiring=_section_of(Wiring, values),
        frame_qos=qos_settings_from(values, FRAME_QOS),
    )


def _section_of(cls: type[Any], values: Mapping[str, Any]) -> Any:
    names = [field.name for field in dataclasses.fields(cls)]
    return dataclass_from_mapping(cls, {name: values[name] for name in names}, "")


def goal_problem(goal: Any, limits: GoalLimits) -> str | None:
    """Why a VerifyInstance goal cannot be served, or None. Checked before any work so a bad goal costs
    nothing."""
    problem = description_problem(goal.descriptions, limits.max_descriptions, limits.max_description_chars)
    if problem is not None:
        return problem
    if goal.step_budget > limits.max_step_budget:
        return f"step_budget {goal.step_budget} is absurd; this node allows at most {limits.max_step_budget}"
    if not -1 <= goal.start_sector < SECTOR_COUNT:
        return f"start_sector {goal.start_sector} is outside -1..{SECTOR_COUNT - 1}"
    return None
