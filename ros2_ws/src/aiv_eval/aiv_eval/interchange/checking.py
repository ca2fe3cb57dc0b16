"""Scoring reference results with our metric code, and comparing with the reference's own metrics.json."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..analysis.metrics import compute_metrics
from ..analysis.statistics import DEFAULT_RESAMPLES, DEFAULT_SEED
from ..records.store import LoadedRun
from .formats import REFERENCE_METRICS_KEYS
from .reading import ReferenceResults, read_reference_results


def reference_metrics_part(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of the reference ``metrics.json`` (spec §4.4), in its order; ``{}`` for an empty run, as the
    reference writes."""
    if not metrics.get("total_episodes"):
        return {}
    return {key: metrics[key] for key in REFERENCE_METRICS_KEYS if key in metrics}


def metric_differences(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    """Where a reference ``metrics.json`` disagrees with ours, as ``dotted.key: ours X, file Y`` lines.

    Only the reference keys are compared, minus ``wall_time_s`` and ``config_info`` (run facts, not scores).
    The ``*_episodes`` lists are compared as sets of names: their order is the order the episodes were run
    (or, for a directory of episode files, were found in), which is not a score.
    """
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if path.endswith("_episodes") and isinstance(a, list) and isinstance(b, list):
            if sorted(map(str, a)) != sorted(map(str, b)):
                out.append(f"{path}: ours {sorted(map(str, a))!r}, file {sorted(map(str, b))!r}")
        elif isinstance(a, Mapping) and isinstance(b, Mapping):
            for key in list(a) + [k for k in b if k not in a]:
                sub = f"{path}.{key}" if path else str(key)
                if key not in b:
                    out.append(f"{sub}: ours {a[key]!r}, file has no such key")
                elif key not in a:
                    out.append(f"{sub}: ours has no such key, file {b[key]!r}")
                else:
                    walk(a[key], b[key], sub)
        elif a != b or isinstance(a, bool) != isinstance(b, bool):
            out.append(f"{path}: ours {a!r}, file {b!r}")

    for key in REFERENCE_METRICS_KEYS:
        if key in ("wall_time_s", "config_info"):
            continue
        if key in ours or key in theirs:
            walk(ours.get(key), theirs.get(key), key)
    return out


def score_reference(
    path: str | os.PathLike[str],
    *,
    unsure_as_negative: bool | None = None,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = DEFAULT_SEED,
) -> tuple[ReferenceResults, LoadedRun, dict[str, Any]]:
    """Our metrics of reference results (nothing written): the source, the in-memory run and the metrics."""
    imported = read_reference_results(path, unsure_as_negative=unsure_as_negative)
    run = imported.loaded_run()
    metrics = compute_metrics(
        run.records,
        unsure_as_negative=imported.unsure_as_negative,
        config_info=imported.config_info,
        bootstrap_resamples=bootstrap_resamples,
        bootstrap_seed=bootstrap_seed,
    )
    return imported, run, metrics
