"""Generating a whole dataset: plan, capture in parallel, write descriptions / GT, build indices, stats.

The plan (which instance is the target of which episode in which scene) is a pure function of the preset
and the seed, and every episode is a pure function of its own identity (App. A.9 seeding), so the work
can be spread over processes in any way without changing a byte of the output. Indices are built by the
data layer's own builder (:func:`aiv_dataset.index_builder.build_index`) and statistics by its
statistics module, so what is reported is exactly what the environment will read.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiv_dataset.constants import (
    CAPTURE_SUBDIR,
    DESCRIPTIONS_FILENAME,
    DESCRIPTIONS_WITH_CATEGORY_FILENAME,
)
from aiv_dataset.errors import ProblemReport
from aiv_dataset.index_builder import build_index
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.levels import level_from_tag
from aiv_dataset.stats import episode_stats, format_tables, summarize

from .attributes import Instance, differing_attributes, plan_instances
from .camera import BENCHMARK_INTRINSICS
from .descriptions import absent_attribute_records, attribute_records, describe, slot_order
from .episode import EpisodeCapturer, absent_in_view, visible_attributes
from .marker import GENERATOR_VERSION, MARKER_NAME, marker_document
from .objects import build_instance, catalogue_of
from .overview import render_overview
from .presets import SCENE_OFFSETS, Preset
from .reference import reference_views
from .scene import Room, generate_room
from .writer import write_episode, write_json, write_png

STATS_JSON = "capture_stats.json"
STATS_TXT = "capture_stats.txt"
GT_DIR = "privileged_gt"
REFERENCE_DIR = "image_gt"
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def scene_key(seed: int, split: str, index: int) -> str:
    """HM3D-style key, e.g. "00803-qT4kZ0wYbLm": number (split offset + index) and an 11-character code."""
    number = int(hashlib.md5(f"scene/{seed}/{split}/{index}".encode()).hexdigest(), 16)
    code = ""
    for _ in range(11):
        number, digit = divmod(number, len(_ALPHABET))
        code += _ALPHABET[digit]
    return f"{SCENE_OFFSETS[split] + index:05d}-{code}"


def scene_id(split: str, key: str) -> str:
    """The ``scene_id`` string (HM3D gives a .glb path; ours names the procedural scene)."""
    return f"procedural/{split}/{key}/{key.split('-')[1]}.scene"


@dataclass(frozen=True)
class EpisodeTask:
    split: str
    scene_key: str
    episode_id: str
    instance: Instance
    seed: int
    root: str
    levels: tuple[int, ...] = (0,)

    @property
    def episode_path(self) -> str:
        return f"{CAPTURE_SUBDIR}/{self.split}/{self.scene_key}/{self.episode_id}"


@dataclass
class TaskResult:
    task: EpisodeTask
    success: bool
    seconds: float
    visibility: dict[str, dict[str, Any]] = field(default_factory=dict)
    placements_tried: int = 0


@dataclass
class Plan:
    tasks: list[EpisodeTask]
    instances: dict[str, list[Instance]]  # split -> instances
    scenes: dict[str, list[str]]  # split -> scene keys


def make_plan(preset: Preset, seed: int, root: Path) -> Plan:
    """Instances per split and the (scene, episode id) of every episode; no randomness outside ``seed``."""
    tasks: list[EpisodeTask] = []
    instances: dict[str, list[Instance]] = {}
    scenes: dict[str, list[str]] = {}
    for split in preset.splits:
        insts = plan_instances(
            split.name, split.categories, split.family_size, split.families, seed, preset.catalogue
        )
        keys = [scene_key(seed, split.name, i) for i in range(split.scenes)]
        slots = [inst for inst in insts for _ in range(split.episodes_per_instance)]
        random.Random(f"assign/{seed}/{split.name}").shuffle(slots)
        counters = dict.fromkeys(keys, 0)
        for k, inst in enumerate(slots):
            key = keys[k % len(keys)]
            tasks.append(
                EpisodeTask(split.name, key, str(counters[key]), inst, seed, str(root), preset.levels)
            )
            counters[key] += 1
        instances[split.name] = insts
        scenes[split.name] = keys
    tasks.sort(key=lambda t: (t.split, t.scene_key, int(t.episode_id)))
    return Plan(tasks, instances, scenes)


# -- worker side ------------------------------------------------------------------------------------------

_ROOMS: dict[tuple[str, int], Room] = {}


def _room(key: str, seed: int) -> Room:
    if (key, seed) not in _ROOMS:
        if len(_ROOMS) > 8:
            _ROOMS.clear()
        _ROOMS[(key, seed)] = generate_room(key, seed)
    return _ROOMS[(key, seed)]


def run_task(task: EpisodeTask) -> TaskResult:
    """Capture and write one episode (runs in a worker process)."""
    start = time.perf_counter()
    room = _room(task.scene_key, task.seed)
    capturer = EpisodeCapturer(room, levels=task.levels)
    episode = capturer.capture(
        scene_id(task.split, task.scene_key), task.episode_id, task.instance, task.seed
    )
    if episode is None:
        return TaskResult(task, False, time.perf_counter() - start)
    directory = Path(task.root) / task.episode_path
    write_episode(directory, episode, BENCHMARK_INTRINSICS, render_overview(room, episode))
    visibility: dict[str, dict[str, Any]] = {}
    for view in episode.views:
        if view.frame is None:
            continue
        visibility[view.sample.tag] = {
            "mask_area_px": view.area,
            "mask_meets_threshold": view.area > episode.threshold,
            "visible": visible_attributes(task.instance, view.attribute_pixels),
            "pixels": dict(view.attribute_pixels),
            # Absent logos / prints whose place (the absence surface) this capture shows, and its pixels.
            "absent_in_view": absent_in_view(task.instance, view.absence_pixels),
            "absence_pixels": dict(view.absence_pixels),
        }
    return TaskResult(task, True, time.perf_counter() - start, visibility, episode.placements_tried)


def run_reference(args: tuple[str, Instance]) -> None:
    root, instance = args
    for i, image in enumerate(reference_views(instance.recipe)):
        write_png(Path(root) / REFERENCE_DIR / instance.category / f"{instance.object_id}_{i}.png", image)


def available_cores() -> int:
    """Cores this process may run on (the affinity mask, which containers restrict), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# -- parent side ------------------------------------------------------------------------------------------


