"""Episode-level sweep of fusions × stop rules for one per-view verifier, with every view judged only once.

The in-process evaluator (``aiv-eval run --mode inprocess``) plays each configuration from scratch; with the
classical verifier almost all of its time is the per-view analysis, which does not depend on the fusion or the
stop rule. This tool plays the same episodes with the same agent code (``run_env_episode``: same environment,
query interpreter, session, tracker, fusion, stop rule, NBV) but wraps the verifier in a memo keyed by
(episode, capture, box, attributes), so every further fusion / stop rule costs almost nothing. Its accuracy
and ASD figures equal ``aiv-eval``'s for the same configuration; ``aiv-eval`` stays the reference for reports.

Extras for studies:

* ``--audit``: every classical answer is compared with the privileged oracle's answer for the same view
  (``verification.oracle``): Unsure rate and decisive accuracy per attribute type, counting only answers the
  oracle itself can decide (the "oracle audit" of per-answer accuracy), and the same-category distractor
  episodes by what decided them (:func:`distractor_breakdown`);
* ``--perturb KIND``: the camera frame is perturbed before cropping (``cast``: white-balance cast, ``gamma``,
  ``jpeg``, ``noise``, ``all``), deterministically per capture, to test robustness beyond flat renders;
* ``--perfect KINDS`` (repeatable): an upper bound for better cues. Each use adds a scenario, played beside
  the plain one, in which the classical answers to claims of those kinds (``main_colour``, ``part_colour``,
  ``text``, ``material``... :data:`~aiv_verifier.claims.CLAIM_KINDS`) are replaced by
  the privileged oracle's: only its Nos with ``--perfect-answers no`` (what deciding those contradictions
  would gain; the default), every answer with ``all`` (a perfect judge of those claims). It says which cue is
  worth building before anyone builds it; the audit still scores the classical answers only. On an object of
  another category the oracle answers every claim No (its category gate), so a scenario's neg_diff figure
  also credits a perfect category cue; its neg_same figure is the clean bound.

Usage::

    python -m aiv_studies.episode_sweep --dataset data/pv_synthetic_default --index train/pv_index_all.jsonl \
        --fusions attr_majority,veto --stop-rules reference,contradiction [--audit] [--perturb all] \
        [--set classical_key=value ...] [--json out.json] [--limit N] [--perfect part_colour --perfect text,logo]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from aiv_checks.verifier import ClassicalVerifier
from aiv_dataset.errors import DatasetError
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.env_port import run_env_episode
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import pair_key
from aiv_verifier.agent.factory import AgentFactory
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.claims import CLAIM_KINDS, claim_kind
from aiv_verifier.core.crop import crop_with_gt_box
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.query import build_query_interpreter
from aiv_verifier.verification.base import AttributeAnswer, PerViewVerifier, VerifierError, ViewInput
from PIL import Image

from .classical_study import OverrideError, classical_params

PAIR_TYPES = ("positive", "neg_same", "neg_diff")
PERTURBATIONS = ("none", "cast", "gamma", "jpeg", "noise", "all")


def perturb(image: np.ndarray, kind: str, key: str) -> np.ndarray:
    """A deterministic (per ``key``) photometric perturbation of a uint8 RGB frame."""
    if kind == "none":
        return image
    rng = np.random.default_rng(int(hashlib.md5(key.encode()).hexdigest()[:8], 16))
    out = image.astype(np.float64)
    kinds = ("cast", "gamma", "jpeg", "noise") if kind == "all" else (kind,)
    if "cast" in kinds:  # white-balance cast: per-channel gains, warm or cool
        gains = np.array([1.0 + rng.uniform(-0.15, 0.15), 1.0, 1.0 + rng.uniform(-0.15, 0.15)])
        out = out * gains
    if "gamma" in kinds:
        gamma = rng.uniform(0.75, 1.35)
        out = 255.0 * (np.clip(out, 0, 255) / 255.0) ** gamma
    if "noise" in kinds:
        out = out + rng.normal(0.0, 6.0, out.shape)
    result = np.clip(np.rint(out), 0, 255).astype(np.uint8)
    if "jpeg" in kinds:
        buffer = io.BytesIO()
        Image.fromarray(result).save(buffer, format="JPEG", quality=int(rng.integers(40, 75)))
        result = np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"))
    return result


class MemoVerifier:
    """Judges each (episode, capture, box, attributes) once; optionally perturbs frames and audits answers."""

    name: ClassVar[str] = "classical"

    def __init__(self, inner: PerViewVerifier, perturbation: str, oracle: PerViewVerifier | None) -> None:
        self.inner = inner
        self.perturbation = perturbation
        self.oracle = oracle
        self.memo: dict[tuple[Any, ...], list[AttributeAnswer]] = {}
        self.audit: list[dict[str, Any]] = []
        self.seconds = 0.0
        self.context = ""  # pair type of the episode being played (labels the audit rows only)

    @property
    def model_calls(self) -> int:
        return self.inner.model_calls

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        info = view.privileged
        where = (info.episode_path, info.capture_tag) if info is not None else (view.episode_key, view.step)
        key = (*where, view.crop_box, tuple(attributes))
        if key in self.memo:
            return self.memo[key]
        if self.perturbation != "none":
            full = perturb(view.full_image, self.perturbation, "/".join(map(str, where)))
            crop = crop_with_gt_box(full, view.crop_box).image if view.crop_box is not None else full
            view = dataclasses.replace(view, full_image=full, crop=crop)
        start = time.perf_counter()
        answers = self.inner.verify(view, attributes)
        self.seconds += time.perf_counter() - start
        self.memo[key] = answers
        if self.oracle is not None and info is not None:
            truths = self.oracle.verify(view, attributes)
            for attribute, answer, truth in zip(attributes, answers, truths, strict=True):
                self.audit.append(
                    {
                        "view": "/".join(map(str, where)),
                        "target": info.target_object_id,
                        "pair_type": self.context,
                        "attribute": attribute.name,
                        "type": attribute.type,
                        "phrase": attribute.evidence_phrase,
                        "answer": answer.answer.value,
                        "truth": truth.answer.value,
                        "reason": answer.reason,
                        "claim": str(answer.debug.get("claim", "attribute")),
                    }
                )
        return answers


PERFECT_ANSWERS = ("no", "all")


class PerfectKinds:
    """Puts the oracle's answers in place of another verifier's for claims of some kinds (``--perfect``).

    ``kinds`` empty passes every answer through, so one wrapper serves the plain run and each scenario;
    ``answers`` ``no`` replaces only where the oracle says No, ``all`` replaces every answer (Unsure too: a
    perfect judge does not decide what the view does not show). Oracle answers are memoised like the inner
    verifier's, so a scenario costs little more than replaying the episodes.
    """

    name: ClassVar[str] = "classical"

    def __init__(self, inner: MemoVerifier, oracle: PerViewVerifier | None, answers: str = "no") -> None:
        self.inner = inner
        self.oracle = oracle
        self.answers = answers
        self.kinds: frozenset[str] = frozenset()
        self.memo: dict[tuple[Any, ...], list[AttributeAnswer]] = {}

    @property
    def model_calls(self) -> int:
        return self.inner.model_calls

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        answers = self.inner.verify(view, attributes)
        info = view.privileged
        if not self.kinds or self.oracle is None or info is None:
            return answers
        key = (info.episode_path, info.capture_tag, view.crop_box, tuple(attributes))
        if key not in self.memo:
            self.memo[key] = self.oracle.verify(view, attributes)
        return [
            truth
            if claim_kind(attribute.evidence_phrase, attribute.name) in self.kinds
            and (self.answers == "all" or truth.answer is Decision.NO)
            else answer
            for attribute, answer, truth in zip(attributes, answers, self.memo[key], strict=True)
        ]


def parse_perfect(groups: Sequence[str]) -> list[frozenset[str]]:
    """``--perfect`` values ("part_colour", "text,logo") as kind sets; an unknown kind is a user mistake."""
    scenarios = []
    for group in groups:
        kinds = frozenset(k.strip() for k in group.split(",") if k.strip())
        unknown = sorted(kinds - set(CLAIM_KINDS))
        if not kinds or unknown:
            raise OverrideError(
                f"--perfect {group!r}: unknown claim kind {', '.join(map(repr, unknown)) or '(none given)'}; "
                f"known: {', '.join(CLAIM_KINDS)}"
            )
        scenarios.append(kinds)
    return scenarios


def claimed_truth(row: dict[str, Any]) -> str:
    """What a row's answer should have been, judged as the claim it makes: an attribute answer against the
    oracle's answer for that attribute; a No about the object as a whole ("not the described object", given to
    every attribute alike) against the pair: right on a distractor even where it shares that attribute."""
    if row.get("claim") == "object":
        return "Yes" if row["pair_type"] == "positive" else "No"
    return str(row["truth"])


def audit_table(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per attribute type: answers, Unsure rate, decisive answers the oracle can judge, their accuracy; and the
    accuracy with object-level Nos judged as object claims (:func:`claimed_truth`), beside, not instead."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["type"]].append(row)
        groups["ALL"].append(row)
    table = {}
    for group, items in sorted(groups.items()):
        judged = [r for r in items if r["truth"] != "Unsure" and r["answer"] != "Unsure"]
        as_claimed = [(r, claimed_truth(r)) for r in items if r["answer"] != "Unsure"]
        as_claimed = [(r, truth) for r, truth in as_claimed if truth != "Unsure"]
        table[group] = {
            "answers": len(items),
            "unsure_rate": sum(r["answer"] == "Unsure" for r in items) / max(len(items), 1),
            "yes": sum(r["answer"] == "Yes" for r in items),
            "no": sum(r["answer"] == "No" for r in items),
            "decisive_judged": len(judged),
            "decisive_accuracy": sum(r["answer"] == r["truth"] for r in judged) / max(len(judged), 1),
            "wrong_no": sum(r["answer"] == "No" and r["truth"] == "Yes" for r in judged),
            "wrong_yes": sum(r["answer"] == "Yes" and r["truth"] == "No" for r in judged),
            "decisive_on_oracle_unsure": sum(
                r["answer"] != "Unsure" and r["truth"] == "Unsure" for r in items
            ),
            "object_claims": sum(r.get("claim") == "object" for r in items),
            "judged_as_claimed": len(as_claimed),
            "accuracy_as_claimed": sum(r["answer"] == truth for r, truth in as_claimed)
            / max(len(as_claimed), 1),
        }
    return table


def run(args: argparse.Namespace) -> dict[str, Any]:
    params = classical_params(args.ocr, args.set or [])  # a mistyped --set fails before any reading
    scenarios = [frozenset[str](), *parse_perfect(args.perfect or [])]
    root = Path(args.dataset)
    dataset = PInVerifyDataset(str(root))
    records = dataset.read_pair_index(dataset.index_path(args.index))
    if args.limit:
        records = records[: args.limit]
    env = PInVerifyEnv(
        records,
        dataset,
        max_steps=args.max_steps,
        seed=42,
        seed_policy="per_episode_fixed",
        view_priority="far",
        privileged=True,
        descriptions=dataset.load_descriptions(),
    )
    oracle = None
    if args.audit or len(scenarios) > 1:
        from aiv_verifier.verification.oracle import OracleVerifier

        oracle = OracleVerifier.for_dataset(root)
    audit_oracle = oracle if args.audit else None
    verifier = MemoVerifier(ClassicalVerifier(params), args.perturb, audit_oracle)
    judge = PerfectKinds(verifier, oracle, args.perfect_answers)
    interpreter = build_query_interpreter()
    results: dict[str, Any] = {}
    for kinds, fusion, stop_rule in (
        (kinds, fusion, stop_rule)
        for kinds in scenarios
        for fusion in args.fusions.split(",")
        for stop_rule in args.stop_rules.split(",")
    ):
        judge.kinds = kinds
        # The audit scores the classical verifier on the views the plain runs played (they come first); views
        # only a scenario reaches stay out of it, so --perfect never changes the audit.
        verifier.oracle = audit_oracle if not kinds else None
        label = f"{fusion}/{stop_rule}" + (f"/perfect:{'+'.join(sorted(kinds))}" if kinds else "")
        settings = AgentSettings(fusion=fusion, stop_rule=stop_rule)
        factory = AgentFactory(settings, judge, interpreter)
        per_type: dict[str, list[tuple[bool, int]]] = defaultdict(list)
        episodes = []
        for index, record in enumerate(records):
            verifier.context = record.pair_type
            _, _, summary = run_env_episode(env, index, factory, episode_key=pair_key(record))
            predicted_yes = summary.decision is Decision.YES
            correct = predicted_yes == (int(record.label) == 1)
            per_type[record.pair_type].append((correct, summary.steps))
            episodes.append(
                {
                    "index": index,
                    "pair_type": record.pair_type,
                    "category": record.target_object_category,
                    "query_category": record.query_object_category,
                    "prediction": summary.decision.value if summary.decision else "failed",
                    "correct": correct,
                    "steps": summary.steps,
                    "stop_reason": summary.stop_reason,
                }
            )
        everything = [item for items in per_type.values() for item in items]
        row = {
            "overall": float(np.mean([c for c, _ in everything])),
            "asd": float(np.mean([s for _, s in everything])),
            **{t: float(np.mean([c for c, _ in per_type[t]])) if per_type[t] else 0.0 for t in PAIR_TYPES},
            **{
                f"asd_{t}": float(np.mean([s for _, s in per_type[t]])) if per_type[t] else 0.0
                for t in PAIR_TYPES
            },
        }
        results[label] = {"metrics": row, "episodes": episodes}
        print(
            f"{fusion:14s} {stop_rule:15s} ovr {row['overall']:.3f}  pos {row['positive']:.3f}  "
            f"ns {row['neg_same']:.3f}  nd {row['neg_diff']:.3f}  ASD {row['asd']:.2f} "
            f"(pos {row['asd_positive']:.2f} ns {row['asd_neg_same']:.2f} nd {row['asd_neg_diff']:.2f})"
            + (f"  perfect {args.perfect_answers}: {'+'.join(sorted(kinds))}" if kinds else ""),
            flush=True,
        )
    out: dict[str, Any] = {
        "dataset": str(root),
        "index": args.index,
        "perturb": args.perturb,
        "pairs": len(records),
        "verifier_seconds": verifier.seconds,
        "views_judged": len(verifier.memo),
        "runs": results,
    }
    if oracle is not None:
        out["audit"] = audit_table(verifier.audit)
        out["audit_by_pair_type"] = {
            pair_type: audit_table([r for r in verifier.audit if r["pair_type"] == pair_type])
            for pair_type in PAIR_TYPES
        }
        out["audit_rows"] = verifier.audit
        out["distractors"] = distractor_breakdown(verifier.audit)
    return out


DISTRACTOR_OUTCOMES = (
    "some view answered No",
    "colour or pattern differs, undecided",
    "only printed text differs",
    "only material differs",
    "only shape, count or part differs",
    "several non-colour attributes differ",
    "no differing attribute visible",
)


def distractor_breakdown(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Why same-category distractors were (not) rejected: per neg_same episode, from the audited answers of
    the views played (any fusion), whether some view answered No, else which attribute types the oracle says
    differ in those views. It bounds what a better per-view judge could gain: an episode whose differing
    attributes are all material or text needs a cue for those, and one where none differs visibly cannot be
    won by any verifier with the views visited."""
    episodes: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["pair_type"] == "neg_same":
            episodes[(row["target"], row["view"].rsplit("/", 1)[0])].append(row)
    counts = dict.fromkeys(DISTRACTOR_OUTCOMES, 0)
    for answers in episodes.values():
        differing = {r["type"] for r in answers if r["truth"] == "No"}
        if any(r["answer"] == "No" for r in answers):
            outcome = DISTRACTOR_OUTCOMES[0]
        elif differing & {"color", "pattern"}:
            outcome = DISTRACTOR_OUTCOMES[1]
        elif differing == {"logo_text"}:
            outcome = DISTRACTOR_OUTCOMES[2]
        elif differing == {"material"}:
            outcome = DISTRACTOR_OUTCOMES[3]
        elif len(differing) == 1:
            outcome = DISTRACTOR_OUTCOMES[4]
        elif differing:
            outcome = DISTRACTOR_OUTCOMES[5]
        else:
            outcome = DISTRACTOR_OUTCOMES[6]
        counts[outcome] += 1
    return counts


