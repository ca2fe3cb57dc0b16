"""``aiv-eval bench`` reports each process tree's sampled PSS next to its peak RSS (issue 18, footprint)."""

from __future__ import annotations

import os
import subprocess
import sys

from aiv_eval.bench.memory import PssSampler, tree_pss_bytes
from aiv_eval.bench.ros_vs_inprocess import ModeTiming, format_report


def test_tree_pss_counts_the_children() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        alone = tree_pss_bytes(child.pid)
        with_parent = tree_pss_bytes(os.getpid())
        assert alone > 0 and with_parent > alone  # ours plus the child's
    finally:
        child.kill()
        child.wait()


def test_sampler_keeps_a_peak_per_name_and_skips_what_is_not_running() -> None:
    sampler = PssSampler(lambda: {"me": os.getpid(), "gone": None})
    sampler.sample()
    peaks = sampler.peak_mib()
    assert set(peaks) == {"me"} and peaks["me"] > 0


def test_report_shows_pss_beside_rss() -> None:
    def timing(mode: str, rss: dict[str, float], pss: dict[str, float]) -> ModeTiming:
        return ModeTiming(mode, 2, 10, 1.0, 2.0, rss, 0, verifier_calls=3, peak_pss_mib=pss)

    report = format_report(
        timing("in-process", {"aiv-eval (in-process)": 300.0}, {"aiv-eval (in-process)": 280.0}),
        timing("ROS", {"verifier": 400.0, "evaluator": 100.0}, {"verifier": 350.0}),
        identical=True,
    )
    assert "| verifier | 400 | 350 |" in report
    assert "| evaluator | 100 | n/a |" in report
    assert "| verifier model calls (OCR passes) | 3 | 3 |" in report
