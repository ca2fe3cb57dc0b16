"""``aiv-capture``: make PInVerify-format datasets on this machine.

    aiv-capture generate --preset NAME --out DIR [--seed N] [--workers N] [--force]
    aiv-capture ensure-default --out DIR [--workers N]
    aiv-capture bench [--preset tiny] [--workers N]
    aiv-capture presets

``generate`` writes the dataset, its indices (via the data layer's builder) and a statistics summary
(``capture_stats.txt`` / ``.json``) into a temporary directory and renames it to DIR when complete.
``ensure-default`` is what the main job calls on first use: it returns at once when DIR already holds the
finished default set (same preset, seed and generator version, per ``capture_complete.json``), and
otherwise (re)generates it under a lock so that concurrent callers build it only once.

Exit status: 0 success, 1 generation failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .pipeline import GenerationReport

# Heavy modules (NumPy, Pillow, the renderer) are imported inside the commands, so that the cached path of
# ``ensure-default`` costs little more than reading one small JSON file.

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _print_report(report: GenerationReport) -> None:
    from .pipeline import STATS_TXT

    print((report.root / STATS_TXT).read_text(encoding="utf-8"))
    print(
        f"Wrote {report.episodes_written}/{report.episodes_planned} episodes to {report.root} in"
        f" {report.seconds:.1f} s (capture {report.capture_seconds:.1f} s,"
        f" {report.episodes_per_minute:.1f} episodes/min)"
    )
    if report.failed:
        print(
            f"{len(report.failed)} episode(s) found no placement meeting the success criteria and were dropped"
        )


def _cmd_generate(args: argparse.Namespace) -> int:
    from .pipeline import generate_atomic
    from .presets import get_preset

    try:
        preset = get_preset(args.preset)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = generate_atomic(
            preset, Path(args.out), seed=args.seed, workers=args.workers, replace=args.force
        )
    except FileExistsError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    _print_report(report)
    return EXIT_OK if report.episodes_written else EXIT_FAILED


def _cmd_ensure_default(args: argparse.Namespace) -> int:
    from .marker import DEFAULT_PRESET, DEFAULT_SEED, is_complete

    out = Path(args.out)
    if is_complete(out, DEFAULT_PRESET, DEFAULT_SEED):  # the common, fast path: nothing heavy imported
        print(f"default dataset present: {out}")
        return EXIT_OK
    from .pipeline import ensure_dataset
    from .presets import get_preset

    try:
        report = ensure_dataset(out, get_preset(DEFAULT_PRESET), seed=DEFAULT_SEED, workers=args.workers)
    except FileExistsError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    if report is None:
        print(f"default dataset present: {out}")
        return EXIT_OK
    _print_report(report)
    return EXIT_OK if report.episodes_written else EXIT_FAILED


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import run_benchmark
    from .pipeline import available_cores
    from .presets import get_preset

    result = run_benchmark(get_preset(args.preset), args.workers or available_cores())
    print(
        f"render: {result.ms_per_frame:.1f} ms per 360x640 frame (RGB + labels + contact shadows),"
        f" {result.ms_per_label_frame:.1f} ms labels only, over {result.frames} frames\n"
        f"capture: {result.episodes} episodes of preset {args.preset!r} in {result.seconds:.1f} s on"
        f" {result.workers} worker(s) = {result.episodes_per_minute:.1f} episodes/min"
    )
    return EXIT_OK


def _cmd_presets(_: argparse.Namespace) -> int:
    from .presets import PRESETS

    for preset in PRESETS.values():
        splits = ", ".join(
            f"{s.name}: {s.episodes} eps / {s.scenes} scenes / {s.instances} objects" for s in preset.splits
        )
        print(f"{preset.name:8s} {preset.description}\n         ({splits})")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aiv-capture", description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="generate a dataset, its indices and statistics")
    gen.add_argument("--preset", default="default", help="preset name (see `aiv-capture presets`)")
    gen.add_argument("--out", required=True, help="output dataset root (pv_dataset/)")
    gen.add_argument("--seed", type=int, default=42, help="base seed (default 42, as the benchmark)")
    gen.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    gen.add_argument("--force", action="store_true", help="replace an existing non-empty output directory")
    gen.set_defaults(func=_cmd_generate)

    ensure = sub.add_parser(
        "ensure-default", help="generate the default dataset unless it is already complete"
    )
    ensure.add_argument("--out", required=True, help="dataset root to check or create")
    ensure.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    ensure.set_defaults(func=_cmd_ensure_default)

    bench = sub.add_parser("bench", help="measure render time per frame and episodes per minute")
    bench.add_argument(
        "--preset", default="tiny", help="preset generated (into a temporary directory) for timing"
    )
    bench.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    bench.set_defaults(func=_cmd_bench)

    presets = sub.add_parser("presets", help="list the presets")
    presets.set_defaults(func=_cmd_presets)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aiv-capture`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "workers", None) is not None and args.workers < 1:
        parser.error("--workers must be a positive integer")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
