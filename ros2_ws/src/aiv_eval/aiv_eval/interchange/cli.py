"""``aiv-eval`` subcommands that exchange results with the reference implementation (:mod:`.interchange`).

    aiv-eval score-reference PATH [--json] [--unsure-as-negative | --unsure-as-wrong]
    aiv-eval import-reference PATH --run-dir DIR [--name NAME] [--unsure-as-negative | --unsure-as-wrong]
    aiv-eval export-reference RUN_DIR OUT [--index FILE] [--descriptions FILE]

PATH is a reference ``results.json``, one ``episode.json``, or a reference output directory. Bad input is one
line on stderr naming file, episode and field, and exit status 2 (the analysis CLI's dispatcher).
"""

from __future__ import annotations

import argparse
import json

from ..analysis.compare import format_runs_table_markdown, runs_table_rows
from ..analysis.metrics import write_metrics
from ..analysis.statistics import DEFAULT_RESAMPLES, DEFAULT_SEED
from . import (
    ReferenceResults,
    export_reference,
    import_reference,
    metric_differences,
    reference_metrics_part,
    score_reference,
)


def _summary_line(m: dict[str, object]) -> str:
    ppt = m["per_pair_type"]
    assert isinstance(ppt, dict)
    parts = " ".join(f"{k}={v['accuracy']:.4f}" for k, v in ppt.items())
    return f"accuracy {m['accuracy']:.4f} | {parts} | ASD {m['asd']:.2f} | N {m['total_episodes']}"


def _source_line(imported: ReferenceResults) -> str:
    text = f"read {len(imported.episodes)} reference record(s) from {imported.source} ({imported.kind}"
    if imported.kind == "episode_files":
        text += f", {imported.files_read} files"
    text += ")"
    if imported.duplicates_dropped:
        text += f"; {imported.duplicates_dropped} duplicate(s) dropped, the later record kept"
    text += f"; Unsure counted as {'No' if imported.unsure_as_negative else 'wrong'}"
    return text


def _print_check(imported: ReferenceResults, metrics: dict[str, object]) -> None:
    for note in imported.notes:
        print(f"note: {note}")
    if imported.reference_metrics is None:
        return
    differences = metric_differences(reference_metrics_part(metrics), imported.reference_metrics)
    if not differences:
        print("the reference metrics.json next to the results agrees with these metrics")
        return
    print(f"the reference metrics.json next to the results differs in {len(differences)} value(s):")
    for line in differences[:20]:
        print(f"  {line}")
    if len(differences) > 20:
        print(f"  ... and {len(differences) - 20} more")


def _cmd_score(args: argparse.Namespace) -> int:
    imported, run, metrics = score_reference(
        args.path,
        unsure_as_negative=args.unsure_as_negative,
        bootstrap_resamples=args.bootstrap_resamples,
        bootstrap_seed=args.seed,
    )
    if args.json:
        print(json.dumps(metrics, indent=2))
        return 0
    print(_source_line(imported))
    print(format_runs_table_markdown(runs_table_rows([run], metrics=[metrics])), end="")
    print(_summary_line(metrics))
    _print_check(imported, metrics)
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    imported = import_reference(
        args.path, args.run_dir, name=args.name or "", unsure_as_negative=args.unsure_as_negative
    )
    path, metrics = write_metrics(
        args.run_dir, bootstrap_resamples=args.bootstrap_resamples, bootstrap_seed=args.seed
    )
    print(_source_line(imported))
    print(_summary_line(metrics))
    _print_check(imported, metrics)
    print(f"wrote {args.run_dir} (run.json, results.jsonl) and {path}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    summary = export_reference(args.run_dir, args.out, index=args.index, descriptions=args.descriptions)
    for note in summary.notes:
        print(f"note: {note}")
    print(summary.describe())
    return 0


def _mapping_flags(p: argparse.ArgumentParser) -> None:
    mapping = p.add_mutually_exclusive_group()
    mapping.add_argument(
        "--unsure-as-negative", dest="unsure_as_negative", action="store_true", default=None,
        help="the run counted Unsure as No (default: what the records' is_correct says, else this)",
    )  # fmt: skip
    mapping.add_argument(
        "--unsure-as-wrong",
        dest="unsure_as_negative",
        action="store_false",
        help="the run counted Unsure as wrong",
    )


def _bootstrap_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples (default 2000)",
    )
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the bootstrap (default 0)")


def add_interchange_subcommands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``score-reference``, ``import-reference`` and ``export-reference`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "score-reference", help="score a reference results.json / episode.json / output dir with our metrics"
    )
    p.add_argument("path", help="reference results.json, episode.json or output directory")
    p.add_argument("--json", action="store_true", help="print the whole metrics document")
    _mapping_flags(p)
    _bootstrap_flags(p)
    p.set_defaults(func=_cmd_score)

    p = subparsers.add_parser(
        "import-reference", help="store reference results as a run dir (results.jsonl + metrics.json)"
    )
    p.add_argument("path", help="reference results.json, episode.json or output directory")
    p.add_argument("--run-dir", required=True, help="new run directory to write")
    p.add_argument("--name", default=None, help="display name of the run (default: the source's name)")
    _mapping_flags(p)
    _bootstrap_flags(p)
    p.set_defaults(func=_cmd_import)

    p = subparsers.add_parser(
        "export-reference", help="write a run dir in the reference layout (results.json, episode.json files)"
    )
    p.add_argument("run_dir", help="run directory of ours")
    p.add_argument("out", help="new (or empty) output directory")
    p.add_argument(
        "--index", default=None, help="pair index for dataset-relative rgb paths (default: the run's)"
    )
    p.add_argument(
        "--descriptions", default=None, help="description file for target_descriptions of negative pairs"
    )
    p.set_defaults(func=_cmd_export)
