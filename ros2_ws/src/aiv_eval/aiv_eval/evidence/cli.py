"""``aiv-eval calibrate`` and ``aiv-eval visibility``: the evidential mode's data files, made from labelled data.

Both survey every served view of every pair of synthetic datasets with privileged ground truth
(:mod:`.survey`) and write a JSON file that records what it was fitted on (preset, seed and split of each
dataset), so an evaluation can refuse to report on those datasets.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from aiv_verifier.agent.factory import calibration_key
from aiv_verifier.claims import CATEGORY_KIND
from aiv_verifier.core.evidence import ReliabilityTable
from aiv_verifier.core.types import Decision
from aiv_verifier.evidence_tables import (
    CALIBRATION_FORMAT,
    FittedOn,
    calibration_document,
    load_calibration,
    load_visibility,
    visibility_document,
)

from ..run.spec import EvalSpec, SpecError
from .calibration import fit_backend
from .survey import SurveyPair, SurveySource, pair_from_json, pair_to_json, survey_pairs
from .visibility_fit import visibility_level_rows, visibility_rows


def dataset_origin(root: Path, split: str, pairs: int) -> FittedOn:
    """What a dataset is, from the generator's completion record (a dataset without one has no seed)."""
    try:
        record = json.loads((root / "capture_complete.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    seed = record.get("seed") if isinstance(record, dict) else None
    preset = record.get("preset", "") if isinstance(record, dict) else ""
    return FittedOn(
        source=root.name,
        preset=str(preset or ""),
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        split=split,
        pairs=pairs,
    )


def _survey(
    args: argparse.Namespace, params: str, overrides: list[str]
) -> tuple[list[SurveyPair], list[FittedOn], str]:
    if args.bags:
        return _bag_survey(args, params, overrides)
    if args.from_survey:
        pairs: list[SurveyPair] = []
        fitted: list[FittedOn] = []
        key = ""
        for path in args.from_survey:
            more_pairs, more_fitted, more_key = _load_survey(Path(path))
            if key and more_key != key:
                raise SpecError(f"--from-survey {path} surveyed {more_key!r}, the others {key!r}")
            pairs, fitted, key = pairs + more_pairs, fitted + more_fitted, more_key
        return pairs, fitted, key
    pairs, fitted, key = _run_survey(args, params, overrides)
    if args.save_survey:
        document = {
            "key": key,
            "fitted_on": [item.to_dict() for item in fitted],
            "pairs": [pair_to_json(pair) for pair in pairs],
        }
        Path(args.save_survey).write_text(json.dumps(document), encoding="utf-8")
    return pairs, fitted, key


def _bag_survey(
    args: argparse.Namespace, params: str, overrides: list[str]
) -> tuple[list[SurveyPair], list[FittedOn], str]:
    """Recorded sessions and a labels file instead of a synthetic dataset (a lab's own images)."""
    from .bag_survey import load_labels, survey_bags

    if not args.labels:
        raise SpecError("--bags needs --labels (what each recorded request's object really was)")
    spec = EvalSpec.load(params, overrides)
    pairs, notes = survey_bags([Path(item) for item in args.bags], load_labels(args.labels))
    for note in notes:
        print(f"[aiv-eval] {note}", file=sys.stderr)
    fitted = [
        FittedOn(source=f"session bags {', '.join(args.bags)} labelled by {args.labels}", pairs=len(pairs))
    ]
    return pairs, fitted, calibration_key(spec.agent_config())


def _load_survey(path: Path) -> tuple[list[SurveyPair], list[FittedOn], str]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        pairs = [pair_from_json(item) for item in document["pairs"]]
        fitted = [FittedOn(**item) for item in document["fitted_on"]]
        return pairs, fitted, str(document["key"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SpecError(f"--from-survey {path}: not a survey written by --save-survey: {error}") from None


def _run_survey(
    args: argparse.Namespace, params: str, overrides: list[str]
) -> tuple[list[SurveyPair], list[FittedOn], str]:
    pairs: list[SurveyPair] = []
    fitted: list[FittedOn] = []
    key = ""
    for dataset in args.dataset:
        root = Path(dataset)
        spec = EvalSpec.load(params, overrides)
        spec.set_dataset(str(root))
        key = calibration_key(spec.agent_config())
        for split in args.split:
            source = SurveySource(
                dataset_root=root,
                index_file=f"{split}/pv_index_all.jsonl",
                max_steps=int(spec.sim["max_steps"]),
                seed=int(spec.sim["seed"]),
                seed_policy=str(spec.sim["seed_policy"]),
                view_priority=str(spec.sim["view_priority"]),
            )
            found = list(
                survey_pairs(
                    source,
                    spec.agent_config(),
                    spec.agent_flat(),
                    limit=args.limit,
                    levels=bool(getattr(args, "survey_levels", False)),
                )
            )
            print(f"[aiv-eval] surveyed {len(found)} pairs of {root} {split} for {key}", file=sys.stderr)
            pairs.extend(found)
            fitted.append(dataset_origin(root, split, len(found)))
    return pairs, fitted, key


def _cmd_calibrate(args: argparse.Namespace) -> int:
    pairs, fitted, key = _survey(args, args.params, list(args.set or []))
    if not pairs:
        raise SpecError("nothing was surveyed: no pair could be started")
    backend = fit_backend(pairs)
    out = Path(args.out)
    backends: dict[str, Any] = {key: (backend.table, backend.model, backend.facts)}
    previous_fitted: list[FittedOn] = []
    command = "aiv-eval " + " ".join(shlex.quote(part) for part in sys.argv[1:])
    if args.merge and out.exists():
        existing = load_calibration(out)
        previous_fitted = list(existing.fitted_on)
        document_before = json.loads(out.read_text(encoding="utf-8"))
        for name, kept in existing.backends.items():
            if name != key:
                extra = {
                    field: value
                    for field, value in document_before["backends"][name].items()
                    if field not in ("cells", "evidence_scale", "target_model")
                }
                backends[name] = (kept.table, kept.model, extra)
        command = document_before.get("command", "") + " ; " + command
    merged_fitted = list(previous_fitted)
    for item in fitted:
        if item not in merged_fitted:
            merged_fitted.append(item)
    document = calibration_document(merged_fitted, command, backends)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    model = backend.model
    print(
        f"{CALIBRATION_FORMAT} for {key}: {len(pairs)} pairs, evidence scale {backend.table.evidence_scale:g}, "
        f"target share {model.target_share:.3f}, other category {model.other_category_share:.3f}, "
        f"indistinguishable {model.indistinguishable_share:.3f}, claim fails rate {model.claim_fails_rate:.3f}"
    )
    unconfirmable = kinds_without_yes_evidence(backend.table)
    if unconfirmable:
        print(
            f"no Yes evidence for claim kinds {', '.join(unconfirmable)}: the evidential mode cannot accept a "
            "query with such a claim (did the data ever show one holding?)"
        )
    print(f"wrote {out}")
    return 0


def kinds_without_yes_evidence(table: ReliabilityTable) -> list[str]:
    """Claim kinds in the table that no Yes answer supports: a query with one stops UNDECIDED after a view."""
    kinds = sorted({kind for kind, _quality in table.cells if kind != CATEGORY_KIND})
    return [kind for kind in kinds if table.strongest(kind, Decision.YES)[0] <= 0.0]


def _cmd_visibility(args: argparse.Namespace) -> int:
    overrides = ["verifier.verifier.backend=oracle", *list(args.set or [])]
    pairs, fitted, _ = _survey(args, args.params, overrides)
    if not pairs:
        raise SpecError("nothing was surveyed: no pair could be started")
    rows = visibility_rows(pairs)
    level_rows = visibility_level_rows(pairs)
    command = "aiv-eval " + " ".join(shlex.quote(part) for part in sys.argv[1:])
    out = Path(args.out)
    if args.levels_into:
        # Only the rows by level are new: the eye-level rows (and what they were fitted on) stay the file's, so
        # a one-level episode gets exactly the answers it got before.
        if not level_rows:
            raise SpecError("--levels-into: the surveyed pairs have no views off eye level")
        base = Path(args.levels_into)
        kept = load_visibility(base)
        before = json.loads(base.read_text(encoding="utf-8"))
        rows = dict(kept.model.rows)
        fitted = [*kept.fitted_on, *(item for item in fitted if item not in kept.fitted_on)]
        command = f"{before.get('command', '')} ; {command}"
    out.parent.mkdir(parents=True, exist_ok=True)
    document = visibility_document(fitted, command, rows, level_rows)
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(
        f"visibility model: {len(rows)} rows and {len(level_rows)} rows by level from {len(pairs)} pairs; "
        f"wrote {out}"
    )
    return 0


def _survey_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("params", help="params YAML with offline_sim / verifier / evaluator sections")
    parser.add_argument(
        "--dataset", action="append", default=[], help="synthetic dataset with privileged_gt/ (repeatable)"
    )
    parser.add_argument(
        "--save-survey", default=None, help="also write the surveyed answers to this JSON file"
    )
    parser.add_argument(
        "--bags",
        action="append",
        default=[],
        help="recorded session bag directories (with --labels; repeatable)",
    )
    parser.add_argument(
        "--labels", default=None, help="YAML labels of the recorded requests (docs/evidential.md)"
    )
    parser.add_argument(
        "--from-survey",
        action="append",
        default=[],
        help="fit from files written by --save-survey instead of surveying (repeatable)",
    )
    parser.add_argument(
        "--split", action="append", default=None, help="split(s) to survey (default: train; repeatable)"
    )
    parser.add_argument("--set", action="append", metavar="NODE.PARAM=VALUE", help="override one parameter")
    parser.add_argument("--limit", type=int, default=None, help="survey only the first N pairs of each index")
    parser.add_argument("--out", required=True, help="the JSON file to write")


def add_evidence_subcommands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "calibrate", help="fit the evidential fusion's reliability table for the configured verifier backend"
    )
    _survey_arguments(p)
    p.add_argument(
        "--merge", action="store_true", help="keep the other backends' tables of an existing --out file"
    )
    p.set_defaults(func=_checked(_cmd_calibrate), survey_levels=False)
    p = subparsers.add_parser("visibility", help="fit the uncertainty next-best-view's visibility model")
    _survey_arguments(p)
    p.add_argument(
        "--levels-into",
        default=None,
        metavar="FILE",
        help="write FILE's eye-level rows unchanged with the rows by height level fitted here (a dataset with "
        "levels refits only what a one-level episode never reads)",
    )
    # The visibility model is counted by height level too: every view an episode with levels serves.
    p.set_defaults(func=_checked(_cmd_visibility), survey_levels=True)


def _checked(command: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        args.split = args.split or ["train"]
        if not args.dataset and not args.from_survey and not args.bags:
            raise SpecError("name at least one --dataset (or --bags with --labels, or --from-survey)")
        return int(command(args))

    return run


__all__ = ["add_evidence_subcommands", "dataset_origin"]
