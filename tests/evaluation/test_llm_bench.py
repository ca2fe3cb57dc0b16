"""``aiv-eval bench-llm`` on a few episodes: the report's structure and identical decisions (no timings asserted)."""

from __future__ import annotations

from pathlib import Path

from aiv_eval.cli import main as aiv_eval
from support import offline_models, synthetic

micro_root = synthetic.micro_root  # fixtures
no_network = offline_models.no_network

PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/pv_index_all.jsonl
verifier:
  ros__parameters:
    agent.nbv: farthest
evaluator:
  ros__parameters:
    run_dir: {run_dir}
"""


def test_bench_llm_short_run_reports_both_patterns_with_identical_decisions(
    tmp_path: Path, micro_root: Path, no_network: None, capsys
) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(PARAMS.format(run_dir=tmp_path / "unused"))
    out = tmp_path / "bench"
    code = aiv_eval([
        "bench-llm", str(params), "--dataset", str(micro_root), "--set", "evaluator.slice_end=3",
        "--out", str(out), "--latency-ms", "5", "--episodes-in-flight", "2", "--calls-per-view", "3",
    ])  # fmt: skip
    report = capsys.readouterr().out
    assert code == 0, report
    assert "identical decisions in all runs: yes" in report
    assert "answers recomputed during the timed runs: 0" in report
    assert "| measure | reference pattern (sequential) | concurrent calls + episodes in flight |" in report
    assert "| episodes | 3 | 3 |" in report
    assert "speed-up per episode (sequential / concurrent):" in report
    assert "model compute (separate, once):" in report and "deterministic answer function" in report
    assert "| peak requests in flight | 1 |" in report  # the reference pattern: one call at a time
    for name in ("compute", "sequential", "concurrent"):
        assert len((out / name / "results.jsonl").read_text().splitlines()) == 3
    # A second run into the same directory is refused rather than mixed with the first.
    assert aiv_eval(["bench-llm", str(params), "--dataset", str(micro_root), "--out", str(out)]) != 0
