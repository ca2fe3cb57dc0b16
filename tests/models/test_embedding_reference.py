"""Where the embedding agents must do what the reference's CLIP policy does (spec §6, issue 34), on trained tiny
models: they tell red from blue, so a 0.0 or a recorded answer changes a verdict instead of passing unnoticed.

- An over-long description. The reference embeds all texts of a view in one processor call without a
  truncation flag: ``CLIPProcessor`` and ``SiglipProcessor`` leave a long text long, the call fails and every
  text of the view scores 0.0; the NaFlex ``Siglip2Processor`` truncates by default (64 tokens), so the
  reference scores the cut text. ``embedding.overlength: reference`` (the default) must give the numbers of that
  call, re-enacted here on the same directory; ``zero_text`` and ``truncate`` stay selectable.
- The answering step's ``step_prediction`` is the cross-view decision, not the answering view's own Yes/No.
- SigLIP2 at its processor's default patches (16 px, up to 256), which the reference's call uses: the project's
  numbers are that call's; the 8-px tiny model of the other tests the reference cannot score at all.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiv_eval.run.in_process import run_in_process
from aiv_models.embedding import EmbeddingModel
from aiv_verifier.agent.embedding import EmbeddingAgent
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.agent.steps import ViewFrame
from aiv_verifier.core.types import Decision
from aiv_verifier.detection.base import BoxMode
from aiv_verifier.model_config import EmbeddingParams
from aiv_verifier.query.types import QueryMode, QuerySpec
from support.embedding_episodes import MIXED_OBJECT, colour_dataset, colour_spec, records_of
from support.offline_models import limit_torch_threads, no_network  # noqa: F401 - fixture
from support.tiny_embedding import (
    THRESHOLDS,
    clip_dir_fixture,  # noqa: F401 - fixture clip_dir
    object_image,
    siglip2_dir_fixture,  # noqa: F401 - fixture siglip2_dir
    siglip2_p16_dir_fixture,  # noqa: F401 - fixture siglip2_p16_dir
    siglip_dir_fixture,  # noqa: F401 - fixture siglip_dir
)

pytestmark = pytest.mark.usefixtures("no_network")

#: 90 words of the tiny vocabularies: longer than CLIP's 77 and SigLIP's 64 token positions.
LONG = " ".join(["a red mug with a handle and a logo on"] * 9)
RED_QUERY = ("a red mug", LONG, "the red object")
#: fixture name -> (agent kind, score family, the rule ``reference`` stands for with that processor)
MODELS = {
    "clip": ("clip", "clip", "zero_view"),
    "siglip": ("siglip", "siglip", "zero_view"),
    "siglip2_p16": ("siglip", "siglip2", "truncate"),
}


def _red(seed: int = 7) -> np.ndarray:
    return object_image(np.random.default_rng(seed), "red", (60, 90))


def _load(directory: Path, **kwargs: str) -> EmbeddingModel:
    limit_torch_threads()
    return EmbeddingModel.load(directory, device="cpu", **kwargs)


@cache
def _reference_parts(directory: str) -> tuple[Any, Any]:
    from transformers import AutoModel, AutoProcessor

    model = AutoModel.from_pretrained(directory, local_files_only=True).eval()
    return model, AutoProcessor.from_pretrained(directory, local_files_only=True)


def reference_call(directory: Path, image: np.ndarray, texts: tuple[str, ...]) -> list[float]:
    """The reference's scores of one crop, as spec §6 describes its call: the checkpoint's own ``AutoModel`` and
    ``AutoProcessor``; every text of the view in one processor call with the image (an empty text as "an
    object"; CLIP dynamic padding, SigLIP "max_length"; no truncation flag, so the processor's own defaults
    apply); a SigLIP class scores ``sigmoid(logits_per_image)``, CLIP the cosine of the normalised embeddings;
    any failure of the call scores every text 0.0."""
    import torch
    from PIL import Image

    model, processor = _reference_parts(str(directory))
    siglip = "siglip" in type(model).__name__.lower()
    try:
        inputs = processor(
            text=[text or "an object" for text in texts],
            images=Image.fromarray(image).convert("RGB"),
            return_tensors="pt",
            padding="max_length" if siglip else True,
        )
        with torch.inference_mode():
            output = model(**inputs)
        if siglip:
            return [float(v) for v in torch.sigmoid(output.logits_per_image)[0]]
        image_rows = torch.nn.functional.normalize(output.image_embeds, dim=-1)
        text_rows = torch.nn.functional.normalize(output.text_embeds, dim=-1)
        return [float(v) for v in (image_rows @ text_rows.T)[0]]
    except (RuntimeError, ValueError, IndexError):  # the reference catches the failure of its call
        return [0.0] * len(texts)


# ---- an over-long description ---------------------------------------------------------------------------


def test_the_benchmark_default_is_the_reference_policy() -> None:
    from aiv_verifier.verifier_parameters import config_parameter_defaults

    assert EmbeddingParams().overlength == "reference"
    assert config_parameter_defaults()["embedding.overlength"] == "reference"


@pytest.mark.parametrize("name", list(MODELS))
def test_an_over_long_description_scores_as_the_reference_call(
    request: pytest.FixtureRequest, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    directory = request.getfixturevalue(f"{name}_dir")
    _kind, family, rule = MODELS[name]
    threshold = THRESHOLDS[family]
    red = _red()
    model = _load(directory)
    assert model.overlength_rule == rule and rule in model.describe()
    with caplog.at_level(logging.WARNING, logger="aiv_models.embedding"):
        embedded = model.encode_texts(RED_QUERY)
        scores = model.score_image(red, embedded)
    assert embedded.overlength == ((False, False, False) if rule == "truncate" else (False, True, False))
    reference = reference_call(directory, red, RED_QUERY)
    assert scores == pytest.approx(reference, abs=1e-5)
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name == "aiv_models.embedding" and r.levelno >= logging.WARNING  # (another test may log INFO)
    ]
    assert len(warnings) == 1 and "embedding.overlength: reference" in warnings[0]

    # Without the long text the model says Yes on both others; only the per-text rule keeps those scores.
    per_text = _load(directory, overlength="zero_text")
    kept = per_text.score_image(red, per_text.encode_texts(RED_QUERY))
    assert kept[0] > threshold and kept[2] > threshold and kept[1] == 0.0
    cut = _load(directory, overlength="truncate")
    truncated = cut.score_image(red, cut.encode_texts(RED_QUERY))
    assert all(score > 0.0 for score in truncated)
    whole_view = _load(directory, overlength="zero_view")
    assert whole_view.score_image(red, whole_view.encode_texts(RED_QUERY)) == [0.0, 0.0, 0.0]
    if rule == "zero_view":  # CLIPProcessor / SiglipProcessor: the reference's call fails on the long text
        assert scores == [0.0, 0.0, 0.0] and model.processor_cut is None
    else:  # Siglip2Processor cuts at 64 tokens: the reference scores the cut text, as truncate does
        assert model.processor_cut == 64 and scores == pytest.approx(truncated, abs=1e-6)
        assert scores[0] > threshold and scores[2] > threshold


@pytest.mark.parametrize("name", list(MODELS))
def test_a_view_with_an_over_long_description_answers_as_the_reference(
    request: pytest.FixtureRequest, name: str
) -> None:
    """Single view, ``aggregation: max`` (so the two short red descriptions alone would say Yes): the reference
    policy answers No where the reference's call fails and Yes where its processor cuts; zero_text says Yes."""
    directory = request.getfixturevalue(f"{name}_dir")
    kind, _family, rule = MODELS[name]
    query = QuerySpec(RED_QUERY, QueryMode.DIRECT, "mug", "hint", (), "descriptions")
    frame = ViewFrame(image=_red(11), step_count=0, current_sector=0, gt_box=(0.0, 0.0, 60.0, 90.0))
    answers = {}
    for policy in ("reference", "zero_text"):
        limit_torch_threads()
        params = EmbeddingParams(model_dir=str(directory), aggregation="max", overlength=policy)
        agent = EmbeddingAgent.from_params(kind, params, AgentSettings(kind=kind, bbox_mode=BoxMode.GT))
        step = agent.new_session(query, episode_key="long", max_steps=1).observe(frame)
        assert step.stopped and step.step_prediction is step.decision
        answers[policy] = step.decision
        notes = [row.last_reason for row in step.attributes[:3]]
        if policy == "reference" and rule == "zero_view":
            assert "over-length text: scored 0.0" in notes[1]
            assert all("another description is over-length" in notes[i] for i in (0, 2))
        elif policy == "zero_text":
            assert "over-length text: scored 0.0" in notes[1] and "over-length" not in notes[0] + notes[2]
    assert answers["zero_text"] is Decision.YES
    assert answers["reference"] is (Decision.NO if rule == "zero_view" else Decision.YES)


