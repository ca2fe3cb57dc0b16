"""The language-model path of query understanding (spec §5.2-5.3): category, attribute extraction, merge.

Prompts are the project's own words with the reference's slots and output formats; they live in text files
(``aiv_verifier/prompts/{category,extract,merge}.txt`` by default) that are read once, and a parameter can
point at other files (e.g. the reference prompts) to reproduce a paper run. Only the named slots below are
replaced, so a JSON example inside a template needs no brace escaping.

Slots: ``{desc1}``, ``{desc2}``, ``{desc3}`` (the first three descriptions, "" when missing), ``{descriptions}``
(all descriptions as a numbered list, for templates that want more than three), ``{categories}`` (the class
list as ``[backpack, bag, ...]``), ``{class_text}`` (the predicted class) and ``{max_attrs}``.

Answer handling follows the reference exactly:

- category: the stripped answer must equal a class (``exact``: case-sensitive, the online agent, fallback
  "bag"; ``case_insensitive``: the cache builder, fallback "object"). No other clean-up.
- extraction: strip a surrounding markdown fence, ``json.loads`` the *whole* remaining text (prose around the
  JSON ⇒ no attributes), read ``{"attributes": [...]}``, drop items whose evidence is empty or a
  "don't know" value, rename duplicate names ``name_1, name_2, ...``, never truncate. Coercions the reference
  does not need (our :class:`Attribute` validates): a missing/unknown ``type`` becomes ``other``; a weight
  that is not 1-3 becomes the nearest of 1..3 when numeric, else 2; items without a name are dropped.
- merge: the stripped answer; empty ⇒ the descriptions joined with ". ".

A model that raises is treated like one that returned "" (the failure is recorded in the dialogue).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aiv_dataset.vocabulary import CATEGORIES

from ..core.nbv_prompt import load_prompt_template
from ..core.types import ATTRIBUTE_TYPES, Attribute, LanguageModel
from .common import is_unusable_evidence, rename_duplicates

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
DEFAULT_PROMPT_FILES: Mapping[str, str] = {
    "category": "category.txt",
    "extract": "extract.txt",
    "merge": "merge.txt",
}
PROMPT_SLOTS: tuple[str, ...] = (
    "desc1",
    "desc2",
    "desc3",
    "descriptions",
    "categories",
    "class_text",
    "max_attrs",
)
_SLOT_PATTERN = re.compile(r"\{(" + "|".join(PROMPT_SLOTS) + r")\}")

CATEGORY_MATCH_POLICIES: tuple[str, ...] = ("exact", "case_insensitive")
POLICY_FALLBACKS: Mapping[str, str] = {"exact": "bag", "case_insensitive": "object"}
"""The reference's fallback per matching policy (spec §5.2, §10 item 17)."""

DEFAULT_MAX_ATTRS = 8


def default_prompt_path(stage: str) -> Path:
    if stage not in DEFAULT_PROMPT_FILES:
        raise ValueError(f"no query prompt for stage {stage!r}; known: {list(DEFAULT_PROMPT_FILES)}")
    return PROMPTS_DIR / DEFAULT_PROMPT_FILES[stage]


def fill_prompt(template: str, slots: Mapping[str, str]) -> str:
    """Replace ``{slot}`` for the known slot names present in ``slots``; every other brace is left alone."""
    return _SLOT_PATTERN.sub(lambda match: slots.get(match.group(1), match.group(0)), template)


def description_slots(descriptions: Sequence[str]) -> dict[str, str]:
    padded = [*descriptions[:3], "", "", ""][:3]
    numbered = "\n".join(f"{i}) {text}" for i, text in enumerate(descriptions, start=1))
    return {"desc1": padded[0], "desc2": padded[1], "desc3": padded[2], "descriptions": numbered}


def categories_text(categories: Sequence[str] = CATEGORIES) -> str:
    return "[" + ", ".join(categories) + "]"


@dataclass(frozen=True)
class PromptSet:
    """The three templates, read once."""

    category: str
    extract: str
    merge: str

    @classmethod
    def load(cls, category: str | Path = "", extract: str | Path = "", merge: str | Path = "") -> PromptSet:
        return cls(
            category=load_prompt_template(category or default_prompt_path("category"), "category"),
            extract=load_prompt_template(extract or default_prompt_path("extract"), "extract"),
            merge=load_prompt_template(merge or default_prompt_path("merge"), "merge"),
        )


@dataclass(frozen=True)
class ModelExchange:
    """One prompt/answer pair; ``error`` is set when the call raised or returned a non-string."""

    stage: str
    prompt: str
    response: str
    error: str = ""

    def as_dialogue(self) -> dict[str, str]:
        record = {"stage": self.stage, "prompt": self.prompt, "response": self.response}
        if self.error:
            record["error"] = self.error
        return record


