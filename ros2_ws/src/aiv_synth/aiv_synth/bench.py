"""``aiv-capture bench``: how fast this machine renders frames and captures episodes.

Two numbers matter for planning a dataset: milliseconds per 360x640 frame (RGB + segmentation + part
labels) and episodes per minute for the whole pipeline (sampling, rendering, PNG writing, indices) on the
available cores. The second is measured by generating a preset into a temporary directory.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from aiv_dataset.vocabulary import CATEGORIES

from .attributes import plan_instances
from .episode import EpisodeCapturer
from .pipeline import generate, scene_id, scene_key
from .presets import Preset
from .renderer import ShadowZone
from .scene import generate_room


@dataclass
class BenchResult:
    frames: int
    ms_per_frame: float
    ms_per_label_frame: float
    episodes: int
    seconds: float
    episodes_per_minute: float
    workers: int


def render_timing(repeats: int = 2) -> tuple[int, float, float]:
    """(frames, ms per shaded frame, ms per labels-only frame) over the views of a few real episodes."""
    instances = plan_instances("val", CATEGORIES, 1, 1, 42)
    jobs = []
    for i in range(3):
        key = scene_key(42, "val", i)
        capturer = EpisodeCapturer(generate_room(key, 42))
        episode = capturer.capture(scene_id("val", key), str(i), instances[i * 5], 42)
        if episode is not None:
            placement = episode.placement
            world = [*capturer.room.prims, *placement.occluders, *placement.target_prims(episode.model)]
            shadows = ShadowZone(
                tuple(range(len(capturer.room.prims), len(world))),
                (episode.goal[0], episode.goal[2]),
                placement.radius + 0.7,
            )
            jobs += [
                (capturer.renderer, world, v.sample.pose, shadows) for v in episode.views if v.sample.pose
            ]
    start = time.perf_counter()
    for _ in range(repeats):
        for renderer, world, pose, shadows in jobs:
            renderer.render(world, pose, shadows=shadows)
    shaded = (time.perf_counter() - start) * 1000.0 / (repeats * len(jobs))
    start = time.perf_counter()
    for _ in range(repeats):
        for renderer, world, pose, _ in jobs:
            renderer.render(world, pose, labels_only=True)
    labels = (time.perf_counter() - start) * 1000.0 / (repeats * len(jobs))
    return repeats * len(jobs), shaded, labels


def run_benchmark(preset: Preset, workers: int) -> BenchResult:
    frames, shaded, labels = render_timing()
    with tempfile.TemporaryDirectory(prefix="aiv-capture-bench-") as tmp:
        report = generate(preset, Path(tmp) / "pv_dataset", workers=workers, log=lambda _: None)
    return BenchResult(
        frames,
        shaded,
        labels,
        report.episodes_written,
        report.capture_seconds,
        report.episodes_per_minute,
        workers,
    )
