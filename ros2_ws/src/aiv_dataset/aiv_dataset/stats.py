"""Capture statistics of a split, as in paper App. E (Tables 11-12, Figs. 9-10).

Sector-level counts per episode (out of 6 active sectors), with the definitions of the authors' statistics
script: a sector is *navigable* if any of its viewpoints is navigable, *visible* if any navigable viewpoint's
mask meets the category threshold, and a *trap* sector if it is navigable but not visible (so nav = vis +
trap). Viewpoint-level counts and mask areas (navigable viewpoints that have a mask) complete the picture.
Comparing these numbers with the paper is a quick check that a downloaded or regenerated dataset is the
one the benchmark describes.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .constants import ACTIVE_RAW_SECTORS
from .levels import EYE_LEVEL
from .meta import EpisodeMeta, Viewpoint


@dataclass(frozen=True)
class EpisodeStats:
    episode_path: str
    scene_key: str
    episode_id: str
    object_id: str
    category: str
    navigable_sectors: int
    visible_sectors: int
    trap_sectors: int
    navigable_viewpoints: int
    valid_mask_viewpoints: int
    mask_areas_far: tuple[int, ...]
    mask_areas_near: tuple[int, ...]
    #: Datasets with height levels: (level, navigable views, views whose mask meets the threshold) per level;
    #: empty for a one-level dataset (whose statistics stay exactly as before).
    level_views: tuple[tuple[int, int, int], ...] = ()

    @property
    def mask_areas(self) -> tuple[int, ...]:
        return self.mask_areas_far + self.mask_areas_near


def _has_mask(view: Viewpoint) -> bool:
    if view.has_mask is not None:
        return view.has_mask and view.mask_area_px is not None
    return bool(view.mask_area_px)


def episode_stats(meta: EpisodeMeta, episode_path: str) -> EpisodeStats:
    """Per-episode counts from the view list the index builder reads (``viewpoints``, else ``captures``).

    With height levels, the sector and viewpoint counts are those of the eye-level ring (comparable with a
    one-level dataset and with the paper); each level's views are counted in ``level_views``.
    """
    all_views = meta.index_views
    leveled = any("height_level" in view.raw for view in all_views)
    views = tuple(v for v in all_views if v.height_level == EYE_LEVEL) if leveled else all_views
    level_views: tuple[tuple[int, int, int], ...] = ()
    if leveled:
        level_views = tuple(
            (
                level,
                sum(1 for v in all_views if v.height_level == level and v.navigable),
                sum(
                    1 for v in all_views if v.height_level == level and v.navigable and v.mask_meets_threshold
                ),
            )
            for level in sorted({v.height_level for v in all_views})
        )
    by_sector: dict[int | None, list[Viewpoint]] = defaultdict(list)
    for view in views:
        by_sector[view.sector_index].append(view)
    navigable = visible = trap = 0
    for sector_views in by_sector.values():
        if any(v.navigable for v in sector_views):
            navigable += 1
            if any(v.navigable and v.mask_meets_threshold for v in sector_views):
                visible += 1
            else:
                trap += 1
    areas: dict[str, list[int]] = {"far": [], "near": []}
    for view in views:
        if view.navigable and _has_mask(view):
            areas[view.view_type].append(int(view.mask_area_px or 0))
    return EpisodeStats(
        episode_path=episode_path,
        scene_key=meta.scene_key,
        episode_id=meta.episode_id,
        object_id=meta.object_id,
        category=meta.object_category,
        navigable_sectors=navigable,
        visible_sectors=visible,
        trap_sectors=trap,
        navigable_viewpoints=sum(1 for v in views if v.navigable),
        valid_mask_viewpoints=sum(1 for v in views if v.navigable and v.mask_meets_threshold),
        mask_areas_far=tuple(areas["far"]),
        mask_areas_near=tuple(areas["near"]),
        level_views=level_views,
    )


def _avg(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 2) if values else 0.0


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _distribution(values: Iterable[int]) -> dict[str, int]:
    counts = Counter(values)
    return {str(k): counts[k] for k in sorted(counts)}


def _group_row(episodes: Sequence[EpisodeStats]) -> dict[str, Any]:
    areas = [a for e in episodes for a in e.mask_areas]
    return {
        "episodes": len(episodes),
        "unique_objects": len({e.object_id for e in episodes}),
        "scenes": len({e.scene_key for e in episodes}),
        "avg_navigable_sectors": _avg([e.navigable_sectors for e in episodes]),
        "avg_visible_sectors": _avg([e.visible_sectors for e in episodes]),
        "avg_trap_sectors": _avg([e.trap_sectors for e in episodes]),
        "avg_navigable_viewpoints": _avg([e.navigable_viewpoints for e in episodes]),
        "avg_valid_mask_viewpoints": _avg([e.valid_mask_viewpoints for e in episodes]),
        "median_mask_area_px": _median(areas),
    }


def summarize(episodes: Sequence[EpisodeStats], split: str = "") -> dict[str, Any]:
    """JSON-ready statistics: overall summary, per-category table, distributions and per-episode rows."""
    by_category: dict[str, list[EpisodeStats]] = defaultdict(list)
    for episode in episodes:
        by_category[episode.category].append(episode)
    far = [a for e in episodes for a in e.mask_areas_far]
    near = [a for e in episodes for a in e.mask_areas_near]
    document = {
        "split": split,
        "summary": {**_group_row(episodes), "categories": len(by_category)},
        "per_category": {cat: _group_row(by_category[cat]) for cat in sorted(by_category)},
        "distributions": {
            "navigable_sectors": _distribution(e.navigable_sectors for e in episodes),
            "visible_sectors": _distribution(e.visible_sectors for e in episodes),
            "trap_sectors": _distribution(e.trap_sectors for e in episodes),
        },
        "mask_area_px": {
            "far": {"count": len(far), "median": _median(far)},
            "near": {"count": len(near), "median": _median(near)},
        },
        "episodes": [
            {
                k: v
                for k, v in asdict(e).items()
                if k not in ("mask_areas_far", "mask_areas_near", "level_views")
            }
            for e in episodes
        ],
    }
    if any(e.level_views for e in episodes):
        document["levels"] = level_summary(episodes)
    return document


def level_summary(episodes: Sequence[EpisodeStats]) -> dict[str, dict[str, Any]]:
    """Per camera height level: views per episode that are navigable (reachable) and visible (mask over the
    category threshold), and the share of an episode's sampled views that the level could not reach."""
    per_level: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for episode in episodes:
        for level, navigable, visible in episode.level_views:
            per_level[level].append((navigable, visible))
    total_views = 2 * len(ACTIVE_RAW_SECTORS)
    return {
        str(level): {
            "episodes": len(rows),
            "avg_navigable_views": _avg([n for n, _ in rows]),
            "avg_visible_views": _avg([v for _, v in rows]),
            "unreachable_view_share": round(1.0 - sum(n for n, _ in rows) / (total_views * len(rows)), 3)
            if rows
            else 0.0,
        }
        for level, rows in sorted(per_level.items())
    }