def ask(model: LanguageModel, stage: str, prompt: str) -> ModelExchange:
    """Text-only call that never raises: an exception or a non-string answer counts as ""."""
    try:
        # A chat model that reports failures (aiv_models.chat.ChatModel) says why an answer is empty.
        checked = getattr(model, "generate_checked", None)
        if callable(checked):
            response, failure = checked(prompt, ())
            if failure:
                return ModelExchange(stage, prompt, "", str(failure))
        else:
            response = model.generate(prompt, ())
    except Exception as error:  # a failed model call must not end the episode
        return ModelExchange(stage, prompt, "", f"{type(error).__name__}: {error}")
    if not isinstance(response, str):
        return ModelExchange(stage, prompt, "", f"model returned {type(response).__name__}, expected str")
    return ModelExchange(stage, prompt, response)


# --- category --------------------------------------------------------------------------------------------------


def match_category(response: str, policy: str, categories: Sequence[str] = CATEGORIES) -> str | None:
    """The class the answer names under ``policy``, or None (then the caller falls back)."""
    if policy not in CATEGORY_MATCH_POLICIES:
        raise ValueError(
            f"unknown category match policy {policy!r}; expected one of {list(CATEGORY_MATCH_POLICIES)}"
        )
    text = response.strip() if isinstance(response, str) else ""
    if policy == "exact":
        return text if text in categories else None
    lowered = text.lower()
    for category in categories:
        if lowered == category.lower():
            return category
    return None


def category_prompt(
    template: str, descriptions: Sequence[str], categories: Sequence[str] = CATEGORIES
) -> str:
    return fill_prompt(
        template, {**description_slots(descriptions), "categories": categories_text(categories)}
    )


# --- extraction ------------------------------------------------------------------------------------------------


def extract_prompt(template: str, descriptions: Sequence[str], class_text: str, max_attrs: int) -> str:
    return fill_prompt(
        template, {**description_slots(descriptions), "class_text": class_text, "max_attrs": str(max_attrs)}
    )


def strip_markdown_fence(text: str) -> str:
    """Remove one surrounding ```/```json fence (as the reference does); anything else is left as it is."""
    body = text.strip()
    if body.startswith("```"):
        opening = re.match(r"```[\w.+-]*[ \t]*", body)
        body = body[opening.end() if opening else 3 :]
        body = body.rstrip()
        if body.endswith("```"):
            body = body[:-3]
    return body.strip()


def _coerce_type(value: object) -> str:
    text = value.strip().lower() if isinstance(value, str) else ""
    return text if text in ATTRIBUTE_TYPES else "other"


def _coerce_weight(value: object) -> int:
    if isinstance(value, bool):
        return 2
    number: float | None = None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or math.isnan(number) or math.isinf(number):
        return 2
    return int(min(3, max(1, round(number))))


def parse_attribute_response(
    text: str, *, descriptions: Sequence[str] | None = None
) -> tuple[Attribute, ...]:
    """Attributes from a model answer per spec §5.3 (see module docstring); never raises.

    With ``descriptions`` given, attributes whose evidence does not occur (case-insensitively) in any
    description are dropped as well (the optional ``verbatim_evidence_only`` guard against invented values).
    """
    if not isinstance(text, str):
        return ()
    try:
        data = json.loads(strip_markdown_fence(text))
    except (ValueError, RecursionError):
        return ()
    if not isinstance(data, dict):
        return ()
    items = data.get("attributes")
    if not isinstance(items, list):
        return ()
    haystacks = [d.lower() for d in descriptions if isinstance(d, str)] if descriptions is not None else None
    attributes: list[Attribute] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            continue
        evidence = item.get("evidence_phrase")
        if isinstance(evidence, int | float) and not isinstance(evidence, bool):
            evidence = str(evidence)
        if is_unusable_evidence(evidence):
            continue
        evidence = str(evidence).strip()
        if haystacks is not None and not any(evidence.lower() in haystack for haystack in haystacks):
            continue
        attributes.append(
            Attribute(
                name.strip(), _coerce_type(item.get("type")), _coerce_weight(item.get("weight")), evidence
            )
        )
    return rename_duplicates(attributes)


def attributes_to_json(attributes: Sequence[Attribute]) -> list[dict[str, object]]:
    """The benchmark's attribute records (attr_cache.json)."""
    return [
        {"name": a.name, "type": a.type, "weight": a.weight, "evidence_phrase": a.evidence_phrase}
        for a in attributes
    ]


# --- merge -----------------------------------------------------------------------------------------------------


def merge_prompt(template: str, descriptions: Sequence[str]) -> str:
    return fill_prompt(template, description_slots(descriptions))


def join_descriptions(descriptions: Sequence[str]) -> str:
    """The reference's last-resort merged text: the descriptions joined with ". " (blank ones skipped)."""
    return ". ".join(text for text in descriptions if isinstance(text, str) and text.strip())


def parse_merge_response(text: str) -> str:
    return text.strip() if isinstance(text, str) else ""
