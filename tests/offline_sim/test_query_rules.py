"""The description rules every part applies to a query (aiv_dataset.query_rules)."""

from __future__ import annotations

from typing import Any

import pytest
from aiv_dataset.query_rules import description_problem

LIMITS = {"max_descriptions": 3, "max_chars": 40}


def _problem(descriptions: Any) -> str | None:
    return description_problem(descriptions, **LIMITS)


def test_ordinary_descriptions_pass() -> None:
    assert _problem(["a blue mug", "a mug with white flowers", "a mug"]) is None
    assert _problem(("a blue mug",)) is None


def test_blank_entries_next_to_a_real_one_are_kept() -> None:
    # Datasets may hold an empty description among three; the reference passes it on, so do we.
    assert _problem(["", "a blue mug", "   "]) is None


@pytest.mark.parametrize("descriptions", [[], [""], ["", "   ", "\t\n"]])
def test_nothing_to_read_is_refused(descriptions: list[str]) -> None:
    assert _problem(descriptions) == "no descriptions: give at least one non-empty description of the object"


def test_too_many_descriptions_are_refused() -> None:
    assert _problem(["a", "b", "c", "d"]) == "4 descriptions; at most 3 are accepted"


def test_too_long_a_description_is_refused() -> None:
    problem = _problem(["a blue mug", "x" * 41])
    assert problem == "a description has 41 characters; at most 40 are accepted"
    assert _problem(["x" * 40]) is None  # the limit itself is allowed


@pytest.mark.parametrize("text", ["a red\x00 mug", "\x00", "a red mug\x00"])
def test_a_nul_character_is_refused(text: str) -> None:
    problem = _problem(["a blue mug", text])
    assert problem is not None
    assert problem.startswith("description 2 contains a NUL character")
    assert f"offset {text.index(chr(0))}" in problem


def test_an_entry_that_is_not_text_is_refused() -> None:
    assert _problem(["a blue mug", None]) == "description 2 is NoneType, not text"
    assert _problem([b"bytes"]) == "description 1 is bytes, not text"


def test_every_problem_is_one_line() -> None:
    cases: list[Any] = [[], ["a", "b", "c", "d"], ["x" * 41], ["a\x00\nb"], [3]]
    for descriptions in cases:
        problem = _problem(descriptions)
        assert problem is not None and "\n" not in problem
