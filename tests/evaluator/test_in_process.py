"""The in-process evaluator on a pipeline-made dataset: records, metrics, determinism, resume, sweeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from aiv_eval.run.in_process import run_in_process
from aiv_eval.run.spec import EvalSpec, SpecError
from support.eval_specs import ORACLE_VETO_PARAMS, oracle_veto_spec

_spec = oracle_veto_spec


def test_oracle_run_writes_records_and_metrics(tmp_path: Path, micro_root: Path) -> None:
    run_dir = run_in_process(_spec(tmp_path, micro_root, "a")).run_dir
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 12 and len({r["episode_key"] for r in records}) == 12
    assert all(r["status"] == "ok" for r in records)
    positives = [r for r in records if r["pair_type"] == "positive"]
    assert positives and all(r["prediction"] == "Yes" for r in positives)  # the oracle never rejects itself
    assert all(r["prediction"] == "No" for r in records if r["pair_type"] == "neg_diff")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["total_episodes"] == 12
    assert metrics["config_info"]["fusion_type"] == "veto" and metrics["config_info"]["max_steps"] == 6
    crop = records[0]["transcript"][0]["crop_file"]
    assert crop and (run_dir / crop).is_file()


def test_same_configuration_gives_identical_results_and_resume_completes_a_killed_run(
    tmp_path: Path, micro_root: Path
) -> None:
    first = run_in_process(_spec(tmp_path, micro_root, "a", "evaluator.save_crops=false")).run_dir
    second = run_in_process(_spec(tmp_path, micro_root, "b", "evaluator.save_crops=false")).run_dir
    full = (first / "results.jsonl").read_bytes()
    assert full == (second / "results.jsonl").read_bytes()
    # Simulate a kill: keep 5 records and half of the sixth line, then resume.
    lines = full.splitlines(keepends=True)
    (second / "results.jsonl").write_bytes(b"".join(lines[:5]) + lines[5][:40])
    run_in_process(_spec(tmp_path, micro_root, "b", "evaluator.save_crops=false"))
    assert (second / "results.jsonl").read_bytes() == full
    # A finished run re-run is a no-op.
    run_in_process(_spec(tmp_path, micro_root, "b", "evaluator.save_crops=false"))
    assert (second / "results.jsonl").read_bytes() == full


def test_resume_with_another_configuration_is_refused(tmp_path: Path, micro_root: Path) -> None:
    run_in_process(_spec(tmp_path, micro_root, "a", "evaluator.slice_end=2", "evaluator.save_crops=false"))
    with pytest.raises(Exception, match="nbv"):
        run_in_process(
            _spec(
                tmp_path,
                micro_root,
                "a",
                "evaluator.slice_end=2",
                "verifier.agent.nbv=random",
                "evaluator.save_crops=false",
            )
        )


def test_cli_sweep_and_bad_overrides(tmp_path: Path, micro_root: Path, capsys) -> None:
    params = tmp_path / "sweep.yaml"
    params.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / "sweep"))
    code = aiv_eval([
        "run", str(params), "--dataset", str(micro_root), "--set", "evaluator.slice_end=4",
        "--set", "evaluator.save_crops=false", "--sweep", "verifier.agent.nbv=random,farthest", "--report",
        "--mode", "inprocess",
    ])  # fmt: skip
    assert code == 0
    for name in ("nbv-random", "nbv-farthest"):
        assert len((tmp_path / "sweep" / name / "results.jsonl").read_text().splitlines()) == 4
    assert (tmp_path / "sweep" / "nbv-random" / "report.html").is_file()
    with pytest.raises(SpecError, match=r"unknown parameter offline_sim\.speed"):
        EvalSpec.load(params, ["offline_sim.speed=3"])
    assert aiv_eval(["run", str(params), "--set", "nonsense"]) == 2
    assert "expected node.param=value" in capsys.readouterr().err
