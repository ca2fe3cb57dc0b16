"""LLM path: prompts (slots, files read once, custom paths), category matching policies, extraction parsing
exactly per spec §5.3, merge, failures, dialogues. The model is a small in-test double returning canned text."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from aiv_dataset.vocabulary import CATEGORIES
from aiv_verifier.query import QueryConfig, QueryMode, build_query_interpreter
from aiv_verifier.query.llm import (
    PromptSet,
    fill_prompt,
    match_category,
    parse_attribute_response,
    strip_markdown_fence,
)

DESCRIPTIONS = [
    "a light blue teddy bear with a transparent white scarf with red dots",
    "a blue teddy with a white scarf",
    "a plush bear",
]


class FakeLanguageModel:
    """Test double for :class:`aiv_verifier.core.types.LanguageModel`: answers by prompt stage.

    ``answers`` maps a stage ("category", "extract", "merge") to a string, an exception to raise, or any
    other object to return as it is (a misbehaving backend). Every call is recorded.
    """

    def __init__(self, **answers: object) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str, int]] = []

    @staticmethod
    def stage_of(prompt: str) -> str:
        if "Choose exactly one class" in prompt or "STAGE=category" in prompt:
            return "category"
        if "evidence_phrase" in prompt or "STAGE=extract" in prompt:
            return "extract"
        return "merge"

    def generate(self, prompt: str, images: Sequence[object]) -> str:
        stage = self.stage_of(prompt)
        self.calls.append((stage, prompt, len(images)))
        answer = self.answers.get(stage, "")
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[return-value]


def interpreter(model: FakeLanguageModel, **config: object):
    return build_query_interpreter({"backend": "llm", **config}, model)


ATTRS_JSON = json.dumps(
    {
        "attributes": [
            {"name": "color", "type": "color", "weight": 2, "evidence_phrase": "light blue"},
            {"name": "scarf_color", "type": "color", "weight": 3, "evidence_phrase": "transparent white"},
            {"name": "scarf_pattern", "type": "pattern", "weight": 3, "evidence_phrase": "red dots"},
        ]
    }
)


# --- category -------------------------------------------------------------------------------------------------


def test_category_prompt_lists_all_classes_and_descriptions_and_calls_text_only() -> None:
    model = FakeLanguageModel(category="teddy bear", extract=ATTRS_JSON)
    spec = interpreter(model).interpret(DESCRIPTIONS, QueryMode.ATTRIBUTE)
    assert (spec.category, spec.category_source) == ("teddy bear", "llm")
    stage, prompt, images = model.calls[0]
    assert stage == "category" and images == 0
    assert "[" + ", ".join(CATEGORIES) + "]" in prompt
    assert all(text in prompt for text in DESCRIPTIONS)
    assert "{desc1}" not in prompt and "{categories}" not in prompt


@pytest.mark.parametrize(
    ("answer", "policy", "expected", "source"),
    [
        ("teddy bear", "exact", "teddy bear", "llm"),
        ("  teddy bear\n", "exact", "teddy bear", "llm"),
        ("Teddy Bear", "exact", "bag", "fallback"),  # reference online agent: case-sensitive, fallback "bag"
        ("Teddy Bear", "case_insensitive", "teddy bear", "llm"),  # reference cache builder
        ("teddy bear.", "case_insensitive", "object", "fallback"),  # no other clean-up
        ("The answer is teddy bear", "exact", "bag", "fallback"),
        ("", "exact", "bag", "fallback"),
        ("giraffe", "case_insensitive", "object", "fallback"),
    ],
)
def test_category_matching_policies(answer: str, policy: str, expected: str, source: str) -> None:
    model = FakeLanguageModel(category=answer, extract=ATTRS_JSON)
    spec = interpreter(model, category_match=policy).interpret(DESCRIPTIONS, "attribute")
    assert (spec.category, spec.category_source) == (expected, source)


def test_configured_fallback_and_rules_fallback() -> None:
    model = FakeLanguageModel(category="Teddy Bear", extract=ATTRS_JSON)
    assert (
        interpreter(model, category_fallback="object").interpret(DESCRIPTIONS, "attribute").category
        == "object"
    )
    spec = interpreter(model, llm_fallback_to_rules=True).interpret(DESCRIPTIONS, "attribute")
    assert (spec.category, spec.category_source) == ("teddy bear", "rules")


def test_match_category_rejects_unknown_policy() -> None:
    with pytest.raises(ValueError, match="case_insensitive"):
        match_category("mug", "fuzzy")


def test_a_valid_hint_skips_the_model_call() -> None:
    model = FakeLanguageModel(category="mug", extract=ATTRS_JSON)
    spec = interpreter(model).interpret(DESCRIPTIONS, "attribute", category_hint="Teddy Bear")
    assert (spec.category, spec.category_source) == ("teddy bear", "hint")
    assert [call[0] for call in model.calls] == ["extract"]
    assert "teddy bear" in model.calls[0][1]  # the class reaches the extraction prompt


# --- extraction -----------------------------------------------------------------------------------------------


def run_extract(answer: object, **config: object):
    model = FakeLanguageModel(category="teddy bear", extract=answer)
    return interpreter(model, **config).interpret(DESCRIPTIONS, "attribute"), model


def names(spec) -> list[str]:
    return [a.name for a in spec.attributes]


def test_extract_prompt_slots_and_json_example_survive() -> None:
    spec, model = run_extract(ATTRS_JSON)
    prompt = model.calls[1][1]
    assert '"teddy bear"' in prompt and "between 4 and 8 attributes" in prompt
    assert '{"attributes": [{"name": "...", "type": "...", "weight": 2, "evidence_phrase": "..."}]}' in prompt
    assert all(f'"{text}"' in prompt for text in DESCRIPTIONS)
    assert names(spec) == ["color", "scarf_color", "scarf_pattern"] and spec.attribute_source == "llm"


def test_fenced_json_is_parsed() -> None:
    spec, _ = run_extract(f"```json\n{ATTRS_JSON}\n```")
    assert names(spec) == ["color", "scarf_color", "scarf_pattern"]
    spec, _ = run_extract(f"```\n{ATTRS_JSON}```  ")
    assert len(spec.attributes) == 3


@pytest.mark.parametrize(
    "answer",
    [
        f"Here are the attributes:\n{ATTRS_JSON}",  # prose around JSON: json.loads of the whole text fails
        f"{ATTRS_JSON}\nHope this helps!",
        '{"attributes": [{"name": "color", ',  # truncated
        "not json at all",
        "[]",
        '{"attrs": []}',
        '{"attributes": "color"}',
        "",
        "```json\n```",
    ],
)
def test_unusable_answers_give_no_attributes(answer: str) -> None:
    spec, _ = run_extract(answer)
    assert spec.attributes == () and spec.attribute_source == "llm"
    assert [d["stage"] for d in spec.dialogues] == ["category", "extract"]
    assert spec.dialogues[1]["response"] == answer


def test_duplicates_are_renamed_and_nothing_is_truncated() -> None:
    items = [
        {"name": "part_attribute", "type": "part", "weight": 2, "evidence_phrase": f"p{i}"} for i in range(3)
    ]
    items += [{"name": "part_attribute_1", "type": "part", "weight": 2, "evidence_phrase": "taken"}]
    items += [
        {"name": f"extra{i}", "type": "other", "weight": 1, "evidence_phrase": f"e{i}"} for i in range(9)
    ]
    spec, _ = run_extract(json.dumps({"attributes": items}))
    assert names(spec)[:4] == ["part_attribute_2", "part_attribute_3", "part_attribute_4", "part_attribute_1"]
    assert len(spec.attributes) == 13  # 8 were requested; the reference never truncates


def test_unusable_evidence_is_dropped_and_odd_fields_coerced() -> None:
    items = [
        {"name": "a", "type": "color", "weight": 2, "evidence_phrase": "unknown"},
        {"name": "b", "type": "color", "weight": 2, "evidence_phrase": "  N/A "},
        {"name": "c", "type": "color", "weight": 2, "evidence_phrase": "Not Mentioned"},
        {"name": "d", "type": "color", "weight": 2, "evidence_phrase": "none"},
        {"name": "e", "type": "color", "weight": 2, "evidence_phrase": ""},
        {"name": "f", "type": "color", "weight": 2},
        {"name": "g", "type": "color", "weight": 2, "evidence_phrase": None},
        {"name": "", "type": "color", "weight": 2, "evidence_phrase": "blue"},
        {"type": "color", "weight": 2, "evidence_phrase": "blue"},
        "not an object",
        {"name": "keep1", "type": "COLOR", "weight": 7, "evidence_phrase": " light blue "},
        {"name": "keep2", "type": "texture", "weight": "1", "evidence_phrase": "red dots"},
        {"name": "keep3", "weight": True, "evidence_phrase": 3},
    ]
    spec, _ = run_extract(json.dumps({"attributes": items}))
    assert [(a.name, a.type, a.weight, a.evidence_phrase) for a in spec.attributes] == [
        ("keep1", "color", 3, "light blue"),
        ("keep2", "other", 1, "red dots"),
        ("keep3", "other", 2, "3"),
    ]


def test_verbatim_evidence_guard_is_optional() -> None:
    answer = json.dumps(
        {
            "attributes": [
                {"name": "color", "type": "color", "weight": 2, "evidence_phrase": "Light Blue"},
                {"name": "eye_color", "type": "color", "weight": 2, "evidence_phrase": "green eyes"},
            ]
        }
    )
    assert names(run_extract(answer)[0]) == ["color", "eye_color"]
    assert names(run_extract(answer, verbatim_evidence_only=True)[0]) == ["color"]


def test_rules_fallback_when_extraction_gives_nothing() -> None:
    spec, _ = run_extract("sorry", llm_fallback_to_rules=True)
    assert spec.attribute_source == "rules" and "scarf_color" in names(spec)


@pytest.mark.parametrize(
    ("answer", "error"), [(RuntimeError("server down"), "RuntimeError: server down"), (None, "NoneType")]
)
def test_a_failing_model_never_raises(answer: object, error: str) -> None:
    model = FakeLanguageModel(category=answer, extract=answer, merge=answer)
    runner = interpreter(model)
    spec = runner.interpret(DESCRIPTIONS, "attribute")
    assert (spec.category, spec.category_source, spec.attributes) == ("bag", "fallback", ())
    assert all(error in d["error"] and d["response"] == "" for d in spec.dialogues)
    merged = runner.interpret(DESCRIPTIONS, "merged")
    assert merged.attribute_source == "merged-join"
    assert merged.attributes[0].evidence_phrase == ". ".join(DESCRIPTIONS)


def test_parse_helpers_directly() -> None:
    assert strip_markdown_fence("```json\n{}\n```") == "{}"
    assert strip_markdown_fence("  {} ") == "{}"
    assert strip_markdown_fence("```{}```") == "{}"
    assert parse_attribute_response(None) == ()  # type: ignore[arg-type]
    assert parse_attribute_response("[" * 100000) == ()  # deep nesting must not crash
    assert fill_prompt("{desc1} {unknown} {max_attrs}", {"desc1": "x"}) == "x {unknown} {max_attrs}"


# --- merge ----------------------------------------------------------------------------------------------------


def test_merge_uses_the_model_answer() -> None:
    model = FakeLanguageModel(
        category="teddy bear", merge="  A light blue teddy bear with a white scarf with red dots.\n"
    )
    spec = interpreter(model).interpret(DESCRIPTIONS, "merged")
    assert spec.attribute_source == "merged-llm"
    assert [(a.name, a.type, a.weight) for a in spec.attributes] == [("merged_desc", "other", 2)]
    assert spec.attributes[0].evidence_phrase == "A light blue teddy bear with a white scarf with red dots."
    merge_prompt = model.calls[1][1]
    assert all(text in merge_prompt for text in DESCRIPTIONS)
    assert [d["stage"] for d in spec.dialogues] == ["category", "merge"]


def test_empty_merge_answer_falls_back_to_the_join() -> None:
    spec = interpreter(FakeLanguageModel(category="teddy bear", merge="   ")).interpret(
        DESCRIPTIONS, "merged"
    )
    assert spec.attribute_source == "merged-join"
    assert spec.attributes[0].evidence_phrase == ". ".join(DESCRIPTIONS)


def test_direct_mode_makes_no_extraction_call() -> None:
    model = FakeLanguageModel(category="teddy bear")
    spec = interpreter(model).interpret(DESCRIPTIONS, "direct")
    assert [call[0] for call in model.calls] == ["category"]
    assert spec.attribute_source == "descriptions"


# --- prompt files ---------------------------------------------------------------------------------------------


def write_prompts(tmp_path) -> dict[str, str]:
    paths = {}
    for stage in ("category", "extract", "merge"):
        path = tmp_path / f"{stage}.txt"
        path.write_text(
            f"STAGE={stage} 1={{desc1}} 2={{desc2}} 3={{desc3}} all={{descriptions}} "
            'class={class_text} n={max_attrs} cats={categories} json={"a": 1}',
            encoding="utf-8",
        )
        paths[f"{stage}_prompt"] = str(path)
    return paths


def test_custom_prompt_files_are_read_once(tmp_path) -> None:
    paths = write_prompts(tmp_path)
    model = FakeLanguageModel(category="mug", extract=ATTRS_JSON, merge="m")
    runner = interpreter(model, max_attrs=6, **paths)
    for path in paths.values():
        (tmp_path / path).write_text("changed", encoding="utf-8")  # later edits are not picked up
    runner.interpret(["a", "b"], "attribute")
    runner.interpret(["a", "b"], "merged")
    prompts = {stage: prompt for stage, prompt, _ in model.calls}
    assert prompts["category"].startswith("STAGE=category 1=a 2=b 3= all=1) a\n2) b ")
    assert "cats=[backpack, bag," in prompts["category"] and 'json={"a": 1}' in prompts["category"]
    assert "class=mug n=6" in prompts["extract"]
    assert prompts["merge"].startswith("STAGE=merge 1=a 2=b 3=")


def test_missing_or_empty_prompt_file_fails_at_construction(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="extract prompt template not found"):
        interpreter(FakeLanguageModel(), extract_prompt=str(tmp_path / "nope.txt"))
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        interpreter(FakeLanguageModel(), merge_prompt=str(tmp_path / "empty.txt"))


def test_default_prompts_load_and_carry_the_reference_slots() -> None:
    prompts = PromptSet.load()
    for slot in ("{desc1}", "{desc2}", "{desc3}"):
        assert slot in prompts.category and slot in prompts.extract and slot in prompts.merge
    assert "{categories}" in prompts.category
    assert "{class_text}" in prompts.extract and "{max_attrs}" in prompts.extract


def test_llm_backend_needs_a_model() -> None:
    with pytest.raises(ValueError, match="LanguageModel"):
        build_query_interpreter(QueryConfig(backend="llm"))
