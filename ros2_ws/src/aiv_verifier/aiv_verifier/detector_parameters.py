"""The ``detector`` node's parameter table: its topics, its query until one arrives, the model and the camera QoS.

Why a module of its own: the table is read without starting a node (``scripts/parameters_doc.py`` writes
docs/parameters.md from it, tests check ``config/detector.yaml`` against it), and importing the node module
would load rclpy and the node's whole machinery for that.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_common.parameter_spec import ParameterSpec
from aiv_common.qos import LATCHED_FRAME, qos_parameter_specs
from aiv_common.setting_fields import setting
from aiv_common.setting_tree import setting_specs

from .model_config import DetectorParams
from .verifier_parameters import FRAME_QOS, IMAGE_TRANSPORTS


@dataclass(frozen=True)
class DetectorWiring:
    """The detector node's topics and its query until one arrives."""

    image_topic: str = setting("camera/image_raw", "camera images (any 8-bit colour or mono encoding)")
    image_transport: str = setting(
        "raw",
        "raw: image_topic carries sensor_msgs/Image; compressed: sensor_msgs/CompressedImage (jpeg/png)",
        choices=IMAGE_TRANSPORTS,
    )
    query: str = setting("object", "text to detect until a query arrives on query_topic")
    query_topic: str = setting(
        "detector/query", "std_msgs/String (latched) that replaces the query; '' = parameter only"
    )
    detections_topic: str = setting("detections", "aiv_interfaces/Detection2DArray per detected frame")
    vision_detections_topic: str = setting(
        "detector/vision_detections",
        "vision_msgs/Detection2DArray per detected frame, when vision_msgs is installed; '' = off",
    )
    debug_image_topic: str = setting("detector/debug_image", "the frame with its boxes drawn")
    publish_debug_image: bool = setting(True, "draw the debug image (only while someone subscribes)")


def detector_node_parameters() -> tuple[ParameterSpec, ...]:
    """The node's whole table: the verifier's ``detector.*`` knobs (backend fixed to grounding_dino), the
    wiring above and the camera QoS (the verifier's defaults, so both match the same camera)."""
    model = tuple(
        spec for spec in setting_specs(DetectorParams(), "detector") if spec.name != "detector.backend"
    )
    backend = ParameterSpec(
        "detector.backend", "grounding_dino", "the detector model family", choices=("grounding_dino",)
    )
    return (backend, *model, *setting_specs(DetectorWiring()), *qos_parameter_specs(FRAME_QOS, LATCHED_FRAME))
