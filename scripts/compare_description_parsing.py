#!/usr/bin/env python3
"""Compare what the description parser reads with what a baseline source tree's parsers read.

Issue #31 merged the query side's English parser and the verifier's phrase reader into one
(:mod:`aiv_verifier.description`). Its readings feed the main job's attributes and the classical verifier's
answers, which must not change, so this script reads the same texts with the baseline tree and with the current
one and compares, text by text:

- the query decomposition (the rules backend's attributes: name, type, weight, evidence) and the predicted
  category (with its per-class scores) of every description set and of every single description;
- the phrase reader: ``analyse_phrase`` (every field of the ``PhraseInfo``), the side and finish tests built on
  it, ``is_main_colour_claim`` with the attribute's name, ``split_description`` and the colour terms a
  description names (``named_colour_terms``; the baseline had no such function, its ``mentioned_colours``
  computed the same terms privately, which the baseline side reproduces).

The texts: every description and every ground-truth attribute phrase and mention of the datasets (all splits),
the clauses of every description, the evidence of every decomposed attribute, the string literals of the query
and phrase tests, and a few hand-written edge cases (quotes, hyphens, capitals, shorthands).

One change is intended: the two readers' negation and pattern-noun lists became one each
(:data:`aiv_verifier.lexicon.NEGATIONS`, :data:`aiv_verifier.lexicon.PATTERN_NOUNS`), so the phrase reader
now also takes "not", "nothing" and "never" before a logo or pattern word, and "motif(s)" after a negation, as
an absence ("not striped" → no_pattern). The phrases of :data:`INTENDED` (the test that pins this) are listed
apart and do not count as differences; no text of the datasets reads differently.

Each side runs in its own interpreter: the baseline with ``PYTHONPATH`` set to the baseline tree's
``ros2_ws/src/<package>`` folders ahead of the installed ones (the script checks that its modules are the ones
imported).

    git worktree add /tmp/base_5151136 5151136      # once
    python scripts/compare_description_parsing.py --baseline /tmp/base_5151136

Exit status: 0 when every reading is identical, 1 on any difference, 2 on bad input.
Run it after ``source .env.sh``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASETS = ("data/pv_synthetic_default", "data/pv_default_s11", "data/pv_default_s13")
TEST_FILES = (
    "tests/verifier_query/test_rules.py",
    "tests/verifier_query/test_categories.py",
    "tests/verifier_query/test_interpreter.py",
    "tests/verifier_query/test_checkable_queries.py",
    "tests/verifier_classical/test_phrases.py",
)
EDGE_CASES = (
    'the word "NOVA" in white',
    "the word“NOVA”in white, with a brim",
    "a 'Hello, world' sticker on the lid",
    "a black-and-white striped shirt",
    "a red hat With a brown brim And blue dots",
    "a mug that has a handle, which has stripes as well as dots",
    "a mug that  has a handle",
    "a hat, - with a brim",
    "a bag w/ a strap w/o a logo",
    "it's a light-blue, off-white and navy cap; no logo. No pattern!",
    "a café-coloured hat with naïve dots",
    "a cream colored mug with blue-ish stripes and a girl's face",
    "a mug & a lid + a handle / a spoon (red) [blue] {green}",
    "black and white and red all over",
    "3.5 inch red buttons",
    "a hat\nwith a brim\r\nand dots",
    'a "long quoted title that goes on and on and on and on and on and on and on and on and on" book',
    "no logo or text on the front without a handle or lid",
    "a sticker with the word HELLO that says hi",
    "and_more with_this has's plus-minus",
)

#: Phrases whose reading changed on purpose (the merged negation and pattern-noun lists), with what they read
#: as now; the comparison lists them apart and checks they read exactly so.
INTENDED = {
    "phrase 'not striped'": "no_pattern",
    "phrase 'no motifs'": "no_pattern",
    "phrase 'never a logo'": "no_logo",
}


# --- the worker: one tree's readings ---------------------------------------------------------------------------


def _phrase_module(baseline: bool) -> Any:
    if baseline:
        from aiv_verifier.verification.classical import phrases as old  # type: ignore[import-not-found]

        return old
    from aiv_verifier.description import phrases

    return phrases


def _colour_terms(module: Any, baseline: bool, description: str) -> list[Any]:
    if baseline:
        text = module._normalise(module._QUOTE.sub(" qqq ", description[: module.MAX_PHRASE_CHARS]))
        terms = module._find_colours(module._WORD.findall(text))
    else:
        terms = module.named_colour_terms([description])
    return [[term.name, term.modifier, term.position] for term in terms]


def _info(module: Any, text: str, names: Iterable[str]) -> dict[str, Any]:
    info = module.analyse_phrase(text)
    return {
        "info": {field.name: getattr(info, field.name) for field in dataclasses.fields(info)},
        "faces": [
            module.part_faces_every_side(info),
            module.pattern_faces_every_side(info),
            module.is_metallic(info),
            module.part_is_see_through(info),
        ],
        "main": {name: module.is_main_colour_claim(info, name) for name in sorted(set(names) | {""})},
    }


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _jsonable(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, float):
        return repr(value)
    return value


def work(inputs: Path, out: Path, baseline: bool, expect_root: str | None) -> int:
    """Read every input text with the importable tree and write the readings as one JSON object."""
    from aiv_verifier.query.categories import KeywordCategoryClassifier
    from aiv_verifier.query.rules import RuleBasedDecomposer

    module = _phrase_module(baseline)
    if expect_root:
        root = str(Path(expect_root).resolve())
        for loaded in (module, sys.modules[RuleBasedDecomposer.__module__]):
            where = str(Path(loaded.__file__ or "").resolve())
            if not where.startswith(root):
                print(f"error: {loaded.__name__} came from {where}, not from {root}", file=sys.stderr)
                return 2
    data = json.loads(inputs.read_text(encoding="utf-8"))
    decomposer = RuleBasedDecomposer()
    classifier = KeywordCategoryClassifier()
    readings: dict[str, Any] = {}
    phrases: dict[str, set[str]] = {text: set(names) for text, names in data["phrases"].items()}

    def query(key: str, descriptions: Sequence[str]) -> None:
        attributes = decomposer.decompose(descriptions)
        prediction = classifier.predict(descriptions)
        readings[f"query {key}"] = {
            "attributes": [[a.name, a.type, a.weight, a.evidence_phrase] for a in attributes],
            "category": [
                prediction.category,
                prediction.matched,
                _jsonable(sorted(prediction.scores.items())),
            ],
        }
        for attribute in attributes:
            phrases.setdefault(attribute.evidence_phrase, set()).add(attribute.name)

    for index, descriptions in enumerate(data["sets"]):
        query(f"set {index}", descriptions)
    for text in data["descriptions"]:
        query(f"single {text!r}", [text])
        clauses = module.split_description(text)
        readings[f"split {text!r}"] = clauses
        readings[f"colours {text!r}"] = _colour_terms(module, baseline, text)
        for clause in [*clauses, text]:
            phrases.setdefault(clause, set())
    for text in sorted(phrases):
        readings[f"phrase {text!r}"] = _jsonable(_info(module, text, phrases[text]))
        readings[f"split {text!r}"] = module.split_description(text)
    out.write_text(json.dumps(readings, sort_keys=True), encoding="utf-8")
    return 0


# --- the driver: gather the texts, run both sides, compare -----------------------------------------------------


def _test_strings(path: Path) -> list[str]:
    """The string literals of a test file that read like English (a letter and a space or 3+ characters)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if len(text) >= 3 and any(ch.isalpha() for ch in text) and len(text) < 2000:
                found.append(text)
    return found


