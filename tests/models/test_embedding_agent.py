"""The embedding agents ``agent.kind: clip | siglip`` (spec §6) as agents of the one episode loop, offline.

The rules with numbers (strict thresholds, description aggregation, the cross-view mean over effective views,
the stop rules), then sessions on the trained tiny models frame by frame (duplicates, crops, one forward per
view, rows the transcripts read), then whole episodes in-process: a red or a blue mug queried with red or blue
descriptions must be answered Yes exactly when the colours agree, for CLIP, SigLIP and SigLIP2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiv_eval.cli import main as aiv_eval
from aiv_eval.run.in_process import run_in_process
from aiv_verifier.agent.embedding import EmbeddingAgent, EmbeddingSession, session_texts
from aiv_verifier.agent.embedding_rules import EmbeddingRules, cross_view_score
from aiv_verifier.agent.factory import ConfigError, build_model_agent
from aiv_verifier.agent.protocol import AgentSession
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.agent.steps import ViewFrame
from aiv_verifier.core.crop import Detection
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.detection.base import BoxMode, crop_view
from aiv_verifier.model_config import EmbeddingParams
from aiv_verifier.query.types import QueryMode, QuerySpec
from support.embedding_episodes import colour_dataset, colour_spec, expected_predictions, records_of
from support.offline_models import limit_torch_threads, no_network  # noqa: F401 - fixture
from support.tiny_embedding import (
    clip_dir_fixture,  # noqa: F401 - fixture clip_dir
    object_image,
    siglip2_dir_fixture,  # noqa: F401 - fixture siglip2_dir
    siglip_dir_fixture,  # noqa: F401 - fixture siglip_dir
)

pytestmark = pytest.mark.usefixtures("no_network")


# ---- the rules, with numbers ----------------------------------------------------------------------------


def test_thresholds_are_the_reference_values_and_strict() -> None:
    clip, siglip = EmbeddingRules.for_family("clip"), EmbeddingRules.for_family("siglip")
    assert (clip.threshold, siglip.threshold) == (0.25, 0.5)
    assert clip.answer(0.25) is Decision.NO and clip.answer(0.2500001) is Decision.YES
    assert siglip.answer(0.5) is Decision.NO and siglip.answer(0.5000001) is Decision.YES
    assert EmbeddingRules.for_family("clip", threshold=0.3).threshold == 0.3
    with pytest.raises(ValueError, match=r"embedding.aggregation"):
        EmbeddingRules.for_family("clip", aggregation="median")
    with pytest.raises(ValueError, match=r"embedding.stop_rule"):
        EmbeddingRules.for_family("clip", stop_rule="never")


def test_description_aggregation_avg_max_and_merged_text() -> None:
    scores = [0.1, 0.4, 0.31]
    assert EmbeddingRules.for_family("clip").view_score(scores) == pytest.approx(0.27)
    assert EmbeddingRules.for_family("clip", aggregation="max").view_score(scores) == 0.4
    assert EmbeddingRules.for_family("clip", aggregation="merged").view_score([0.2]) == 0.2
    descriptions = ("a red mug", " ", "with a handle")
    direct = QuerySpec(descriptions, QueryMode.DIRECT, "mug", "hint", (), "descriptions")
    assert session_texts(direct, "avg") == (("desc_1", "desc_2", "desc_3"), descriptions)
    assert session_texts(direct, "merged") == (("merged_desc",), ("a red mug with a handle",))
    cached = QuerySpec(
        descriptions,
        QueryMode.MERGED,
        "mug",
        "hint",
        (Attribute("merged_desc", "other", 2, "a red mug that has a handle"),),
        "merged-cache",
    )
    assert session_texts(cached, "merged") == (("merged_desc",), ("a red mug that has a handle",))


def test_cross_view_mean_and_stop_rules() -> None:
    assert cross_view_score([0.2, 0.4], 0.9) == pytest.approx(0.3)
    assert cross_view_score([], 0.9) == 0.9  # no effective view yet: the current one
    final = EmbeddingRules.for_family("clip")
    assert final.stop_reason(5, 6, [0.9, 0.9]) == "final" and final.stop_reason(4, 6, [0.9] * 5) == ""
    assert final.stop_reason(0, 1, [0.0]) == "final"
    margin = EmbeddingRules.for_family("clip", stop_rule="margin", stop_margin=0.1)
    assert margin.stop_reason(0, 6, [0.9]) == ""  # one effective view is never enough
    assert margin.stop_reason(1, 6, [0.36, 0.36]) == "converged"  # 0.36 > 0.25 + 0.1
    assert margin.stop_reason(1, 6, [0.14, 0.14]) == "converged"  # 0.14 < 0.25 - 0.1
    assert margin.stop_reason(1, 6, [0.35, 0.35]) == ""  # strictly beyond the margin only
    assert margin.stop_reason(2, 6, [0.6, 0.0]) == ""  # running mean 0.3: inside the margin
    off = EmbeddingRules.for_family("clip", stop_rule="margin", stop_margin=0.0)
    assert off.stop_reason(2, 6, [0.9, 0.9, 0.9]) == ""  # m = 0 disables the rule, as the reference


# ---- sessions frame by frame on the trained tiny models ------------------------------------------------


def _agent(model_dir: Path, kind: str = "clip", **params: object) -> EmbeddingAgent:
    limit_torch_threads()
    settings = AgentSettings(kind=kind, bbox_mode=params.pop("bbox_mode", BoxMode.GT))  # type: ignore[arg-type]
    return EmbeddingAgent.from_params(kind, EmbeddingParams(model_dir=str(model_dir), **params), settings)  # type: ignore[arg-type]


def _query(colour: str) -> QuerySpec:
    texts = (f"a {colour} mug", f"the {colour} object", f"a {colour} object")
    return QuerySpec(texts, QueryMode.DIRECT, "mug", "hint", (), "descriptions")


def _frame(step: int, sector: int, colour: str, *, failed: bool = False, **extra: object) -> ViewFrame:
    rng = np.random.default_rng(100 + step)
    image = object_image(rng, None, (64, 96))
    image[24:72, 16:48] = object_image(rng, colour, (32, 48))
    return ViewFrame(
        image=image,
        step_count=step,
        current_sector=sector,
        navigation_failed=failed,
        gt_box=(16.0, 24.0, 48.0, 72.0),
        **extra,  # type: ignore[arg-type]
    )


def test_a_session_is_an_agent_session_and_rows_carry_the_scores(clip_dir: Path) -> None:
    agent = _agent(clip_dir)
    session = agent.new_session(_query("red"), episode_key="k", max_steps=3)
    assert isinstance(session, EmbeddingSession)
    typed: AgentSession = session  # the protocol the nodes, the evaluator and bag replay hold
    step = typed.observe(_frame(0, 0, "red"))
    assert step.decision is Decision.UNSURE and step.move is not None and step.step_prediction is Decision.YES
    names = [row.name for row in step.attributes]
    assert names == ["desc_1", "desc_2", "desc_3", "avg_score"]
    assert all(row.last_answer == "Yes" and "clip score" in row.last_reason for row in step.attributes[:3])
    assert "cross-view mean over 1 effective view(s)" in step.attributes[3].last_reason
    assert session.model_calls == {"embedding_image": 1, "embedding_text": 1}
    assert {"crop", "embed_text", "embed_image", "nbv"} <= set(session.clock.seconds)
    assert session.final_decision is None and session.confidence() == 0.0


def test_duplicate_views_after_a_refused_move_do_not_count_and_cost_no_forward(clip_dir: Path) -> None:
    agent = _agent(clip_dir)
    forwards = {"vision": 0, "text": 0}
    agent.model.model.vision_model.register_forward_hook(
        lambda *_: forwards.__setitem__("vision", forwards["vision"] + 1)
    )
    agent.model.model.text_model.register_forward_hook(
        lambda *_: forwards.__setitem__("text", forwards["text"] + 1)
    )
    session = agent.new_session(_query("red"), episode_key="dup", max_steps=4)
    first = session.observe(_frame(0, 0, "red"))
    second = session.observe(_frame(1, first.move.target_index, "blue"))  # type: ignore[union-attr]
    assert second.move is not None
    # The move is refused: the same (blue) image again, a duplicate.
    third = session.observe(_frame(2, second.sector, "blue", failed=True))
    assert third.duplicate_view and all(row.last_answer == "" for row in third.attributes)
    red_view, blue_view = session.effective_view_scores
    assert red_view > 0.25 > blue_view
    assert forwards == {"vision": 2, "text": 1}  # one image forward per distinct view, texts once
    last = session.observe(_frame(3, 2, "red"))
    assert last.stop_reason == "final" and len(session.effective_view_scores) == 3
    mean = sum(session.effective_view_scores) / 3
    assert last.decision is (Decision.YES if mean > 0.25 else Decision.NO)
    assert f"{mean:.4f}" in last.attributes[-1].last_reason
    assert session.visited_order == (0, first.move.target_index, 2)  # type: ignore[union-attr]
    assert forwards == {"vision": 3, "text": 1}
    # A new episode embeds its texts again (once).
    agent.new_session(_query("red"), episode_key="next", max_steps=1).observe(_frame(0, 0, "red"))
    assert forwards["text"] == 2


def test_margin_rule_stops_after_two_effective_views(clip_dir: Path) -> None:
    agent = _agent(clip_dir, stop_rule="margin", stop_margin=0.05)
    session = agent.new_session(_query("blue"), episode_key="m", max_steps=6)
    first = session.observe(_frame(0, 0, "red"))
    assert not first.stopped
    second = session.observe(_frame(1, 3, "red"))
    assert second.stopped and second.stop_reason == "converged" and second.decision is Decision.NO
    assert all(row.converged for row in second.attributes)
    assert session.confidence() == 1.0


@pytest.mark.parametrize("mode", [BoxMode.GT, BoxMode.DETECTIONS])
def test_the_crop_is_the_pipelines_crop(clip_dir: Path, mode: BoxMode) -> None:
    agent = _agent(clip_dir, bbox_mode=mode)
    detections = (Detection((10.0, 20.0, 50.0, 80.0), 0.8), Detection((0.0, 0.0, 8.0, 8.0), 0.3))
    frame = _frame(0, 0, "red", detections=detections)
    step = agent.new_session(_query("red"), episode_key="c", max_steps=2).observe(frame)
    expected, _ = crop_view(frame.image, mode, gt_box=frame.gt_box, detections=detections)
    assert step.crop.box == expected.box and step.crop.confidence == expected.confidence
    assert np.array_equal(step.crop.image, expected.image)


def test_configuration_mistakes_are_refused_at_start_up(clip_dir: Path, siglip2_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"agent.nbv must be one of"):
        build_model_agent(
            AgentSettings(kind="clip", nbv="llm"), {"embedding": {"model_dir": str(clip_dir)}}, None
        )
    with pytest.raises(ConfigError, match=r"needs a clip checkpoint.*siglip2"):
        build_model_agent(AgentSettings(kind="clip"), {"embedding": {"model_dir": str(siglip2_dir)}}, None)
    with pytest.raises(ConfigError, match=r"embedding.overlength"):
        build_model_agent(
            AgentSettings(kind="clip"), {"embedding": {"model_dir": str(clip_dir), "overlength": "x"}}, None
        )
    with pytest.raises(ConfigError, match="detector"):
        build_model_agent(
            AgentSettings(kind="clip", bbox_mode="detector"),
            {"embedding": {"model_dir": str(clip_dir)}},
            None,
        )


def test_the_factory_reports_where_each_model_runs(clip_dir: Path) -> None:
    """Diagnostics name the device of every configured model; the weight-free default has none."""
    from aiv_common.setting_tree import nested_config
    from aiv_verifier.agent.factory import AgentFactory
    from aiv_verifier.verifier_parameters import config_parameter_defaults

    defaults = nested_config(config_parameter_defaults())
    assert AgentFactory.from_config(defaults).model_devices() == {}
    clip = nested_config(
        {**config_parameter_defaults(), "agent.kind": "clip", "embedding.model_dir": str(clip_dir)}
    )
    assert AgentFactory.from_config(clip).model_devices() == {"embedding": "cpu"}


# ---- whole episodes in-process ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def colour_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return colour_dataset(tmp_path_factory.mktemp("colours"))


@pytest.mark.parametrize(
    ("kind", "family", "overrides"),
    [
        ("clip", "clip", ()),
        ("clip", "clip", ("verifier.embedding.aggregation=max", "verifier.agent.nbv=random")),
        ("clip", "clip", ("verifier.embedding.aggregation=merged",)),
        ("siglip", "siglip", ()),
        ("siglip", "siglip2", ("verifier.embedding.stop_rule=margin",)),
    ],
    ids=["clip-avg-fps", "clip-max-random", "clip-merged", "siglip", "siglip2-margin"],
)
def test_verdicts_follow_the_images_through_whole_episodes(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    colour_root: Path,
    kind: str,
    family: str,
    overrides: tuple[str, ...],
) -> None:
    model_dir = request.getfixturevalue(f"{family}_dir")
    spec = colour_spec(tmp_path, colour_root, model_dir, "run", *overrides, kind=kind)
    records = records_of(run_in_process(spec).run_dir)
    assert [r["status"] for r in records] == ["ok"] * 4
    assert (
        [r["prediction"] for r in records] == expected_predictions(colour_root) == ["Yes", "No", "No", "Yes"]
    )
    margin = "verifier.embedding.stop_rule=margin" in overrides
    for record in records:
        assert record["stop_reason"] == ("converged" if margin else "final")
        assert record["steps"] == (2 if margin else 6)
        calls = record["model_calls"]
        assert calls["embedding_text"] == 1 and calls["embedding_image"] == record["steps"] - sum(
            step["duplicate_view"] for step in record["transcript"]
        )
    # The unreachable sector makes some episode repeat a view; the transcript says so.
    if not margin:
        assert any(step["outcome"] == "unreachable" for r in records for step in r["transcript"])


def test_a_bad_model_directory_ends_the_run_at_start_up_with_one_line_and_exit_2(
    tmp_path: Path, colour_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    colour_spec(tmp_path, colour_root, tmp_path / "no-such-dir", "bad")  # writes bad.yaml
    code = aiv_eval(["run", str(tmp_path / "bad.yaml"), "--dataset", str(colour_root), "--mode", "inprocess"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert code == 2 and "Traceback" not in err
    assert len(errors) == 1 and "embedding.model_dir" in errors[0] and "does not exist" in errors[0]
    assert not (tmp_path / "bad" / "results.jsonl").exists()
