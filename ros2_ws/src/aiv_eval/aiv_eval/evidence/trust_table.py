"""``aiv-eval trust-table``: one (dataset, backend) evaluated under every fusion and next-best-view, side by side.

Rows: the evidential fusion in the robot setting (abstention on: YES / NO only at the robot thresholds,
UNDECIDED otherwise) and in the benchmark setting (its own thresholds, fitted on training seeds; undecided
episodes are scored as NO, the reference's treatment of Unsure), attr_majority and veto, each with angular
farthest-point (FPS) and uncertainty next-best-view. Every row is an in-process evaluation of the same
params file and dataset (the in-process and ROS modes write identical records), in its own run directory.

Columns are those of :mod:`.trust_metrics`, plus the dataset's **acceptance ceiling**: the positives whose
every query claim the exact oracle can judge from some view the simulator's sector map serves (no agent can
verify more; it comes from an oracle survey of the same index). A JSON file beside the table keeps every
figure, the risk-coverage curves, reliability diagrams, accuracy by difficulty and, for positives not
accepted, the claim kinds left unverified; ``aiv-eval trust-pool`` pools several of them. ``trust_table.html``
beside it draws the reliability diagrams and risk-coverage curves (:mod:`aiv_eval.report.trust_page`).
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

from aiv_dataset.layout import PInVerifyDataset
from aiv_verifier.agent.factory import calibration_key
from aiv_verifier.evidence_tables import (
    DEFAULT_CALIBRATION_FILE,
    DEFAULT_VISIBILITY_FILE,
    fitted_seeds,
    load_calibration,
    load_visibility,
    resolve_table_path,
)

from ..records.episode import make_episode_key
from ..records.store import load_run
from ..report.trust_page import render_trust_page
from ..run.in_process import run_in_process
from ..run.spec import EvalSpec, SpecError
from .cli import dataset_origin
from .survey import SurveySource, survey_pairs
from .trust_metrics import (
    accuracy_by_difficulty,
    episode_score,
    reliability_diagram,
    risk_coverage,
    trust_row,
    unverified_by_kind,
)

#: The benchmark setting's evidential thresholds (fitted on training seeds; see the evaluation docs).
BENCHMARK_THRESHOLDS = "0.6/0.05"


@dataclass(frozen=True)
class RowSpec:
    name: str
    fusion: str
    nbv: str
    accept: float | None = None
    reject: float | None = None


def row_specs(robot: Sequence[tuple[float, float]], benchmark: tuple[float, float]) -> list[RowSpec]:
    rows = []
    for nbv, label in (("farthest", "FPS"), ("uncertainty", "uncertainty")):
        for accept, reject in robot:
            rows.append(RowSpec(f"evidential robot@{accept:g} {label}", "evidential", nbv, accept, reject))
        rows.append(RowSpec(f"evidential benchmark {label}", "evidential", nbv, *benchmark))
        rows.append(RowSpec(f"attr_majority {label}", "attr_majority", nbv))
        rows.append(RowSpec(f"veto {label}", "veto", nbv))
    return rows


def refuse_fitted_dataset(dataset: Path, split: str, agent_flat: dict[str, Any]) -> list[str]:
    """The seeds the tables were fitted on, refused as evaluation data; returns the provenance lines."""
    origin = dataset_origin(dataset, split, 0)
    calibration = load_calibration(
        resolve_table_path(str(agent_flat.get("verifier.calibration_file", "")), DEFAULT_CALIBRATION_FILE)
    )
    visibility = load_visibility(
        resolve_table_path(str(agent_flat.get("agent.evidence.visibility_file", "")), DEFAULT_VISIBILITY_FILE)
    )
    for what, item in (("calibration", calibration), ("visibility", visibility)):
        if origin.seed is not None and origin.seed in fitted_seeds(item.fitted_on):
            raise SpecError(
                f"{dataset} was made with seed {origin.seed}, which the {what} file {item.path} was fitted on: "
                "evaluate on data made with another seed"
            )
    return [
        f"calibration {calibration.path}: fitted on "
        + "; ".join(item.describe() for item in calibration.fitted_on),
        f"visibility {visibility.path}: fitted on "
        + "; ".join(item.describe() for item in visibility.fitted_on),
    ]


def acceptance_ceiling(params: str, overrides: Sequence[str], dataset: str) -> tuple[int, dict[str, bool]]:
    """Positives whose every claim the exact oracle can judge from some served view, and that flag per pair.

    The views are every (sector, level) the simulator serves: with ``offline_sim.height_levels=eye`` the eye
    level's only, which is the ceiling without heights."""
    spec = EvalSpec.load(params, [*overrides, "verifier.verifier.backend=oracle"])
    spec.set_dataset(dataset)
    split_index = str(spec.sim["index_file"])
    source = SurveySource(
        dataset_root=Path(str(spec.sim["dataset_root"])),
        index_file=split_index,
        max_steps=int(spec.sim["max_steps"]),
        seed=int(spec.sim["seed"]),
        seed_policy=str(spec.sim["seed_policy"]),
        view_priority=str(spec.sim["view_priority"]),
        height_levels=str(spec.sim["height_levels"]),
    )
    flags: dict[str, bool] = {}
    count = 0
    start, end = spec.slice()
    for pair in survey_pairs(source, spec.agent_config(), spec.agent_flat(), limit=end, levels=True):
        if pair.index < start:
            continue
        judged = {name: False for name, _, _ in pair.claims}
        for view in pair.views:
            for answer in view.answers:
                judged[answer.name] = judged[answer.name] or answer.visible
        inside = pair.label == 1 and all(judged.values())
        flags[str(pair.index)] = inside
        count += inside
    return count, flags


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def markdown_table(title: str, rows: Sequence[dict[str, Any]], ceiling: int) -> str:
    lines = [
        f"### {title}",
        "",
        "| Row | Acc | Pos | N_S | N_D | ASD | YES | YES-precision [95% CI] | False accept N_S | Undecided | ECE "
        "| Brier | AUROC | Accepted / ceiling |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        low, high = row["yes_precision_ci95"]
        precision = (
            "-" if row["yes_precision"] is None else f"{row['yes_precision']:.3f} [{low:.3f}, {high:.3f}]"
        )
        per = row["per_pair"]
        lines.append(
            f"| {row['name']} | {_fmt(row['accuracy'])} | {_fmt(per['positive'])} | {_fmt(per['neg_same'])} "
            f"| {_fmt(per['neg_diff'])} | {_fmt(row['asd'], 2)} | {row['yes']} | {precision} "
            f"| {_fmt(row['false_accept_same'])} | {_fmt(row['undecided'])} | {_fmt(row['ece'])} "
            f"| {_fmt(row['brier'])} | {_fmt(row['auroc'])} | {row['accepted_positives']} / {ceiling} |"
        )
    return "\n".join(lines) + "\n"


def _cmd_trust_table(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    base = EvalSpec.load(args.params, list(args.set or []))
    base.set_dataset(args.dataset)
    split_index = str(base.sim["index_file"])
    provenance = refuse_fitted_dataset(Path(args.dataset), split_index.split("/", 1)[0], base.agent_flat())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ceiling, inside = acceptance_ceiling(args.params, list(args.set or []), args.dataset)
    episode_paths = _episode_paths(Path(args.dataset), split_index)
    robot = [_thresholds(item) for item in (args.robot or ["0.95/0.05"])]
    benchmark = _thresholds(args.benchmark)
    results = []
    for row in row_specs(robot, benchmark):
        if args.rows and not any(word in row.name for word in args.rows):
            continue
        overrides = [
            *list(args.set or []),
            f"verifier.agent.fusion={row.fusion}",
            f"verifier.agent.nbv={row.nbv}",
            f"evaluator.run_dir={out / row.name.replace(' ', '_')}",
            "evaluator.save_crops=false",
        ]
        if row.accept is not None:
            overrides += [
                f"verifier.agent.evidence.accept={row.accept}",
                f"verifier.agent.evidence.reject={row.reject}",
            ]
        spec = EvalSpec.load(args.params, overrides)
        spec.set_dataset(args.dataset)
        row_started = time.perf_counter()
        outcome = run_in_process(spec, stream=io.StringIO())
        records = load_run(outcome.run_dir).records
        evidential = row.fusion == "evidential"
        figures = trust_row(row.name, records, use_probability=evidential).to_dict()
        figures["wall_s"] = round(time.perf_counter() - row_started, 1)
        figures["accepted_inside_ceiling"] = sum(
            record.prediction == "Yes" and record.label == 1 and inside.get(str(record.episode_index), False)
            for record in records
        )
        scores = [episode_score(record, evidential) for record in records if record.is_ok]
        labels = [record.label for record in records if record.is_ok]
        figures["risk_coverage"] = risk_coverage(scores, labels)
        figures["reliability"] = reliability_diagram(scores, labels)
        figures["difficulty"] = accuracy_by_difficulty(records, Path(args.dataset), episode_paths)
        figures["unverified_kinds"] = unverified_by_kind(records)
        figures["run_dir"] = str(outcome.run_dir)
        figures["predictions"] = {
            record.episode_key: [
                record.label,
                record.prediction,
                record.steps,
                record.pair_type,
                round(episode_score(record, evidential), 6),
            ]
            for record in records
            if record.is_ok
        }
        results.append(figures)
        print(f"[trust-table] {row.name}: {figures['wall_s']} s", file=sys.stderr)
    title = f"{Path(args.dataset).name} / {calibration_key(base.agent_config())} ({split_index})"
    table = markdown_table(title, results, ceiling) + _details(results)
    document = {
        "dataset": str(args.dataset),
        "origin": dataset_origin(Path(args.dataset), split_index.split("/", 1)[0], 0).to_dict(),
        "backend": calibration_key(base.agent_config()),
        "ceiling": ceiling,
        "thresholds": {"robot": robot, "benchmark": benchmark},
        "provenance": provenance,
        "rows": results,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    (out / "trust_table.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    (out / "trust_table.md").write_text(table, encoding="utf-8")
    (out / "trust_table.html").write_text(render_trust_page(document), encoding="utf-8")
    print(table)
    for line in provenance:
        print(line)
    print(
        f"wall time {document['wall_s']} s; figures in {out / 'trust_table.json'}, charts in {out / 'trust_table.html'}"
    )
    return 0


def _details(rows: Sequence[dict[str, Any]]) -> str:
    """Per row: accuracy by difficulty, and for the evidential rows what stayed unverified on positives."""
    lines = ["", "| Row | Hard | Moderate | Easy | Unverified on positives not accepted (claim kind: count) |",
             "|---|---|---|---|---|"]  # fmt: skip
    for row in rows:
        levels = [
            f"{row['difficulty'][level]['accuracy']:.3f} ({row['difficulty'][level]['n']})"
            if level in row["difficulty"]
            else "-"
            for level in ("hard", "moderate", "easy")
        ]
        unverified = ", ".join(f"{kind}: {count}" for kind, count in row["unverified_kinds"].items()) or "-"
        lines.append(f"| {row['name']} | {' | '.join(levels)} | {unverified} |")
    return "\n".join(lines) + "\n"


def _thresholds(text: str) -> tuple[float, float]:
    try:
        accept, reject = (float(part) for part in text.split("/"))
    except ValueError:
        raise SpecError(f"thresholds {text!r}: expected ACCEPT/REJECT, e.g. 0.95/0.05") from None
    return accept, reject


def _episode_paths(dataset: Path, index_file: str) -> dict[str, str]:
    """Episode key -> episode directory (relative to the dataset root), from the index."""
    layout = PInVerifyDataset(str(dataset))
    return {
        make_episode_key(pair.scene, pair.episode, pair.query_object_id): pair.episode_path
        for pair in layout.read_pair_index(layout.index_path(index_file))
    }


def add_trust_table_subcommand(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "trust-table", help="evidential vs attr_majority vs veto, FPS and uncertainty NBV, on one dataset"
    )
    p.add_argument("params", help="params YAML (the backend and index come from it and --set)")
    p.add_argument("--dataset", required=True, help="dataset root (made with a seed no table was fitted on)")
    p.add_argument("--set", action="append", metavar="NODE.PARAM=VALUE", help="override one parameter")
    p.add_argument("--out", required=True, help="directory for the row runs, trust_table.json and .md")
    p.add_argument("--rows", nargs="*", default=None, help="only rows whose name contains one of these words")
    p.add_argument(
        "--robot",
        action="append",
        metavar="ACCEPT/REJECT",
        help="evidential thresholds of a robot-setting row (repeatable; default 0.95/0.05)",
    )
    p.add_argument(
        "--benchmark",
        default=BENCHMARK_THRESHOLDS,
        metavar="ACCEPT/REJECT",
        help=f"evidential thresholds of the benchmark-setting rows (default {BENCHMARK_THRESHOLDS}, fitted on "
        "training seeds: docs/evidential.md)",
    )
    p.set_defaults(func=_cmd_trust_table)


__all__ = ["add_trust_table_subcommand", "markdown_table", "refuse_fitted_dataset", "row_specs"]