def gather(datasets: Sequence[str]) -> dict[str, Any]:
    """Every description set, description and attribute phrase the comparison reads."""
    from aiv_dataset.layout import PInVerifyDataset
    from aiv_dataset.privileged_truth import PrivilegedTruth

    sets: list[list[str]] = []
    descriptions: set[str] = set()
    phrases: dict[str, set[str]] = {}
    for name in datasets:
        root = Path(name) if Path(name).is_absolute() else REPO / name
        if not root.is_dir():
            raise SystemExit(f"error: {name}: no such dataset directory")
        db = PInVerifyDataset(root).load_descriptions()
        if db is None:
            raise SystemExit(f"error: {name}: no description db")
        for object_id in db:
            texts = list(db.descriptions_for(object_id))
            sets.append(texts)
            descriptions.update(texts)
        truth = PrivilegedTruth(root)
        for object_id in truth.object_ids:
            for slot in truth.instance(object_id).slots.values():
                for text in (slot.phrase, slot.mention):
                    if text:
                        phrases.setdefault(text, set()).add(slot.name)
    for relative in TEST_FILES:
        for text in _test_strings(REPO / relative):
            descriptions.add(text)
            phrases.setdefault(text, set())
    descriptions.update(EDGE_CASES)
    return {
        "sets": sets,
        "descriptions": sorted(descriptions),
        "phrases": {text: sorted(names) for text, names in sorted(phrases.items())},
    }