def _pool_map(
    func: Callable[[Any], Any], items: list[Any], workers: int, progress: Callable[[int], None] | None = None
) -> list[Any]:
    if workers <= 1 or len(items) <= 1:
        out = []
        for i, item in enumerate(items):
            out.append(func(item))
            if progress:
                progress(i + 1)
        return out
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with multiprocessing.get_context(method).Pool(workers) as pool:
        out = []
        for i, result in enumerate(pool.imap(func, items, chunksize=1)):
            out.append(result)
            if progress:
                progress(i + 1)
        return out


def _families(instances: Iterable[Instance]) -> dict[str, list[Instance]]:
    families: dict[str, list[Instance]] = {}
    for inst in instances:
        families.setdefault(inst.family, []).append(inst)
    return families


def write_descriptions(root: Path, plan: Plan) -> dict[str, list[str]]:
    """Both description files over every instance of every split (ids sorted)."""
    everything = [inst for insts in plan.instances.values() for inst in insts]
    families = _families(everything)
    plain: dict[str, list[str]] = {}
    with_category: dict[str, dict[str, Any]] = {}
    for inst in sorted(everything, key=lambda i: i.object_id):
        members = families[inst.family]
        varying = {name for other in members for name in differing_attributes(inst.recipe, other.recipe)}
        texts = describe(
            catalogue_of(inst)[inst.category], inst.recipe, random.Random(inst.object_id), varying
        )
        plain[inst.object_id] = texts
        with_category[inst.object_id] = {"object_category": inst.category, "descriptions": texts}
    write_json(root / DESCRIPTIONS_FILENAME, plain)
    write_json(root / DESCRIPTIONS_WITH_CATEGORY_FILENAME, with_category)
    return plain


