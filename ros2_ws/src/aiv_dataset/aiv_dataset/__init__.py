"""ROS-free loading and validation of the PInVerify dataset format (spec §2).

Start from :class:`PInVerifyDataset` (a dataset root); it yields typed :class:`Episode` objects (validated
meta.json + lazy images), reads index files into :class:`PairRecord` lists, and loads descriptions, caches
and distractor maps. All validation failures are :class:`DatasetError` naming file, line, field and what
was expected; bulk operations collect them in a :class:`ProblemReport` and skip the bad item.
"""

from .caches import (
    AttrCacheEntry,
    CachedAttribute,
    CategoryCacheEntry,
    MergeCacheEntry,
    load_attr_cache,
    load_category_cache,
    load_merge_cache,
)
from .constants import ACTIVE_RAW_SECTORS, PAIR_TYPES, VIEW_TYPES
from .descriptions import DescriptionDB, ObjectDescriptions, load_descriptions, parse_descriptions
from .distractors import (
    Distractor,
    DistractorEntry,
    DistractorMap,
    load_distractor_map,
    save_distractor_map,
)
from .episode_checks import check_episode, episode_problems
from .errors import DatasetError, Problem, ProblemReport
from .images import ImageRef, load_mask, load_rgb, probe_image
from .index_records import (
    EpisodeEntry,
    PairIndexScan,
    PairRecord,
    parse_episode_entry,
    parse_pair_record,
    read_episode_index,
    read_pair_index,
    read_pair_index_lines,
    scan_pair_index,
    write_jsonl,
)
from .layout import Episode, PInVerifyDataset
from .meta import CameraIntrinsics, EpisodeMeta, Viewpoint, load_meta, parse_meta, sector_summary
from .paths import DatasetRoot
from .stats import EpisodeStats, episode_stats, format_tables, summarize
from .validate import IMAGE_CHECKS, ValidationResult, validate_dataset
from .vocabulary import CATEGORIES

__all__ = [
    "ACTIVE_RAW_SECTORS",
    "CATEGORIES",
    "IMAGE_CHECKS",
    "PAIR_TYPES",
    "VIEW_TYPES",
    "AttrCacheEntry",
    "CachedAttribute",
    "CameraIntrinsics",
    "CategoryCacheEntry",
    "DatasetError",
    "DatasetRoot",
    "DescriptionDB",
    "Distractor",
    "DistractorEntry",
    "DistractorMap",
    "Episode",
    "EpisodeEntry",
    "EpisodeMeta",
    "EpisodeStats",
    "ImageRef",
    "MergeCacheEntry",
    "ObjectDescriptions",
    "PInVerifyDataset",
    "PairIndexScan",
    "PairRecord",
    "Problem",
    "ProblemReport",
    "ValidationResult",
    "Viewpoint",
    "check_episode",
    "episode_problems",
    "episode_stats",
    "format_tables",
    "load_attr_cache",
    "load_category_cache",
    "load_descriptions",
    "load_distractor_map",
    "load_mask",
    "load_merge_cache",
    "load_meta",
    "load_rgb",
    "parse_descriptions",
    "parse_episode_entry",
    "parse_meta",
    "parse_pair_record",
    "probe_image",
    "read_episode_index",
    "read_pair_index",
    "read_pair_index_lines",
    "save_distractor_map",
    "scan_pair_index",
    "sector_summary",
    "summarize",
    "validate_dataset",
    "write_jsonl",
]