def format_tables(stats: dict[str, Any]) -> str:
    """Plain-text rendering of :func:`summarize` output: the App. E summary and per-category table."""
    summary = stats["summary"]
    lines = [
        f"Split: {stats.get('split') or '-'}",
        f"Scenes {summary['scenes']}, episodes {summary['episodes']},"
        f" unique objects {summary['unique_objects']}, categories {summary['categories']}",
        f"Avg navigable / visible / trap sectors per episode: {summary['avg_navigable_sectors']:.2f} /"
        f" {summary['avg_visible_sectors']:.2f} / {summary['avg_trap_sectors']:.2f}",
        f"Avg navigable / valid-mask viewpoints per episode: {summary['avg_navigable_viewpoints']:.2f} /"
        f" {summary['avg_valid_mask_viewpoints']:.2f}",
        f"Median mask area (px): {summary['median_mask_area_px']:.0f}",
        "",
        f"{'Category':<14}{'Eps':>7}{'Objs':>6}{'Nav':>6}{'Vis':>6}{'Trap':>6}{'Mask(med)':>11}",
    ]
    rows = [*stats["per_category"].items(), ("Total / Avg", summary)]
    for name, row in rows:
        lines.append(
            f"{name:<14}{row['episodes']:>7}{row['unique_objects']:>6}{row['avg_navigable_sectors']:>6.1f}"
            f"{row['avg_visible_sectors']:>6.1f}{row['avg_trap_sectors']:>6.1f}{row['median_mask_area_px']:>11.0f}"
        )
    lines.append("")
    for key in ("navigable_sectors", "visible_sectors", "trap_sectors"):
        dist = stats["distributions"][key]
        lines.append(
            f"{key.replace('_', ' ')} per episode: " + ", ".join(f"{k}: {v}" for k, v in dist.items())
        )
    if "levels" in stats:
        lines += ["", f"{'Level':<8}{'Nav views':>11}{'Vis views':>11}{'Unreachable':>13}"]
        for level, row in stats["levels"].items():
            lines.append(
                f"{level:<8}{row['avg_navigable_views']:>11.2f}{row['avg_visible_views']:>11.2f}"
                f"{row['unreachable_view_share']:>13.3f}"
            )
    return "\n".join(lines)
