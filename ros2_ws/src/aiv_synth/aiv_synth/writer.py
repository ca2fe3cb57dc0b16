"""Writing captures in exactly the PInVerify layout (spec §2.1-2.2, §2.5; paper App. I).

``pin_capture/{split}/{scene}/{episode}/`` gets ``meta.json`` (v2 ``viewpoints`` with every field the spec
lists, plus a few extra keys that no reader depends on), ``rgb/rgb_s{S}_{far|near}.png``,
``mask/mask_s{S}_{far|near}.png`` (target = 255) and ``overview.png``. All writers are deterministic —
fixed key order, rounded floats, fixed PNG settings, no timestamps — so the same seed reproduces every
byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from aiv_dataset.constants import ACTIVE_RAW_SECTORS, META_FILENAME, RAW_SECTOR_COUNT, RAW_SECTOR_SKIP
from PIL import Image

from .camera import SENSOR_HEIGHT, Intrinsics
from .episode import EpisodeCapture, viewpoint_record, yaw_deg
from .geometry import RANGES
from .marker import GENERATOR_VERSION

PNG_COMPRESS_LEVEL = 3


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_png(path: Path, array: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path, format="PNG", compress_level=PNG_COMPRESS_LEVEL)


def meta_document(episode: EpisodeCapture, intr: Intrinsics) -> dict[str, Any]:
    """The meta.json content of a captured episode."""
    views = [viewpoint_record(v, episode.threshold, intr) for v in episode.views]
    placement = episode.placement
    return {
        "scene_id": episode.scene_id,
        "scene_key": episode.scene_key,
        "episode_id": episode.episode_id,
        "goal_position_nominal": [round(c, 4) for c in episode.goal],
        "object_category": episode.instance.category,
        "object_id": episode.instance.object_id,
        "camera_intrinsics": intr.to_meta(),
        "sensor_mount_offset_y": SENSOR_HEIGHT,
        "n_sectors": RAW_SECTOR_COUNT,
        "sector_order": list(ACTIVE_RAW_SECTORS),
        "sector_skip": RAW_SECTOR_SKIP,
        "ranges": {k: list(v) for k, v in RANGES.items()},
        "category_mask_threshold": episode.threshold,
        "viewpoints": views,
        "navigable_count": episode.navigable_count,
        "valid_mask_count": episode.valid_mask_count,
        "success": episode.success,
        "episode_seed": episode.seed,
        "placement": {
            "support": placement.support.kind,
            "target_front_azimuth_deg": yaw_deg(placement),
            "occluders": list(placement.occluder_kinds),
            "placements_tried": episode.placements_tried,
        },
        "generator": {"name": "aiv-capture", "version": GENERATOR_VERSION},
    }


def write_episode(
    directory: Path, episode: EpisodeCapture, intr: Intrinsics, overview: Image.Image
) -> dict[str, Any]:
    """Write one episode directory; returns its meta document."""
    directory.mkdir(parents=True, exist_ok=True)
    for view in episode.views:
        if view.frame is None or view.mask is None:
            continue
        tag = view.sample.tag
        write_png(directory / "rgb" / f"rgb_{tag}.png", view.frame.rgb)
        write_png(directory / "mask" / f"mask_{tag}.png", view.mask.astype(np.uint8) * 255)
    overview.save(directory / "overview.png", format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    meta = meta_document(episode, intr)
    write_json(directory / META_FILENAME, meta)
    return meta