# ---- SigLIP2 at the processor's default patches ----------------------------------------------------------


def test_siglip2_at_16_px_patches_scores_as_the_reference_call_and_the_8_px_one_cannot(
    siglip2_p16_dir: Path, siglip2_dir: Path
) -> None:
    texts = ("a red object", "a blue mug", "")
    red = _red(3)
    model = _load(siglip2_p16_dir)
    image_processor = model.processor.image_processor
    assert (image_processor.patch_size, image_processor.max_num_patches) == (16, 256)
    scores = model.score_image(red, model.encode_texts(texts))
    assert scores == pytest.approx(reference_call(siglip2_p16_dir, red, texts), abs=1e-5)
    assert scores[0] > THRESHOLDS["siglip2"] > scores[1]  # the image reaches the model

    # The 8-px tiny model: the project passes its image processor's own patch settings and scores it, but the
    # reference's call (the processor's defaults: 16-px patches) does not fit its patch embedding and fails.
    small = _load(siglip2_dir)
    small_scores = small.score_image(red, small.encode_texts(texts))
    assert small_scores[0] > THRESHOLDS["siglip2"] > small_scores[1]
    assert reference_call(siglip2_dir, red, texts) == [0.0, 0.0, 0.0]


# ---- the answering step's recorded prediction ------------------------------------------------------------


