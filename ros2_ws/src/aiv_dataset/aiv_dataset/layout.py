"""The PInVerify directory layout and episode access (spec §2.1).

:class:`PInVerifyDataset` is the single entry point from a dataset root to typed episodes, index records,
descriptions and caches. It owns the :class:`~.paths.DatasetRoot`, so every path it hands out has been
checked to stay inside the root, and its bulk iterators take a :class:`~.errors.ProblemReport` so that one
broken episode is reported and skipped rather than aborting a scan of thousands.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .caches import (
    AttrCacheEntry,
    CategoryCacheEntry,
    MergeCacheEntry,
    load_attr_cache,
    load_category_cache,
    load_merge_cache,
)
from .constants import (
    ATTR_CACHE_FILENAME,
    CAPTURE_SUBDIR,
    CATEGORY_CACHE_FILENAME,
    DESCRIPTIONS_FILENAME,
    DESCRIPTIONS_WITH_CATEGORY_FILENAME,
    DISTRACTOR_MAP_FILENAME,
    MERGE_CACHE_FILENAME,
    META_FILENAME,
)
from .descriptions import DescriptionDB, load_descriptions
from .distractors import DistractorMap, load_distractor_map
from .errors import DatasetError, ProblemReport
from .fields import Where
from .images import ImageRef
from .index_records import EpisodeEntry, PairRecord, read_episode_index, read_pair_index
from .meta import EpisodeMeta, Viewpoint, load_meta
from .paths import DatasetRoot


@dataclass(frozen=True)
class Episode:
    """A loaded episode: its validated meta.json and safe access to its images."""

    episode_path: str
    directory: Path
    meta: EpisodeMeta
    root: DatasetRoot = field(compare=False, repr=False)

    def image_path(self, view: Viewpoint, kind: str = "rgb") -> Path:
        """Filesystem path of a viewpoint's rgb frame or mask, confined to the dataset root."""
        relative = view.rgb if kind == "rgb" else view.mask_path
        key = "rgb" if kind == "rgb" else "mask_raw_path"
        where = Where.of(self.meta.source).at(view.name).at(key)
        if not relative:
            raise where.error(f"viewpoint {view.name!r} has no {kind} image")
        return self.root.resolve(self.episode_path, relative, where=where)

    def rgb(self, view: Viewpoint) -> ImageRef:
        """Lazy handle to a viewpoint's RGB frame (H x W x 3 uint8 when loaded)."""
        return ImageRef(self.image_path(view, "rgb"), "rgb", f"{view.name}.rgb")

    def mask(self, view: Viewpoint) -> ImageRef:
        """Lazy handle to a viewpoint's mask (H x W uint8 when loaded)."""
        return ImageRef(self.image_path(view, "mask"), "mask", f"{view.name}.mask_raw_path")


