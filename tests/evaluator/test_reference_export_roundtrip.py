"""A real in-process run, exported in the reference format and imported back: the same scores both ways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval import load_run
from aiv_eval.analysis.metrics import metrics_for_run
from aiv_eval.cli import main as aiv_eval
from aiv_eval.interchange import reference_metrics_part
from aiv_eval.run.in_process import run_in_process
from support.eval_specs import oracle_veto_spec


def test_an_in_process_run_survives_export_and_import(
    tmp_path: Path, micro_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = run_in_process(
        oracle_veto_spec(tmp_path, micro_root, "run", "evaluator.save_crops=false")
    ).run_dir
    out = tmp_path / "reference"
    index = micro_root / "val" / "pv_index_all.jsonl"
    assert aiv_eval(["export-reference", str(run_dir), str(out), "--index", str(index)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert len(results) == len(load_run(run_dir).records) == 12
    # every observed frame is named by its dataset-relative path, which exists in the dataset
    paths = {step["observation"]["rgb_path"] for r in results for step in r["transcript"]}
    assert paths and all((micro_root / p).is_file() for p in paths), sorted(paths)[:3]
    # the reference-format metrics.json written by the export agrees with the exported records
    assert aiv_eval(["score-reference", str(out), "--bootstrap-resamples", "50"]) == 0
    assert "agrees with these metrics" in capsys.readouterr().out
    back = tmp_path / "back"
    assert (
        aiv_eval(["import-reference", str(out), "--run-dir", str(back), "--bootstrap-resamples", "50"]) == 0
    )
    ours = metrics_for_run(run_dir, bootstrap_resamples=50)
    theirs = metrics_for_run(back, bootstrap_resamples=50)
    assert reference_metrics_part(theirs) == reference_metrics_part(ours)
    assert theirs["flip_stats"] == ours["flip_stats"]
