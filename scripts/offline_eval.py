#!/usr/bin/env python3
"""The main job: the offline PInVerify evaluation over ROS with the weight-free default.

1. Makes sure a dataset exists: the synthetic ``default`` preset under data/ (generated on first use, ~80 s,
   then cached), or the one given with --dataset.
2. Runs ``aiv-eval run`` in ROS mode with the installed ``offline_eval.yaml``: simulator, verifier and evaluator
   as three node processes over DDS (GT boxes, classical verifier, angular-FPS NBV, attr_majority with adaptive
   stopping, T = 6). The run is resumable: running the command again finishes an interrupted run, or only
   prints the result of a finished one. With more than one CPU core, several simulator + verifier pairs serve
   the run at once (``--pairs``; default: one per core this process may use, while the available memory holds
   700 MiB per pair, at most 8); the records are the same with any number of pairs.
3. Prints the metrics table, the report path and the time it took.

Extra arguments go to ``aiv-eval run`` (e.g. ``--set evaluator.slice_end=24`` or ``--mode inprocess``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from aiv_eval.run.pairs import demo_pair_count, demo_pair_names, pair_count_argument

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO / "data" / "pv_synthetic_default"
PARAMS = (
    REPO / "ros2_ws" / "install" / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "offline_eval.yaml"
)
DEFAULT_RUN_DIR = REPO / "runs" / "offline_eval"


def ensure_default_dataset() -> Path:
    print(f"[main] dataset: {DEFAULT_DATASET} (generated on first use)", flush=True)
    command = [
        sys.executable,
        "-m",
        "aiv_synth.cli",
        "ensure-default",
        "--out",
        str(DEFAULT_DATASET),
    ]
    subprocess.run(command, check=True)
    return DEFAULT_DATASET


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--dataset", type=Path, help="a PInVerify-format dataset (default: the synthetic one)"
    )
    parser.add_argument(
        "--run-dir", type=Path, default=DEFAULT_RUN_DIR, help="where results, metrics, report go"
    )
    parser.add_argument(
        "--pairs",
        type=pair_count_argument,
        default=None,
        help="simulator + verifier pairs run at once (default: one per CPU core, at most 8, memory allowing)",
    )
    args, passthrough = parser.parse_known_args(argv)
    pairs = args.pairs if args.pairs is not None else demo_pair_count()
    rule = "--pairs" if args.pairs is not None else "one per CPU core, at most 8, memory allowing"
    print(f"[main] simulator + verifier pairs: {pairs} ({rule})", flush=True)
    dataset = args.dataset or ensure_default_dataset()
    command = [
        sys.executable, "-m", "aiv_eval.cli", "run", str(PARAMS),
        "--dataset", str(dataset), "--set", f"evaluator.run_dir={args.run_dir}",
        *(["--set", f"evaluator.pairs={','.join(demo_pair_names(pairs))}"] if pairs > 1 else []),
        "--mode", "ros", "--table", "--report", *passthrough,
    ]  # fmt: skip
    print(f"[main] {' '.join(command[1:])}", flush=True)
    started = time.perf_counter()
    code = subprocess.run(command, check=False).returncode
    elapsed = time.perf_counter() - started
    print(f"[main] metrics: {args.run_dir / 'metrics.json'}")
    print(f"[main] evaluation took {elapsed / 60.0:.1f} min (exit code {code})")
    return code


if __name__ == "__main__":
    sys.exit(main())
