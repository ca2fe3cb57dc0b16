"""Tiny datasets with one broken part each, for the "refused, never served or scored" tests (issue 13).

Four kinds of broken input, each through every public entry point (``aiv-dataset validate``, the simulator node,
``aiv-eval`` in-process and over ROS):

1. episodes whose images disagree with ``camera_intrinsics``, and absurd intrinsics;
2. numbers beyond what a float32 message field (or any sane camera) carries;
3. description / cache / distractor files that are symbolic links leading out of the dataset root, and an index
   whose queries have no description file at all;
4. indexes that repeat a pair, name a key twice on one line, or hold no pair.

Kinds 1 and 2 break one *episode*: it is refused when loaded and the rest is served. Kinds 3 and 4 break what
the whole evaluation reads first: it is refused before the first episode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .tiny_dataset import EpisodeHandle, EpisodeSpec, TinyDataset, View, ring

#: The benchmark camera block (360 x 640 portrait).
BENCHMARK_CAMERA: dict[str, Any] = {"width": 360, "height": 640, "hfov_deg": 42.0, "vfov_deg": 68.62}
#: The camera block matching the tiny datasets' 36 x 64 images (square pixels, no vfov).
SMALL_CAMERA: dict[str, Any] = {"width": 36, "height": 64, "hfov_deg": 42.0}


def _first_view(**extra: Any) -> list[View]:
    """The usual ring of views with extra keys on the first record (``viewpoints[0]``, sector 0 far)."""
    views = ring()
    views[0] = replace(views[0], extra=dict(extra))
    return views


@dataclass(frozen=True)
class BrokenEpisode:
    """One way to break an episode, and what the refusal must name.

    ``file`` is the end of the path the error names (meta.json, or the image), ``field`` the field, ``message``
    a piece of the reason.
    """

    name: str
    changes: dict[str, Any]
    file: str
    field: str
    message: str
    kind: int = 1


BROKEN_EPISODES: tuple[BrokenEpisode, ...] = (
    # -- kind 1: images against the camera, absurd cameras
    BrokenEpisode(
        "images-90x160-camera-360x640",
        {"image_size": (90, 160), "meta_overrides": {"camera_intrinsics": BENCHMARK_CAMERA}},
        "rgb/rgb_s0_far.png",
        "s0_far.rgb",
        "image is 90x160, expected 360x640 (camera_intrinsics of meta.json)",
    ),
    BrokenEpisode(
        "width-1e10",
        {"meta_overrides": {"camera_intrinsics": {**SMALL_CAMERA, "width": 10**10}}},
        "meta.json",
        "camera_intrinsics.width",
        "expected an integer <= 8192, got 10000000000",
    ),
    BrokenEpisode(
        "height-beyond-uint32",
        {"meta_overrides": {"camera_intrinsics": {**SMALL_CAMERA, "height": 2**32 + 64}}},
        "meta.json",
        "camera_intrinsics.height",
        "expected an integer <= 8192",
    ),
    BrokenEpisode(
        "hfov-1e-40-degrees",
        {"meta_overrides": {"camera_intrinsics": {**SMALL_CAMERA, "hfov_deg": 1e-40}}},
        "meta.json",
        "camera_intrinsics.hfov_deg",
        "gives the focal length fx",
    ),
    BrokenEpisode(
        "negative-fx",
        {"meta_overrides": {"camera_intrinsics": {**SMALL_CAMERA, "fx": -469.0}}},
        "meta.json",
        "camera_intrinsics.fx",
        "expected a positive number, got -469.0",
    ),
    BrokenEpisode(
        "nan-cy",
        {"meta_overrides": {"camera_intrinsics": {**SMALL_CAMERA, "cy": float("nan")}}},
        "meta.json",
        "camera_intrinsics.cy",
        "expected a finite number, got NaN",
    ),
    BrokenEpisode(
        "cx-outside-the-image",
        {"meta_overrides": {"camera_intrinsics": {**SMALL_CAMERA, "cx": 1e6}}},
        "meta.json",
        "camera_intrinsics.cx",
        "expected a number <= 36",
    ),
    # -- kind 2: numbers beyond float32 (or any pixel / ratio range)
    BrokenEpisode(
        "box-1e39",
        {"views": _first_view(mask_bbox_xyxy=[0, 0, 1e39, 10])},
        "meta.json",
        "viewpoints[0].mask_bbox_xyxy[2]",
        "(the float32 range), got 1e+39",
        kind=2,
    ),
    BrokenEpisode(
        "box-beyond-any-image",
        {"views": _first_view(mask_bbox_xyxy=[0, 0, 1e6, 10])},
        "meta.json",
        "viewpoints[0].mask_bbox_xyxy[2]",
        "expected a number <= 8192, got 1000000.0",
        kind=2,
    ),
    BrokenEpisode(
        "position-1e39",
        {"views": _first_view(camera_position=[1e39, 0.0, 0.0])},
        "meta.json",
        "viewpoints[0].camera_position[0]",
        "(the float32 range), got 1e+39",
        kind=2,
    ),
    BrokenEpisode(
        "goal-minus-1e39",
        {"meta_overrides": {"goal_position_nominal": [2.0, -1e39, 0.0]}},
        "meta.json",
        "goal_position_nominal[1]",
        "(the float32 range), got -1e+39",
        kind=2,
    ),
    BrokenEpisode(
        "area-beyond-uint32",
        {"views": _first_view(mask_area_px=2**40)},
        "meta.json",
        "viewpoints[0].mask_area_px",
        "expected an integer <= 67108864",
        kind=2,
    ),
    BrokenEpisode(
        "area-fraction-2",
        {"views": _first_view(mask_area_fraction=2.0)},
        "meta.json",
        "viewpoints[0].mask_area_fraction",
        "expected a number <= 1, got 2.0",
        kind=2,
    ),
    BrokenEpisode(
        "threshold-with-400-digits",
        {"meta_overrides": {"category_mask_threshold": 10**400}},
        "meta.json",
        "category_mask_threshold",
        "(the float32 range), got 1.000000e+400",
        kind=2,
    ),
)

BROKEN_BY_NAME = {case.name: case for case in BROKEN_EPISODES}


@dataclass
class BrokenEpisodeDataset:
    """A good episode (index line 1) followed by one broken episode per case (lines 2, 3, ...)."""

    data: TinyDataset
    good: EpisodeHandle
    broken: list[tuple[BrokenEpisode, EpisodeHandle]] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.data.root

    def error_path(self, case: BrokenEpisode, episode: EpisodeHandle) -> Path:
        """The file the refusal of ``case`` names (as the loaders spell it: below the absolute root)."""
        return self.root.absolute() / episode.episode_path / case.file

    def located(self, case: BrokenEpisode, episode: EpisodeHandle) -> str:
        """``<file>: field '<field>': `` — how the one-line message starts."""
        return f"{self.error_path(case, episode)}: field '{case.field}': "


def broken_episode_dataset(
    root: Path, cases: tuple[BrokenEpisode, ...] | list[BrokenEpisode]
) -> BrokenEpisodeDataset:
    """Write the good episode and one episode per case, descriptions, and ``val/pv_index_all.jsonl``."""
    data = TinyDataset(root)
    good = data.add_episode(EpisodeSpec(scene="00001-good", episode="0", object_id="mug_good"))
    out = BrokenEpisodeDataset(data, good)
    for number, case in enumerate(cases, start=1):
        spec = EpisodeSpec(scene=f"{number:05d}-broken", episode=str(number), object_id=f"mug_{number}")
        out.broken.append((case, data.add_episode(replace(spec, **case.changes))))
    data.write_descriptions()
    data.write_index("pv_index_all.jsonl", [data.pair(good), *(data.pair(e) for _, e in out.broken)])
    return out


# -- kind 4: indexes that cannot be served ---------------------------------------------------------------------


@dataclass(frozen=True)
class BrokenIndex:
    """An index refused as a whole: ``line`` (None = the file itself), ``field`` and a piece of the reason."""

    name: str
    line: int | None
    field: str | None
    message: str


BROKEN_INDEXES: tuple[BrokenIndex, ...] = (
    BrokenIndex(
        "same-pair-twice",
        3,
        "query_object_id",
        "the pair (episode_path 'pin_capture/val/00001-good/0', query_object_id 'mug_good') is already listed on "
        "line 1",
    ),
    BrokenIndex("label-0-then-1", 2, "label", "this key appears twice in one JSON object"),
    BrokenIndex("no-pairs", None, None, "the index holds no verification pairs (the file has no lines)"),
)
BROKEN_INDEX_BY_NAME = {case.name: case for case in BROKEN_INDEXES}


def broken_index_dataset(root: Path, case: BrokenIndex) -> tuple[TinyDataset, Path]:
    """Two good episodes and descriptions; ``val/pv_index_all.jsonl`` broken as ``case`` says."""
    data = TinyDataset(root)
    first = data.add_episode(EpisodeSpec(scene="00001-good", episode="0", object_id="mug_good"))
    second = data.add_episode(EpisodeSpec(scene="00002-good", episode="1", object_id="mug_other"))
    data.write_descriptions()
    lines: list[dict[str, Any] | str]
    if case.name == "same-pair-twice":
        lines = [data.pair(first), data.pair(second), data.pair(first)]
    elif case.name == "label-0-then-1":
        record = json.dumps(data.pair(second))  # a positive pair: "label": 1 comes last
        lines = [data.pair(first), '{"label": 0, ' + record[1:]]
    elif case.name == "no-pairs":
        lines = []
    else:  # pragma: no cover - a case without a writer
        raise ValueError(case.name)
    return data, data.write_index("pv_index_all.jsonl", lines)


# -- kind 3: files leading out of the root, descriptions missing --------------------------------------------------

#: What the description file outside the root says; it must never be served.
OUTSIDE_TEXT = "TEXT FROM OUTSIDE THE DATASET ROOT"


def escaping_descriptions_dataset(root: Path, outside: Path) -> tuple[TinyDataset, Path]:
    """One good episode and index; the description file is a link to ``outside`` (written there, valid)."""
    data = TinyDataset(root)
    episode = data.add_episode(EpisodeSpec(scene="00001-good", episode="0", object_id="mug_good"))
    data.write_index("pv_index_all.jsonl", [data.pair(episode)])
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text(
        json.dumps({"mug_good": {"object_category": "mug", "descriptions": [OUTSIDE_TEXT]}}), encoding="utf-8"
    )
    link = data.root / "object_descriptions_with_category.json"
    link.symlink_to(outside)
    return data, link


#: Evaluation parameters for tiny datasets: the weight-free classical verifier (the oracle needs the generator's
#: ground-truth files, which hand-written datasets lack), no crops.
EVAL_PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/pv_index_all.jsonl
verifier:
  ros__parameters:
    verifier.backend: classical
    agent.fusion: attr_majority
evaluator:
  ros__parameters:
    run_dir: {run_dir}
    save_crops: false
    server_wait_s: 30.0
"""


def eval_params(directory: Path, name: str) -> Path:
    """A params YAML writing to ``directory/name`` (point it at a dataset with ``--dataset``)."""
    params = directory / f"{name}.yaml"
    params.write_text(EVAL_PARAMS.format(run_dir=directory / name), encoding="utf-8")
    return params


def refusal_reason(dataset: BrokenEpisodeDataset, case: BrokenEpisode, episode: EpisodeHandle) -> str:
    """The failure reason both evaluation modes record for a broken episode (the simulator's words)."""
    from aiv_dataset import parse_pair_record
    from aiv_dataset.fields import Where
    from aiv_offline_sim.episode_service import pair_key

    key = pair_key(parse_pair_record(dataset.data.pair(episode), Where.of("test")))
    return (
        f"the simulator refused the episode: episode {key} cannot be loaded: {dataset.located(case, episode)}"
    )