def _frame(step: int, sector: int, colour: str) -> ViewFrame:
    rng = np.random.default_rng(200 + step)
    image = object_image(rng, None, (64, 96))
    image[24:72, 16:48] = object_image(rng, colour, (32, 48))
    return ViewFrame(image=image, step_count=step, current_sector=sector, gt_box=(16.0, 24.0, 48.0, 72.0))


@pytest.mark.parametrize("name", ["clip", "siglip", "siglip2_p16"])
@pytest.mark.parametrize(("query", "views"), [("red", "rrrb"), ("red", "bbbr")], ids=["yes", "no"])
def test_the_answering_step_records_the_cross_view_decision(
    request: pytest.FixtureRequest, name: str, query: str, views: str
) -> None:
    """Four views, the last of the other colour: the last view alone disagrees with the combined answer."""
    kind, family, _rule = MODELS[name]
    limit_torch_threads()
    params = EmbeddingParams(model_dir=str(request.getfixturevalue(f"{name}_dir")))
    agent = EmbeddingAgent.from_params(kind, params, AgentSettings(kind=kind, bbox_mode=BoxMode.GT))
    texts = (f"a {query} mug", f"the {query} object", f"a {query} object")
    session = agent.new_session(
        QuerySpec(texts, QueryMode.DIRECT, "mug", "hint", (), "descriptions"), episode_key="mv", max_steps=4
    )
    colours = {"r": "red", "b": "blue"}
    sector = 0
    steps = []
    for index, letter in enumerate(views):
        step = session.observe(_frame(index, sector, colours[letter]))
        steps.append(step)
        sector = step.move.target_index if step.move is not None else sector
    combined = Decision.YES if colours[views[0]] == query else Decision.NO
    own = Decision.NO if combined is Decision.YES else Decision.YES
    last = steps[-1]
    assert last.stop_reason == "final" and last.decision is combined
    views_scores = session.effective_view_scores
    assert len(views_scores) == 4 and (views_scores[-1] > THRESHOLDS[family]) is (own is Decision.YES)
    # The reference records the decision at the answering step; the view's own answer stays in its row.
    assert last.step_prediction is combined
    assert last.attributes[-1].name == "avg_score" and last.attributes[-1].last_answer == own.value
    # The earlier views say what the combined answer says: no flip is recorded.
    assert [step.step_prediction for step in steps] == [combined] * 4


def test_records_carry_the_decision_at_the_answering_step(tmp_path: Path, siglip_dir: Path) -> None:
    """Whole episodes in-process: the mixed mug is red on every view but the answering one."""
    root = colour_dataset(tmp_path / "colours", mixed=True)
    records = records_of(
        run_in_process(colour_spec(tmp_path, root, siglip_dir, "run", kind="siglip")).run_dir
    )
    mixed = [r for r in records if r["target_object_id"] == MIXED_OBJECT]
    assert [r["prediction"] for r in mixed] == ["Yes", "No"]
    for record in mixed:
        last = record["transcript"][-1]
        own = {row["name"]: row["observed"] for row in last["attributes"]}["avg_score"]
        assert own != record["prediction"]  # the answering view alone says the opposite
        assert record["step_predictions"] == [record["prediction"]] * record["steps"]
        assert last["step_prediction"] == last["decision"] == record["prediction"]
        assert record["prediction_flips"] == 0 and record["first_view_prediction"] == record["prediction"]
