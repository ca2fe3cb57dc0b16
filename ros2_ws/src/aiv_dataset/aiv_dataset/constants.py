"""Names and numbers of the PInVerify on-disk format (spec §2): sector layout, view and pair types, file names.

Kept in one place so that the loaders, the index builder, the capture generator and the tests agree on them.
What the benchmark *means* (directions, categories, thresholds, the camera) is in :mod:`.vocabulary`.
"""

from __future__ import annotations

#: Raw azimuth sectors of the capture pipeline: 12 sectors of 30 degrees; ``sector_skip`` = 1 means every
#: other one is captured, which leaves the 6 active sectors (60 degrees apart) that the episode uses.
RAW_SECTOR_COUNT = 12
RAW_SECTOR_SKIP = 1
ACTIVE_RAW_SECTORS: tuple[int, ...] = tuple(range(0, RAW_SECTOR_COUNT, RAW_SECTOR_SKIP + 1))

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

#: Largest number a dataset file may hold in any numeric field: the float32 maximum. Boxes travel in float32
#: message fields (``aiv_interfaces/Detection2D``), and a value beyond this range would arrive as infinity
#: over ROS while the in-process evaluation kept it, so the two modes could decide differently.
FLOAT32_MAX = 3.4028234663852886e38

#: Largest image side (pixels) a dataset may declare. Above any camera in use (the benchmark is 360 x 640, 8K
#: video is 7680 x 4320) and small enough that a square image stays under Pillow's decompression-bomb warning
#: and its width x height x 3 bytes fit the uint32 fields of ``sensor_msgs/Image``.
MAX_IMAGE_SIDE = 8192

#: Largest pixel count of one image (mask areas, visibility thresholds); fits a uint32 message field.
MAX_IMAGE_PIXELS = MAX_IMAGE_SIDE * MAX_IMAGE_SIDE
