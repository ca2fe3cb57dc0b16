"""``aiv-eval heights``: one agent restricted to eye level against the same agent with height levels, paired.

Both arms are in-process evaluations of one params file on one dataset and index slice, so they play the same
episodes (same pairs, same start views, same seeds); the only difference is ``offline_sim.height_levels``:
``eye`` drops every view off eye level before the sector map is built (the episodes play as one-level
episodes), ``all`` serves them. What the heights buy is then a paired difference, not two unrelated numbers:
the accuracy difference and the step difference each get a bootstrap interval that resamples target
instances jointly in both arms (:mod:`.analysis.compare`, :mod:`.analysis.statistics`), with McNemar's exact test on the
accuracy.

``--ab NODE.PARAM=A,B`` compares two values of any other parameter the same way instead (both arms with every
level): e.g. the uncertainty next-best-view against FPS with the evidential fusion on the ``elevated`` preset.

The table puts the arms side by side: accuracy, accuracy per pair type, ASD, YES answers and their precision,
acceptance (true objects answered YES, out of the positives), extra steps, and the acceptance ceiling per arm
when ``--ceiling`` asks for it (the positives whose every claim the exact oracle can judge from a served view).
``heights.json`` beside the arms' run directories keeps every figure, with each arm's "views by height level"
block (:func:`.analysis.metrics.level_stats`).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiv_dataset.constants import PAIR_TYPES

from .analysis.compare import compare_runs, format_comparison_markdown, md_escape
from .analysis.metrics import compute_metrics
from .analysis.statistics import DEFAULT_RESAMPLES, DEFAULT_SEED, paired_bootstrap_diff
from .evidence.trust_metrics import trust_row
from .records.episode import EpisodeRecord
from .records.store import LoadedRun, load_run
from .run.preflight import check_evidence_tables
from .run.run_names import safe_run_name
from .run.spec import EvalSpec, SpecError

#: The simulator parameter that restricts a run to eye level (``aiv_offline_sim``: "all" or "eye").
HEIGHT_LEVELS_PARAMETER = "offline_sim.height_levels"
RESULT_FILE = "heights.json"
TABLE_FILE = "heights.md"


@dataclass(frozen=True)
class Arm:
    """One side of the comparison: a name (its run directory under ``--out``) and the overrides it adds."""

    name: str
    overrides: tuple[str, ...]


def height_arms() -> list[Arm]:
    """Eye level only (A) against every level (B)."""
    return [
        Arm("eye", (f"{HEIGHT_LEVELS_PARAMETER}=eye",)),
        Arm("heights", (f"{HEIGHT_LEVELS_PARAMETER}=all",)),
    ]


def ab_arms(item: str) -> list[Arm]:
    """``node.param=A,B`` -> two arms named ``<param>-A`` and ``<param>-B`` (the sweep's run names)."""
    if "=" not in item:
        raise SpecError(f"--ab {item!r}: expected node.param=A,B")
    name, values_text = item.split("=", 1)
    values = [value for value in values_text.split(",") if value]
    if len(values) != 2 or values[0] == values[1]:
        raise SpecError(
            f"--ab {item!r}: expected exactly two different values, e.g. {name}=farthest,uncertainty"
        )
    short = name.rsplit(".", 1)[-1]
    return [Arm(safe_run_name(f"{short}-{value}"), (f"{name}={value}",)) for value in values]


def arm_spec(params: str, dataset: str, overrides: Sequence[str], arm: Arm, out: Path) -> EvalSpec:
    """The arm's evaluation: the shared overrides, the arm's own, and its run directory under ``out``."""
    spec = EvalSpec.load(
        params,
        [
            *overrides,
            *arm.overrides,
            f"evaluator.run_dir={out / arm.name}",
            f"evaluator.run_name={arm.name}",
        ],
    )
    spec.set_dataset(dataset)
    return spec


def arm_figures(run: LoadedRun, ceiling: int | None = None) -> dict[str, Any]:
    """One arm's column: the trust table's figures (:func:`.evidence.trust_metrics.trust_row`), acceptance and
    the run's "views by height level" block when it judged any view off eye level."""
    records = run.records
    evidential = run.run_config.config_info.get("fusion_type") == "evidential"
    row = trust_row(run.name, records, use_probability=evidential).to_dict()
    positives = sum(1 for r in records if r.is_ok and r.label == 1)
    row["positives"] = positives
    row["acceptance"] = row["accepted_positives"] / positives if positives else None
    row["infra_failures"] = sum(1 for r in records if not r.is_ok)
    row["ceiling"] = ceiling
    metrics = compute_metrics(
        records,
        unsure_as_negative=run.run_config.unsure_as_negative,
        config_info=run.run_config.config_info,
        bootstrap_resamples=1,
    )
    if "levels" in metrics:
        row["levels"] = metrics["levels"]
    row["run_dir"] = str(run.run_dir)
    return row


def _common_pairs(a: LoadedRun, b: LoadedRun) -> list[tuple[EpisodeRecord, EpisodeRecord]]:
    """Both arms' records of the episodes both answered, in index order (compare_runs's pairing)."""
    ok_b = {r.episode_key: r for r in b.records if r.is_ok}
    return [(r, ok_b[r.episode_key]) for r in a.records if r.is_ok and r.episode_key in ok_b]


def paired_differences(
    a: LoadedRun, b: LoadedRun, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """B − A on the common episodes: accuracy (with McNemar, per pair type: :func:`.analysis.compare.compare_runs`),
    steps and acceptance of the positives, each with a paired bootstrap interval over target instances."""
    comparison = compare_runs(a, b, resamples=resamples, seed=seed)
    pairs = _common_pairs(a, b)

    def paired(values: Sequence[tuple[float, float]], clusters: Sequence[str]) -> dict[str, Any]:
        boot = paired_bootstrap_diff(
            [x for x, _ in values], [y for _, y in values], clusters, resamples=resamples, seed=seed
        )
        return {
            "n": len(values),
            "difference_b_minus_a": round(boot.estimate, 4),
            "paired_bootstrap_ci": [round(boot.low, 4), round(boot.high, 4)],
        }

    steps = paired([(x.steps, y.steps) for x, y in pairs], [x.target_object_id for x, _ in pairs])
    positives = [(x, y) for x, y in pairs if x.label == 1]
    accepted = paired(
        [(float(x.prediction == "Yes"), float(y.prediction == "Yes")) for x, y in positives],
        [x.target_object_id for x, _ in positives],
    )
    return {"accuracy": comparison, "steps": steps, "acceptance": accepted}


def json_safe(value: Any) -> Any:
    """``value`` with every NaN (a figure of an empty group: no positives, no YES) as None, so the file is
    strict JSON that any reader accepts."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _interval(block: dict[str, Any], scale: float = 1.0, digits: int = 1) -> str:
    low, high = block["paired_bootstrap_ci"]
    return (
        f"{scale * block['difference_b_minus_a']:+.{digits}f} "
        f"[{scale * low:+.{digits}f}, {scale * high:+.{digits}f}]"
    )


def side_by_side_markdown(
    names: Sequence[str], rows: Sequence[dict[str, Any]], paired: dict[str, Any]
) -> str:
    """The arms as columns, one figure per line, and the paired differences (B − A) below."""
    a, b = rows

    def precision(row: dict[str, Any]) -> str:
        if row["yes_precision"] is None:
            return "–"
        low, high = row["yes_precision_ci95"]
        return f"{row['yes_precision']:.3f} [{low:.3f}, {high:.3f}]"

    def acceptance(row: dict[str, Any]) -> str:
        shown = f"{_fmt(row['acceptance'])} ({row['accepted_positives']}/{row['positives']})"
        return shown if row["ceiling"] is None else f"{shown}; ceiling {row['ceiling']}"

    lines = [
        f"| Figure | A: {md_escape(names[0])} | B: {md_escape(names[1])} |",
        "|---|---|---|",
        f"| Episodes answered | {a['n']} | {b['n']} |",
        f"| Accuracy | {_fmt(a['accuracy'])} | {_fmt(b['accuracy'])} |",
    ]
    labels = {"positive": "Pos", "neg_same": "N_S", "neg_diff": "N_D"}
    for pair_type in PAIR_TYPES:
        lines.append(
            f"| {labels.get(pair_type, pair_type)} | {_fmt(a['per_pair'].get(pair_type))} "
            f"| {_fmt(b['per_pair'].get(pair_type))} |"
        )
    lines += [
        f"| ASD | {_fmt(a['asd'], 2)} | {_fmt(b['asd'], 2)} |",
        f"| YES answers | {a['yes']} | {b['yes']} |",
        f"| YES-precision [95% Wilson] | {precision(a)} | {precision(b)} |",
        f"| Acceptance (positives answered YES) | {acceptance(a)} | {acceptance(b)} |",
        f"| Undecided | {_fmt(a['undecided'])} | {_fmt(b['undecided'])} |",
        f"| Infra failures | {a['infra_failures']} | {b['infra_failures']} |",
        "",
        f"Paired on {paired['accuracy']['common_episodes']} common episodes, B − A, 95 % bootstrap interval "
        f"resampling target instances ({paired['accuracy']['resamples']} resamples, seed "
        f"{paired['accuracy']['seed']}):",
        "",
        "| Difference | B − A [95% CI] |",
        "|---|---|",
        f"| Accuracy (points) | {_interval(paired['accuracy']['overall'], 100.0)} "
        f"(McNemar p {paired['accuracy']['overall']['mcnemar']['p_value']:.4g}) |",
        f"| Extra steps per episode | {_interval(paired['steps'], 1.0, 2)} |",
        f"| Acceptance of positives (points) | {_interval(paired['acceptance'], 100.0)} |",
        "",
    ]
    return "\n".join(lines) + "\n"


def run_arms(
    params: str,
    dataset: str,
    overrides: Sequence[str],
    arms: Sequence[Arm],
    out: Path,
    *,
    ceiling: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    stream: Any = None,
) -> dict[str, Any]:
    """Evaluate each arm in-process into ``out/<arm>`` and compare them paired; returns the JSON document."""
    from .evidence.trust_table import acceptance_ceiling
    from .run.in_process import run_in_process

    # Every arm's configuration is checked before the first one runs.
    specs = [arm_spec(params, dataset, overrides, arm, out) for arm in arms]
    for spec in specs:
        check_evidence_tables(spec)
    runs, rows, complete = [], [], True
    for arm, spec in zip(arms, specs, strict=True):
        started = time.perf_counter()
        outcome = run_in_process(spec, stream=stream)
        complete = complete and outcome.complete
        run = load_run(outcome.run_dir)
        count = None
        if ceiling:
            count, _ = acceptance_ceiling(params, [*overrides, *arm.overrides], dataset)
        row = arm_figures(run, count)
        row["wall_s"] = round(time.perf_counter() - started, 1)
        runs.append(run)
        rows.append(row)
    return {
        "params": str(params),
        "dataset": str(dataset),
        "overrides": list(overrides),
        "arms": [{"name": arm.name, "overrides": list(arm.overrides)} for arm in arms],
        "rows": rows,
        "paired": paired_differences(runs[0], runs[1], resamples=resamples, seed=seed),
        "complete": complete,
    }


def _cmd_heights(args: argparse.Namespace) -> int:
    from .report.markdown_report import levels_markdown

    arms = ab_arms(args.ab) if args.ab else height_arms()
    overrides = list(args.set or [])
    compared = arms[0].overrides[0].split("=", 1)[0]
    if any(item.split("=", 1)[0] == compared for item in overrides):
        what = f"--ab {args.ab!r}" if args.ab else "the eye-level arm"
        raise SpecError(f"--set {compared} overrides what {what} compares; leave it to the arms")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    document = run_arms(
        args.params,
        args.dataset,
        overrides,
        arms,
        out,
        ceiling=args.ceiling,
        resamples=args.bootstrap_resamples,
        seed=args.seed,
        stream=io.StringIO() if args.quiet else None,
    )
    document["wall_s"] = round(time.perf_counter() - started, 1)
    names = [arm.name for arm in arms]
    text = side_by_side_markdown(names, document["rows"], document["paired"])
    text += "\n" + format_comparison_markdown(document["paired"]["accuracy"])
    for name, row in zip(names, document["rows"], strict=True):
        if "levels" in row:
            text += "\n" + "\n".join(levels_markdown(row["levels"])).replace(
                "## Views by height level", f"## Views by height level — {md_escape(name)}", 1
            )
    (out / RESULT_FILE).write_text(
        json.dumps(json_safe(document), indent=1, allow_nan=False) + "\n", encoding="utf-8"
    )
    (out / TABLE_FILE).write_text(text, encoding="utf-8")
    print(text, end="")
    print(f"wall time {document['wall_s']} s; figures in {out / RESULT_FILE}")
    if not document["complete"]:
        print(
            f"aiv-eval heights: some episodes ended in an infrastructure failure; see {out}/<arm>/metrics.json",
            file=sys.stderr,
        )
        return 1
    return 0


def add_heights_subcommand(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "heights",
        help="the same agent at eye level only vs with height levels (or --ab: two values of a parameter), "
        "paired on the same episodes",
    )
    p.add_argument("params", help="params YAML with offline_sim / verifier / evaluator sections")
    p.add_argument("--dataset", required=True, help="dataset root (a dataset with height levels)")
    p.add_argument(
        "--set", action="append", metavar="NODE.PARAM=VALUE", help="override one parameter (both arms)"
    )
    p.add_argument("--out", required=True, help="directory for the arms' runs, heights.json and heights.md")
    p.add_argument(
        "--ab",
        metavar="NODE.PARAM=A,B",
        help="compare these two values of one parameter instead, both with every level "
        "(e.g. verifier.agent.nbv=farthest,uncertainty)",
    )
    p.add_argument(
        "--ceiling",
        action="store_true",
        help="also count each arm's acceptance ceiling (an exact-oracle survey of the same index)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--bootstrap-resamples", type=int, default=DEFAULT_RESAMPLES, help="default 2000")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (default 0)")
    p.set_defaults(func=_cmd_heights)


__all__ = [
    "Arm",
    "ab_arms",
    "add_heights_subcommand",
    "arm_figures",
    "height_arms",
    "paired_differences",
    "run_arms",
    "side_by_side_markdown",
]
