"""Result interchange with the reference implementation: read its result files, write ours in its format.

Both directions exist so that either side's metric code can score the other side's runs.

All input errors are :class:`~aiv_dataset.errors.DatasetError` (a ``ValueError``) naming the file, the
episode (position and scene/episode) or JSON line, and the field; the CLI prints them on one line and exits 2.
"""

from __future__ import annotations

from .checking import metric_differences, reference_metrics_part, score_reference
from .formats import REFERENCE_EPISODE_KEYS, REFERENCE_FLIP_KEYS, REFERENCE_METRICS_KEYS
from .reading import (
    ReferenceEpisode,
    ReferenceResults,
    import_reference,
    parse_reference_episode,
    read_reference_results,
)
from .writing import ExportSummary, episode_file_path, export_reference, reference_episode, reference_step

__all__ = [
    "REFERENCE_EPISODE_KEYS",
    "REFERENCE_FLIP_KEYS",
    "REFERENCE_METRICS_KEYS",
    "ExportSummary",
    "ReferenceEpisode",
    "ReferenceResults",
    "episode_file_path",
    "export_reference",
    "import_reference",
    "metric_differences",
    "parse_reference_episode",
    "read_reference_results",
    "reference_episode",
    "reference_metrics_part",
    "reference_step",
    "score_reference",
]