class PInVerifyDataset:
    """A PInVerify dataset root (``pv_dataset/``)."""

    def __init__(self, root: str | Path, *, capture_subdir: str = CAPTURE_SUBDIR) -> None:
        self.root = DatasetRoot(root)
        self.capture_subdir = capture_subdir

    @property
    def path(self) -> Path:
        return self.root.path

    def __repr__(self) -> str:
        return f"PInVerifyDataset({str(self.path)!r})"

    # -- layout ---------------------------------------------------------------------------------------------

    def capture_splits(self) -> list[str]:
        """Splits that have captured episodes (sub-directories of ``pin_capture/``), sorted."""
        base = self.path / self.capture_subdir
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))

    def split_dir(self, split: str) -> Path:
        """Directory holding a split's index files (``<root>/<split>/``)."""
        return self.root.resolve(split, where=Where.of(self.path, None).at("split"))

    def episode_paths(self, split: str, *, report: ProblemReport | None = None) -> list[str]:
        """Dataset-relative paths of every ``pin_capture/<split>/<scene>/<episode>/`` that has a meta.json.

        Sorted, so that everything built from the list (index, distractor map, sampling) is reproducible —
        the reference globbed in filesystem order, which is not. Episode directories that are symbolic
        links leading out of the root are reported (or raised without a report) and left out.
        """
        base = self.path / self.capture_subdir / split
        if not base.is_dir():
            raise DatasetError(f"split {split!r} has no capture directory", path=base)
        found: list[str] = []
        for meta in sorted(base.glob(f"*/*/{META_FILENAME}")):
            relative = meta.parent.relative_to(self.path).as_posix()
            try:
                self.root.resolve(relative, META_FILENAME, where=Where.of(meta))
            except DatasetError as error:
                if report is None:
                    raise
                report.add(error)
                continue
            found.append(relative)
        return found

    # -- episodes -------------------------------------------------------------------------------------------

    def load_episode(
        self, episode_path: str, *, meta_path: str | None = None, where: Where | None = None
    ) -> Episode:
        """Load one episode by its dataset-relative directory (as written in index files).

        ``where`` names the index line that referenced the episode, so a bad ``episode_path`` is reported
        against that line (field ``episode_path``/``meta_path``); by default errors name the dataset root.
        """
        origin = where or Where.of(self.path)
        directory = self.root.resolve(episode_path, where=origin.at("episode_path"))
        if not directory.is_dir():
            raise origin.at("episode_path").error(f"episode directory {episode_path!r} does not exist")
        meta_rel = meta_path or f"{episode_path.rstrip('/')}/{META_FILENAME}"
        meta_file = self.root.resolve(meta_rel, where=origin.at("meta_path"))
        meta = load_meta(meta_file)
        return Episode(episode_path=episode_path.rstrip("/"), directory=directory, meta=meta, root=self.root)

    def iter_episodes(self, split: str, report: ProblemReport) -> Iterator[Episode]:
        """Every loadable episode of a split; broken ones go to ``report`` and are skipped."""
        for episode_path in self.episode_paths(split, report=report):
            try:
                yield self.load_episode(episode_path)
            except DatasetError as error:
                report.add(error)

    # -- index files ----------------------------------------------------------------------------------------

    def read_pair_index(self, path: str | Path, *, report: ProblemReport | None = None) -> list[PairRecord]:
        """Read a pair index given as an absolute path, or as a path relative to the dataset root."""
        file = self.index_path(path)
        return read_pair_index(file, report=report, display=str(file))

    def read_episode_index(
        self, path: str | Path, *, report: ProblemReport | None = None
    ) -> list[EpisodeEntry]:
        file = self.index_path(path)
        return read_episode_index(file, report=report, display=str(file))

    def index_path(self, path: str | Path) -> Path:
        """The absolute index file ``path`` names: absolute as given, relative against the dataset root only.

        A relative name is never looked up in the working directory first: a stray file of the same name
        there would otherwise be served instead of the dataset's own index, silently. Callers log the
        returned path so the file actually used is on record.
        """
        candidate = Path(path).expanduser()
        if candidate.is_absolute():
            return candidate
        where = Where.of(self.path).at("index")
        located = self.root.resolve(str(path), where=where)
        if not located.is_file() and candidate.is_file():
            raise where.error(
                f"index file {str(path)!r} does not exist under the dataset root; relative index paths are "
                f"read from the dataset root only: pass {str(candidate.absolute())!r} to use the file in the "
                "working directory"
            )
        return located

    # -- descriptions, caches, distractors ------------------------------------------------------------------

    def dataset_file(self, *parts: str) -> Path:
        """A file at a fixed place of the layout (descriptions, caches, distractor maps), confined to the root.

        Like every other path the data layer hands out, it goes through :meth:`DatasetRoot.resolve`: a
        symbolic link that leads out of the dataset root is refused with a :class:`DatasetError` naming the
        file, whether or not its target exists, instead of being read.
        """
        return self.root.resolve(*parts, where=Where.of(self.path.joinpath(*parts)))

    def descriptions_file(self) -> Path | None:
        """The description file the evaluator uses: the with-category one if present, else the plain one."""
        for name in (DESCRIPTIONS_WITH_CATEGORY_FILENAME, DESCRIPTIONS_FILENAME):
            candidate = self.dataset_file(name)
            if candidate.is_file():
                return candidate
        return None

    def load_descriptions(self, *, report: ProblemReport | None = None) -> DescriptionDB | None:
        """The description database, or ``None`` when the dataset has no description file. With ``report``,
        malformed entries are recorded and skipped; a file leading out of the root always raises."""
        file = self.descriptions_file()
        return None if file is None else load_descriptions(file, report=report)

    def load_distractor_map(self, split: str, *, report: ProblemReport | None = None) -> DistractorMap | None:
        file = self.dataset_file(split, DISTRACTOR_MAP_FILENAME)
        return load_distractor_map(file, report=report) if file.is_file() else None

    def load_category_cache(self, *, report: ProblemReport | None = None) -> dict[str, CategoryCacheEntry]:
        file = self.dataset_file(CATEGORY_CACHE_FILENAME)
        return load_category_cache(file, report=report) if file.is_file() else {}

    def load_attr_cache(self, *, report: ProblemReport | None = None) -> dict[str, AttrCacheEntry]:
        file = self.dataset_file(ATTR_CACHE_FILENAME)
        return load_attr_cache(file, report=report) if file.is_file() else {}

    def load_merge_cache(self, *, report: ProblemReport | None = None) -> dict[str, MergeCacheEntry]:
        file = self.dataset_file(MERGE_CACHE_FILENAME)
        return load_merge_cache(file, report=report) if file.is_file() else {}
