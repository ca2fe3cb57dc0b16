"""Names and numbers fixed by the PInVerify format (spec §1, §2).

Kept in one place so that the loaders, the index builder and the tests agree on them.
"""

from __future__ import annotations

#: The 18 object categories of the benchmark.
CATEGORIES: tuple[str, ...] = (
    "backpack",
    "bag",
    "ball",
    "book",
    "camera",
    "cellphone",
    "eyeglasses",
    "hat",
    "headphones",
    "keys",
    "laptop",
    "mug",
    "shoes",
    "teddy bear",
    "toy",
    "visor",
    "wallet",
    "watch",
)

#: Raw azimuth sectors of the capture pipeline: 12 sectors of 30 degrees, every other one captured.
RAW_SECTOR_COUNT = 12
ACTIVE_RAW_SECTORS: tuple[int, ...] = (0, 2, 4, 6, 8, 10)

#: Distance levels of the two views attempted per active sector.
VIEW_TYPES: tuple[str, ...] = ("far", "near")

#: Verification pair types, in the order the index builder emits them.
PAIR_TYPES: tuple[str, ...] = ("positive", "neg_same", "neg_diff")

#: Directory and file names of the on-disk layout.
CAPTURE_SUBDIR = "pin_capture"
META_FILENAME = "meta.json"
DISTRACTOR_MAP_FILENAME = "object_goal_distractors_map.json"
DESCRIPTIONS_FILENAME = "object_descriptions.json"
DESCRIPTIONS_WITH_CATEGORY_FILENAME = "object_descriptions_with_category.json"
ATTR_CACHE_FILENAME = "attr_cache.json"
CATEGORY_CACHE_FILENAME = "category_cache.json"
MERGE_CACHE_FILENAME = "merge_cache.json"
FULL_INDEX_FILENAME = "pv_index_all.jsonl"
DEFAULT_SUBSET_SIZES: tuple[int, ...] = (50, 100, 500, 1000)
DEFAULT_SEED = 42
