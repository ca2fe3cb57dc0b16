"""Configuration of query understanding, in a form the verifier node can fill from ROS parameters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from aiv_common.setting_fields import setting

from .llm import CATEGORY_MATCH_POLICIES, DEFAULT_MAX_ATTRS, POLICY_FALLBACKS

BACKENDS: tuple[str, ...] = ("rules", "llm")
RULES_DEFAULT_FALLBACK = "object"


@dataclass(frozen=True)
class QueryConfig:
    """How queries are interpreted (the verifier's ``query.*`` parameters)."""

    backend: str = setting(
        "rules",
        "rules (default): keyword category classifier + rule-based decomposer, no model. llm: the language model "
        "answers the category, extraction and merge prompts (spec §5.2-5.3)",
        choices=BACKENDS,
    )
    cache_dir: str = setting(
        "",
        "Directory holding category_cache.json / attr_cache.json / merge_cache.json (usually the dataset root); "
        '"" = no caches. Caches are read before anything is computed, for either backend',
    )
    description_db: tuple[str, ...] = setting(
        (),
        "description database(s) whose object ids key the caches (empty = object_descriptions_with_category.json "
        "or object_descriptions.json in cache_dir); a list, so no ROS parameter",
    )
    write_back: bool = setting(
        False,
        "Store new LLM results in the cache files (atomic replace). Rule-based results are never written",
    )
    category_match: str = setting(
        "exact",
        "How an LLM category answer is matched: exact (reference online agent: case-sensitive) or "
        "case_insensitive (reference cache builder)",
        choices=CATEGORY_MATCH_POLICIES,
    )
    category_fallback: str = setting(
        "",
        'Category when nothing usable came back. "" = the reference value for the path: bag for exact matching, '
        "object for case_insensitive matching and for the keyword classifier",
    )
    llm_fallback_to_rules: bool = setting(
        False,
        "With the LLM backend, use the keyword classifier when the category answer is unusable and the rule-based "
        "decomposer when extraction yields no attribute (off: the reference's fallback class / no attributes)",
    )
    category_prompt: str = setting(
        "", 'Category prompt template file; "" = the package\'s prompts/category.txt'
    )
    extract_prompt: str = setting(
        "", 'Extraction prompt template file; "" = the package\'s prompts/extract.txt'
    )
    merge_prompt: str = setting("", 'Merge prompt template file; "" = the package\'s prompts/merge.txt')
    max_attrs: int = setting(
        DEFAULT_MAX_ATTRS,
        "{max_attrs} in the extraction prompt and in new attr-cache entries (reference: 8); only requested, never "
        "enforced (the reference never truncates)",
        minimum=1,
    )
    verbatim_evidence_only: bool = setting(
        False,
        "Drop LLM attributes whose evidence phrase does not occur in any description (case-insensitive); off "
        "by default (the reference keeps them)",
    )

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"query backend {self.backend!r} is not one of {list(BACKENDS)}")
        if self.category_match not in CATEGORY_MATCH_POLICIES:
            raise ValueError(
                f"category_match {self.category_match!r} is not one of {list(CATEGORY_MATCH_POLICIES)}"
            )
        if isinstance(self.max_attrs, bool) or not isinstance(self.max_attrs, int) or self.max_attrs < 1:
            raise ValueError(f"max_attrs must be a positive integer, got {self.max_attrs!r}")
        if isinstance(self.description_db, str):
            object.__setattr__(self, "description_db", (self.description_db,) if self.description_db else ())
        else:
            object.__setattr__(self, "description_db", tuple(str(p) for p in self.description_db if str(p)))

    @property
    def effective_fallback(self) -> str:
        """The category used when nothing usable came back (see ``category_fallback``)."""
        if self.category_fallback:
            return self.category_fallback
        if self.backend == "llm":
            return POLICY_FALLBACKS[self.category_match]
        return RULES_DEFAULT_FALLBACK

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> QueryConfig:
        """Build from a plain mapping (e.g. ROS parameters); unknown keys and bad values raise ValueError."""
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown query config key(s) {unknown}; known: {sorted(known)}")
        kwargs: dict[str, Any] = {}
        for name, value in values.items():
            default = known[name].default
            if isinstance(default, bool):
                kwargs[name] = _as_bool(name, value)
            elif isinstance(default, int):
                kwargs[name] = _as_int(name, value)
            elif isinstance(default, tuple):
                kwargs[name] = _as_str_tuple(name, value)
            else:
                if value is None:
                    value = ""
                if not isinstance(value, str):
                    raise ValueError(f"query config {name!r} must be a string, got {value!r}")
                kwargs[name] = value.strip()
        return cls(**kwargs)

    def as_mapping(self) -> dict[str, Any]:
        """Plain values (description_db as a list) — e.g. to declare ROS parameters with their defaults."""
        values = asdict(self)
        values["description_db"] = list(self.description_db)
        return values


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {
        "true",
        "1",
        "yes",
        "on",
        "false",
        "0",
        "no",
        "off",
    }:
        return value.strip().lower() in {"true", "1", "yes", "on"}
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError(f"query config {name!r} must be a boolean, got {value!r}")


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"query config {name!r} must be an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise ValueError(f"query config {name!r} must be an integer, got {value!r}")


def _as_str_tuple(name: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value.strip(),) if value.strip() else ()
    if isinstance(value, Sequence) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip())
    raise ValueError(f"query config {name!r} must be a string or a list of strings, got {value!r}")
