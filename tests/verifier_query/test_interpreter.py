"""The interpreter end to end with the weight-free backend: mode semantics (spec §5.3), category sources,
configuration from a mapping, and odd input that must never raise."""

from __future__ import annotations

import random

import pytest
from aiv_verifier.query import QueryConfig, QueryMode, QuerySpec, build_query_interpreter

HAT = [
    "a light blue straw sun hat featuring a brown brim, a teal band around it, purple polka dots and no logo on "
    "the front",
    "a light blue sun hat with a brown brim",
    "a sky blue cap",
]
RULES = build_query_interpreter({})


def test_attribute_mode_with_rules() -> None:
    spec = RULES.interpret(HAT, QueryMode.ATTRIBUTE)
    assert isinstance(spec, QuerySpec)
    assert (spec.category, spec.category_source, spec.attribute_source) == ("hat", "rules", "rules")
    assert spec.attribute_names == ("color", "material", "brim_color", "band_color", "pattern", "logo")
    assert spec.descriptions == tuple(HAT) and spec.mode is QueryMode.ATTRIBUTE and spec.dialogues == ()


def test_direct_mode_makes_one_pseudo_attribute_per_description() -> None:
    spec = RULES.interpret(HAT, "direct")
    assert spec.attribute_source == "descriptions" and spec.category == "hat"
    assert [(a.name, a.type, a.weight, a.evidence_phrase) for a in spec.attributes] == [
        ("desc_1", "other", 2, HAT[0]),
        ("desc_2", "other", 2, HAT[1]),
        ("desc_3", "other", 2, HAT[2]),
    ]


def test_direct_mode_skips_blank_descriptions_but_keeps_numbering() -> None:
    spec = RULES.interpret(["a red mug", "  ", "a cup"], "direct")
    assert [(a.name, a.evidence_phrase) for a in spec.attributes] == [
        ("desc_1", "a red mug"),
        ("desc_3", "a cup"),
    ]


def test_merged_mode_without_a_model_joins_the_descriptions() -> None:
    spec = RULES.interpret(HAT, "merged")
    assert spec.attribute_source == "merged-join"
    assert [(a.name, a.type, a.weight) for a in spec.attributes] == [("merged_desc", "other", 2)]
    assert spec.attributes[0].evidence_phrase == ". ".join(HAT)
    assert (
        RULES.interpret(["a red mug", "", "a cup"], "merged").attributes[0].evidence_phrase
        == "a red mug. a cup"
    )
    assert RULES.interpret(["", " "], "merged").attributes == ()


@pytest.mark.parametrize("mode", ["Attribute", " DIRECT ", "merged", QueryMode.MERGED])
def test_mode_names_are_accepted_case_insensitively(mode: object) -> None:
    assert RULES.interpret(HAT, mode).mode.value == str(getattr(mode, "value", mode)).strip().lower()


@pytest.mark.parametrize("mode", ["attributes", "", "nav", None, 3, QueryConfig])
def test_invalid_modes_raise_value_error_naming_the_allowed_values(mode: object) -> None:
    with pytest.raises(ValueError, match=r"\['attribute', 'direct', 'merged'\]"):
        RULES.interpret(HAT, mode)  # type: ignore[arg-type]


def test_category_hint_wins_when_it_names_a_class() -> None:
    assert RULES.interpret(HAT, "attribute", category_hint="visor").category == "visor"
    spec = RULES.interpret(HAT, "attribute", category_hint="sombrero")  # not a benchmark class: ignored
    assert (spec.category, spec.category_source) == ("hat", "rules")


def test_category_fallback_is_configurable() -> None:
    spec = RULES.interpret(["a shiny thing"], "attribute")
    assert (spec.category, spec.category_source, spec.attributes) == ("object", "fallback", ())
    assert (
        build_query_interpreter({"category_fallback": "bag"}).interpret(["xyz"], "direct").category == "bag"
    )


ODD_INPUTS = [
    ["", "", ""],
    [],
    ["🎧🎒👜", "a 🟥 red 🟥 mug", "\u200b\ufeff"],
    ["a red mug\x00\x07 with a \x1b[31mblue\x1b[0m handle", "\r\n\t", "ÄÖÜ straße 中文 кружка"],
    ["a red mug", "", "a cup"],
    ['"unterminated quote and “curly', "'''", "w/ w/o w/"],
    ["a\ud800b lone surrogate", "red" * 50, "-" * 300],
    ["no no no no", "with with with", "and and, and"],
]


