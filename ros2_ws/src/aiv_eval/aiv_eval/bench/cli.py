"""The benchmark commands of ``aiv-eval``, added in one place: ``bench``, ``bench-llm`` and ``bench-models``.

Their names stay the flat ``aiv-eval bench-*`` the docs and the Makefile use; this module only gathers them so
that :mod:`aiv_eval.cli` adds every benchmark with one call and a new one needs no edit there.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..run.pairs import demo_pair_count, pair_count_argument
from .llm import add_llm_bench_subcommand
from .models import add_bench_models_subcommand


def _bench(args: argparse.Namespace) -> int:
    from .ros_vs_inprocess import bench  # lazy: it loads the ROS launcher and psutil

    out = Path(args.out) if args.out else Path("runs") / "bench" / time.strftime("%Y%m%d-%H%M%S")
    pairs = demo_pair_count() if args.pairs is None else args.pairs
    report, identical = bench(
        Path(args.params), list(args.set or []), out, args.dataset, args.record_bags, pairs=pairs
    )
    print(report)
    print(f"runs and logs: {out}")
    return 0 if identical else 1


def add_bench_subcommands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` (ROS path against in-process path), ``bench-llm`` and ``bench-models``."""
    bench = subparsers.add_parser("bench", help="time the ROS path against the in-process path on one slice")
    bench.add_argument("params", help="params YAML with offline_sim / verifier / evaluator sections")
    bench.add_argument("--dataset", help="dataset root for every node (overrides the YAML)")
    bench.add_argument("--set", action="append", metavar="NODE.PARAM=VALUE", help="override one parameter")
    bench.add_argument("--out", help="empty directory for both runs (default runs/bench/<time>)")
    bench.add_argument(
        "--record-bags",
        action="store_true",
        help="also run over ROS with a session recorder: record overhead per step, bag sizes, replay speed",
    )
    bench.add_argument(
        "--pairs",
        type=pair_count_argument,
        help="also run over ROS with this many simulator + verifier pairs (default: make demo's rule, one per "
        "CPU core, at most 8, memory allowing; 1 = no such run)",
    )
    bench.set_defaults(func=_bench)
    add_llm_bench_subcommand(subparsers)
    add_bench_models_subcommand(subparsers)
