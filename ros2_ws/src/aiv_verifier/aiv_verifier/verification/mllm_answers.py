"""Reading an MLLM's per-view answer exactly as the reference did (spec §5.5), kept apart from the calls.

Per-attribute (and direct / merged) answers:

1. strip one surrounding markdown fence (```` ``` ```` or ```` ```json ````);
2. ``json.loads`` the *whole* remaining text: prose around the JSON, a bare word, an empty answer, a JSON value
   that is not an object (``null``, a list, a string) are parse failures, and a parse failure is an empty
   answer;
3. the ``answer`` field, stripped and lower-cased: starts with "yes" ⇒ Yes (Matched); starts with "no" ⇒ No
   (Contradictory); anything else ⇒ Unsure (Missing). Prefix matching is the reference's, with its quirks kept
   on purpose: "Not visible" and "None" start with "no" and therefore count as No; "(No) ..." as prose is not
   JSON and therefore Missing. A non-string ``answer`` (``null``, a list, a number) is treated as empty.

The one-call-per-view option (not the reference) reads ``{"answers": {name: {"answer": ..., "reason": ...}}}``
(a plain string value, or a list of ``{"name", "answer", "reason"}`` objects, is accepted too) with the same
fence stripping, whole-text JSON and prefix rule per attribute; an attribute the answer leaves out is Unsure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.types import Decision, decision_from_answer_text
from ..query.llm import strip_markdown_fence


@dataclass(frozen=True)
class ParsedAnswer:
    """One attribute's reading: the decision, the raw ``answer`` field ("" when absent or unparseable), the
    model's reason, and whether the text parsed at all."""

    decision: Decision
    answer: str
    reason: str
    parsed: bool


NO_ANSWER = ParsedAnswer(Decision.UNSURE, "", "", False)


def _load_object(text: object) -> dict[str, object] | None:
    if not isinstance(text, str):
        return None
    try:
        data = json.loads(strip_markdown_fence(text))
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _reading(entry: Mapping[str, object]) -> ParsedAnswer:
    answer = entry.get("answer")
    answer_text = answer if isinstance(answer, str) else ""
    reason = entry.get("reason")
    return ParsedAnswer(
        decision_from_answer_text(answer_text), answer_text, reason if isinstance(reason, str) else "", True
    )


def parse_verification_answer(text: object) -> ParsedAnswer:
    """One per-view answer (attribute, direct or merged prompt) by the rules in the module docstring."""
    data = _load_object(text)
    return NO_ANSWER if data is None else _reading(data)


def parse_view_answers(text: object, names: Sequence[str]) -> list[ParsedAnswer]:
    """The answers for ``names`` (in that order) from one all-attributes answer; missing names are Unsure."""
    data = _load_object(text)
    entries: dict[str, ParsedAnswer] = {}
    answers = data.get("answers") if data is not None else None
    if isinstance(answers, Mapping):
        for name, value in answers.items():
            if isinstance(value, Mapping):
                entries[str(name)] = _reading(value)
            elif isinstance(value, str):
                entries[str(name)] = _reading({"answer": value})
    elif isinstance(answers, list):
        for item in answers:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                entries.setdefault(str(item["name"]), _reading(item))
    return [entries.get(name, NO_ANSWER) for name in names]
