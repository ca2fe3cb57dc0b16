"""Names, key orders and defaults of the reference's result files (spec §4.2–§4.4), shared by the reader
and the writer."""

from __future__ import annotations

import re

REFERENCE_RESULTS_FILE = "results.json"
REFERENCE_EPISODE_FILE = "episode.json"
REFERENCE_METRICS_FILE = "metrics.json"

#: Keys of a reference per-episode record, in the order its evaluation script writes them (spec §4.2).
REFERENCE_EPISODE_KEYS: tuple[str, ...] = (
    "episode_id",
    "scene_id",
    "object_id",
    "target_object_id",
    "target_object_category",
    "query_object_category",
    "prediction",
    "label",
    "pair_type",
    "query_descriptions",
    "target_descriptions",
    "steps",
    "is_correct",
    "transcript",
    "nav_failures",
    "nav_fail_unreachable",
    "nav_fail_trap",
    "effective_views",
    "first_view_prediction",
)
#: Keys the shipped example records carry after the §4.2 ones (spec §4.3).
REFERENCE_FLIP_KEYS: tuple[str, ...] = ("prediction_flips", "flip_direction")
#: Keys of the reference ``metrics.json`` (spec §4.4), in its order.
REFERENCE_METRICS_KEYS: tuple[str, ...] = (
    "accuracy",
    "asd",
    "total_episodes",
    "correct_count",
    "wrong_count",
    "nav_stats",
    "diagnostic_stats",
    "correct_episodes",
    "wrong_episodes",
    "per_pair_type",
    "per_category",
    "wall_time_s",
    "config_info",
)
#: Defaults of the reference metric code / evaluation script for absent keys.
DEFAULT_CATEGORY = "unknown"
#: Stop reason of imported records (the reference records none).
IMPORTED_STOP_REASON = "final"
#: Per-view state of an attribute answer (spec §5.5), as the reference logs it in ``observed``.
_ANSWER_STATE = {"Yes": "Matched", "No": "Contradictory"}
_TAG = re.compile(r"^s\d+_(far|near)$")
