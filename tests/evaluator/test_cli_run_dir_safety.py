"""``aiv-eval run`` keeps everything it writes inside the run directory, whatever the sweep values are."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from aiv_eval.cli import safe_run_name
from support.eval_specs import ORACLE_VETO_PARAMS


def _files(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file()}


def test_safe_run_name_keeps_safe_names_and_confines_the_rest() -> None:
    for name in ("nbv-random", "error_rate-0.1_nbv-farthest", "x-+1e3"):
        assert safe_run_name(name) == name
    for name in ("run_name-../../../X", "a/b", "..", ".", "", "a\\b", "C:x", "ünï"):
        safe = safe_run_name(name)
        assert "/" not in safe and "\\" not in safe and safe not in ("", ".", "..")
        assert not safe.startswith(".")
    assert safe_run_name("v-a/b") != safe_run_name("v-a_b")  # no two values share a directory


def test_sweep_value_cannot_write_outside_the_run_dir(
    tmp_path: Path, micro_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "a" / "b" / "c"
    run_dir = work / "runs"
    work.mkdir(parents=True)
    params = work / "params.yaml"
    params.write_text(ORACLE_VETO_PARAMS.format(run_dir=run_dir))
    before = _files(tmp_path)
    code = aiv_eval([
        "run", str(params), "--dataset", str(micro_root), "--set", "evaluator.slice_end=2",
        "--sweep", "evaluator.run_name=../../../X,safe", "--report", "--mode", "inprocess",
    ])  # fmt: skip
    assert code == 0
    written = _files(tmp_path) - before
    assert written and all(path.is_relative_to(run_dir) for path in written), sorted(
        str(p) for p in written if not p.is_relative_to(run_dir)
    )
    children = sorted(child.name for child in run_dir.iterdir())
    assert len(children) == 2 and "run_name-safe" in children
    assert all("/" not in name and not name.startswith(".") for name in children)
    assert "run written to" in capsys.readouterr().out


def test_a_sweep_repeating_a_value_is_refused(
    tmp_path: Path, micro_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / "runs"))
    code = aiv_eval([
        "run", str(params), "--dataset", str(micro_root), "--sweep", "verifier.agent.nbv=random,random",
        "--mode", "inprocess",
    ])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "same value twice" in err
    assert not (tmp_path / "runs").exists()
