"""The MLLM per-view verifier (spec §5.5): one vision-language call per attribute on the object crop.

Reference behaviour (the default):

- every attribute is asked at every view, one call each, on the crop (§5.4);
- attribute mode uses the attribute prompt (category gate, the three descriptions, the line
  ``<name> = <evidence_phrase>``); direct and merged mode (pseudo-attributes ``desc_k`` / ``merged_desc``, type
  ``other``) use the description prompt (category gate, that one description);
- answers are read by :mod:`.mllm_answers` (Yes ⇒ Matched, No ⇒ Contradictory, else Missing); a failed call is an
  empty answer, hence Missing, and is counted: each failed call's answer carries ``debug["language_model_failed"]
  = 1``, which the session adds to the episode's ``model_calls`` (→ records, metrics.json).

The calls of one view are issued concurrently (bounded by ``language_model.max_concurrency``) and come back in
attribute order; greedy decoding makes the decisions identical to sequential calls, only faster on a server that
batches. ``verifier.mllm.one_call_per_view`` (not the reference) asks every attribute in one call instead.

Prompts are the project's own words in ``aiv_verifier/prompts/verify_{attribute,description,view}.txt``; the
``verifier.mllm.*_prompt`` parameters point at other files (e.g. the reference's) with the same slots:
``{object_category}``, ``{desc1}``, ``{desc2}``, ``{desc3}``, ``{descriptions}`` (numbered list),
``{attribute_name}``, ``{evidence_phrase}``, ``{description}``, ``{attribute_lines}``, ``{attribute_names}``.
Only these names are replaced, so JSON examples in a template need no escaping.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ..core.nbv_prompt import load_prompt_template
from ..core.types import Attribute, Decision, LanguageModel
from ..language_model import ChatRequest, ChatResult, complete_many
from ..model_config import MllmVerifierParams
from .base import AttributeAnswer, ViewInput
from .mllm_answers import ParsedAnswer, parse_verification_answer, parse_view_answers

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
DEFAULT_PROMPTS: Mapping[str, str] = {
    "attribute": "verify_attribute.txt",
    "description": "verify_description.txt",
    "view": "verify_view.txt",
}
PROMPT_SLOTS: tuple[str, ...] = (
    "object_category",
    "desc1",
    "desc2",
    "desc3",
    "descriptions",
    "attribute_name",
    "evidence_phrase",
    "description",
    "attribute_lines",
    "attribute_names",
)
_SLOT_PATTERN = re.compile(r"\{(" + "|".join(PROMPT_SLOTS) + r")\}")
_DESCRIPTION_NAME = re.compile(r"^(desc_\d+|merged_desc)$")
FAILED_KEY = "language_model_failed"
"""``AttributeAnswer.debug`` key: failed model calls behind this answer (summed per episode by the session)."""


def fill_slots(template: str, slots: Mapping[str, str]) -> str:
    """Replace the known ``{slot}`` names present in ``slots``; every other brace stays as written."""
    return _SLOT_PATTERN.sub(lambda match: slots.get(match.group(1), match.group(0)), template)


def is_description_item(attribute: Attribute) -> bool:
    """Whether the item is a whole description (direct / merged query mode) rather than one attribute."""
    return attribute.type == "other" and bool(_DESCRIPTION_NAME.match(attribute.name))


@dataclass(frozen=True)
class VerifyPrompts:
    """The three templates, read once at start-up (a missing or empty file fails then, naming it)."""

    attribute: str
    description: str
    view: str

    @classmethod
    def load(
        cls, attribute: str | Path = "", description: str | Path = "", view: str | Path = ""
    ) -> VerifyPrompts:
        return cls(
            attribute=load_prompt_template(
                attribute or PROMPTS_DIR / DEFAULT_PROMPTS["attribute"], "verify attribute"
            ),
            description=load_prompt_template(
                description or PROMPTS_DIR / DEFAULT_PROMPTS["description"], "verify description"
            ),
            view=load_prompt_template(view or PROMPTS_DIR / DEFAULT_PROMPTS["view"], "verify view"),
        )


def view_slots(view: ViewInput) -> dict[str, str]:
    padded = [*view.descriptions[:3], "", "", ""][:3]
    return {
        "object_category": view.category,
        "desc1": padded[0],
        "desc2": padded[1],
        "desc3": padded[2],
        "descriptions": "\n".join(f"{i}) {text}" for i, text in enumerate(view.descriptions, start=1)),
    }


def attribute_prompt(prompts: VerifyPrompts, view: ViewInput, attribute: Attribute) -> str:
    """The prompt of one item: the description prompt for ``desc_k`` / ``merged_desc``, else the attribute one."""
    slots = view_slots(view)
    if is_description_item(attribute):
        return fill_slots(prompts.description, slots | {"description": attribute.evidence_phrase})
    return fill_slots(
        prompts.attribute,
        slots | {"attribute_name": attribute.name, "evidence_phrase": attribute.evidence_phrase},
    )


def view_prompt(prompts: VerifyPrompts, view: ViewInput, attributes: Sequence[Attribute]) -> str:
    """The one-call-per-view prompt: every item as a ``name = value`` line."""
    lines = "\n".join(f"{attribute.name} = {attribute.evidence_phrase}" for attribute in attributes)
    names = ", ".join(attribute.name for attribute in attributes)
    return fill_slots(prompts.view, view_slots(view) | {"attribute_lines": lines, "attribute_names": names})


class MllmVerifier:
    """Per-view verification by a vision-language model (see the module docstring). Thread-safe."""

    name: ClassVar[str] = "mllm"
    #: Every call is a language-model call: the session books them for ``agent.model_outage``.
    uses_language_model: ClassVar[bool] = True

    def __init__(
        self, model: LanguageModel, prompts: VerifyPrompts, *, one_call_per_view: bool = False
    ) -> None:
        self.model = model
        self.prompts = prompts
        self.one_call_per_view = one_call_per_view
        self._lock = threading.Lock()
        self._model_calls = 0
        self._failed_calls = 0

    @classmethod
    def from_params(cls, params: MllmVerifierParams, model: LanguageModel) -> MllmVerifier:
        """Build from ``verifier.mllm.*``; a prompt file that is missing or empty raises (OSError / ValueError)."""
        prompts = VerifyPrompts.load(params.attribute_prompt, params.description_prompt, params.view_prompt)
        return cls(model, prompts, one_call_per_view=params.one_call_per_view)

    @property
    def model_calls(self) -> int:
        return self._model_calls

    @property
    def failed_calls(self) -> int:
        return self._failed_calls

    def verify(self, view: ViewInput, attributes: Sequence[Attribute]) -> list[AttributeAnswer]:
        items = list(attributes)
        if not items:
            return []
        images = (view.crop,)
        if self.one_call_per_view:
            prompt = view_prompt(self.prompts, view, items)
            result = complete_many(self.model, [ChatRequest(prompt, images)])[0]
            self._count([result])
            readings = parse_view_answers(result.text, [item.name for item in items])
            return [
                _answer(item, reading, result, prompt, failed_here=index == 0)
                for index, (item, reading) in enumerate(zip(items, readings, strict=True))
            ]
        prompts = [attribute_prompt(self.prompts, view, item) for item in items]
        results = complete_many(self.model, [ChatRequest(prompt, images) for prompt in prompts])
        self._count(results)
        return [
            _answer(item, parse_verification_answer(result.text), result, prompt, failed_here=True)
            for item, result, prompt in zip(items, results, prompts, strict=True)
        ]

    def _count(self, results: Sequence[ChatResult]) -> None:
        with self._lock:
            self._model_calls += len(results)
            self._failed_calls += sum(1 for result in results if result.failed)


def _answer(
    item: Attribute, reading: ParsedAnswer, result: ChatResult, prompt: str, *, failed_here: bool
) -> AttributeAnswer:
    """The :class:`AttributeAnswer` of one item; ``failed_here`` marks the answer that counts a failed call (in
    one-call mode the call's failure is counted once, on the first item)."""
    if result.failed:
        reason = f"no answer: model call failed ({result.error})"
    elif not reading.parsed:
        reason = "no answer: the model's reply is not the JSON object asked for"
    else:
        reason = reading.reason or f"model answered {reading.answer!r}"
    debug: dict[str, object] = {"prompt": prompt, "response": result.text, "answer_field": reading.answer}
    if result.failed:
        debug["error"] = result.error
        if failed_here:
            debug[FAILED_KEY] = 1
    certainty = 0.0 if reading.decision is Decision.UNSURE else 1.0
    return AttributeAnswer(item.name, reading.decision, reason, certainty, debug)
