"""``aiv-eval heights``: the same agent at eye level only and with height levels, paired on the same episodes.

The dataset is the ``micro`` preset with a raised twin of every view (:mod:`.leveled`): restricted to eye
level it must play exactly the one-level dataset's episodes, and both arms must be paired on every episode.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from aiv_eval.cli import main
from aiv_eval.records.store import load_run
from aiv_eval.run.in_process import run_in_process
from support import synthetic
from support.eval_specs import ORACLE_VETO_PARAMS, oracle_veto_spec

from .leveled import leveled_copy

micro_root = synthetic.micro_root  # fixture


@pytest.fixture(scope="module")
def leveled_root(micro_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return leveled_copy(micro_root, tmp_path_factory.mktemp("leveled") / "pv_micro_above")


def _params(tmp_path: Path) -> Path:
    params = tmp_path / "params.yaml"
    params.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / "unused"), encoding="utf-8")
    return params


def _refuse(constant: str) -> None:
    raise AssertionError(f"heights.json holds {constant}: not strict JSON")


def _without_run_id(run_dir: Path) -> list[dict[str, object]]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "run_id"} for line in lines]


def test_eye_level_against_heights_on_the_same_episodes(
    tmp_path: Path, micro_root: Path, leveled_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    # The random next-best-view takes "up" and "down" among its moves, so the heights arm leaves eye level.
    common = ["evaluator.save_crops=false", "verifier.agent.nbv=random"]
    code = main([
        "heights", str(_params(tmp_path)), "--dataset", str(leveled_root), "--out", str(out), "--quiet",
        "--set", common[0], "--set", common[1], "--bootstrap-resamples", "200",
    ])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    document = json.loads((out / "heights.json").read_text(encoding="utf-8"), parse_constant=_refuse)
    assert [arm["name"] for arm in document["arms"]] == ["eye", "heights"]
    eye, heights = document["rows"]
    assert eye["n"] == heights["n"] == 12
    paired = document["paired"]
    assert paired["accuracy"]["common_episodes"] == 12
    overall = paired["accuracy"]["overall"]
    assert overall["difference_b_minus_a"] == pytest.approx(heights["accuracy"] - eye["accuracy"], abs=1e-4)
    assert paired["steps"]["difference_b_minus_a"] == pytest.approx(heights["asd"] - eye["asd"], abs=1e-4)
    low, high = paired["steps"]["paired_bootstrap_ci"]
    assert low <= paired["steps"]["difference_b_minus_a"] <= high
    assert "| Accuracy |" in printed and "| Extra steps per episode |" in printed
    assert (out / "heights.md").read_text(encoding="utf-8") in printed

    # Eye level only plays the one-level dataset's episodes exactly: the same records, no level anywhere.
    plain = run_in_process(oracle_veto_spec(tmp_path, micro_root, "plain", *common))
    assert _without_run_id(out / "eye") == _without_run_id(plain.run_dir)
    assert "levels" not in eye
    # With heights the agent judged views on the raised twins too, and the figures by level say so.
    records = load_run(out / "heights").records
    assert {step.level for r in records for step in r.transcript} == {0, 1}
    views = heights["levels"]["views"]
    assert views["above"]["views"] == sum(step.level == 1 for r in records for step in r.transcript) > 0
    assert heights["levels"]["moves"]["up"]["moved"] > 0
    assert "## Views by height level — heights" in printed
    assert "Views by height level — eye" not in printed


def test_ab_compares_two_values_of_a_parameter_paired(
    tmp_path: Path, micro_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ab"
    code = main([
        "heights", str(_params(tmp_path)), "--dataset", str(micro_root), "--out", str(out), "--quiet",
        "--ab", "verifier.agent.fusion=veto,attr_majority", "--set", "evaluator.save_crops=false",
        "--bootstrap-resamples", "100",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr()
    document = json.loads((out / "heights.json").read_text(encoding="utf-8"), parse_constant=_refuse)
    assert [arm["name"] for arm in document["arms"]] == ["fusion-veto", "fusion-attr_majority"]
    assert load_run(out / "fusion-veto").run_config.config_info["fusion_type"] == "veto"
    assert load_run(out / "fusion-attr_majority").run_config.config_info["fusion_type"] == "attr_majority"
    assert document["paired"]["accuracy"]["common_episodes"] == 12


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ab", "verifier.agent.nbv=farthest"], "expected exactly two different values"),
        (["--ab", "verifier.agent.nbv=farthest,uncertainty", "--set", "verifier.agent.nbv=random"],
         "overrides what --ab"),
        (["--set", "offline_sim.height_levels=eye"], "overrides what the eye-level arm compares"),
    ],
)  # fmt: skip
def test_bad_ab_is_one_line_and_exit_2(
    tmp_path: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["heights", str(_params(tmp_path)), "--dataset", str(tmp_path), "--out", str(tmp_path / "o"), *extra]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_ceiling_with_heights_counts_what_only_the_raised_views_show(
    tmp_path: Path, micro_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every view-dependent attribute shows only on the raised twins: without heights the exact oracle can
    accept fewer positives than with them, and the arms' ceilings say so."""
    hidden = leveled_copy(micro_root, tmp_path / "pv_micro_hidden", only_off_eye_level=True)
    out = tmp_path / "out"
    code = main([
        "heights", str(_params(tmp_path)), "--dataset", str(hidden), "--out", str(out), "--quiet", "--ceiling",
        "--set", "evaluator.save_crops=false", "--bootstrap-resamples", "50",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr()
    eye, heights = json.loads((out / "heights.json").read_text(encoding="utf-8"))["rows"]
    assert eye["ceiling"] < heights["ceiling"] <= heights["positives"]
    assert "; ceiling " in (out / "heights.md").read_text(encoding="utf-8")


def test_the_survey_looks_off_eye_level_only_when_asked(leveled_root: Path) -> None:
    from aiv_eval.evidence.survey import SurveySource, pair_from_json, pair_to_json, survey_pairs
    from aiv_eval.run.spec import EvalSpec

    spec = EvalSpec()
    spec.verifier["verifier.backend"] = "oracle"
    spec.set_dataset(str(leveled_root))
    source = SurveySource(dataset_root=leveled_root, index_file="val/pv_index_all.jsonl")
    config, flat = spec.agent_config(), spec.agent_flat()
    plain = list(survey_pairs(source, config, flat, limit=2))
    leveled = list(survey_pairs(source, config, flat, limit=2, levels=True))
    assert {view.level for pair in plain for view in pair.views} == {0}
    assert {view.level for pair in leveled for view in pair.views} == {0, 1}
    for before, after in zip(plain, leveled, strict=True):
        assert after.views[: len(before.views)] == before.views  # eye level first, as before
    assert all("level" not in view for view in pair_to_json(plain[0])["views"])
    assert pair_from_json(json.loads(json.dumps(pair_to_json(leveled[0])))) == leveled[0]


def test_eye_level_only_is_a_run_of_its_own(tmp_path: Path, micro_root: Path) -> None:
    """``height_levels: eye`` changes the run id (a resume must not mix it with a run of every level); the
    default adds nothing to the identity, so every run id from before levels stays."""
    default = oracle_veto_spec(tmp_path, micro_root, "a").run_config().run_id
    every = oracle_veto_spec(tmp_path, micro_root, "b", "offline_sim.height_levels=all").run_config().run_id
    eye = oracle_veto_spec(tmp_path, micro_root, "c", "offline_sim.height_levels=eye").run_config().run_id
    assert default == every != eye


def test_figures_of_empty_groups_are_written_as_null() -> None:
    """A slice without positives (or without a YES) has NaN figures; heights.json holds null instead."""
    from aiv_eval.heights import json_safe

    document = {"per_pair": {"positive": math.nan, "neg_diff": 1.0}, "ci": (0.0, math.nan), "n": 3}
    assert json.dumps(json_safe(document), allow_nan=False) == (
        '{"per_pair": {"positive": null, "neg_diff": 1.0}, "ci": [0.0, null], "n": 3}'
    )
