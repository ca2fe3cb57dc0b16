#!/usr/bin/env python3
"""Compare every answer and reason of the weight-free (classical) verifier with those of a baseline source tree.

A refactor of the classical checks must not change what they say. This script asks the verifier the questions
``aiv_studies.classical_study`` asks (for every capture with a ground-truth box: the target's own phrases,
the phrases in which its family siblings differ, and with ``--direct`` the whole first descriptions) once with
the sources of a baseline tree and once with the current tree, and compares the two answer lists record by
record: the item (dataset, episode, view, object, attribute, phrase), the answer, its certainty and its reason.

Each side runs in its own interpreter: the baseline with ``PYTHONPATH`` set to the baseline tree's
``ros2_ws/src/<package>`` folders ahead of the installed ones, so its own modules are the ones imported (the
script checks that they are). The baseline's answers are cached as JSONL under ``runs/classical_compare/``,
keyed by the baseline commit, so a rerun only recomputes the current side.

    git worktree add /tmp/base_5151136 5151136      # once
    python scripts/compare_classical_answers.py --baseline /tmp/base_5151136

Exit status: 0 when every record is identical, 1 on any difference, 2 on bad input.
Run it after ``source .env.sh``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASETS = ("data/pv_synthetic_default", "data/pv_default_s11", "data/pv_default_s13")
CACHE_DIR = REPO / "runs" / "classical_compare"
IDENTITY = ("episode", "tag", "object_id", "attribute", "phrase", "source", "truth")
COMPARED = ("answer", "certainty", "reason")


def dump(dataset: str, split: str, limit: int, out: Path, expect_root: str | None) -> int:
    """Ask the verifier of the importable tree every question and write the answers as JSONL (one header line)."""
    from aiv_studies import classical_study

    where = str(Path(classical_study.__file__).resolve())
    if expect_root and not where.startswith(str(Path(expect_root).resolve())):
        print(f"error: classical_study came from {where}, not from {expect_root}", file=sys.stderr)
        return 2
    args = argparse.Namespace(
        dataset=dataset, split=split, limit=limit, ocr="auto", direct=True, set=[], json=None
    )
    result = classical_study.run(args)
    if expect_root:
        root = str(Path(expect_root).resolve())
        strays = sorted(
            name
            for name, module in sys.modules.items()
            if name.startswith("aiv_")
            and getattr(module, "__file__", None)
            and not str(Path(module.__file__ or "").resolve()).startswith(root)
        )
        if strays:
            print(f"error: modules not from {expect_root}: {', '.join(strays[:5])}", file=sys.stderr)
            return 2
    header = {
        "kind": "header",
        "dataset": dataset,
        "split": split,
        "limit": limit,
        "module": where,
        "ocr_engine": result["ocr_engine"],
        "captures": result["captures"],
        "questions": result["questions"],
        "seconds": result["seconds"],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")  # two runs at once never share a half-written file
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(header) + "\n")
        for row in result["rows"]:
            handle.write(json.dumps({k: row[k] for k in IDENTITY + COMPARED}) + "\n")
    tmp.replace(out)
    return 0


def _source_paths(tree: Path) -> list[str]:
    """The baseline tree's package folders (each holds an importable package of the same name)."""
    src = tree / "ros2_ws" / "src"
    return [str(p) for p in sorted(src.iterdir()) if (p / p.name / "__init__.py").is_file()]


def _run_dump(dataset: str, split: str, limit: int, out: Path, tree: Path | None) -> None:
    env = dict(os.environ)
    command = [sys.executable, str(Path(__file__).resolve()), "--dump", str(out), "--dataset", dataset]
    command += ["--split", split, "--limit", str(limit)]
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([*_source_paths(tree), env.get("PYTHONPATH", "")])
        command += ["--expect-root", str(tree)]
    subprocess.run(command, env=env, check=True, cwd=REPO)


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    return lines[0], lines[1:]


