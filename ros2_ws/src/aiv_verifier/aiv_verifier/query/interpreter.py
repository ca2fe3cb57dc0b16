"""The query interpreter: category + checkable items for one request, in the three modes of spec §5.3.

Order of sources (first that gives an answer wins):

- **category**: a valid ``category_hint`` (one of the 18 classes, case-insensitive) → ``category_cache``
  (``pred_coarse``) → the backend (keyword classifier, or the LLM answer matched per ``category_match``) →
  [``llm_fallback_to_rules``: keyword classifier] → the fallback class. The hint always wins (it is the
  caller's knowledge, e.g. a detector's class); when the descriptions name another class and never the
  hinted one (keyword classifier), that is said in ``QuerySpec.notes`` (:func:`hint_contradiction`).
- **attribute mode**: ``attr_cache`` → the backend (rule-based decomposer, or LLM extraction) →
  [``llm_fallback_to_rules``: rule-based decomposer when the LLM gave none]. Zero attributes is a valid
  result (nothing checkable was stated, or the model answer was unusable).
- **direct mode**: ``desc_1..desc_n`` = the descriptions, type ``other``, weight 2, evidence = the description
  text; ``desc_k`` is the k-th description, blank descriptions are skipped (their number stays unused).
- **merged mode**: one ``merged_desc`` (type ``other``, weight 2) = ``merge_cache`` → LLM merge (LLM
  backend) → the non-blank descriptions joined with ". ". No attribute if even that is empty.

The category is computed in every mode (it is the detector's text query). Every model exchange is kept in
``QuerySpec.dialogues`` as ``{"stage", "prompt", "response"[, "error"]}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from aiv_dataset.vocabulary import CATEGORIES

from ..core.types import Attribute, LanguageModel
from .caches import QueryCaches, cache_attribute_to_core
from .categories import KeywordCategoryClassifier, normalise_category
from .config import QueryConfig
from .llm import (
    ModelExchange,
    PromptSet,
    ask,
    category_prompt,
    extract_prompt,
    join_descriptions,
    match_category,
    merge_prompt,
    parse_attribute_response,
    parse_merge_response,
)
from .rules import RuleBasedDecomposer
from .types import QueryMode, QuerySpec

DIRECT_WEIGHT = 2
MERGED_NAME = "merged_desc"


def coerce_mode(mode: Any) -> QueryMode:
    """A :class:`QueryMode` from an enum value or its name; anything else raises ValueError."""
    if isinstance(mode, QueryMode):
        return mode
    if isinstance(mode, str):
        return QueryMode.parse(mode)
    raise ValueError(f"unknown query mode {mode!r}; expected one of {[m.value for m in QueryMode]}")


def coerce_descriptions(descriptions: Any) -> tuple[str, ...]:
    """Descriptions as a tuple of strings: a lone string is one description, None entries become ""."""
    if descriptions is None:
        return ()
    if isinstance(descriptions, str):
        return (descriptions,)
    if not isinstance(descriptions, Iterable):
        return (str(descriptions),)
    return tuple(
        item if isinstance(item, str) else ("" if item is None else str(item)) for item in descriptions
    )


def direct_attributes(descriptions: Sequence[str]) -> tuple[Attribute, ...]:
    return tuple(
        Attribute(f"desc_{index}", "other", DIRECT_WEIGHT, text)
        for index, text in enumerate(descriptions, start=1)
        if text.strip()
    )


def hint_contradiction(hint: str, descriptions: Sequence[str], classifier: KeywordCategoryClassifier) -> str:
    """One line when the descriptions name another class than ``hint`` and no word of theirs names ``hint``
    (weight-free keyword classifier), else "". Only a clear contradiction is reported: a description that also
    mentions the hinted class ("a bag with a laptop pocket" for laptop) is not one."""
    prediction = classifier.predict(descriptions)
    if not prediction.matched or prediction.category == hint or prediction.scores.get(hint, 0.0) > 0.0:
        return ""
    return (
        f"category_hint {hint!r} contradicts the descriptions, which name {prediction.category!r} and never "
        f"{hint!r}; the hint wins: the object is checked as a {hint}"
    )


class StandardQueryInterpreter:
    """Implements :class:`~aiv_verifier.query.types.QueryInterpreter` for both backends (see module doc)."""

    def __init__(
        self,
        config: QueryConfig | None = None,
        model: LanguageModel | None = None,
        *,
        caches: QueryCaches | None = None,
    ) -> None:
        self.config = config or QueryConfig()
        if self.config.backend == "llm" and model is None:
            raise ValueError("query backend 'llm' needs a LanguageModel instance")
        self.model = model
        self.fallback = self.config.effective_fallback
        self.classifier = KeywordCategoryClassifier(fallback=self.fallback)
        self.decomposer = RuleBasedDecomposer()
        self.prompts = (
            PromptSet.load(self.config.category_prompt, self.config.extract_prompt, self.config.merge_prompt)
            if self.config.backend == "llm"
            else None
        )
        if caches is None and self.config.cache_dir:
            caches = QueryCaches(
                self.config.cache_dir, self.config.description_db, write_back=self.config.write_back
            )
        self.caches = caches

    # -- the interface -----------------------------------------------------------------------------------------

    def interpret(
        self, descriptions: Sequence[str], mode: QueryMode | str, category_hint: str = ""
    ) -> QuerySpec:
        query_mode = coerce_mode(mode)
        texts = coerce_descriptions(descriptions)
        key = self.caches.resolve(texts)[0] if self.caches is not None else ""
        dialogues: list[ModelExchange] = []

        category, category_source = self._category(texts, category_hint, key, dialogues)
        note = hint_contradiction(category, texts, self.classifier) if category_source == "hint" else ""
        if query_mode is QueryMode.ATTRIBUTE:
            attributes, source = self._attributes(texts, category, key, dialogues)
        elif query_mode is QueryMode.DIRECT:
            attributes, source = direct_attributes(texts), "descriptions"
        else:
            attributes, source = self._merged(texts, key, dialogues)
        return QuerySpec(
            descriptions=texts,
            mode=query_mode,
            category=category,
            category_source=category_source,
            attributes=tuple(attributes),
            attribute_source=source,
            dialogues=tuple(exchange.as_dialogue() for exchange in dialogues),
            notes=(note,) if note else (),
        )

    # -- category ----------------------------------------------------------------------------------------------

    def _category(
        self, texts: Sequence[str], hint: str, key: str, dialogues: list[ModelExchange]
    ) -> tuple[str, str]:
        hinted = normalise_category(hint) if hint else None
        if hinted is not None:
            return hinted, "hint"
        if self.caches is not None:
            cached = self.caches.get_category(key)
            if cached is not None:
                return cached.pred_coarse, "cache"
        if self.config.backend == "rules":
            prediction = self.classifier.predict(texts)
            return prediction.category, ("rules" if prediction.matched else "fallback")

        assert self.model is not None and self.prompts is not None
        exchange = ask(self.model, "category", category_prompt(self.prompts.category, texts, CATEGORIES))
        dialogues.append(exchange)
        matched = match_category(exchange.response, self.config.category_match)
        if matched is not None:
            if self.caches is not None and exchange.response.strip():
                self.caches.put_category(key, matched, exchange.response)
            return matched, "llm"
        if self.config.llm_fallback_to_rules:
            prediction = self.classifier.predict(texts)
            if prediction.matched:
                return prediction.category, "rules"
        if self.caches is not None and exchange.response.strip():
            self.caches.put_category(key, self.fallback, exchange.response)
        return self.fallback, "fallback"

    # -- attribute mode ----------------------------------------------------------------------------------------

    def _attributes(
        self, texts: Sequence[str], category: str, key: str, dialogues: list[ModelExchange]
    ) -> tuple[tuple[Attribute, ...], str]:
        if self.caches is not None:
            cached = self.caches.get_attributes(key)
            if cached is not None:
                return tuple(cache_attribute_to_core(a) for a in cached.attributes), "cache"
        if self.config.backend == "rules":
            return self.decomposer.decompose(texts), "rules"

        assert self.model is not None and self.prompts is not None
        prompt = extract_prompt(self.prompts.extract, texts, category, self.config.max_attrs)
        exchange = ask(self.model, "extract", prompt)
        dialogues.append(exchange)
        attributes = parse_attribute_response(
            exchange.response, descriptions=texts if self.config.verbatim_evidence_only else None
        )
        if self.caches is not None and exchange.response.strip():
            self.caches.put_attributes(key, attributes, category, exchange.response, self.config.max_attrs)
        if not attributes and self.config.llm_fallback_to_rules:
            return self.decomposer.decompose(texts), "rules"
        return attributes, "llm"

    # -- merged mode -------------------------------------------------------------------------------------------

    def _merged(
        self, texts: Sequence[str], key: str, dialogues: list[ModelExchange]
    ) -> tuple[tuple[Attribute, ...], str]:
        def single(text: str) -> tuple[Attribute, ...]:
            return (Attribute(MERGED_NAME, "other", DIRECT_WEIGHT, text),) if text.strip() else ()

        if self.caches is not None:
            cached = self.caches.get_merged(key)
            if cached is not None:
                return single(cached.merged_description), "merged-cache"
        if self.config.backend == "llm":
            assert self.model is not None and self.prompts is not None
            exchange = ask(self.model, "merge", merge_prompt(self.prompts.merge, texts))
            dialogues.append(exchange)
            merged = parse_merge_response(exchange.response)
            if merged:
                if self.caches is not None:
                    self.caches.put_merged(key, merged, exchange.response)
                return single(merged), "merged-llm"
        return single(join_descriptions(texts)), "merged-join"