def format_audit(table: dict[str, dict[str, float]]) -> str:
    lines = [
        f"{'type':10s} {'answers':>7s} {'unsure':>7s} {'yes':>5s} {'no':>5s} {'judged':>6s} {'acc':>6s} "
        f"{'wrongNo':>7s} {'wrongYes':>8s} {'onOracleUnsure':>14s} {'objectNo':>8s} {'accAsClaimed':>12s}"
    ]
    for group, e in table.items():
        lines.append(
            f"{group:10s} {e['answers']:7d} {e['unsure_rate']:7.1%} {e['yes']:5d} {e['no']:5d} "
            f"{e['decisive_judged']:6d} {e['decisive_accuracy']:6.1%} {e['wrong_no']:7d} {e['wrong_yes']:8d} "
            f"{e['decisive_on_oracle_unsure']:14d} {e['object_claims']:8d} {e['accuracy_as_claimed']:12.1%}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument(
        "--index", default="train/pv_index_all.jsonl", help="index file under the dataset root"
    )
    parser.add_argument("--fusions", default="attr_majority,veto")
    parser.add_argument("--stop-rules", default="reference,contradiction")
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--audit", action="store_true", help="compare every answer with the oracle's")
    parser.add_argument("--perturb", default="none", choices=PERTURBATIONS)
    parser.add_argument("--ocr", default="auto", choices=("auto", "rapidocr", "tesseract", "none"))
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a ClassicalSettings field (dotted for a section)",
    )
    parser.add_argument(
        "--perfect",
        action="append",
        metavar="KIND[,KIND...]",
        help="add a scenario where the oracle answers these claim kinds (an upper bound; repeatable)",
    )
    parser.add_argument(
        "--perfect-answers",
        default="no",
        choices=PERFECT_ANSWERS,
        help="which oracle answers a --perfect scenario takes: only its Nos (default) or all",
    )
    parser.add_argument("--json", help="write metrics, episodes and audit rows here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        result = run(args)
    # VerifierError: --audit on a dataset without privileged ground truth.
    except (DatasetError, OverrideError, VerifierError) as error:
        print(f"episode_sweep: error: {error}", file=sys.stderr)
        return 2
    print(
        f"{result['pairs']} pairs, {result['views_judged']} views judged in {result['verifier_seconds']:.0f} s "
        f"(total {time.perf_counter() - start:.0f} s)"
    )
    if "audit" in result:
        print(format_audit(result["audit"]))
        for pair_type, table in result["audit_by_pair_type"].items():
            print(f"-- answers given while playing {pair_type} pairs")
            print(format_audit(table))
        print("-- same-category distractor episodes, by what decided them (views played)")
        for outcome, count in result["distractors"].items():
            print(f"{count:5d}  {outcome}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
