"""The ``verifier`` node's parameters: agent/backend knobs, goal limits, wiring and frame QoS, in one table.

ROS-free, so ``aiv-eval`` checks a params file against exactly what the node declares. The agent and backend
knobs come from their dataclasses (:func:`~aiv_verifier.config_schema.config_parameter_specs`); the rest is
listed here. Cross-parameter rules live in :func:`check_verifier_values`, used by the node and ``aiv-eval``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from aiv_common.parameter_spec import ParameterError, ParameterSpec
from aiv_common.qos import LATCHED_FRAME, qos_parameter_specs, qos_settings_from

from .config_schema import config_parameter_specs

#: Prefix of the camera frames' QoS parameters.
FRAME_QOS = "frame_qos"
#: Values of ``image_transport``.
IMAGE_TRANSPORTS = ("raw", "compressed")
#: Values of ``detections_type``.
DETECTIONS_TYPES = ("auto", "aiv", "vision_msgs")

GOAL_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("default_step_budget", 6, "step budget of a goal that asks for 0", minimum=1),
    ParameterSpec("max_step_budget", 24, "larger step budgets are refused as absurd", minimum=1),
    ParameterSpec("max_descriptions", 10, "most descriptions one goal may carry", minimum=1),
    ParameterSpec("max_description_chars", 20000, "longest accepted description, in characters", minimum=1),
)

WIRING_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("image_topic", "camera/image_raw", "camera images (any 8-bit colour or mono encoding)"),
    ParameterSpec(
        "image_transport",
        "raw",
        "raw: image_topic carries sensor_msgs/Image; compressed: sensor_msgs/CompressedImage (jpeg/png, as a "
        "camera driver's .../compressed topic), decoded once per frame",
        choices=IMAGE_TRANSPORTS,
    ),
    ParameterSpec(
        "ground_truth_topic",
        "sim/ground_truth_view",
        "GroundTruthView topic, subscribed only when GT boxes or an oracle verifier are configured",
    ),
    ParameterSpec(
        "camera_info_topic",
        "camera/camera_info",
        "sensor_msgs/CameraInfo of the camera (frame QoS): its focal length turns box pixels into metres for the "
        "classical backend's size cue instead of verifier.classical.category.hfov_deg; '' = do not subscribe",
    ),
    ParameterSpec(
        "detections_topic", "detections", "Detection2DArray topic (agent.bbox_mode detections only)"
    ),
    ParameterSpec(
        "detections_type",
        "auto",
        "message type of detections_topic: aiv (aiv_interfaces/Detection2DArray: corners, score, the query "
        "run), vision_msgs (vision_msgs/Detection2DArray as isaac_ros_grounding_dino publishes it: centre + "
        "size in pixels, results[].hypothesis class_id = prompt phrase and score; no query, so any is "
        "accepted), auto (the type the topic's publisher offers, looked up until one appears; aiv until then)",
        choices=DETECTIONS_TYPES,
    ),
    ParameterSpec(
        "detection_query_topic",
        "detector/query",
        "agent.bbox_mode detections: each request's predicted category, as the detector's text query, is "
        "published here (std_msgs/String, latched; the detector node's query_topic) and only detections "
        "computed for it (or saying no query) are accepted; '' = publish nothing and accept any detections",
    ),
    ParameterSpec("verdict_topic", "verifier/verdict", "every Verdict is also published here"),
    ParameterSpec(
        "request_topic",
        "verifier/requests",
        "every accepted VerifyInstance goal (with its effective request_id) is published here, latched, "
        "so a recorder can replay the request",
    ),
    ParameterSpec(
        "step_topic",
        "verifier/steps",
        "every StepReport (view, answers, move request, its outcome and the frame stamp) is published here",
    ),
    ParameterSpec(
        "debug_image_topic", "verifier/debug_image", "view + box, crop and attribute table per step"
    ),
    ParameterSpec("publish_debug_image", True, "draw the debug image (only while someone subscribes)"),
    ParameterSpec("move_action", "move_to_sector", "MoveToSector action the verifier calls to move"),
    ParameterSpec("verify_action", "verify_instance", "VerifyInstance action this node serves"),
    ParameterSpec(
        "move_timeout_s",
        10.0,
        "seconds a move may take before the request fails",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "move_server_wait_s", 5.0, "seconds to wait for the MoveToSector server to appear", minimum=0.0
    ),
    ParameterSpec(
        "frame_timeout_s",
        5.0,
        "seconds to wait for the frame a move result names",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "frame_stamp_window_s",
        0.0,
        "when the frame a move result names never arrives (a lossy best-effort camera link), take the first "
        "frame stamped up to this many seconds after it (the robot has not moved since); 0 = only that exact "
        "frame (the benchmark's simulator sends each view once, reliably)",
        minimum=0.0,
    ),
    ParameterSpec(
        "detections_timeout_s",
        60.0,
        "agent.bbox_mode detections: seconds to wait, once the frame is in, for the detections of that frame (or "
        "of a newer one when the detector skipped it); a Grounding DINO detector node takes ~15-20 s per frame "
        "for grounding-dino-tiny on a CPU (and a request's first view may wait for two forwards: the one in "
        "flight for the previous query, then its own) and well under 1 s on a GPU, where a few seconds suffice",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec("frame_cache_size", 16, "frames kept by stamp while a request waits for one", minimum=1),
    ParameterSpec(
        "max_stamp_ahead_s",
        10.0,
        "an image stamped more seconds than this ahead of the node's clock (ROS time: follows use_sim_time) "
        "is never taken as the newest frame by a request without a start stamp; a request naming its stamp "
        "still gets it",
        minimum=0.0,
        exclusive_minimum=True,
    ),
)


@functools.cache
def verifier_parameters() -> tuple[ParameterSpec, ...]:
    """The whole table. Built on first use: the agent knobs import the backends that define them."""
    return (
        *config_parameter_specs(),
        *GOAL_PARAMETERS,
        *WIRING_PARAMETERS,
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
