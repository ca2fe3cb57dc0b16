"""Measure the classical verifier on a synthetic PInVerify-format dataset with privileged ground truth.

For every capture that has a ground-truth box, the crop is made exactly as in GT mode (spec §5.4) and the
verifier is asked, in one call per capture, about

* the target's own attribute phrases: truth Yes when the attribute is visible in that capture
  (``visible`` in ``privileged_gt``), otherwise "hidden" (reported apart: a decisive answer there is a guess);
* the phrases in which its family siblings differ (``family_members[].differs_in``): truth No when the
  target's own attribute of that name is visible; when the target lacks that attribute altogether (e.g. it
  has no logo) the truth is No as long as the view meets the mask threshold, reported as ``absent``;
* with ``--direct``: its own first description (truth Yes) and its siblings' first descriptions (truth No)
  as type ``other`` items, as in direct query mode.

Usage::

    python -m aiv_studies.classical_study --dataset data/pv_synthetic_default --split val \
        [--limit N] [--json out.json] [--ocr auto|rapidocr|tesseract|none] [--direct] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from aiv_checks.settings import ClassicalSettings
from aiv_checks.verifier import ClassicalVerifier
from aiv_dataset.constants import CAPTURE_SUBDIR, DESCRIPTIONS_FILENAME, META_FILENAME
from aiv_verifier.core.crop import crop_with_gt_box
from aiv_verifier.core.types import ATTRIBUTE_TYPES, Attribute, Decision
from aiv_verifier.verification.base import ViewInput
from PIL import Image


@dataclasses.dataclass(frozen=True)
class Question:
    attribute: Attribute
    truth: str  # "yes", "no", "hidden"
    group: str  # attribute type, or "other" for descriptions
    source: str  # "own", "sibling", "absent", "direct-own", "direct-sibling"


def _load_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def iter_captures(root: Path, split: str) -> Iterator[tuple[Path, dict[str, Any], dict[str, Any]]]:
    """(episode dir, meta.json, viewpoint record) for every viewpoint with an RGB image and a box."""
    for meta_path in sorted((root / CAPTURE_SUBDIR / split).glob(f"*/*/{META_FILENAME}")):
        meta = _load_json(meta_path)
        for view in meta.get("viewpoints") or []:
            if view.get("rgb") and view.get("mask_bbox_xyxy"):
                yield meta_path.parent, meta, view


def questions_for(
    root: Path,
    split: str,
    episode_dir: Path,
    meta: dict[str, Any],
    view: dict[str, Any],
    direct: bool,
    cache: dict[str, Any],
) -> list[Question]:
    def gt(object_id: str) -> dict[str, Any] | None:
        if object_id not in cache:
            path = root / "privileged_gt" / split / f"{object_id}.json"
            cache[object_id] = _load_json(path) if path.exists() else None
        found: dict[str, Any] | None = cache[object_id]
        return found

    target = gt(meta["object_id"])
    if target is None:
        return []
    episode_key = str(episode_dir.relative_to(root))
    capture = (target.get("captures", {}).get(episode_key) or {}).get(view["tag"]) or {}
    visible = set(capture.get("visible") or [])
    meets = bool(capture.get("mask_meets_threshold", view.get("mask_meets_threshold")))
    own = {a["name"]: a for a in target.get("attributes", [])}
    questions = []
    for attr in own.values():
        truth = "yes" if attr["name"] in visible else "hidden"
        questions.append(
            Question(Attribute(attr["name"], attr["type"], 2, attr["phrase"]), truth, attr["type"], "own")
        )
    asked = {a["phrase"] for a in own.values()}
    for member in target.get("family_members", []):
        sibling = gt(member["object_id"])
        if sibling is None:
            continue
        sib_attrs = {a["name"]: a for a in sibling.get("attributes", [])}
        for name in member.get("differs_in", []):
            attr = sib_attrs.get(name)
            if attr is None or attr["phrase"] in asked:
                continue
            asked.add(attr["phrase"])
            if name in own:
                truth, source = ("no" if name in visible else "hidden"), "sibling"
            else:
                truth, source = ("no" if meets else "hidden"), "absent"
            questions.append(
                Question(
                    Attribute(f"sib_{len(questions)}_{name}", attr["type"], 2, attr["phrase"]),
                    truth,
                    attr["type"],
                    source,
                )
            )
    if direct:
        descriptions = cache.setdefault("__descriptions__", _load_json(root / DESCRIPTIONS_FILENAME))
        own_desc = (descriptions.get(meta["object_id"]) or [""])[0]
        if own_desc:
            questions.append(
                Question(
                    Attribute("desc_own", "other", 2, own_desc),
                    "yes" if meets else "hidden",
                    "other",
                    "direct-own",
                )
            )
        for member in target.get("family_members", []):
            desc = (descriptions.get(member["object_id"]) or [""])[0]
            if desc and desc != own_desc:
                questions.append(
                    Question(
                        Attribute(f"desc_{member['object_id'][:8]}", "other", 2, desc),
                        "no" if meets else "hidden",
                        "other",
                        "direct-sibling",
                    )
                )
    return questions


class OverrideError(ValueError):
    """A ``--set`` that names no ClassicalSettings field, or gives it a value it cannot take."""


def _convert(key: str, default: Any, value: str) -> Any:
    if isinstance(default, bool):
        if value.lower() not in ("1", "true", "yes", "0", "false", "no"):
            raise OverrideError(f"--set {key}={value}: expected true or false")
        return value.lower() in ("1", "true", "yes")
    if isinstance(default, (int, float)):
        try:
            return type(default)(float(value))
        except ValueError:
            raise OverrideError(f"--set {key}={value}: expected a number") from None
    return value


def _replaced(settings: Any, path: list[str], key: str, value: str) -> Any:
    """``settings`` with the field at ``path`` (section names, then the field) set from the text ``value``."""
    names = {f.name for f in dataclasses.fields(settings)}
    if path[0] not in names:
        raise OverrideError(f"unknown parameter {key!r}; known here: {sorted(names)}")
    current = getattr(settings, path[0])
    if len(path) > 1:
        if not dataclasses.is_dataclass(current):
            raise OverrideError(f"unknown parameter {key!r}")
        new = _replaced(current, path[1:], key, value)
    elif dataclasses.is_dataclass(current):
        raise OverrideError(f"{key!r} is a section; name one of its fields")
    else:
        new = _convert(key, current, value)
    return dataclasses.replace(settings, **{path[0]: new})


def classical_params(ocr_engine: str, pairs: list[str]) -> ClassicalSettings:
    """ClassicalSettings with ``key=value`` overrides; dotted keys reach nested sections
    (``main_colour.yes_share=0.2``, ``pattern.geometry.min_dots=3``). Raises OverrideError, never a traceback
    for a mistyped key or value."""
    settings = ClassicalSettings(ocr_engine=ocr_engine)
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            settings = _replaced(settings, key.split("."), key, value)
        except ValueError as error:  # the dataclasses' own validation (a choice)
            if isinstance(error, OverrideError):
                raise
            raise OverrideError(f"--set: {error}") from None
    return settings


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per group: answer counts by truth, rates and accuracy when decisive."""
    table: dict[str, dict[str, Any]] = {}
    groups = defaultdict(list)
    for row in rows:
        groups[row["group"]].append(row)
        groups["ALL"].append(row)
    for group, items in groups.items():
        entry: dict[str, Any] = {}
        for truth in ("yes", "no", "hidden"):
            subset = [r for r in items if r["truth"] == truth]
            counts = {d.value: sum(r["answer"] == d.value for r in subset) for d in Decision}
            entry[truth] = {"n": len(subset), **counts}
        decisive = [r for r in items if r["truth"] in ("yes", "no") and r["answer"] != "Unsure"]
        correct = sum((r["truth"] == "yes") == (r["answer"] == "Yes") for r in decisive)
        judged = [r for r in items if r["truth"] in ("yes", "no")]
        entry["decisive"] = len(decisive)
        entry["decisive_rate"] = len(decisive) / max(len(judged), 1)
        entry["decisive_accuracy"] = correct / max(len(decisive), 1)
        table[group] = entry
    return table


