"""The ``offline_sim`` node's parameters: one table, read by the node and by ``aiv-eval``.

Kept free of ROS so the evaluation can check a params file (names, types, choices) against exactly what the
node will declare, and fill in exactly the node's defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiv_common.parameter_spec import ParameterSpec
from aiv_common.qos import LATCHED_FRAME, qos_parameter_specs, qos_settings_from

from .environment import SEED_POLICIES, VIEW_PRIORITIES

#: Prefix of the frame topics' QoS parameters.
FRAME_QOS = "frame_qos"

SIM_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("dataset_root", "", "PInVerify dataset directory to serve (required)"),
    ParameterSpec(
        "index_file",
        "val/pv_index_all.jsonl",
        "pair index to serve: absolute, relative to the working directory, or relative to dataset_root",
    ),
    ParameterSpec(
        "max_steps",
        6,
        "step budget T of an episode (6 = the reported multi-view runs, 1 = single view)",
        minimum=1,
    ),
    ParameterSpec("seed", 42, "seed of the start-sector draw"),
    ParameterSpec(
        "seed_policy",
        "per_episode_fixed",
        "per_episode_fixed: every episode draws with `seed` (the reference's multi-GPU launcher, which "
        "produced the paper's numbers); seed_plus_slice_index: episode i draws with seed + i - slice_start, "
        "slice_start coming with each StartEpisode request (one reference evaluate.py process over a slice); "
        "seed_plus_index: episode i draws with seed + i, whatever the slice",
        choices=SEED_POLICIES,
    ),
    ParameterSpec(
        "view_priority",
        "far",
        "which capture a sector shows when it has both a far and a near one",
        choices=VIEW_PRIORITIES,
    ),
    ParameterSpec(
        "privileged_output",
        False,
        "publish GroundTruthView with every frame (needed by GT boxes and the oracle verifiers only)",
    ),
    ParameterSpec("frame_id", "aiv_camera_optical_frame", "frame id in the header of every published view"),
    ParameterSpec("image_topic", "camera/image_raw", "sensor_msgs/Image topic (rgb8), one message per pose"),
    ParameterSpec(
        "camera_info_topic", "camera/camera_info", "sensor_msgs/CameraInfo topic, same stamp as the image"
    ),
    ParameterSpec(
        "ground_truth_topic", "sim/ground_truth_view", "GroundTruthView topic (only with privileged_output)"
    ),
    ParameterSpec("start_episode_service", "start_episode", "StartEpisode service name"),
    ParameterSpec("move_action", "move_to_sector", "MoveToSector action name"),
    *qos_parameter_specs(FRAME_QOS, LATCHED_FRAME),
)


def check_sim_values(values: Mapping[str, Any]) -> None:
    """Rules between parameters (each value is already checked on its own): a usable frame QoS."""
    qos_settings_from(values, FRAME_QOS)