def _commit(tree: Path) -> str:
    found = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return found.stdout.strip() or "unknown"


def _differences(dataset: str, base: list[dict[str, Any]], current: list[dict[str, Any]]) -> Iterator[str]:
    if len(base) != len(current):
        yield f"{dataset}: {len(base)} baseline records, {len(current)} current records"
    for index, (old, new) in enumerate(zip(base, current, strict=False)):
        fields = [k for k in IDENTITY + COMPARED if old.get(k) != new.get(k)]
        if fields:
            where = f"{dataset} #{index} {old['episode']} {old['tag']} {old['attribute']} {old['phrase']!r}"
            detail = "; ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in fields)
            yield f"{where}: {detail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="/tmp/base_5151136", help="baseline source tree (a checkout)")
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--split", default="val")
    parser.add_argument("--limit", type=int, default=0, help="captures per dataset (0: all)")
    parser.add_argument("--refresh", action="store_true", help="recompute the cached baseline answers")
    parser.add_argument("--baseline-only", action="store_true", help="only write the baseline answers")
    parser.add_argument("--show", type=int, default=10, help="print at most this many differences")
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    parser.add_argument("--dataset", help=argparse.SUPPRESS)
    parser.add_argument("--expect-root", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dump:
        return dump(args.dataset, args.split, args.limit, Path(args.dump), args.expect_root)

    tree = Path(args.baseline)
    if not (tree / "ros2_ws" / "src").is_dir():
        print(
            f"error: --baseline {tree}: no ros2_ws/src there (git worktree add {tree} <commit>)",
            file=sys.stderr,
        )
        return 2
    for dataset in args.datasets:
        if (
            not (REPO / dataset / "pin_capture" / args.split).is_dir()
            and not (Path(dataset) / "pin_capture" / args.split).is_dir()
        ):
            print(f"error: --datasets {dataset}: no {args.split!r} captures there", file=sys.stderr)
            return 2
    commit = _commit(tree)
    start = time.perf_counter()
    cached: dict[str, Path] = {}
    for dataset in args.datasets:  # every baseline first: a broken current tree must not cost them
        name = f"{Path(dataset).name}_{args.split}_limit{args.limit}"
        cached[dataset] = CACHE_DIR / f"baseline_{commit[:12]}_{name}.jsonl"
        if args.refresh or not cached[dataset].is_file():
            t0 = time.perf_counter()
            _run_dump(dataset, args.split, args.limit, cached[dataset], tree)
            print(
                f"{dataset}: baseline answers written to {cached[dataset]} in {time.perf_counter() - t0:.0f} s"
            )
    if args.baseline_only:
        return 0
    compared = 0
    shown = 0
    differing = 0
    for dataset in args.datasets:
        name = f"{Path(dataset).name}_{args.split}_limit{args.limit}"
        current_path = CACHE_DIR / f"current_{name}.jsonl"
        t0 = time.perf_counter()
        _run_dump(dataset, args.split, args.limit, current_path, None)
        print(f"{dataset}: current answers in {time.perf_counter() - t0:.0f} s")
        base_header, base_rows = _read(cached[dataset])
        head, rows = _read(current_path)
        if base_header["ocr_engine"] != head["ocr_engine"]:
            print(f"{dataset}: OCR engine {base_header['ocr_engine']} -> {head['ocr_engine']}")
            differing += 1
        problems = list(_differences(dataset, base_rows, rows))
        differing += len(problems)
        compared += min(len(base_rows), len(rows))
        print(
            f"{dataset}: {head['captures']} captures, {len(rows)} answers compared, "
            f"{len(problems)} differ (OCR {head['ocr_engine']})"
        )
        for line in problems[: max(args.show - shown, 0)]:
            print("  " + line)
            shown += 1
    print(
        f"total: {compared} answers compared against {commit[:12]}, {differing} differences, "
        f"{time.perf_counter() - start:.0f} s"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
