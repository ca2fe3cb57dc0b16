"""``aiv-eval trust-pool``: pool the trust tables of one backend over several datasets.

Each ``trust_table.json`` keeps every episode's label, prediction, steps, pair type and score per row, so the
pooled figures are recomputed from episodes, not averaged from tables: YES-precision with its Wilson interval,
the false-accept rate on same-category look-alikes, the undecided share, ECE, Brier and AUROC, accuracy and
ASD. For the benchmark setting it compares the evidential rows with the better (by pooled accuracy) of
attr_majority and veto under the same next-best-view: the accuracy difference with a paired bootstrap
interval over episodes (the same episode in both rows), and the two ASDs.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aiv_verifier.core.evidence import wilson_interval

from ..run.spec import SpecError
from .trust_metrics import auroc, brier_score, expected_calibration_error

Episode = tuple[int, str, int, str, float]  # label, prediction, steps, pair type, score
RESAMPLES = 2000
SEED = 0


def _load(paths: Sequence[Path]) -> tuple[str, dict[str, dict[str, Episode]], int]:
    rows: dict[str, dict[str, Episode]] = defaultdict(dict)
    backend = ""
    ceiling = 0
    for path in paths:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise SpecError(f"{path}: not a trust_table.json: {error}") from None
        if backend and document["backend"] != backend:
            raise SpecError(f"{path}: backend {document['backend']!r}, the others {backend!r}")
        backend = document["backend"]
        ceiling += int(document["ceiling"])
        for row in document["rows"]:
            for key, values in row["predictions"].items():
                rows[row["name"]][f"{document['dataset']}::{key}"] = (
                    int(values[0]),
                    str(values[1]),
                    int(values[2]),
                    str(values[3]),
                    float(values[4]),
                )
    return backend, rows, ceiling


def pooled_figures(episodes: Mapping[str, Episode]) -> dict[str, Any]:
    items = list(episodes.values())
    labels = [item[0] for item in items]
    scores = [item[4] for item in items]
    correct = [_correct(item) for item in items]
    yes = [item for item in items if item[1] == "Yes"]
    yes_right = sum(item[0] == 1 for item in yes)
    same = [item for item in items if item[3] == "neg_same"]
    low, high = wilson_interval(yes_right, len(yes))
    return {
        "n": len(items),
        "accuracy": sum(correct) / len(items),
        "asd": sum(item[2] for item in items) / len(items),
        "yes": len(yes),
        "yes_precision": yes_right / len(yes) if yes else math.nan,
        "yes_precision_ci95": (low, high),
        "false_accept_same": sum(item[1] == "Yes" for item in same) / len(same) if same else math.nan,
        "undecided": sum(item[1] == "Unsure" for item in items) / len(items),
        "accepted_positives": yes_right,
        "ece": expected_calibration_error(scores, labels),
        "brier": brier_score(scores, labels),
        "auroc": auroc(scores, labels),
    }


def _correct(item: Episode) -> bool:
    label, prediction = item[0], item[1]
    return (prediction == "Yes") == (label == 1)


def paired_difference(a: Mapping[str, Episode], b: Mapping[str, Episode]) -> tuple[float, float, float]:
    """Accuracy of ``a`` minus ``b`` on their common episodes, with a paired bootstrap 95 % interval."""
    keys = sorted(set(a) & set(b))
    diffs = [int(_correct(a[key])) - int(_correct(b[key])) for key in keys]
    rng = random.Random(SEED)
    samples = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(RESAMPLES))
    return sum(diffs) / len(diffs), samples[int(0.025 * RESAMPLES)], samples[int(0.975 * RESAMPLES) - 1]


def _cmd_trust_pool(args: argparse.Namespace) -> int:
    backend, rows, ceiling = _load([Path(item) for item in args.tables])
    print(f"### {backend}, pooled over {len(args.tables)} dataset(s); acceptance ceiling {ceiling}\n")
    print(
        "| Row | N | Acc | ASD | YES | YES-precision [95% CI] | False accept N_S | Undecided | ECE | Brier | AUROC |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    figures = {name: pooled_figures(episodes) for name, episodes in rows.items()}
    for name, row in figures.items():
        low, high = row["yes_precision_ci95"]
        print(
            f"| {name} | {row['n']} | {row['accuracy']:.3f} | {row['asd']:.2f} | {row['yes']} | "
            f"{row['yes_precision']:.3f} [{low:.3f}, {high:.3f}] | {row['false_accept_same']:.3f} | "
            f"{row['undecided']:.3f} | {row['ece']:.3f} | {row['brier']:.3f} | {row['auroc']:.3f} |"
        )
    print()
    for nbv in ("FPS", "uncertainty"):
        evidential = f"evidential benchmark {nbv}"
        baselines = [f"attr_majority {nbv}", f"veto {nbv}"]
        if evidential not in rows or not all(name in rows for name in baselines):
            continue
        better = max(baselines, key=lambda name: figures[name]["accuracy"])
        diff, low, high = paired_difference(rows[evidential], rows[better])
        print(
            f"benchmark setting, {nbv}: evidential - {better} = {diff:+.4f} accuracy [{low:+.4f}, {high:+.4f}] "
            f"(paired bootstrap, {RESAMPLES} resamples); ASD {figures[evidential]['asd']:.2f} vs "
            f"{figures[better]['asd']:.2f}"
        )
    if "evidential benchmark FPS" in rows and "evidential benchmark uncertainty" in rows:
        diff, low, high = paired_difference(
            rows["evidential benchmark uncertainty"], rows["evidential benchmark FPS"]
        )
        print(
            f"uncertainty NBV - FPS (evidential benchmark) = {diff:+.4f} accuracy [{low:+.4f}, {high:+.4f}]; ASD "
            f"{figures['evidential benchmark uncertainty']['asd']:.2f} vs {figures['evidential benchmark FPS']['asd']:.2f}"
        )
    return 0


def add_trust_pool_subcommand(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("trust-pool", help="pool trust-table runs of one backend over several datasets")
    p.add_argument("tables", nargs="+", help="trust_table.json files written by aiv-eval trust-table")
    p.set_defaults(func=_cmd_trust_pool)


__all__ = ["add_trust_pool_subcommand", "paired_difference", "pooled_figures"]
