"""Command line: ``python -m aiv_eval.analysis_cli {metrics|compare|table|report} ...``.

The analysis subcommands are added by :func:`add_analysis_subcommands`, so another entry point (e.g. the
``aiv-eval`` console script with its ``run`` subcommand) can reuse them::

    parser = argparse.ArgumentParser(prog="aiv-eval")
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_subcommand(sub)            # the evaluator's own
    add_analysis_subcommands(sub)
    args = parser.parse_args(argv)
    return args.func(args)             # every subcommand sets func(args) -> exit code

Exit codes: 0 success, 2 usage or input error (missing run dir, corrupt results, mismatched runs).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .analysis.compare import CompareError, compare_runs, format_comparison_markdown, runs_table_markdown
from .analysis.metrics import write_metrics
from .analysis.statistics import DEFAULT_RESAMPLES, DEFAULT_SEED
from .records.store import METRICS_FILE, RunDirWriteError, StoreError


def _existing_wall_time(run_dir: Path) -> float | None:
    try:
        data = json.loads((run_dir / METRICS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("wall_time_s") if isinstance(data, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _cmd_metrics(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    wall = args.wall_time_s if args.wall_time_s is not None else _existing_wall_time(run_dir)
    path, m = write_metrics(
        run_dir,
        unsure_as_negative=args.unsure_as_negative,
        wall_time_s=wall,
        bootstrap_resamples=args.bootstrap_resamples,
        bootstrap_seed=args.seed,
    )
    if args.json:
        print(json.dumps(m, indent=2))
    else:
        ppt = m["per_pair_type"]
        parts = " ".join(f"{k}={v['accuracy']:.4f}" for k, v in ppt.items())
        lo, hi = m["confidence_intervals"]["accuracy"]
        print(
            f"accuracy {m['accuracy']:.4f} [{lo:.4f}, {hi:.4f}] | {parts} | ASD {m['asd']:.2f} | "
            f"N {m['total_episodes']} | infra failures {m['infra_failures']['count']}"
        )
        print(f"wrote {path}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    result = compare_runs(args.run_a, args.run_b, resamples=args.bootstrap_resamples, seed=args.seed)
    print(json.dumps(result, indent=2) if args.json else format_comparison_markdown(result), end="")
    if args.json:
        print()
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    text = runs_table_markdown(args.run_dirs, resamples=args.bootstrap_resamples, seed=args.seed)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .analysis.metrics import metrics_for_run
    from .report import write_report

    primary = Path(args.run_dirs[0])
    m = metrics_for_run(
        primary, wall_time_s=_existing_wall_time(primary), bootstrap_resamples=args.bootstrap_resamples
    )
    files = write_report(
        args.run_dirs,
        args.out,
        max_episode_pages=args.max_episode_pages,
        correct_sample=args.correct_sample,
        seed=args.seed,
        bootstrap_resamples=args.bootstrap_resamples,
        metrics=m,
    )
    print(f"wrote {files.markdown}")
    print(f"wrote {files.html} ({len(files.episode_pages)} episode pages)")
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples (default 2000)",
    )
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of bootstrap/sampling (default 0)")


def add_analysis_subcommands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``metrics``, ``compare``, ``table`` and ``report`` to an argparse subparsers object."""
    p = subparsers.add_parser("metrics", help="(re)compute RUN_DIR/metrics.json from results.jsonl")
    p.add_argument("run_dir")
    mapping = p.add_mutually_exclusive_group()
    mapping.add_argument(
        "--unsure-as-negative", dest="unsure_as_negative", action="store_true", default=None,
        help="count Unsure as No (default: the run's run.json setting)",
    )  # fmt: skip
    mapping.add_argument(
        "--unsure-as-wrong", dest="unsure_as_negative", action="store_false", help="count Unsure as wrong"
    )
    p.add_argument(
        "--wall-time-s", type=float, default=None, help="wall time to record (default: keep existing)"
    )
    p.add_argument("--json", action="store_true", help="print the whole metrics.json")
    _common(p)
    p.set_defaults(func=_cmd_metrics)

    p = subparsers.add_parser("compare", help="paired comparison of two runs (B − A) on common episodes")
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    _common(p)
    p.set_defaults(func=_cmd_compare)

    p = subparsers.add_parser("table", help="Markdown table with one row per run")
    p.add_argument("run_dirs", nargs="+")
    p.add_argument("--out", default=None, help="write the table to this file instead of stdout")
    _common(p)
    p.set_defaults(func=_cmd_table)

    p = subparsers.add_parser("report", help="report.md + report.html (+ episode pages) of the first run dir")
    p.add_argument("run_dirs", nargs="+", help="primary run dir, then runs to compare against")
    p.add_argument("--out", default=None, help="output dir (default: the primary run dir)")
    p.add_argument("--max-episode-pages", type=int, default=None, help="cap on episode pages (default: none)")
    p.add_argument(
        "--correct-sample", type=int, default=10, help="correct episodes that get a page (default 10)"
    )
    _common(p)
    p.set_defaults(func=_cmd_report)


def build_parser(prog: str = "aiv-eval") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Score, compare and report AIV evaluation runs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_analysis_subcommands(sub)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Dispatch a parsed namespace; errors become a one-line message.

    Exit code 2 for bad input (arguments, a missing or foreign run dir), 1 when something cannot be written
    (read-only file system, disk full): the input was fine and running the same command again resumes.
    """
    prog = Path(sys.argv[0]).name
    try:
        return int(args.func(args))
    except RunDirWriteError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except (StoreError, CompareError, FileNotFoundError, ValueError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. a report page on a full disk, an unreadable file
        where = exc.filename if exc.filename is not None else "file system"
        print(f"{prog}: error: {where}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
