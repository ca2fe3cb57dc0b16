"""The ``offline_sim`` node's parameters: one table, read by the node and by ``aiv-eval``.

Kept free of ROS so the evaluation can check a params file (names, types, choices) against exactly what the
node will declare, and fill in exactly the node's defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from aiv_common.parameter_spec import ParameterError, ParameterSpec
from aiv_common.qos import LATCHED_FRAME, qos_parameter_specs, qos_settings_from

from .environment import HEIGHT_LEVEL_CHOICES, SEED_POLICIES, VIEW_PRIORITIES

#: Prefix of the frame topics' QoS parameters.
FRAME_QOS = "frame_qos"

SIM_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "dataset_root",
        "",
        "PInVerify dataset directory to serve (required unless tour_bags is set); with tour_bags: the "
        "directory the tours are imported into (new, empty or made by offline_sim before; empty = a private "
        "temporary directory)",
    ),
    ParameterSpec(
        "index_file",
        "val/pv_index_all.jsonl",
        "pair index to serve: absolute, or relative to dataset_root; with tour_bags: where the tours' pairs are "
        "written, relative to their directory",
    ),
    ParameterSpec(
        "tour_bags",
        "",
        "tour bags to serve instead of a dataset (aiv-bag export, or a robot's tour with its tour.yaml), "
        "comma-separated; each is imported at start-up with aiv-bag import's rules. Tours have no masks, so "
        "their views have no ground-truth boxes",
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
        "height_levels",
        "all",
        "all: serve every camera height level a dataset has (up/down moves between them); eye: drop the views "
        "of every other level, so the same episodes play as one-level episodes (up/down refused)",
        choices=HEIGHT_LEVEL_CHOICES,
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


def parse_bag_list(text: str) -> tuple[str, ...]:
    """``tour_bags`` as a list: paths separated by commas, blanks around each ignored."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


def tour_index_problem(index_file: str) -> str | None:
    """Why ``index_file`` cannot name the tours' index inside their directory (None: it can)."""
    path = PurePosixPath(index_file.replace("\\", "/"))
    if not index_file or path.is_absolute() or ".." in path.parts or index_file.startswith("~"):
        return (
            f"parameter 'index_file' = {index_file!r}; with tour_bags it names the index written inside the "
            "tour directory: a relative path such as val/pv_index_all.jsonl"
        )
    return None


def check_sim_values(values: Mapping[str, Any]) -> None:
    """Rules between parameters (each value is already checked on its own): a usable frame QoS, and with
    tour bags an index_file that names a file inside the tour directory."""
    qos_settings_from(values, FRAME_QOS)
    if parse_bag_list(str(values.get("tour_bags", ""))):
        problem = tour_index_problem(str(values.get("index_file", "")))
        if problem:
            raise ParameterError(problem)
