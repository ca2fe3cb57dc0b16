"""``aiv-eval heights``: the same agent at eye level only and with height levels, paired on the same episodes.

The dataset is the ``micro`` preset with a raised twin of every view (:mod:`.leveled`): restricted to eye
level it must play exactly the one-level dataset's episodes, and both arms must be paired on every episode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval.cli import main
from aiv_eval.in_process import run_in_process
from aiv_eval.results_store import load_run
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


def _without_run_id(run_dir: Path) -> list[dict[str, object]]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "run_id"} for line in lines]


def test_eye_level_against_heights_on_the_same_episodes(
    tmp_path: Path, micro_root: Path, leveled_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main([
        "heights", str(_params(tmp_path)), "--dataset", str(leveled_root), "--out", str(out), "--quiet",
        "--set", "evaluator.save_crops=false", "--bootstrap-resamples", "200",
    ])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    document = json.loads((out / "heights.json").read_text(encoding="utf-8"))
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
    plain = run_in_process(oracle_veto_spec(tmp_path, micro_root, "plain", "evaluator.save_crops=false"))
    assert _without_run_id(out / "eye") == _without_run_id(plain.run_dir)
    assert "levels" not in eye
    # With heights every view judged is at eye level or on the raised twins, and the metrics say so.
    levels = {step.level for r in load_run(out / "heights").records for step in r.transcript}
    assert levels <= {0, 1}
    assert ("levels" in heights) == (1 in levels)


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
    document = json.loads((out / "heights.json").read_text(encoding="utf-8"))
    assert [arm["name"] for arm in document["arms"]] == ["fusion-veto", "fusion-attr_majority"]
    assert load_run(out / "fusion-veto").run_config.config_info["fusion_type"] == "veto"
    assert load_run(out / "fusion-attr_majority").run_config.config_info["fusion_type"] == "attr_majority"
    assert document["paired"]["accuracy"]["common_episodes"] == 12


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ab", "verifier.agent.nbv=farthest"], "expected exactly two different values"),
        (["--ab", "verifier.agent.nbv=farthest,uncertainty", "--set", "verifier.agent.nbv=random"],
         "set it in one place"),
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
