"""Whole-dataset validation: every problem in one pass, none fatal (the ``aiv-dataset validate`` command).

A benchmark number is only as good as the files behind it. This walks a dataset root and checks what the
loaders check lazily — plus what they cannot see one file at a time: images that are missing, truncated or
of the wrong size, index lines whose episode is broken or disagrees with its meta.json, indexes that repeat a
pair or hold none, queries without descriptions (or without any description file). Problems are collected,
never raised, so one run lists everything to fix.

The per-episode checks are :mod:`.episode_checks`, the very functions the episode environment runs before it
serves an episode; the index rules are those of the one index reader (:mod:`.index_records`). What validate
reports is therefore exactly what the simulator and the evaluator would refuse (plus what only a full decode
finds).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .constants import (
    CAPTURE_SUBDIR,
    DESCRIPTIONS_FILENAME,
    DESCRIPTIONS_WITH_CATEGORY_FILENAME,
    META_FILENAME,
)
from .descriptions import DescriptionDB
from .episode_checks import IMAGE_CHECKS as IMAGE_CHECKS
from .episode_checks import episode_problems
from .errors import DatasetError, ProblemReport
from .fields import Where
from .index_records import PairRecord, scan_pair_index
from .layout import Episode, PInVerifyDataset
from .meta import sector_summary


@dataclass
class ValidationResult:
    report: ProblemReport = field(default_factory=ProblemReport)
    episodes_checked: int = 0
    episodes_ok: int = 0
    images_checked: int = 0
    index_files: list[str] = field(default_factory=list)
    index_records: int = 0

    @property
    def ok(self) -> bool:
        return self.report.ok

    def summary(self) -> str:
        return (
            f"{self.episodes_checked} episode(s) checked, {self.episodes_ok} without problems;"
            f" {self.images_checked} image(s) checked; {self.index_records} index record(s) in"
            f" {len(self.index_files)} file(s); {len(self.report)} problem(s)"
        )


def _check_split(
    dataset: PInVerifyDataset, split: str, images: str, result: ValidationResult
) -> dict[str, Episode]:
    loaded: dict[str, Episode] = {}
    base = dataset.path / dataset.capture_subdir / split
    for scene_dir in sorted(p for p in base.iterdir() if p.is_dir()):
        for episode_dir in sorted(p for p in scene_dir.iterdir() if p.is_dir()):
            if not (episode_dir / META_FILENAME).exists():
                result.report.add(DatasetError("episode directory has no meta.json", path=episode_dir))
    for episode_path in dataset.episode_paths(split, report=result.report):
        result.episodes_checked += 1
        try:
            episode = dataset.load_episode(episode_path)
        except DatasetError as error:
            result.report.add(error)
            continue
        problems, checked = episode_problems(episode, images)
        result.images_checked += checked
        for problem in problems:
            result.report.add(problem)
        if not problems:
            result.episodes_ok += 1
        loaded[episode_path] = episode
    return loaded


def _check_record(
    dataset: PInVerifyDataset,
    record: PairRecord,
    where: Where,
    episodes: dict[str, Episode | None],
    descriptions: DescriptionDB | None,
) -> list[DatasetError]:
    problems: list[DatasetError] = []
    failure: str | None = None
    if record.episode_path not in episodes:
        try:
            episodes[record.episode_path] = dataset.load_episode(
                record.episode_path, meta_path=record.meta_path, where=where
            )
        except DatasetError as error:
            episodes[record.episode_path] = None
            if error.path == where.path:  # a bad path in this very line
                problems.append(error)
                return problems
            failure = str(error)
    episode = episodes[record.episode_path]
    if episode is None:
        reason = f": {failure}" if failure else " (see the problem reported for it)"
        problems.append(
            where.at("episode_path").error(f"episode {record.episode_path!r} cannot be loaded{reason}")
        )
    else:
        meta = episode.meta
        if record.target_object_id != meta.object_id:
            problems.append(
                where.at("target_object_id").error(f"differs from meta.json object_id {meta.object_id!r}")
            )
        if record.target_object_category != meta.object_category:
            problems.append(
                where.at("target_object_category").error(
                    f"differs from meta.json category {meta.object_category!r}"
                )
            )
        valid, navigable = sector_summary(meta.index_views)
        for name, listed, actual in (
            ("valid_start_sectors", record.valid_start_sectors, valid),
            ("navigable_sectors", record.navigable_sectors, navigable),
        ):
            if listed and tuple(listed) != actual:
                problems.append(
                    where.at(name).error(f"{list(listed)} differs from meta.json ({list(actual)})")
                )
    if descriptions is not None and record.query_object_id not in descriptions:
        problems.append(where.at("query_object_id").error("object has no entry in the descriptions file"))
    return problems


def index_files(dataset: PInVerifyDataset) -> list[Path]:
    """Pair index files of the layout: ``<root>/<dir>/pv_*.jsonl`` outside the capture directory."""
    found = []
    for directory in sorted(p for p in dataset.path.iterdir() if p.is_dir()):
        if directory.name in (dataset.capture_subdir, CAPTURE_SUBDIR, "image_gt"):
            continue
        found.extend(sorted(directory.glob("pv_*.jsonl")))
    return found


def validate_dataset(
    root: str | Path, *, splits: Iterable[str] | None = None, images: str = "decode"
) -> ValidationResult:
    """Validate a dataset root. ``splits`` limits the captured splits (and index directories) examined."""
    if images not in IMAGE_CHECKS:
        raise ValueError(f"images must be one of {IMAGE_CHECKS}, got {images!r}")
    result = ValidationResult()
    try:
        dataset = PInVerifyDataset(root)
    except DatasetError as error:
        result.report.add(error)
        return result
    wanted = list(splits) if splits is not None else dataset.capture_splits()
    episodes: dict[str, Episode | None] = {}
    for split in wanted:
        if split not in dataset.capture_splits():
            result.report.add(
                DatasetError(f"split {split!r} has no capture directory", path=dataset.path / CAPTURE_SUBDIR)
            )
            continue
        episodes.update(_check_split(dataset, split, images, result))

    descriptions: DescriptionDB | None = None
    descriptions_unreadable = False
    try:
        descriptions = dataset.load_descriptions(report=result.report)
    except DatasetError as error:
        result.report.add(error)
        descriptions_unreadable = True
    for loader in (dataset.load_category_cache, dataset.load_attr_cache, dataset.load_merge_cache):
        with result.report.collect():
            loader(report=result.report)
    for split in wanted:
        with result.report.collect():
            dataset.load_distractor_map(split, report=result.report)

    for file in index_files(dataset):
        if splits is not None and file.parent.name not in wanted:
            continue
        result.index_files.append(str(file))
        try:
            dataset.dataset_file(*file.relative_to(dataset.path).parts)  # a link out of the root is refused
            scan = scan_pair_index(file, report=result.report)
        except DatasetError as error:
            result.report.add(error)
            continue
        for problem in (*scan.repeats, *([scan.empty] if scan.empty is not None else [])):
            result.report.add(problem)
        result.index_records += len(scan.lines)
        if scan.lines and descriptions is None and not descriptions_unreadable:
            result.report.add(
                DatasetError(
                    f"the queries of its {len(scan.lines)} pair(s) have no descriptions: the dataset root has "
                    f"neither {DESCRIPTIONS_WITH_CATEGORY_FILENAME} nor {DESCRIPTIONS_FILENAME}",
                    path=file,
                )
            )
        for line, record in scan.lines:
            for problem in _check_record(dataset, record, Where.of(file, line), episodes, descriptions):
                result.report.add(problem)
    return result
