"""Build the PInVerify evaluation index from captured episodes (spec §2.4, paper App. D).

Pipeline, as in the reference builder and distractor script:

1. **Raw index** — one :class:`EpisodeEntry` per ``pin_capture/<split>/*/*/meta.json`` with its
   ``valid_start_sectors`` (raw sectors where any viewpoint meets the mask threshold) and
   ``navigable_sectors`` (raw sectors with a navigable viewpoint that has an image); episodes without a
   valid start sector are dropped.
2. **Distractor map** — for every target object of the split: up to 10 other objects of its category
   (random sample) and up to 2 objects of every other category.
3. **Pairs** — per episode a positive, a neg_same (uniform among same-category distractors) and a neg_diff
   pair (uniform among the others), so 1:1:1; episodes lacking either distractor kind are skipped; the
   pair list is shuffled.
4. Optional **category-balanced sampling** (``max_episodes``) before pairing; the unsampled pair set is
   archived as ``pv_index_all_<n>.jsonl``.
5. **Subsets** of 50/100/500/1000 pairs, stratified by pair type.

Every random draw comes from a ``random.Random(seed)`` re-created at the same points where the reference
re-seeds the global RNG, with the same sequence of calls, so that for the same episode order the output
matches the reference. Unlike the reference, episodes are visited in sorted path order (the reference used
unsorted ``glob``), which makes the result reproducible across machines.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .constants import (
    DEFAULT_SEED,
    DEFAULT_SUBSET_SIZES,
    DISTRACTOR_MAP_FILENAME,
    FULL_INDEX_FILENAME,
    PAIR_TYPES,
)
from .distractors import Distractor, DistractorEntry, DistractorMap, save_distractor_map
from .errors import ProblemReport
from .index_records import EpisodeEntry, PairRecord, write_jsonl
from .layout import PInVerifyDataset
from .meta import EpisodeMeta, sector_summary


def episode_entry(meta: EpisodeMeta, episode_path: str) -> EpisodeEntry | None:
    """The raw index record of an episode, or ``None`` when it has no valid start sector."""
    valid, navigable = sector_summary(meta.index_views)
    if not valid:
        return None
    return EpisodeEntry(
        episode_path=episode_path,
        scene=meta.scene_key,
        episode=meta.episode_id,
        meta_path=f"{episode_path}/meta.json",
        rgb_dir=f"{episode_path}/rgb",
        depth_dir=f"{episode_path}/depth",
        target_object_id=meta.object_id,
        target_object_category=meta.object_category,
        valid_start_sectors=valid,
        navigable_sectors=navigable,
        n_navigable=len(navigable),
        n_mask_visible=len(valid),
    )


@dataclass
class ScanResult:
    """Raw index of a split plus what was left out and why."""

    entries: list[EpisodeEntry]
    scanned: int
    skipped_no_valid_start: list[str]
    report: ProblemReport


def scan_raw_index(dataset: PInVerifyDataset, split: str, report: ProblemReport | None = None) -> ScanResult:
    """Step 1: read every episode of a split; broken episodes are reported and skipped."""
    report = report if report is not None else ProblemReport()
    entries: list[EpisodeEntry] = []
    skipped: list[str] = []
    scanned = 0
    for episode in dataset.iter_episodes(split, report):
        scanned += 1
        entry = episode_entry(episode.meta, episode.episode_path)
        if entry is None:
            skipped.append(episode.episode_path)
        else:
            entries.append(entry)
    return ScanResult(entries=entries, scanned=scanned, skipped_no_valid_start=skipped, report=report)


def build_distractor_map(
    entries: Sequence[EpisodeEntry],
    *,
    max_same: int = 10,
    max_diff_per_category: int = 2,
    seed: int = DEFAULT_SEED,
) -> DistractorMap:
    """Step 2: distractors for every target object that appears in ``entries`` (first-seen order)."""
    rng = random.Random(seed)
    object_category: dict[str, str] = {}
    for entry in entries:
        object_category[entry.target_object_id] = entry.target_object_category
    by_category: dict[str, list[str]] = {}
    for object_id, category in object_category.items():
        by_category.setdefault(category, []).append(object_id)
    categories = sorted(by_category)

    result: DistractorMap = {}
    for object_id, category in object_category.items():
        distractors: list[Distractor] = []
        same = [other for other in by_category[category] if other != object_id]
        if len(same) > max_same:
            same = rng.sample(same, max_same)
        distractors.extend(Distractor(other, category) for other in same)
        for other_category in categories:
            if other_category == category:
                continue
            pool = by_category[other_category]
            count = min(max_diff_per_category, len(pool))
            if count > 0:
                distractors.extend(Distractor(other, other_category) for other in rng.sample(pool, count))
        result[object_id] = DistractorEntry(object_category=category, distractors=tuple(distractors))
    return result


@dataclass
class PairingResult:
    pairs: list[PairRecord]
    skipped: dict[str, list[str]] = field(default_factory=dict)  # reason -> episode paths


def _pair(entry: EpisodeEntry, query_id: str, query_category: str, pair_type: str) -> PairRecord:
    return PairRecord(
        episode_path=entry.episode_path,
        scene=entry.scene,
        episode=entry.episode,
        meta_path=entry.meta_path,
        rgb_dir=entry.rgb_dir,
        depth_dir=entry.depth_dir,
        target_object_id=entry.target_object_id,
        target_object_category=entry.target_object_category,
        valid_start_sectors=entry.valid_start_sectors,
        navigable_sectors=entry.navigable_sectors,
        n_navigable=entry.n_navigable,
        n_mask_visible=entry.n_mask_visible,
        query_object_id=query_id,
        query_object_category=query_category,
        label=1 if pair_type == "positive" else 0,
        pair_type=pair_type,
    )


def make_pairs(
    entries: Sequence[EpisodeEntry],
    distractor_map: Mapping[str, DistractorEntry],
    *,
    seed: int = DEFAULT_SEED,
) -> PairingResult:
    """Step 3: positive / neg_same / neg_diff per episode, then one shuffle of the whole list."""
    rng = random.Random(seed)
    pairs: list[PairRecord] = []
    skipped: dict[str, list[str]] = {"no_distractors": [], "no_neg_same": [], "no_neg_diff": []}
    for entry in entries:
        mapping = distractor_map.get(entry.target_object_id)
        if mapping is None:
            skipped["no_distractors"].append(entry.episode_path)
            continue
        same = [d for d in mapping.distractors if d.object_category == entry.target_object_category]
        other = [d for d in mapping.distractors if d.object_category != entry.target_object_category]
        if not same:
            skipped["no_neg_same"].append(entry.episode_path)
            continue
        if not other:
            skipped["no_neg_diff"].append(entry.episode_path)
            continue
        pairs.append(_pair(entry, entry.target_object_id, entry.target_object_category, "positive"))
        neg_same = rng.choice(same)
        pairs.append(_pair(entry, neg_same.object_id, neg_same.object_category, "neg_same"))
        neg_diff = rng.choice(other)
        pairs.append(_pair(entry, neg_diff.object_id, neg_diff.object_category, "neg_diff"))
    rng.shuffle(pairs)
    return PairingResult(pairs=pairs, skipped={k: v for k, v in skipped.items() if v})


def sample_balanced(
    entries: Sequence[EpisodeEntry], max_episodes: int, *, seed: int = DEFAULT_SEED
) -> list[EpisodeEntry]:
    """Step 4: category-balanced sample of at most ``max_episodes`` episodes.

    Quota per category = floor(N / #categories); the remainder goes one each to the categories with the most
    episodes. Within a category, first one random episode of every object (objects in random order) until the
    quota is met, then random further episodes. Categories smaller than their quota give what they have.
    """
    if max_episodes < 1:
        raise ValueError(f"max_episodes must be positive, got {max_episodes}")
    rng = random.Random(seed)
    if len(entries) <= max_episodes:
        return list(entries)
    by_category: dict[str, dict[str, list[EpisodeEntry]]] = {}
    for entry in entries:
        by_category.setdefault(entry.target_object_category, {}).setdefault(
            entry.target_object_id, []
        ).append(entry)
    n_categories = len(by_category)
    base, remainder = divmod(max_episodes, n_categories)
    ordered = sorted(by_category, key=lambda c: sum(len(eps) for eps in by_category[c].values()))
    quotas = {cat: base + (1 if i >= n_categories - remainder else 0) for i, cat in enumerate(ordered)}

    sampled: list[EpisodeEntry] = []
    for category in ordered:
        objects = by_category[category]
        quota = quotas[category]
        chosen: list[EpisodeEntry] = []
        object_ids = list(objects)
        rng.shuffle(object_ids)
        for object_id in object_ids:
            if len(chosen) >= quota:
                break
            chosen.append(rng.choice(objects[object_id]))
        if len(chosen) < quota:
            taken = {id(entry) for entry in chosen}
            pool = [entry for oid in object_ids for entry in objects[oid] if id(entry) not in taken]
            rng.shuffle(pool)
            chosen.extend(pool[: quota - len(chosen)])
        sampled.extend(chosen[:quota])
    rng.shuffle(sampled)
    return sampled


def stratified_subsets(
    pairs: Sequence[PairRecord], sizes: Iterable[int] = DEFAULT_SUBSET_SIZES, *, seed: int = DEFAULT_SEED
) -> dict[int, list[PairRecord]]:
    """Step 5: for each size n smaller than the full set, a sample keeping the pair-type proportions.

    Types are taken in sorted name order; each gets round(n * share) pairs and the last one the rest, so a
    subset has exactly n pairs. One RNG serves all sizes in the order given.
    """
    rng = random.Random(seed)
    by_type: dict[str, list[PairRecord]] = {}
    for pair in pairs:
        by_type.setdefault(pair.pair_type, []).append(pair)
    total = len(pairs)
    subsets: dict[int, list[PairRecord]] = {}
    for n in sizes:
        if n >= total:
            continue
        sampled: list[PairRecord] = []
        remaining = n
        types = sorted(by_type)
        for i, pair_type in enumerate(types):
            pool = by_type[pair_type]
            k = remaining if i == len(types) - 1 else round(n * (len(pool) / total))
            k = min(k, len(pool), remaining)
            sampled.extend(rng.sample(pool, k))
            remaining -= k
        rng.shuffle(sampled)
        subsets[n] = sampled
    return subsets


@dataclass
class BuildResult:
    """What :func:`build_index` wrote and what it had to leave out."""

    out_dir: Path
    files: dict[str, Path]
    episodes_scanned: int
    episodes_indexed: int
    skipped_no_valid_start: list[str]
    pairing_skipped: dict[str, list[str]]
    pair_counts: dict[str, int]
    report: ProblemReport

    def summary(self) -> str:
        lines = [
            f"Scanned {self.episodes_scanned} episode(s); {self.episodes_indexed} have a valid start sector"
            f" ({len(self.skipped_no_valid_start)} skipped, {len(self.report)} unreadable).",
            "Pairs: " + ", ".join(f"{k}={v}" for k, v in self.pair_counts.items()),
        ]
        for reason, paths in self.pairing_skipped.items():
            lines.append(f"Episodes skipped while pairing ({reason}): {len(paths)}")
        lines.extend(f"Wrote {path}" for path in self.files.values())
        return "\n".join(lines)


def _count_types(pairs: Sequence[PairRecord]) -> dict[str, int]:
    return {pair_type: sum(1 for p in pairs if p.pair_type == pair_type) for pair_type in PAIR_TYPES}


def build_index(
    dataset: PInVerifyDataset,
    split: str,
    out_dir: Path | None = None,
    *,
    max_episodes: int | None = None,
    seed: int = DEFAULT_SEED,
    subset_sizes: Iterable[int] = DEFAULT_SUBSET_SIZES,
    distractor_map: Mapping[str, DistractorEntry] | None = None,
) -> BuildResult:
    """Run the whole pipeline for one split and write the index files into ``out_dir``
    (default ``<root>/<split>/``). A distractor map is built (and written) unless one is given."""
    out = Path(out_dir) if out_dir is not None else dataset.split_dir(split)
    out.mkdir(parents=True, exist_ok=True)
    scan = scan_raw_index(dataset, split)
    files: dict[str, Path] = {}
    if distractor_map is None:
        distractor_map = build_distractor_map(scan.entries, seed=seed)
        files["distractors"] = out / DISTRACTOR_MAP_FILENAME
        save_distractor_map(files["distractors"], distractor_map)

    full = make_pairs(scan.entries, distractor_map, seed=seed)
    pairs = full.pairs
    skipped = full.skipped
    if max_episodes is not None:
        files["archive"] = out / f"pv_index_all_{len(full.pairs)}.jsonl"
        write_jsonl(files["archive"], full.pairs)
        sampled = sample_balanced(scan.entries, max_episodes, seed=seed)
        paired = make_pairs(sampled, distractor_map, seed=seed)
        pairs, skipped = paired.pairs, paired.skipped
    files["index"] = out / FULL_INDEX_FILENAME
    write_jsonl(files["index"], pairs)
    for size, subset in stratified_subsets(pairs, subset_sizes, seed=seed).items():
        files[f"subset_{size}"] = out / f"pv_index_{size}.jsonl"
        write_jsonl(files[f"subset_{size}"], subset)
    return BuildResult(
        out_dir=out,
        files=files,
        episodes_scanned=scan.scanned,
        episodes_indexed=len(scan.entries),
        skipped_no_valid_start=scan.skipped_no_valid_start,
        pairing_skipped=skipped,
        pair_counts=_count_types(pairs),
        report=scan.report,
    )
