"""`make demo`'s script, end to end: simulator process + client over DDS on a small dataset."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.tiny_dataset import build_small_benchmark

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_demo_drives_episodes_through_the_simulator_node(tmp_path):
    data = build_small_benchmark(tmp_path / "pv", images=True)
    data.write_index("pv_index_all.jsonl", [data.pair(episode) for episode in data.episodes])
    completed = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "scripts" / "demo.py"),
            "--dataset",
            str(data.root),
            "--episodes",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    steps = re.findall(r"step (\d): (\S+)\s+-> (\S+)", completed.stdout)
    assert len(steps) == 3 * 5  # T = 6: five moves per pair before the decision step
    assert {outcome for _, _, outcome in steps} <= {"moved", "stayed", "unreachable", "already-visited"}
    assert "move round trip" in completed.stdout
