"""Episodes whose target object is red or blue, for the embedding agents' whole-episode tests.

A hand-written dataset (:mod:`support.tiny_dataset`) whose every navigable view shows the target's colour inside
its ground-truth box on a noisy grey background, queried with descriptions that say red or blue. A tiny model
trained to tell the colours apart (:mod:`support.tiny_embedding`) must then answer Yes exactly when the
description's colour is the object's, which only happens if the crop really reaches the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from support.tiny_dataset import EpisodeSpec, TinyDataset, ring, write_png
from support.tiny_embedding import COLOURS

INDEX_NAME = "pv_index_colours.jsonl"
DESCRIPTIONS = {
    "red": ("a red mug", "the red object", "a red object"),
    "blue": ("a blue mug", "the blue object", "a blue object"),
}

PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/{index}
verifier:
  ros__parameters:
    agent.kind: {kind}
    agent.nbv: {nbv}
    embedding.model_dir: {model_dir}
evaluator:
  ros__parameters:
    run_dir: {run_dir}
"""


def paint_views(
    episode_dir: Path,
    meta: dict[str, Any],
    colour: str,
    seed: int,
    sector_colours: dict[int, str] | None = None,
) -> None:
    """Overwrite every navigable view's image: the object colour inside the GT box (none on trap views),
    noise elsewhere; ``sector_colours`` paints the views of those raw sectors another colour."""
    rng = np.random.default_rng(seed)
    for record in meta["viewpoints"]:
        if not record["navigable"] or not record.get("rgb"):
            continue
        width, height = meta["camera_intrinsics"]["width"], meta["camera_intrinsics"]["height"]
        image = np.clip(rng.integers(100, 160) + rng.normal(0, 12, (height, width, 3)), 0, 255)
        box = record["mask_bbox_xyxy"]
        if box is not None and record["mask_meets_threshold"]:
            x0, y0, x1, y1 = (int(v) for v in box)
            shown = (sector_colours or {}).get(record["sector_index"], colour)
            base = np.array(COLOURS[shown], dtype=float)
            image[y0:y1, x0:x1] = np.clip(base + rng.normal(0, 8, (y1 - y0, x1 - x0, 3)), 0, 255)
        write_png(episode_dir / record["rgb"], image.astype(np.uint8))


#: The raw sector of the last view farthest-point NBV reaches in a 6-step colour episode (start s8, then s2,
#: s2 again after the refused move to s6, s0, s4, s10), so the view that answers.
LAST_FPS_SECTOR = 10
#: The object of the ``mixed`` episode: red on every view but the last one, which shows it blue.
MIXED_OBJECT = "redside_mug"


def colour_dataset(root: Path, *, unreachable: tuple[int, ...] = (6,), mixed: bool = False) -> Path:
    """Two episodes (a red and a blue mug), each queried with both colours' descriptions: 4 pairs, 2 positive.

    ``unreachable`` raw sectors make some moves fail, so duplicate views occur. ``mixed`` adds a third episode
    (pairs 5 and 6): a mug shown red on every view but the last one farthest-point NBV reaches
    (:data:`LAST_FPS_SECTOR`, blue there), queried as the red mug and as the blue one: over six steps the
    combined answer is Yes / No while the answering view alone says No / Yes. Returns the dataset root.
    """
    dataset = TinyDataset(root)
    pairs = []
    objects: list[tuple[str, str, dict[int, str] | None]] = [("red", "red", None), ("blue", "blue", None)]
    if mixed:
        objects.append(("redside", "red", {LAST_FPS_SECTOR: "blue"}))
    for number, (name, colour, sector_colours) in enumerate(objects):
        episode = dataset.add_episode(
            EpisodeSpec(
                scene=f"0000{number + 1}-colour{name}",
                episode=str(number),
                object_id=f"{name}_mug",
                category="mug",
                views=ring(unreachable=set(unreachable)),
            )
        )
        paint_views(episode.directory, episode.meta, colour, seed=number, sector_colours=sector_colours)
        pairs.append((episode, colour))
    texts = {f"{colour}_mug": DESCRIPTIONS[colour] for colour in DESCRIPTIONS}
    if mixed:
        texts[MIXED_OBJECT] = ("a red mug with a blue side", "the red object", "a red object")
    dataset.write_descriptions(texts=texts)
    records = []
    for episode, _colour in pairs:
        for query in ("red", "blue"):
            records.append(dataset.pair(episode, query_object_id=f"{query}_mug"))
    dataset.write_index(INDEX_NAME, records)
    return root


def expected_predictions(root: Path) -> list[str]:
    """Yes for the pairs whose query colour is the object's, in index order (the mixed episode's object is
    red on most views: Yes for the red query, although it is another object than the red mug)."""
    lines = (root / "val" / INDEX_NAME).read_text(encoding="utf-8").splitlines()
    expected = []
    for record in map(json.loads, lines):
        if record["target_object_id"] == MIXED_OBJECT:
            expected.append("Yes" if record["query_object_id"] == "red_mug" else "No")
        else:
            expected.append("Yes" if record["label"] == 1 else "No")
    return expected


def colour_spec(
    tmp_path: Path,
    root: Path,
    model_dir: Path,
    name: str,
    *overrides: str,
    kind: str = "clip",
    nbv: str = "farthest",
) -> Any:
    """An EvalSpec of the embedding agent ``kind`` over the colour dataset, writing to ``tmp_path/name``."""
    from aiv_eval.run.spec import EvalSpec

    params = tmp_path / f"{name}.yaml"
    params.write_text(
        PARAMS.format(index=INDEX_NAME, kind=kind, nbv=nbv, model_dir=model_dir, run_dir=tmp_path / name)
    )
    spec = EvalSpec.load(params, overrides)
    spec.set_dataset(str(root))
    return spec


def records_of(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda record: record["episode_index"])
