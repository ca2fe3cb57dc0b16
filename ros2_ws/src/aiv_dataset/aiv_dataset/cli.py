"""``aiv-dataset``: validate a PInVerify dataset, build its index, print its statistics.

    aiv-dataset validate ROOT [--split S ...] [--images decode|header|none] [--json FILE]
    aiv-dataset build-index ROOT --split val [--max-episodes N] [--out DIR] [--seed 42]
                            [--subsets 50 100 500 1000] [--distractors FILE]
    aiv-dataset stats ROOT --split val [--json FILE] [--per-episode]
    aiv-dataset import-legacy-index IN OUT [--descriptions-out FILE]

Exit status: 0 success, 1 problems found (validate) or nothing could be built, 2 bad usage or an unusable
root. Problems go to stderr, one per line, in ``file:line: field 'x': message`` form.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .constants import DEFAULT_SEED, DEFAULT_SUBSET_SIZES
from .distractors import load_distractor_map
from .errors import DatasetError, ProblemReport
from .index_builder import build_index
from .layout import PInVerifyDataset
from .legacy_index import convert_legacy_index
from .stats import episode_stats, format_tables, summarize
from .validate import IMAGE_CHECKS, validate_dataset

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _print_problems(report: ProblemReport, limit: int | None = None) -> None:
    if not report.ok:
        print(report.format(limit), file=sys.stderr)


def _cmd_validate(args: argparse.Namespace) -> int:
    result = validate_dataset(args.root, splits=args.split or None, images=args.images)
    _print_problems(result.report)
    print(result.summary())
    if args.json:
        _write_json(
            Path(args.json),
            {
                "ok": result.ok,
                "episodes_checked": result.episodes_checked,
                "episodes_ok": result.episodes_ok,
                "images_checked": result.images_checked,
                "index_files": result.index_files,
                "index_records": result.index_records,
                "problems": [p.to_dict() for p in result.report],
            },
        )
    return EXIT_OK if result.ok else EXIT_PROBLEMS


def _cmd_build_index(args: argparse.Namespace) -> int:
    dataset = PInVerifyDataset(args.root)
    distractors = None
    if args.distractors:
        distractors = load_distractor_map(Path(args.distractors))
    result = build_index(
        dataset,
        args.split,
        Path(args.out) if args.out else None,
        max_episodes=args.max_episodes,
        seed=args.seed,
        subset_sizes=args.subsets,
        distractor_map=distractors,
    )
    _print_problems(result.report, limit=50)
    print(result.summary())
    if sum(result.pair_counts.values()) == 0:
        print("error: no verification pairs could be built", file=sys.stderr)
        return EXIT_PROBLEMS
    return EXIT_OK


def _cmd_stats(args: argparse.Namespace) -> int:
    dataset = PInVerifyDataset(args.root)
    report = ProblemReport()
    rows = [episode_stats(ep.meta, ep.episode_path) for ep in dataset.iter_episodes(args.split, report)]
    _print_problems(report, limit=50)
    stats = summarize(rows, args.split)
    stats["unreadable_episodes"] = len(report)
    print(format_tables(stats))
    if args.per_episode:
        print(f"\n{'episode':<60}{'nav':>5}{'vis':>5}{'trap':>5}  category")
        for row in rows:
            print(
                f"{row.episode_path:<60}{row.navigable_sectors:>5}{row.visible_sectors:>5}{row.trap_sectors:>5}"
                f"  {row.category}"
            )
    if args.json:
        _write_json(Path(args.json), stats)
    return EXIT_OK if rows else EXIT_PROBLEMS


def _cmd_import_legacy_index(args: argparse.Namespace) -> int:
    result = convert_legacy_index(
        Path(args.input),
        Path(args.output),
        descriptions_out=Path(args.descriptions_out) if args.descriptions_out else None,
    )
    print(result.summary())
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aiv-dataset", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    validate = sub.add_parser("validate", help="check every file of a dataset and list all problems")
    validate.add_argument("root", help="dataset root (pv_dataset/)")
    validate.add_argument("--split", action="append", help="only this captured split (repeatable)")
    validate.add_argument("--images", choices=IMAGE_CHECKS, default="decode", help="image check depth")
    validate.add_argument("--json", help="also write the findings to this JSON file")
    validate.set_defaults(func=_cmd_validate)

    build = sub.add_parser("build-index", help="build pv_index_*.jsonl and the distractor map of a split")
    build.add_argument("root", help="dataset root (pv_dataset/)")
    build.add_argument("--split", default="val", help="captured split to index (default: val)")
    build.add_argument("--max-episodes", type=int, help="category-balanced sample of this many episodes")
    build.add_argument("--out", help="output directory (default: ROOT/SPLIT)")
    build.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default: 42)")
    build.add_argument(
        "--subsets", type=int, nargs="*", default=list(DEFAULT_SUBSET_SIZES), help="stratified subset sizes"
    )
    build.add_argument("--distractors", help="use this distractor map instead of building one")
    build.set_defaults(func=_cmd_build_index)

    stats = sub.add_parser("stats", help="per-episode sector counts and per-category tables (paper App. E)")
    stats.add_argument("root", help="dataset root (pv_dataset/)")
    stats.add_argument("--split", default="val", help="captured split (default: val)")
    stats.add_argument(
        "--json", help="also write the statistics (per-episode rows included) to this JSON file"
    )
    stats.add_argument("--per-episode", action="store_true", help="also print one line per episode")
    stats.set_defaults(func=_cmd_stats)

    legacy = sub.add_parser(
        "import-legacy-index",
        help="convert the reference's legacy index lines (scene_key, episode_id, object_id, captures_meta, "
        "text_pos, ...) into a pair index",
    )
    legacy.add_argument("input", help="legacy index .jsonl (pair-shaped lines are accepted too)")
    legacy.add_argument("output", help="pair index .jsonl to write")
    legacy.add_argument(
        "--descriptions-out",
        help="also write the lines' text_pos / text_neg as a description file (must not exist yet)",
    )
    legacy.set_defaults(func=_cmd_import_legacy_index)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aiv-dataset`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "max_episodes", None) is not None and args.max_episodes < 1:
        parser.error("--max-episodes must be a positive integer")
    try:
        return int(args.func(args))
    except DatasetError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
