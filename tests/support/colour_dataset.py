"""A four-pair dataset whose answer depends only on the object's colour: red mug vs blue mug.

Two episodes (a red target, a blue target) in the real on-disk layout (support.tiny_dataset), every view showing
the target as an ellipse inscribed in its GT box on a grey background, and descriptions that name only the colour
("a red mug"), so the weight-free query rules extract one attribute ``color = red`` (or blue). Pairs: each
episode against each query, so two positives and two neg_same negatives; a verifier whose verdict follows the
image answers all four correctly, one that ignores the image cannot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from support.tiny_dataset import EpisodeSpec, TinyDataset, write_png

INDEX = "pv_index_all.jsonl"
COLOURS: dict[str, tuple[int, int, int]] = {"red": (205, 30, 35), "blue": (35, 60, 210)}
IMAGE_SIZE = (96, 160)


def frame(colour: tuple[int, int, int], box: list[int], size: tuple[int, int] = IMAGE_SIZE) -> np.ndarray:
    width, height = size
    image = np.full((height, width, 3), 150, np.uint8)
    x0, y0, x1, y1 = box
    ys, xs = np.mgrid[0:height, 0:width]
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    image[((xs - cx) / rx) ** 2 + ((ys - cy) / ry) ** 2 < 1.0] = colour
    return image


def build_colour_dataset(root: Path) -> tuple[Path, list[dict[str, object]]]:
    """Write the dataset under ``root``; returns (root, index records in index order)."""
    dataset = TinyDataset(root)
    episodes = {}
    for number, name in enumerate(COLOURS):
        spec = EpisodeSpec(
            scene=f"0000{number}-colour{name}", object_id=f"mug_{name}", category="mug", image_size=IMAGE_SIZE
        )
        handle = dataset.add_episode(spec)
        for record in handle.meta["viewpoints"]:
            if record.get("rgb") and record.get("mask_bbox_xyxy"):
                box = [int(v) for v in record["mask_bbox_xyxy"]]
                write_png(handle.directory / record["rgb"], frame(COLOURS[name], box))
        episodes[name] = handle
    dataset.write_descriptions(
        texts={f"mug_{name}": [f"a {name} mug", f"the {name} mug", f"{name} mug"] for name in COLOURS}
    )
    records = [
        dataset.pair(episodes[shown], query_object_id=f"mug_{asked}")
        for shown in COLOURS
        for asked in COLOURS
    ]
    dataset.write_index(INDEX, records)
    return root, records
