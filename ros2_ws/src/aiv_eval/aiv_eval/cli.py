"""``aiv-eval``: run evaluations and analyse runs.

``aiv-eval run PARAMS.yaml [--dataset DIR] [--set node.param=value ...] [--sweep node.param=a,b ...]``
evaluates the configuration over ROS (``--mode ros``, the default: simulator, verifier and evaluator node
processes with one params file) or in-process (``--mode inprocess``: the same agent and environment without
ROS, for fast sweeps); both write the same records. A sweep runs every combination of the listed values into
``<run_dir>/<name>`` sub-directories. ``metrics``, ``compare``, ``table`` and ``report`` analyse finished runs;
``bench`` measures the ROS path against the in-process path (and one simulator + verifier pair against
several), ``bench-llm`` concurrent model calls and episodes in flight against the reference's sequential
calls, ``bench-models`` the model stages' latency and batched against per-item calls. ``heights`` compares the same
agent at eye level only and with height levels on the same episodes (or, ``--ab``, two values of one parameter),
paired. ``score-reference``, ``import-reference`` and ``export-reference`` exchange results with the reference
implementation (:mod:`.interchange`).
"""

from __future__ import annotations

import argparse
import itertools
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from .analysis_cli import add_analysis_subcommands, run_command
from .bench.cli import add_bench_subcommands
from .evidence.cli import add_evidence_subcommands
from .evidence.trust_pool import add_trust_pool_subcommand
from .evidence.trust_table import add_trust_table_subcommand
from .heights import add_heights_subcommand
from .interchange.cli import add_interchange_subcommands
from .run.preflight import check_evidence_tables as check_evidence_tables
from .run.run_names import safe_run_name as safe_run_name
from .run.spec import EvalSpec, SpecError


def _sweep_axes(items: Sequence[str]) -> list[tuple[str, list[str]]]:
    axes = []
    for item in items:
        if "=" not in item:
            raise SpecError(f"sweep {item!r}: expected node.param=value1,value2")
        name, values = item.split("=", 1)
        axes.append((name, [value for value in values.split(",") if value]))
    return axes


def _sweep_suffix(combination: Sequence[tuple[str, str]]) -> str:
    return safe_run_name("_".join(f"{name.rsplit('.', 1)[-1]}-{value}" for name, value in combination))


def _run_one(spec: EvalSpec, mode: str, record_bags: bool = False) -> tuple[Path, bool]:
    """Run one configuration; returns the run dir and whether every episode got an answer."""
    if record_bags and mode != "ros":
        raise SpecError("--record-bags records what crosses DDS: it needs --mode ros")
    check_evidence_tables(spec)  # a bad calibration or visibility file stops both modes before anything runs
    if mode == "inprocess":
        from .run.in_process import run_in_process

        outcome = run_in_process(spec)
        return outcome.run_dir, outcome.complete
    from .run.in_flight import in_flight_problem
    from .run.in_process import load_evaluation_inputs
    from .run.ros_mode import RosEvaluation

    problem = in_flight_problem(int(spec.evaluator["episodes_in_flight"]), "", "ros")
    if problem is not None:
        raise SpecError(problem)
    if record_bags and spec.evaluator["pairs"]:
        raise SpecError(
            "--record-bags records the topics of one simulator + verifier pair; leave evaluator.pairs empty"
        )

    load_evaluation_inputs(spec)  # an index or description file both modes refuse stops here, before any node
    result = RosEvaluation(spec, record_bags=record_bags).run()
    print(
        f"[aiv-eval] ROS run finished in {result.wall_s:.1f} s, evaluator exit code {result.evaluator_exit_code}; "
        f"node logs in {result.run_dir / 'logs'}"
    )
    return result.run_dir, result.evaluator_exit_code == 0


