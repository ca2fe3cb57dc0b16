"""Crops rendered by the capture pipeline (the ``micro`` preset), judged against the simulator's truth.

The dataset is generated once per session into a temporary directory (~3 s on 2 cores). The micro preset
holds an orange backpack (white pocket, yellow straps, printed word) and a cream mug with a brown flower
print, so both main-colour and part-colour claims occur.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from aiv_synth.pipeline import generate_atomic
from aiv_synth.presets import get_preset
from aiv_verifier.core.crop import crop_with_gt_box
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.verification.base import ViewInput
from PIL import Image


@pytest.fixture(scope="module")
def micro_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("classical") / "micro"
    return generate_atomic(get_preset("micro"), out, seed=42, workers=2, log=lambda _: None).root


def _captures(root: Path):
    """(view input, ground truth of the target, visible attribute names) for every above-threshold view."""
    for meta_path in sorted((root / "pin_capture" / "val").glob("*/*/meta.json")):
        meta = json.loads(meta_path.read_text())
        gt = json.loads((root / "privileged_gt" / "val" / f"{meta['object_id']}.json").read_text())
        episode = str(meta_path.parent.relative_to(root))
        for view in meta["viewpoints"]:
            if not (view.get("rgb") and view.get("mask_bbox_xyxy") and view.get("mask_meets_threshold")):
                continue
            image = np.asarray(Image.open(meta_path.parent / view["rgb"]).convert("RGB"))
            crop = crop_with_gt_box(image, view["mask_bbox_xyxy"])
            visible = set(gt["captures"][episode][view["tag"]]["visible"])
            yield (
                ViewInput(crop.image, image, crop.box, crop.confidence, meta["object_category"], ()),
                gt,
                visible,
            )


def test_rendered_objects_main_colours(micro_root: Path, verifier_without_ocr) -> None:
    main_yes = main_total = contradictions = wrong_no = 0
    for view, gt, visible in _captures(micro_root):
        own = [a for a in gt["attributes"] if a["type"] == "color" and a["name"] in visible]
        body = next(a for a in gt["attributes"] if a["name"] == "body_color")
        # A clearly different main colour: blue for the orange backpack, purple for the cream mug.
        other = "a blue body" if body["value"] == "orange" else "a purple body"
        attributes = [Attribute(a["name"], "color", 2, a["phrase"]) for a in own]
        attributes.append(Attribute("other_body", "color", 2, other))
        answers = {a.attribute: a for a in verifier_without_ocr.verify(view, attributes)}
        wrong_no += sum(answers[a["name"]].answer is Decision.NO for a in own)
        if "body_color" in visible:
            main_total += 1
            main_yes += answers["body_color"].answer is Decision.YES
        contradictions += answers["other_body"].answer is Decision.NO
    assert main_total >= 8
    assert wrong_no == 0, "a visible, true colour was contradicted"
    assert main_yes >= 0.6 * main_total
    assert contradictions >= 0.5 * main_total


def test_rendered_print_is_read(micro_root: Path, verifier) -> None:
    read = asked = 0
    for view, gt, visible in _captures(micro_root):
        text = [a for a in gt["attributes"] if a["value"].startswith("text/") and a["name"] in visible]
        for attribute in text:
            asked += 1
            (answer,) = verifier.verify(
                view, [Attribute(attribute["name"], "logo_text", 2, attribute["phrase"])]
            )
            assert answer.answer is not Decision.NO, answer.reason
            read += answer.answer is Decision.YES
    assert asked > 0
    assert read >= 1