def write_ground_truth(root: Path, plan: Plan, results: list[TaskResult]) -> None:
    """``privileged_gt/{split}/{object_id}.json``: attributes, family and per-capture visible attributes.

    ``absent_attributes`` (the slots the instance lacks, with their absence phrases) and ``slot_order`` (the
    catalogue order of all slots) carry what the oracles would otherwise have to ask the catalogue, so that no
    run-time package imports the generator.

    Privileged: for oracle studies and diagnostics only; the verifier never reads it.
    """
    captures: dict[str, dict[str, Any]] = {}
    for result in results:
        if result.success:
            captures.setdefault(result.task.instance.object_id, {})[result.task.episode_path] = (
                result.visibility
            )
    for split, insts in plan.instances.items():
        families = _families(insts)
        for inst in insts:
            spec = catalogue_of(inst)[inst.category]
            surfaces = {inst.object_id: build_instance(inst.recipe).absence_surfaces}
            siblings = [
                {"object_id": o.object_id, "differs_in": differing_attributes(inst.recipe, o.recipe)}
                for o in families[inst.family]
                if o.object_id != inst.object_id
            ]
            doc = {
                "object_id": inst.object_id,
                "object_category": inst.category,
                "split": split,
                "subtype": inst.recipe.subtype,
                "scale": inst.recipe.scale,
                "family": inst.family,
                "variant_of": inst.variant_of,
                "mutated_attribute": inst.mutated,
                "family_members": siblings,
                "attributes": attribute_records(spec, inst.recipe),
                "absent_attributes": absent_attribute_records(
                    spec, inst.recipe, surfaces.get(inst.object_id)
                ),
                "slot_order": slot_order(spec, inst.recipe.subtype),
                "recipe": dict(inst.recipe.values),
                "captures": captures.get(inst.object_id, {}),
            }
            by_level = levels_by_episode(captures.get(inst.object_id, {}))
            if by_level:
                doc["levels_by_episode"] = by_level
            write_json(root / GT_DIR / split / f"{inst.object_id}.json", doc)