@pytest.mark.parametrize("descriptions", ODD_INPUTS)
@pytest.mark.parametrize("mode", ["attribute", "direct", "merged"])
def test_odd_text_never_raises(descriptions: list[str], mode: str) -> None:
    spec = RULES.interpret(descriptions, mode)
    assert spec.descriptions == tuple(descriptions)
    for attribute in spec.attributes:
        if mode == "attribute":
            assert any(attribute.evidence_phrase in text for text in descriptions)


def test_non_string_entries_and_a_lone_string_are_tolerated() -> None:
    spec = RULES.interpret(["a red mug", None, 42], "direct")  # type: ignore[list-item]
    assert spec.descriptions == ("a red mug", "", "42")
    assert RULES.interpret("a red mug", "attribute").descriptions == ("a red mug",)  # type: ignore[arg-type]
    assert RULES.interpret(None, "attribute").attributes == ()  # type: ignore[arg-type]


def test_a_ten_thousand_character_description_returns() -> None:
    long_text = (HAT[0] + ", ") * (10_000 // (len(HAT[0]) + 2))
    long_text += "x" * (10_000 - len(long_text))
    assert len(long_text) == 10_000
    for mode in ("attribute", "direct", "merged"):
        spec = RULES.interpret([long_text, "a red mug", ""], mode)
        assert spec.attributes
    spec = RULES.interpret([long_text], "attribute")
    assert spec.category == "hat"
    assert all(attribute.evidence_phrase in long_text for attribute in spec.attributes)
    # pathological shapes of the same size
    for text in ("red, " * 2000, "light " * 1666, '"' * 10_000, "no " * 3333, "a" * 10_000, "two " * 2500):
        RULES.interpret([text], "attribute")


FUZZ_WORDS = [
    "a",
    "the",
    "red",
    "light",
    "blue",
    "dark",
    "with",
    "and",
    "no",
    "logo",
    "pattern",
    "stripes",
    "dots",
    "on",
    "of",
    "in",
    "is",
    "it's",
    "there",
    "word",
    '"X"',
    "two",
    "keys",
    "pair",
    "of",
    "hat",
    "mug",
    "strap",
    "brim",
    ",",
    ".",
    "printed",
    "written",
    "cat-shaped",
    "plain",
    "without",
    "or",
    "that",
    "has",
]


def test_random_text_fuzz() -> None:
    rng = random.Random(7)
    alphabet = [*"abcdefghijklmnopqrstuvwxyz ABC,.;:!?\"'“”‘’-/&\n\t()", "🎧", "é", "中", "\x00"]
    words = FUZZ_WORDS
    for _ in range(300):
        chars = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(3)]
        tokens = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 20))) for _ in range(3)]
        for descriptions in (chars, tokens):
            spec = RULES.interpret(descriptions, "attribute")
            names = spec.attribute_names
            assert len(names) == len(set(names))
            assert all(any(a.evidence_phrase in d for d in descriptions) for a in spec.attributes)


# --- configuration ----------------------------------------------------------------------------------------------


def test_config_from_ros_like_parameters() -> None:
    config = QueryConfig.from_mapping(
        {
            "backend": "rules",
            "cache_dir": "",
            "description_db": ["a.json", " ", "b.json"],
            "write_back": "true",
            "category_match": "case_insensitive",
            "max_attrs": "6",
            "llm_fallback_to_rules": False,
        }
    )
    assert (
        config.description_db == ("a.json", "b.json") and config.write_back is True and config.max_attrs == 6
    )
    assert QueryConfig.from_mapping({"description_db": "x.json"}).description_db == ("x.json",)
    assert QueryConfig.from_mapping({"description_db": ""}).description_db == ()
    assert QueryConfig.from_mapping(config.as_mapping()) == config


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"backend": "gpt"}, "backend"),
        ({"bakend": "rules"}, "unknown query config key"),
        ({"category_match": "fuzzy"}, "category_match"),
        ({"max_attrs": 0}, "max_attrs"),
        ({"max_attrs": "eight"}, "max_attrs"),
        ({"write_back": "maybe"}, "write_back"),
        ({"cache_dir": 5}, "cache_dir"),
        ({"description_db": [1, 2]}, "description_db"),
    ],
)
def test_bad_config_values_raise(values: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_query_interpreter(values)


@pytest.mark.parametrize(
    ("values", "fallback"),
    [
        ({}, "object"),
        ({"backend": "llm"}, "bag"),
        ({"backend": "llm", "category_match": "case_insensitive"}, "object"),
        ({"backend": "llm", "category_fallback": "toy"}, "toy"),
    ],
)
def test_effective_fallback_follows_the_reference(values: dict, fallback: str) -> None:
    assert QueryConfig.from_mapping(values).effective_fallback == fallback