def _run(args: argparse.Namespace) -> int:
    from . import write_report

    base_overrides = list(args.set or [])
    axes = _sweep_axes(args.sweep or [])
    combinations = list(
        itertools.product(*[[(name, value) for value in values] for name, values in axes])
    ) or [()]
    suffixes = [_sweep_suffix(combination) for combination in combinations if combination]
    if len(set(suffixes)) != len(suffixes):
        raise SpecError("sweep lists the same value twice: every combination needs its own run directory")
    run_dirs = []
    all_complete = True
    for combination in combinations:
        overrides = base_overrides + [f"{name}={value}" for name, value in combination]
        spec = EvalSpec.load(args.params, overrides)
        if args.dataset:
            spec.set_dataset(args.dataset)
        if combination:
            suffix = _sweep_suffix(combination)
            spec.evaluator["run_dir"] = str(Path(str(spec.evaluator["run_dir"])) / suffix)
            spec.evaluator["run_name"] = suffix
        run_dir, complete = _run_one(spec, args.mode, args.record_bags)
        run_dirs.append(run_dir)
        all_complete = all_complete and complete
        print(f"run written to {run_dir}")
        if not complete:
            print(f"aiv-eval: {_unscored(run_dir)}", file=sys.stderr)
        if args.table:
            _print_table([run_dir])
    if args.report:
        write_report(run_dirs)
        print(f"report: {run_dirs[0] / 'report.html'}")
    if len(run_dirs) > 1 and args.table:
        _print_table(run_dirs)
    return 0 if all_complete else 1


def _unscored(run_dir: Path) -> str:
    """One line on a run that did not score every episode: how many ended in an infrastructure failure (a model
    server that answered none of an episode's calls among them) and the commonest reason."""
    import json

    from .records.store import METRICS_FILE

    try:
        failures = json.loads((run_dir / METRICS_FILE).read_text(encoding="utf-8"))["infra_failures"]
        count, reasons = int(failures["count"]), dict(failures["reasons"])
    except (OSError, ValueError, KeyError, TypeError):
        return f"the run did not finish every episode; see {run_dir}"
    if not count:
        return f"the run stopped before every episode was run; see {run_dir / 'logs'} and run again to resume"
    reason, times = max(reasons.items(), key=lambda item: item[1])
    shown = reason if len(reason) <= 160 else reason[:157] + "..."
    return (
        f"{count} episode(s) ended in an infrastructure failure after every attempt and are not scored "
        f"(commonest reason, {times}x: {shown}); {run_dir / METRICS_FILE} lists them, run again to retry them"
    )


def _print_table(run_dirs: Sequence[Path]) -> None:
    from . import format_runs_table_markdown, load_run, runs_table_rows

    print(format_runs_table_markdown(runs_table_rows([load_run(run_dir) for run_dir in run_dirs])))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aiv-eval", description="Run, score, compare and report AIV evaluations."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="evaluate a params YAML over its index slice")
    run.add_argument("params", help="params YAML with offline_sim / verifier / evaluator sections")
    run.add_argument("--dataset", help="dataset root for every node (overrides the YAML)")
    run.add_argument("--set", action="append", metavar="NODE.PARAM=VALUE", help="override one parameter")
    run.add_argument("--sweep", action="append", metavar="NODE.PARAM=A,B", help="run every listed value")
    run.add_argument(
        "--mode",
        choices=("ros", "inprocess"),
        default="ros",
        help="ros: three node processes over DDS (default); inprocess: same agent, no ROS",
    )
    run.add_argument(
        "--record-bags",
        action="store_true",
        help="ros mode: record one session bag per episode to <run_dir>/bags/<episode key> (aiv-bag replay)",
    )
    run.add_argument("--table", action="store_true", help="print the metrics table of each run")
    run.add_argument("--report", action="store_true", help="write report.md / report.html afterwards")
    run.set_defaults(func=_run)
    add_bench_subcommands(sub)
    add_analysis_subcommands(sub)
    add_evidence_subcommands(sub)
    add_trust_table_subcommand(sub)
    add_trust_pool_subcommand(sub)
    add_heights_subcommand(sub)
    add_interchange_subcommands(sub)
    return parser


def _terminate(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    in_main_thread = threading.current_thread() is threading.main_thread()
    # SIGTERM (a CI timeout, `kill`) stops the node processes in order, exactly like Ctrl-C.
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        return run_command(args)
    except SpecError as error:
        print(f"aiv-eval: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "aiv-eval: interrupted; what was recorded is kept, run the same command to resume",
            file=sys.stderr,
        )
        return 130
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
