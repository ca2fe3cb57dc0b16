"""Queries that say nothing checkable (issue 33), without ROS: the rule, the interpreter's note, an evaluation.

- Descriptions without a letter or a digit (punctuation, symbols, emoji) are refused like blank ones, by the one
  query rule every part applies (``aiv_dataset.query_rules``), with one line; next to a real description they
  are kept, as blank ones are.
- A ``category_hint`` that the descriptions contradict still wins (it is the caller's knowledge), but the query
  says so in ``QuerySpec.notes``; a hint the descriptions agree with, or also mention, gets no note.
- ``aiv-eval`` in-process refuses such a query as the simulator does (never answered NO).

Over ROS: ``tests/ros/test_query_checks_ros.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_dataset.query_rules import description_problem
from aiv_eval.cli import main as aiv_eval
from aiv_verifier.query.config import QueryConfig
from aiv_verifier.query.interpreter import StandardQueryInterpreter
from aiv_verifier.query.types import QueryMode
from support.colour_dataset import build_colour_dataset
from support.model_outage import records

GLASSES = ("a pair of brown glasses with thin metal frames", "brown glasses")
LAPTOP_NOTE = (
    "category_hint 'laptop' contradicts the descriptions, which name 'eyeglasses' and never 'laptop'; the hint "
    "wins: the object is checked as a laptop"
)


def _problem(descriptions: list[str]) -> str | None:
    return description_problem(descriptions, max_descriptions=10, max_chars=200)


@pytest.mark.parametrize(
    "descriptions",
    [["?!"], ["...", "!!! ???"], ["🙂👓"], ["—", "", "   "], ["👓 !", "(*_*)"], ["\u00a0\u2003.\u3002"]],
    ids=["punctuation", "two", "emoji", "dash-and-blanks", "mixed", "odd-spaces"],
)
def test_descriptions_without_a_letter_or_digit_are_refused_in_one_line(descriptions: list[str]) -> None:
    problem = _problem(descriptions)
    assert problem is not None and "\n" not in problem
    assert problem.startswith("no description names anything checkable (")
    assert problem.endswith(
        "no letter or digit, only punctuation, symbols or emoji); give at least one description in words"
    )
    for text in descriptions:
        if text.strip():
            assert repr(text) in problem


@pytest.mark.parametrize(
    "descriptions",
    [["?!", "a red mug"], ["眼镜"], ["٣"], ["3"], ["🙂 a mug"], ["", "x"]],
    ids=["next-to-a-real-one", "cjk", "arabic-digit", "digit", "emoji-and-words", "one-letter"],
)
def test_a_letter_or_digit_anywhere_is_served(descriptions: list[str]) -> None:
    assert _problem(descriptions) is None


def test_blank_descriptions_keep_their_own_line() -> None:
    assert _problem(["", " "]) == "no descriptions: give at least one non-empty description of the object"


def test_a_contradicting_category_hint_wins_and_is_noted() -> None:
    interpreter = StandardQueryInterpreter(QueryConfig())
    query = interpreter.interpret(GLASSES, QueryMode.ATTRIBUTE, category_hint="laptop")
    assert (query.category, query.category_source) == ("laptop", "hint")
    assert query.notes == (LAPTOP_NOTE,)
    # Agreeing, mentioned anywhere, or no hint at all: nothing to say.
    assert interpreter.interpret(GLASSES, QueryMode.ATTRIBUTE, category_hint="eyeglasses").notes == ()
    pocket = ("a black bag with a laptop compartment",)
    assert interpreter.interpret(pocket, QueryMode.DIRECT, category_hint="laptop").notes == ()
    assert interpreter.interpret(GLASSES, QueryMode.ATTRIBUTE).notes == ()
    # Descriptions that name no category cannot contradict a hint.
    assert (
        interpreter.interpret(("something shiny",), QueryMode.ATTRIBUTE, category_hint="laptop").notes == ()
    )


def test_an_evaluation_refuses_a_symbol_only_query_instead_of_answering_no(tmp_path: Path) -> None:
    root, _ = build_colour_dataset(tmp_path / "data")
    for name in ("object_descriptions.json", "object_descriptions_with_category.json"):
        path = root / name
        data = json.loads(path.read_text())
        emoji = ["👓🕶", "?!", ""]
        if isinstance(data["mug_red"], dict):
            data["mug_red"]["descriptions"] = emoji
        else:
            data["mug_red"] = emoji
        path.write_text(json.dumps(data, ensure_ascii=False))
    params = tmp_path / "run.yaml"
    params.write_text(
        "offline_sim:\n  ros__parameters:\n    index_file: val/pv_index_all.jsonl\n"
        f"evaluator:\n  ros__parameters:\n    run_dir: {tmp_path / 'run'}\n    save_crops: false\n    max_attempts: 1\n"
    )
    assert aiv_eval(["run", str(params), "--dataset", str(root), "--mode", "inprocess"]) == 1
    found = records(tmp_path / "run")
    refused = [r for r in found if r["object_id"] == "mug_red"]
    assert len(refused) == 2 and all(r["status"] == "infra_failure" for r in refused)
    for record in refused:
        assert (
            "cannot be served: no description names anything checkable ('👓🕶', '?!':"
            in record["failure_reason"]
        )
    assert all(r["status"] == "ok" for r in found if r["object_id"] == "mug_blue")
