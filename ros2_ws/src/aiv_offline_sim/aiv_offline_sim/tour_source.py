"""Tour bags as the simulator's episodes (ROS-free; ``offline_sim`` with ``tour_bags``).

Each tour bag is turned into a PInVerify episode with ``aiv_bags``' own import (sectors and view types from
the poses, descriptions and pairs from the sidecar), into one directory that then is served exactly like a
dataset: the same :class:`~aiv_offline_sim.environment.PInVerifyEnv` and
:class:`~aiv_offline_sim.episode_service.EpisodeService`, so StartEpisode and MoveToSector follow the same
rules whatever the source.

Where the episodes go:

* ``dataset_root`` empty: a private temporary directory, removed when the node ends;
* ``dataset_root`` set: that directory (created if missing), so that an evaluator can read the labels of the
  imported pairs from it. It must be new, empty, or one this module filled before (it holds
  :data:`MARKER`): its content is then replaced, so a respawned simulator imports the same bags again. Any
  other directory is refused — an existing dataset is never written into.

The pairs of all bags, in bag order, are written to ``index_file`` relative to that directory (so the
simulator's ``dataset_root`` + ``index_file`` name what it serves, as they do for a dataset).

A tour has no masks. Its boxes, when it has a box topic (``/detections``, which ``aiv-bag export`` writes from
the dataset's ground truth), become the episodes' ground-truth boxes, served in GroundTruthView like a
dataset's; a tour without one gives episodes without boxes (see :func:`aiv_bags.import_tour`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from aiv_bags import ImportOptions, TourError, import_tour
from aiv_common.parameter_spec import ParameterError

from .offline_sim_parameters import tour_index_problem

#: File that marks a directory as made by the simulator from tour bags (safe to replace).
MARKER = ".offline_sim_tours"
_MARKER_TEXT = "episodes imported from tour bags by offline_sim; replaced when it starts again\n"


class TourSourceError(ParameterError):
    """The tour bags cannot be served; the message is one line naming the bag (or parameter) and the problem."""


@dataclass
class TourDataset:
    """The directory the tours were imported into, what it holds, and the import reports."""

    root: Path
    index_file: str
    bags: tuple[str, ...]
    episodes: tuple[str, ...]
    pairs: int
    private: bool
    report: list[str] = field(default_factory=list)
    without_boxes: tuple[str, ...] = ()  # bags that have no box topic (their episodes have no GT boxes)

    def cleanup(self) -> None:
        """Remove a private directory (a named one stays for the evaluator to read)."""
        if self.private:
            shutil.rmtree(self.root, ignore_errors=True)


def _prepare_named_root(root: Path) -> None:
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise TourSourceError(
            f"parameter 'dataset_root' = {str(root)!r}; with tour_bags it must be a directory (new, empty, or "
            "one offline_sim imported tours into before)"
        )
    if root.is_dir() and any(root.iterdir()):
        if not (root / MARKER).is_file():
            raise TourSourceError(
                f"parameter 'dataset_root' = {str(root)!r} holds files offline_sim did not import; with "
                "tour_bags it must be a new or empty directory (or one offline_sim imported tours into "
                "before), so that no dataset is ever overwritten"
            )
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")


def import_tours(bags: Sequence[str], dataset_root: str, index_file: str) -> TourDataset:
    """Import every bag (in order) and write their pairs to ``index_file``; TourSourceError on bad input.

    Nothing is left behind on failure in a private directory; a named one keeps its marker (it is replaced
    on the next start).
    """
    if not bags:
        raise TourSourceError("parameter 'tour_bags' names no bag")
    repeated = sorted({bag for bag in bags if list(bags).count(bag) > 1})
    if repeated:
        raise TourSourceError(f"parameter 'tour_bags' names {repeated[0]!r} more than once")
    problem = tour_index_problem(index_file)
    if problem:
        raise TourSourceError(problem)
    relative_index = str(PurePosixPath(index_file.replace("\\", "/")))
    private = not dataset_root
    if private:
        root = Path(tempfile.mkdtemp(prefix="offline_sim_tours_"))
        (root / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")
    else:
        root = Path(dataset_root).expanduser().absolute()
        _prepare_named_root(root)
    result = TourDataset(root, relative_index, tuple(bags), (), 0, private)
    index_lines: list[str] = []
    episodes: list[str] = []
    without_boxes: list[str] = []
    try:
        for number, bag in enumerate(bags):
            # One scratch index per bag keeps the pairs in bag order across splits.
            scratch = f".tour_pairs_{number}.jsonl"
            try:
                imported = import_tour(Path(bag), ImportOptions(root=root, index_name=scratch))
            except TourError as error:
                # One line, even when the reason quotes a multi-line parser message.
                raise TourSourceError("tour_bags: " + " ".join(str(error).split())) from None
            index_lines += [
                line for line in imported.index_file.read_text(encoding="utf-8").splitlines() if line.strip()
            ]
            imported.index_file.unlink()
            episodes.append(imported.episode_path)
            if not imported.has_boxes:
                without_boxes.append(bag)
            # The import's own "index:" line names the scratch file; the served index is reported below.
            result.report += [line for line in imported.lines if not line.startswith("index: ")]
        target = root / relative_index
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(line + "\n" for line in index_lines), encoding="utf-8")
        result.report.append(f"index: {target} ({len(index_lines)} pair(s) of {len(bags)} tour bag(s))")
    except BaseException:
        result.cleanup()
        raise
    result.episodes = tuple(episodes)
    result.without_boxes = tuple(without_boxes)
    result.pairs = len(index_lines)
    return result
