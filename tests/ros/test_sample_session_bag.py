"""The recorded evaluation session in bags/ is re-made by the commands bags/README.md gives: the micro dataset
(fixed seed) and one episode of ``aiv-eval run --mode ros --record-bags``.

A live recording carries other clock values each time, so stamps are compared by their order (every frame
reference still has to point at the same frame) and measured durations are left out; everything else — the
images, camera info, ground truth, the request, every step report and the verdict — must be equal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.sample_bags import MICRO_COMMAND, REPO_ROOT, SESSION, assert_same_messages, readme_text

# The commands of bags/README.md (MICRO: the scratch dataset, RUN: the scratch run directory).
SESSION_COMMANDS = (
    MICRO_COMMAND.replace("/tmp/pv_micro", "MICRO"),
    "aiv-eval run ros2_ws/src/aiv_verifier/config/offline_eval.yaml --dataset MICRO "
    "--set evaluator.slice_start=1 --set evaluator.slice_end=2 --set evaluator.run_dir=RUN --record-bags",
    "cp -r RUN/bags/00800-Pnu8fTXhpCq/1/99d621290b65 bags/session_micro_mug",
)
#: Fields holding measured wall-clock durations.
MEASURED = ("elapsed_s", "seconds")
MODULES = {"aiv-capture": "aiv_synth.cli", "aiv-eval": "aiv_eval.cli"}


def test_the_readme_gives_the_commands_that_made_the_session() -> None:
    text = readme_text()
    for command in SESSION_COMMANDS:
        shown = command.replace("MICRO", "/tmp/pv_micro").replace("RUN", "/tmp/session_run")
        assert shown in text, f"{shown} not in bags/README.md"


def test_the_session_sample_is_recreated_by_its_commands(tmp_path: Path) -> None:
    micro, run = tmp_path / "pv_micro", tmp_path / "session_run"
    for command in SESSION_COMMANDS[:2]:
        program, *args = command.replace("MICRO", str(micro)).replace("RUN", str(run)).split()
        done = subprocess.run(
            [sys.executable, "-m", MODULES[program], *args],
            cwd=REPO_ROOT,
            env=os.environ.copy(),
            capture_output=True,
            text=True,
            timeout=280,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    made = run / SESSION_COMMANDS[2].split()[2].removeprefix("RUN/")
    assert (made / "metadata.yaml").is_file(), sorted(str(p) for p in (run / "bags").rglob("*"))
    assert_same_messages(made, SESSION, relative_time=True, ignored=MEASURED)
