"""The analysis CLI (metrics / compare / table / report) and its reuse by another parser."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aiv_eval import ResultsStore
from aiv_eval.analysis_cli import add_analysis_subcommands, build_parser, main, run_command

from .builders import run_config, six_episodes


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    dirs = []
    for name, records in (("a", six_episodes()), ("b", six_episodes()[:4])):
        with ResultsStore.open(tmp_path / name, run_config(name=f"run-{name}")) as store:
            for rec in records:
                store.append(rec)
        dirs.append(tmp_path / name)
    return dirs[0], dirs[1]


def test_metrics_command(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = runs
    assert main(["metrics", str(a), "--bootstrap-resamples", "100", "--wall-time-s", "5"]) == 0
    out = capsys.readouterr().out
    assert "accuracy 0.6667" in out and "ASD 2.17" in out
    data = json.loads((a / "metrics.json").read_text())
    assert data["accuracy"] == 0.6667 and data["wall_time_s"] == 5.0 and data["bootstrap"]["resamples"] == 100
    # recomputing keeps the recorded wall time; the unsure mapping can be switched
    assert main(["metrics", str(a), "--unsure-as-wrong", "--bootstrap-resamples", "100"]) == 0
    data = json.loads((a / "metrics.json").read_text())
    assert data["wall_time_s"] == 5.0 and data["accuracy"] == 0.5


def test_compare_table_report_commands(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = runs
    assert main(["compare", str(a), str(b), "--bootstrap-resamples", "100"]) == 0
    assert "Common completed episodes: **4**" in capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--json", "--bootstrap-resamples", "100"]) == 0
    assert json.loads(capsys.readouterr().out)["dropped"]["only_in_a"] == 2
    assert main(["table", str(a), str(b), "--bootstrap-resamples", "100"]) == 0
    table = capsys.readouterr().out
    assert "| run-a |" in table and "| run-b |" in table
    out_dir = a.parent / "report"
    assert main(["report", str(a), str(b), "--out", str(out_dir), "--bootstrap-resamples", "100"]) == 0
    assert (out_dir / "report.html").is_file() and (out_dir / "report.md").is_file()
    assert len(list((out_dir / "episodes").glob("ep_*.html"))) == 6


def test_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", str(tmp_path / "missing")]) == 2
    assert "not a run dir" in capsys.readouterr().err


def test_subcommands_can_join_another_parser(runs: tuple[Path, Path]) -> None:
    parser = argparse.ArgumentParser(prog="aiv-eval")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.set_defaults(func=lambda args: 0)
    add_analysis_subcommands(sub)
    assert run_command(parser.parse_args(["run"])) == 0
    assert run_command(parser.parse_args(["table", str(runs[0]), "--bootstrap-resamples", "50"])) == 0
    assert {"metrics", "compare", "table", "report"} <= set(sub.choices)
    assert build_parser().prog == "aiv-eval"


def test_module_entry_point() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, "-m", "aiv_eval.analysis_cli", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    for command in ("metrics", "compare", "table", "report"):
        assert f"    {command} " in proc.stdout