def format_table(table: dict[str, dict[str, Any]]) -> str:
    def rates(cell: dict[str, int]) -> str:
        n = max(cell["n"], 1)
        return f"{cell['n']:5d} {cell['Yes'] / n:5.0%} {cell['No'] / n:5.0%} {cell['Unsure'] / n:5.0%}"

    known = [t for t in sorted(ATTRIBUTE_TYPES) if t in table]
    order = known + sorted(g for g in table if g not in known and g != "ALL") + ["ALL"]
    lines = [
        f"{'type':10s} | {'truth Yes: n   Yes    No    Uns':33s} | {'truth No: n   Yes    No    Uns':33s} |"
        f" {'hidden: n  Yes   No':20s} | decisive  acc",
        "-" * 126,
    ]
    for group in order:
        e = table[group]
        hidden = e["hidden"]
        lines.append(
            f"{group:10s} | {rates(e['yes']):33s} | {rates(e['no']):33s} | "
            f"{hidden['n']:5d} {hidden['Yes']:5d} {hidden['No']:5d}      | "
            f"{e['decisive_rate']:7.0%} {e['decisive_accuracy']:5.1%}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(args.dataset)
    params = classical_params(args.ocr, args.set or [])
    verifier = ClassicalVerifier(params)
    rows: list[dict[str, Any]] = []
    cache: dict[str, Any] = {}
    latencies: list[float] = []
    captures = 0
    start = time.perf_counter()
    for episode_dir, meta, view in iter_captures(root, args.split):
        if args.limit and captures >= args.limit:
            break
        questions = questions_for(root, args.split, episode_dir, meta, view, args.direct, cache)
        if not questions:
            continue
        image = np.asarray(Image.open(episode_dir / view["rgb"]).convert("RGB"))
        crop = crop_with_gt_box(image, view["mask_bbox_xyxy"])
        view_input = ViewInput(
            crop.image, image, crop.box, crop.confidence, meta.get("object_category", ""), ()
        )
        t0 = time.perf_counter()
        answers = verifier.verify(view_input, [q.attribute for q in questions])
        latencies.append(time.perf_counter() - t0)
        captures += 1
        for question, answer in zip(questions, answers, strict=True):
            rows.append(
                {
                    "episode": str(episode_dir.relative_to(root)),
                    "tag": view["tag"],
                    "object_id": meta["object_id"],
                    "category": meta.get("object_category", ""),
                    "attribute": question.attribute.name,
                    "phrase": question.attribute.evidence_phrase,
                    "group": question.group,
                    "source": question.source,
                    "truth": question.truth,
                    "answer": answer.answer.value,
                    "certainty": answer.certainty,
                    "reason": answer.reason,
                }
            )
    table = summarise(rows)
    by_source = summarise([{**r, "group": r["source"]} for r in rows])
    return {
        "dataset": str(root),
        "split": args.split,
        "captures": captures,
        "questions": len(rows),
        "ocr_engine": verifier.ocr_engine_name,
        "params": {k: v for k, v in dataclasses.asdict(params).items() if not isinstance(v, dict)},
        "seconds": time.perf_counter() - start,
        "latency_ms": {
            "mean": 1000 * float(np.mean(latencies)) if latencies else 0.0,
            "p90": 1000 * float(np.percentile(latencies, 90)) if latencies else 0.0,
        },
        "table": table,
        "by_source": by_source,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--split", default="val")
    parser.add_argument("--limit", type=int, default=0, help="stop after this many captures (0: all)")
    parser.add_argument("--json", help="write the summary and every answer to this file")
    parser.add_argument("--ocr", default="auto", choices=("auto", "rapidocr", "tesseract", "none"))
    parser.add_argument(
        "--direct", action="store_true", help="also ask whole first descriptions (type other)"
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a ClassicalSettings field (dotted for a section)",
    )
    args = parser.parse_args(argv)
    if not (Path(args.dataset) / CAPTURE_SUBDIR / args.split).is_dir():
        print(f"error: no {args.split!r} captures under {args.dataset}/{CAPTURE_SUBDIR}", file=sys.stderr)
        return 2
    try:
        result = run(args)
    except OverrideError as error:
        print(f"classical_study: error: {error}", file=sys.stderr)
        return 2
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(
        f"{result['captures']} captures, {result['questions']} questions, OCR {result['ocr_engine']}, "
        f"{result['seconds']:.0f} s; per-call latency mean {result['latency_ms']['mean']:.0f} ms, "
        f"p90 {result['latency_ms']['p90']:.0f} ms"
    )
    print(format_table(result["table"]))
    print("\nby question source:")
    print(format_table(result["by_source"]).replace("type      ", "source    "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
