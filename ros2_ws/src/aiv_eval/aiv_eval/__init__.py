"""Benchmark evaluation: runs a configuration over a benchmark index, records every episode, scores and reports.

The sub-packages, one job each:

- :mod:`.run` — running an evaluation: the ``evaluator`` node, the in-process mode, the loop both share, the
  evaluation spec, run identity, simulator + verifier pairs, episodes in flight;
- :mod:`.records` — what a run writes: episode records, the resumable results store, transcripts, scoring;
- :mod:`.analysis` — what is read from finished runs: metrics, statistics, run comparison;
- :mod:`.report` — ``report.md`` / ``report.html`` and their charts;
- :mod:`.evidence` — calibration and trust tables fitted from runs and surveys;
- :mod:`.interchange` — results exchanged with the reference implementation;
- :mod:`.bench` — benchmarks of the ROS path, served models and batching.

At the top: the ``aiv-eval`` command line (:mod:`.cli`, :mod:`.analysis_cli`) and the heights / A-B comparison
(:mod:`.heights`). The weight-free verifier's research studies are a package of their own (``aiv_studies``),
which no module here imports. The records, store, metrics and reports are ROS-free.

Evaluator integration (what a runner calls)::

    from aiv_eval import (
        ResultsStore, RunConfig, build_episode_record, build_infra_failure_record, make_episode_key,
        TranscriptStep, AttributeObservation, ProgressBar, write_metrics, write_report,
    )

    cfg = RunConfig(config=full_config, index_file=..., slice=(start, end), seed=42, code_version=git_rev,
                    config_info={...six reference keys...}, unsure_as_negative=True, name="MV-Attr+LLM")
    with ResultsStore.open(run_dir, cfg) as store:
        for i, entry in enumerate(index):               # i = position in the index
            key = make_episode_key(entry["scene"], entry["episode"], entry["query_object_id"])
            if store.is_complete(key):
                continue
            ...run the episode...
            store.append(build_episode_record(episode_index=i, index_record=entry, ..., run_id=store.run_id,
                                              attempts=store.attempts(key) + 1))
    write_metrics(run_dir, wall_time_s=elapsed)
    write_report([run_dir])
"""

from typing import TYPE_CHECKING

from .analysis.compare import (
    compare_runs,
    format_comparison_markdown,
    format_runs_table_markdown,
    runs_table_rows,
)
from .analysis.metrics import compute_metrics, metrics_for_run, write_metrics
from .analysis.statistics import (
    cluster_bootstrap_ci,
    mcnemar_exact,
    mcnemar_exact_p,
    paired_bootstrap_diff,
    wilson_interval,
)
from .records.episode import (
    AttributeObservation,
    EpisodeRecord,
    RecordError,
    TranscriptStep,
    build_episode_record,
    build_infra_failure_record,
    count_flips,
    derive_flip_direction,
    is_prediction_correct,
    make_episode_key,
)
from .records.store import (
    ConfigMismatchError,
    CorruptResultsError,
    DuplicateEpisodeError,
    LoadedRun,
    ResultsStore,
    RunConfig,
    RunDirLockedError,
    RunDirWriteError,
    StoreError,
    load_run,
)
from .run.progress import ProgressBar, format_duration

if TYPE_CHECKING:
    from .report import write_report
else:

    def write_report(*args, **kwargs):
        """Lazy alias of :func:`aiv_eval.report.write_report` (keeps this import light)."""
        from .report import write_report as _write_report

        return _write_report(*args, **kwargs)


__all__ = [
    "AttributeObservation",
    "ConfigMismatchError",
    "CorruptResultsError",
    "DuplicateEpisodeError",
    "EpisodeRecord",
    "LoadedRun",
    "ProgressBar",
    "RecordError",
    "ResultsStore",
    "RunConfig",
    "RunDirLockedError",
    "RunDirWriteError",
    "StoreError",
    "TranscriptStep",
    "build_episode_record",
    "build_infra_failure_record",
    "cluster_bootstrap_ci",
    "compare_runs",
    "compute_metrics",
    "count_flips",
    "derive_flip_direction",
    "format_comparison_markdown",
    "format_duration",
    "format_runs_table_markdown",
    "is_prediction_correct",
    "load_run",
    "make_episode_key",
    "mcnemar_exact",
    "mcnemar_exact_p",
    "metrics_for_run",
    "paired_bootstrap_diff",
    "runs_table_rows",
    "wilson_interval",
    "write_metrics",
    "write_report",
]
