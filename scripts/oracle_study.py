#!/usr/bin/env python3
"""Why is an oracle-verifier run not perfect? Classify every wrong episode from the privileged ground truth.

Runs the oracle verifier in-process over an index (default: all val pairs of ``data/pv_synthetic_default``)
for one or more fusion / query-mode settings, audits every episode with
:mod:`aiv_studies.oracle_audit` and prints, per setting:

- accuracy and the causes of the misses per pair type (oracle bugs: ``d_oracle_missed``, ``e_positive_no``;
  ``fusion_overruled``: the oracle answered right, the fusion did not (by design for attr_majority); limits:
  ``a_not_mentioned``, ``b_not_extracted``, ``c1_not_visited``, ``c2_never_observable``,
  ``c3_absence_unlocatable``, ``f_target_never_shown``, ``g_nothing_checkable``);
- how many misses a verifier could have avoided from some capture the environment can serve (full budget,
  ideal navigation), also with a perfect query decomposer, and from any capture of the episode (including the
  view type the environment does not serve under ``view_priority=far``);
- per-view answers where the oracle disagrees with the audit's reference answer (should be none);
- examples per cause, with the attribute names, values and phrases involved.

Usage (from the repository root, after ``source .env.sh``)::

    python scripts/oracle_study.py                              # veto and attr_majority, attribute mode
    python scripts/oracle_study.py --fusion veto --query-mode direct --examples 5
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ros2_ws" / "src" / "aiv_verifier"
if str(PACKAGE) not in sys.path:
    sys.path.insert(0, str(PACKAGE))

from aiv_dataset.constants import PAIR_TYPES  # noqa: E402
from aiv_studies.oracle_audit import (  # noqa: E402
    CAUSE_ORDER,
    CORRECT,
    FUSION_OVERRULED,
    EpisodeAudit,
    audit_run,
    run_oracle_episodes,
)


def _table(audits: list[EpisodeAudit]) -> str:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for audit in audits:
        counts[audit.cause][audit.record.pair_type] += 1
    lines = [f"  {'cause':<24}" + "".join(f"{p:>10}" for p in PAIR_TYPES) + f"{'total':>8}"]
    for cause in (CORRECT, *CAUSE_ORDER):
        row = counts.get(cause)
        if not row:
            continue
        lines.append(
            f"  {cause:<24}" + "".join(f"{row.get(p, 0):>10}" for p in PAIR_TYPES) + f"{sum(row.values()):>8}"
        )
    return "\n".join(lines)


def _report(label: str, audits: list[EpisodeAudit], examples: int) -> dict[str, int]:
    total = len(audits)
    correct = sum(a.correct for a in audits)
    wrong = [a for a in audits if not a.correct]
    by_type = {
        p: (
            sum(a.correct for a in audits if a.record.pair_type == p),
            sum(a.record.pair_type == p for a in audits),
        )
        for p in PAIR_TYPES
    }
    print(f"\n=== {label}: accuracy {correct / total:.4f} ({correct}/{total}) ===")
    print("  " + ", ".join(f"{p} {c}/{n}" for p, (c, n) in by_type.items()))
    print(_table(audits))
    bugs = [a for a in wrong if a.is_oracle_bug]
    fusion = [a for a in wrong if a.cause == FUSION_OVERRULED]
    avoidable = [a for a in wrong if a.avoidable]
    ideal = [a for a in wrong if a.avoidable_ideal_query]
    any_view = [a for a in wrong if a.avoidable_any_view]
    knowable = [a for a in audits if a.evidence_observed]
    blind = [a for a in audits if a.correct and not a.evidence_observed]
    print(
        f"  misses: {len(wrong)}; oracle bugs {len(bugs)}; fusion overruled the oracle {len(fusion)}; "
        f"avoidable from a servable capture (full budget, ideal NBV) {len(avoidable)} "
        f"(upper bound {(correct + len(avoidable)) / total:.4f}); also with a perfect decomposer {len(ideal)} "
        f"({(correct + len(ideal)) / total:.4f}); from any capture incl. unserved view types {len(any_view)} "
        f"({(correct + len(any_view)) / total:.4f})"
    )
    print(
        f"  episodes whose deciding evidence was observed: {len(knowable)}, of them wrong: "
        f"{sum(not a.correct for a in knowable)}; correct without observed evidence (by default): "
        f"{len(blind)} {dict(Counter(a.record.pair_type for a in blind))}"
    )
    mismatches = [(a, m) for a in audits for m in a.mismatches]
    kinds = Counter(
        (m.item, m.evidence, m.referents, m.oracle_truth, m.oracle.value, m.reference.value)
        for _, m in mismatches
    )
    print(
        f"  per-view answers differing from the reference: {len(mismatches)} in "
        f"{len({a.record.key for a, _ in mismatches})} episodes; oracle No without visible evidence: "
        f"{sum(len(a.unsupported_no) for a in audits)}"
    )
    for (item, evidence, refs, used, got, want), count in kinds.most_common(examples):
        print(
            f"    {count:>4}x {item}={evidence!r} -> GT {list(refs)} (oracle used {used or '-'}): {got} vs {want}"
        )
    grouped: dict[str, list[EpisodeAudit]] = defaultdict(list)
    for audit in wrong:
        grouped[audit.cause].append(audit)
    for cause in CAUSE_ORDER:
        items = grouped.get(cause, [])
        if not items:
            continue
        print(f"  -- {cause} ({len(items)}) --")
        for audit in items[:examples]:
            record = audit.record
            print(
                f"    {record.key} [{record.pair_type}] predicted {record.prediction.value}: {audit.detail}"
            )
            if record.descriptions:
                print(f"      query: {record.descriptions[0]!r}")
            if cause in ("b_not_extracted", "a_not_mentioned"):
                print(f"      items: {[(i.name, i.evidence_phrase) for i in record.items]}")
            tags = [f"{s.capture_tag}{'' if s.verified else '(dup)'}" for s in record.steps]
            print(f"      visited: {tags}; servable: {list(record.servable_tags)}")
    return {
        "correct": correct,
        "wrong": len(wrong),
        "oracle_bugs": len(bugs),
        "fusion_overruled": len(fusion),
        "avoidable": len(avoidable),
        "avoidable_any_view": len(any_view),
        "mismatches": len(mismatches),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", default=str(REPO / "data" / "pv_synthetic_default"))
    parser.add_argument("--index", default="val/pv_index_all.jsonl")
    parser.add_argument("--fusion", nargs="+", default=["veto", "attr_majority"])
    parser.add_argument("--query-mode", nargs="+", default=["attribute"])
    parser.add_argument("--nbv", default="farthest")
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--limit", type=int, default=None, help="only the first N pairs of the index")
    parser.add_argument("--examples", type=int, default=3, help="examples printed per cause")
    args = parser.parse_args(argv)
    summary = {}
    for mode in args.query_mode:
        for fusion in args.fusion:
            started = time.perf_counter()
            records = run_oracle_episodes(
                args.dataset,
                fusion=fusion,
                query_mode=mode,
                nbv=args.nbv,
                max_steps=args.max_steps,
                index_file=args.index,
                limit=args.limit,
            )
            audits = audit_run(args.dataset, records)
            label = f"fusion={fusion} query_mode={mode} nbv={args.nbv} T={args.max_steps}"
            summary[label] = _report(label, audits, args.examples)
            print(f"  ({time.perf_counter() - started:.1f} s)")
    print("\n=== summary ===")
    for label, row in summary.items():
        print(f"  {label}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