def levels_by_episode(captures: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per episode of a dataset with height levels: which attributes each level shows, and which ones only
    other levels show (``eye_level_hidden``: seen clearly from some other height, from no eye-level view).

    A capture counts when the object is shown clearly (mask over the category threshold), as the oracles
    count it. Empty for one-level episodes (no capture tag names a level), so their ground truth is as before.
    """
    out: dict[str, dict[str, Any]] = {}
    for episode_path, tags in captures.items():
        levels = {tag: level_from_tag(tag) or 0 for tag in tags}
        if not any(levels.values()):
            continue
        visible: dict[int, set[str]] = {level: set() for level in sorted(set(levels.values()) | {0})}
        for tag, capture in tags.items():
            if capture.get("mask_meets_threshold"):
                visible[levels[tag]].update(capture.get("visible", ()))
        others = set().union(*(names for level, names in visible.items() if level != 0))
        out[episode_path] = {
            "visible_by_level": {str(level): sorted(names) for level, names in visible.items()},
            "eye_level_hidden": sorted(others - visible[0]),
        }
    return out


def eye_level_hidden_share(root: Path, split: str) -> dict[str, Any]:
    """Positive pairs of ``split``'s full index whose episode has an attribute that some other height shows
    clearly and no eye-level view does (from the ground truth just written), and which attributes those are."""
    from collections import Counter

    from aiv_dataset.privileged_truth import PrivilegedTruth

    dataset = PInVerifyDataset(root)
    truth = PrivilegedTruth(root)
    positives = [
        p for p in dataset.read_pair_index(f"{split}/pv_index_all.jsonl") if p.pair_type == "positive"
    ]
    names: Counter[str] = Counter()
    with_hidden = 0
    for pair in positives:
        instance = truth.find(pair.target_object_id)
        hidden = instance.eye_level_hidden(pair.episode_path) if instance is not None else ()
        with_hidden += bool(hidden)
        names.update(f"{instance.category}.{name}" for name in hidden if instance is not None)
    return {
        "positives": len(positives),
        "with_hidden": with_hidden,
        "share": round(with_hidden / len(positives), 3) if positives else 0.0,
        "by_attribute": dict(sorted(names.items(), key=lambda item: (-item[1], item[0]))),
    }


def build_indices_and_stats(root: Path, preset: Preset, plan: Plan, seed: int) -> dict[str, Any]:
    """Indices via the data layer's builder, statistics via its stats module; returns the stats document."""
    dataset = PInVerifyDataset(root)
    document: dict[str, Any] = {
        "preset": preset.name,
        "seed": seed,
        "version": GENERATOR_VERSION,
        "splits": {},
    }
    texts = []
    for split in plan.instances:
        if split not in dataset.capture_splits():
            continue
        built = build_index(dataset, split, subset_sizes=preset.subset_sizes)
        report = ProblemReport()
        rows = [episode_stats(ep.meta, ep.episode_path) for ep in dataset.iter_episodes(split, report)]
        stats = summarize(rows, split)
        stats.pop("episodes", None)
        stats["pairs"] = built.pair_counts
        stats["episodes_indexed"] = built.episodes_indexed
        stats["skipped_no_valid_start"] = len(built.skipped_no_valid_start)
        stats["pairing_skipped"] = {k: len(v) for k, v in built.pairing_skipped.items()}
        stats["instances_planned"] = len(plan.instances[split])
        stats["unreadable_episodes"] = len(report)
        text = (
            format_tables(stats) + "\nPairs: " + ", ".join(f"{k}={v}" for k, v in built.pair_counts.items())
        )
        if "levels" in stats:
            hidden = eye_level_hidden_share(root, split)
            stats["positives_with_eye_level_hidden"] = hidden
            text += (
                f"\nPositives with an attribute no eye-level view shows: {hidden['with_hidden']} of"
                f" {hidden['positives']} ({hidden['share']:.3f}); by attribute: "
                + ", ".join(f"{k} {v}" for k, v in hidden["by_attribute"].items())
            )
        document["splits"][split] = stats
        texts.append(text)
    write_json(root / STATS_JSON, document)
    (root / STATS_TXT).write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    return document


@dataclass
class GenerationReport:
    root: Path
    episodes_planned: int
    episodes_written: int
    failed: list[str]
    seconds: float
    capture_seconds: float
    stats: dict[str, Any]

    @property
    def episodes_per_minute(self) -> float:
        return 60.0 * self.episodes_planned / self.capture_seconds if self.capture_seconds > 0 else 0.0


def generate(
    preset: Preset,
    root: Path,
    *,
    seed: int = 42,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
) -> GenerationReport:
    """Generate a complete dataset into ``root`` (created; should be empty). No completion marker."""
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    workers = workers or available_cores()
    start = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    plan = make_plan(preset, seed, root)
    log(f"aiv-capture: preset {preset.name!r}, seed {seed}, {len(plan.tasks)} episodes, {workers} worker(s)")
    step = max(1, len(plan.tasks) // 10)

    def progress(done: int) -> None:
        if done % step == 0 or done == len(plan.tasks):
            elapsed = time.perf_counter() - start
            log(
                f"  {done}/{len(plan.tasks)} episodes, {elapsed:.0f} s, {60.0 * done / max(elapsed, 1e-9):.1f} episodes/min"
            )

    results: list[TaskResult] = _pool_map(run_task, plan.tasks, workers, progress)
    capture_seconds = time.perf_counter() - start
    references = [(str(root), inst) for insts in plan.instances.values() for inst in insts]
    _pool_map(run_reference, references, workers)
    write_descriptions(root, plan)
    write_ground_truth(root, plan, results)
    stats = build_indices_and_stats(root, preset, plan, seed)
    failed = [r.task.episode_path for r in results if not r.success]
    return GenerationReport(
        root,
        len(plan.tasks),
        len(plan.tasks) - len(failed),
        failed,
        time.perf_counter() - start,
        capture_seconds,
        stats,
    )


# -- atomic output ---------------------------------------------------------------------------------------


def generate_atomic(
    preset: Preset,
    out: Path,
    *,
    seed: int = 42,
    workers: int | None = None,
    replace: bool = False,
    log: Callable[[str], None] | None = None,
) -> GenerationReport:
    """Generate into a temporary sibling directory and rename it to ``out`` once complete.

    A crash or a kill leaves ``out`` untouched (and at worst a ``.{name}.tmp-*`` directory behind); readers
    never see a half-written dataset. An existing ``out`` is only replaced when ``replace`` is set.
    """
    out = out.absolute()
    if out.exists() and any(out.iterdir()) and not replace:
        raise FileExistsError(f"{out} exists and is not empty (use --force to replace it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        report = generate(preset, tmp, seed=seed, workers=workers, log=log)
        write_json(tmp / MARKER_NAME, marker_document(preset.name, seed, report.episodes_written))
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    report.root = out
    return report


def ensure_dataset(
    out: Path,
    preset: Preset,
    *,
    seed: int = 42,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
) -> GenerationReport | None:
    """Make sure ``out`` holds the finished dataset of ``preset``/``seed``; None if it already did.

    Cache-safe: the check is the completion marker (preset, seed, generator version); generation happens
    under an exclusive lock next to ``out`` so that concurrent callers build it once, and the result is
    renamed into place only when complete. An ``out`` that carries a marker of another preset, seed or
    generator version (a stale cache) is replaced; a non-empty ``out`` without any marker is not ours (it
    may be a downloaded benchmark copy) and is refused with :class:`FileExistsError`.
    """
    import fcntl

    from .marker import is_complete, read_marker

    if is_complete(out, preset.name, seed):
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_complete(out, preset.name, seed):  # built by another caller while we waited
            return None
        ours = read_marker(out) is not None
        if out.exists() and any(out.iterdir()) and not ours:
            raise FileExistsError(f"{out} is not empty and was not made by aiv-capture; not replacing it")
        return generate_atomic(preset, out, seed=seed, workers=workers, replace=True, log=log)
