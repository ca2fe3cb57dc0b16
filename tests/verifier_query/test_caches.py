"""Benchmark-format caches: id resolution through the description database, reading before computing,
write-back round trips, what is (not) written, and failures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from aiv_dataset.caches import load_attr_cache, load_category_cache, load_merge_cache
from aiv_dataset.errors import DatasetError
from aiv_verifier.query import QueryCaches, build_query_interpreter, derived_key

from .test_llm import ATTRS_JSON, FakeLanguageModel


class ForbiddenModel:
    """A model that must not be asked (everything should come from the caches)."""

    def generate(self, prompt, images):  # pragma: no cover - reaching this is the failure
        raise AssertionError(f"unexpected model call: {prompt[:60]!r}")


@pytest.fixture()
def dataset(tmp_path: Path, synthetic_root: Path) -> Path:
    """A fresh dataset root holding the synthetic description databases and no caches yet."""
    root = tmp_path / "dataset"
    root.mkdir()
    for name in ("object_descriptions_with_category.json", "object_descriptions.json"):
        shutil.copy(synthetic_root / name, root / name)
    return root


def first_entry(root: Path) -> tuple[str, list[str], str]:
    db = json.loads((root / "object_descriptions_with_category.json").read_text(encoding="utf-8"))
    object_id = sorted(db)[0]
    return object_id, db[object_id]["descriptions"], db[object_id]["object_category"]


def test_ids_resolve_by_exact_description_tuple(dataset: Path) -> None:
    object_id, descriptions, _ = first_entry(dataset)
    caches = QueryCaches(dataset)
    assert caches.description_db_paths == (dataset / "object_descriptions_with_category.json",)
    assert caches.resolve(descriptions) == (object_id, True)
    # not the same tuple: changed text, order or count
    for variant in ([descriptions[0] + " "], descriptions[::-1], descriptions[:2]):
        key, resolved = caches.resolve(variant if len(variant) > 1 else [*variant, *descriptions[1:]])
        assert not resolved and key.startswith("desc-sha256:")


def test_derived_key_is_stable_and_order_sensitive() -> None:
    key = derived_key(["a", "b", "c"])
    assert key == derived_key(("a", "b", "c")) and key != derived_key(["b", "a", "c"])
    assert key.startswith("desc-sha256:") and len(key) == len("desc-sha256:") + 32
    # pinned so that entries written by one version are found by the next
    assert key == "desc-sha256:fa1844c2988ad15ab7b49e0ece096845"


def test_explicit_description_db_and_plain_format(tmp_path: Path, dataset: Path) -> None:
    object_id, descriptions, _ = first_entry(dataset)
    caches = QueryCaches(tmp_path / "no_caches_here", [dataset / "object_descriptions.json"])
    assert caches.resolve(descriptions) == (object_id, True)
    assert caches.category == {} and caches.attributes == {} and caches.merged == {}


def write_benchmark_caches(root: Path, object_id: str) -> None:
    (root / "category_cache.json").write_text(
        json.dumps({object_id: {"pred_coarse": "visor", "raw": "visor"}}), encoding="utf-8"
    )
    (root / "attr_cache.json").write_text(
        json.dumps(
            {
                object_id: {
                    "attributes": [
                        {"name": "color", "type": "color", "weight": 3, "evidence_phrase": "light blue"},
                        {"name": "odd", "type": "texture", "weight": 2.6, "evidence_phrase": "fuzzy"},
                        {"name": "bare", "evidence_phrase": "round"},
                    ],
                    "target_class": "visor",
                    "raw": "{...}",
                    "max_attrs": 8,
                }
            }
        ),
        encoding="utf-8",
    )
    (root / "merge_cache.json").write_text(
        json.dumps({object_id: {"merged_description": "a cached merged sentence", "raw": "x"}}),
        encoding="utf-8",
    )


@pytest.mark.parametrize("backend", ["rules", "llm"])
def test_caches_are_read_before_anything_is_computed(dataset: Path, backend: str) -> None:
    object_id, descriptions, _ = first_entry(dataset)
    write_benchmark_caches(dataset, object_id)
    runner = build_query_interpreter({"backend": backend, "cache_dir": str(dataset)}, ForbiddenModel())
    spec = runner.interpret(descriptions, "attribute")
    assert (spec.category, spec.category_source, spec.attribute_source) == ("visor", "cache", "cache")
    assert [(a.name, a.type, a.weight, a.evidence_phrase) for a in spec.attributes] == [
        ("color", "color", 3, "light blue"),
        ("odd", "other", 3, "fuzzy"),
        ("bare", "other", 2, "round"),
    ]
    merged = runner.interpret(descriptions, "merged")
    assert merged.attribute_source == "merged-cache"
    assert merged.attributes[0].evidence_phrase == "a cached merged sentence"
    assert spec.dialogues == () and merged.dialogues == ()


def test_a_valid_hint_still_wins_over_the_cache(dataset: Path) -> None:
    object_id, descriptions, _ = first_entry(dataset)
    write_benchmark_caches(dataset, object_id)
    spec = build_query_interpreter({"cache_dir": str(dataset)}).interpret(descriptions, "direct", "Mug")
    assert (spec.category, spec.category_source) == ("mug", "hint")


def test_llm_results_round_trip_through_benchmark_files(dataset: Path) -> None:
    object_id, descriptions, _ = first_entry(dataset)
    model = FakeLanguageModel(
        category="Teddy Bear", extract=f"```json\n{ATTRS_JSON}\n```", merge="One sentence."
    )
    config = {
        "backend": "llm",
        "cache_dir": str(dataset),
        "write_back": True,
        "category_match": "case_insensitive",
    }
    first = build_query_interpreter(config, model)
    spec = first.interpret(descriptions, "attribute")
    merged = first.interpret(descriptions, "merged")
    assert (spec.category_source, spec.attribute_source, merged.attribute_source) == (
        "llm",
        "llm",
        "merged-llm",
    )
    assert first.caches is not None and first.caches.problems == []

    # benchmark format, readable by the dataset loaders
    raw_category = json.loads((dataset / "category_cache.json").read_text(encoding="utf-8"))
    assert raw_category == {object_id: {"pred_coarse": "teddy bear", "raw": "Teddy Bear"}}
    raw_attrs = json.loads((dataset / "attr_cache.json").read_text(encoding="utf-8"))
    assert set(raw_attrs[object_id]) == {"attributes", "target_class", "raw", "max_attrs"}
    assert raw_attrs[object_id]["max_attrs"] == 8 and raw_attrs[object_id]["target_class"] == "teddy bear"
    assert raw_attrs[object_id]["raw"].startswith("```json")
    assert raw_attrs[object_id]["attributes"][1] == {
        "name": "scarf_color",
        "type": "color",
        "weight": 3,
        "evidence_phrase": "transparent white",
    }
    assert load_category_cache(dataset / "category_cache.json")[object_id].pred_coarse == "teddy bear"
    assert len(load_attr_cache(dataset / "attr_cache.json")[object_id].attributes) == 3
    assert load_merge_cache(dataset / "merge_cache.json")[object_id].merged_description == "One sentence."
    assert not [p for p in dataset.iterdir() if p.name.endswith(".tmp")]

    # a new interpreter reads everything back without asking the model
    second = build_query_interpreter(config, ForbiddenModel())
    again = second.interpret(descriptions, "attribute")
    assert (again.category, again.category_source, again.attribute_source) == ("teddy bear", "cache", "cache")
    assert again.attributes == spec.attributes
    assert second.interpret(descriptions, "merged").attributes == merged.attributes


def test_unresolvable_queries_are_cached_under_the_derived_key(dataset: Path) -> None:
    descriptions = ["a hand-written query", "not in any database", ""]
    model = FakeLanguageModel(category="mug", extract=ATTRS_JSON)
    build_query_interpreter(
        {"backend": "llm", "cache_dir": str(dataset), "write_back": True}, model
    ).interpret(descriptions, "attribute")
    assert list(json.loads((dataset / "category_cache.json").read_text(encoding="utf-8"))) == [
        derived_key(descriptions)
    ]


def test_nothing_is_written_without_write_back_for_rules_or_for_failed_calls(dataset: Path) -> None:
    _, descriptions, _ = first_entry(dataset)
    build_query_interpreter({"cache_dir": str(dataset), "write_back": True}).interpret(
        descriptions, "attribute"
    )
    build_query_interpreter(
        {"backend": "llm", "cache_dir": str(dataset)}, FakeLanguageModel(category="mug")
    ).interpret(descriptions, "attribute")
    failing = FakeLanguageModel(category=RuntimeError("down"), extract="", merge="  ")
    runner = build_query_interpreter(
        {"backend": "llm", "cache_dir": str(dataset), "write_back": True}, failing
    )
    runner.interpret(descriptions, "attribute")
    runner.interpret(descriptions, "merged")
    assert not any(
        (dataset / name).exists() for name in ("category_cache.json", "attr_cache.json", "merge_cache.json")
    )


def test_unmatched_category_answers_are_cached_with_the_fallback_like_the_builder(dataset: Path) -> None:
    object_id, descriptions, _ = first_entry(dataset)
    model = FakeLanguageModel(category="giraffe", extract=ATTRS_JSON)
    config = {
        "backend": "llm",
        "cache_dir": str(dataset),
        "write_back": True,
        "category_match": "case_insensitive",
    }
    build_query_interpreter(config, model).interpret(descriptions, "attribute")
    cached = json.loads((dataset / "category_cache.json").read_text(encoding="utf-8"))
    assert cached == {object_id: {"pred_coarse": "object", "raw": "giraffe"}}


def test_a_malformed_cache_fails_at_start_up(dataset: Path) -> None:
    (dataset / "attr_cache.json").write_text('{"x": {"attributes": "no"}}', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"attr_cache\.json"):
        build_query_interpreter({"cache_dir": str(dataset)})
    (dataset / "attr_cache.json").unlink()
    (dataset / "merge_cache.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(DatasetError):
        build_query_interpreter({"cache_dir": str(dataset)})


def test_a_missing_description_db_fails_at_start_up(dataset: Path) -> None:
    with pytest.raises(DatasetError, match="missing"):
        build_query_interpreter({"cache_dir": str(dataset), "description_db": str(dataset / "absent.json")})


def test_a_failed_write_is_recorded_not_raised(dataset: Path) -> None:
    _, descriptions, _ = first_entry(dataset)
    model = FakeLanguageModel(category="mug", extract=ATTRS_JSON)
    runner = build_query_interpreter({"backend": "llm", "cache_dir": str(dataset), "write_back": True}, model)
    (dataset / "category_cache.json").write_text("corrupted meanwhile", encoding="utf-8")
    spec = runner.interpret(descriptions, "attribute")
    assert spec.category == "mug"
    assert runner.caches is not None and len(runner.caches.problems) == 1
    assert "category_cache.json" in runner.caches.problems[0]
    assert (dataset / "category_cache.json").read_text(encoding="utf-8") == "corrupted meanwhile"
    # the attribute cache was still written
    assert json.loads((dataset / "attr_cache.json").read_text(encoding="utf-8"))