def run_side(inputs: Path, out: Path, baseline: Path | None) -> None:
    env = dict(os.environ)
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(inputs), str(out)]
    if baseline is not None:
        packages = sorted(str(path) for path in (baseline / "ros2_ws" / "src").iterdir() if path.is_dir())
        env["PYTHONPATH"] = os.pathsep.join([*packages, env.get("PYTHONPATH", "")])
        command += ["--baseline-side", str(baseline)]
    result = subprocess.run(command, env=env, check=False)
    if result.returncode != 0:
        raise SystemExit(
            f"error: the {'baseline' if baseline else 'current'} side failed ({result.returncode})"
        )


def _reads_as(reading: Any, kind: str) -> bool:
    return isinstance(reading, dict) and reading.get("info", {}).get("kind") == kind


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--baseline", type=Path, default=Path("/tmp/base_5151136"), help="baseline source tree"
    )
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS), help="dataset directories")
    parser.add_argument("--show", type=int, default=10, help="differences to print (default 10)")
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--baseline-side", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return work(args.worker[0], args.worker[1], args.baseline_side is not None, args.baseline_side)
    if not (args.baseline / "ros2_ws" / "src" / "aiv_verifier").is_dir():
        print(
            f"error: --baseline {args.baseline}: not a source tree (no ros2_ws/src/aiv_verifier)",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="description_compare_") as scratch:
        inputs = Path(scratch) / "inputs.json"
        inputs.write_text(json.dumps(gather(args.datasets)), encoding="utf-8")
        run_side(inputs, Path(scratch) / "baseline.json", args.baseline)
        run_side(inputs, Path(scratch) / "current.json", None)
        before = json.loads((Path(scratch) / "baseline.json").read_text(encoding="utf-8"))
        after = json.loads((Path(scratch) / "current.json").read_text(encoding="utf-8"))
    keys = sorted(set(before) | set(after))
    changed = [key for key in keys if before.get(key) != after.get(key)]
    intended = [key for key in changed if key in INTENDED and _reads_as(after.get(key), INTENDED[key])]
    differences = [key for key in changed if key not in intended]
    counts: dict[str, int] = {}
    for key in keys:
        kind = key.split(" ", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    print("compared: " + ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items())))
    if intended:
        print(
            f"intended changes (one negation and pattern-noun list): {len(intended)}: " + ", ".join(intended)
        )
    print(f"differences: {len(differences)}")
    for key in differences[: args.show]:
        print(f"- {key[:160]}")
        print(f"  baseline: {json.dumps(before.get(key))[:600]}")
        print(f"  current:  {json.dumps(after.get(key))[:600]}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
