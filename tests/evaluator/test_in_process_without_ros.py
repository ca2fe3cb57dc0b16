"""``aiv-eval run --mode inprocess`` loads no ROS code: no rclpy, no rosidl, no message package.

The in-process evaluation is the path that runs where ROS is not installed (a laptop, a CI runner without the
wheels) and the one a study imports into its own interpreter; a single message import on its way would tie it
to the ROS installation again. Checked in a fresh interpreter, after a real run of the main job's
configuration and of the oracle configuration on the ``micro`` dataset, because what a module imports lazily
(inside a function, on the first episode) only shows once the run has gone through it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.eval_specs import ORACLE_VETO_PARAMS

REPO = Path(__file__).resolve().parents[2]
MAIN_JOB_PARAMS = REPO / "ros2_ws" / "src" / "aiv_verifier" / "config" / "offline_eval.yaml"

#: Runs the CLI as a user would, then lists every loaded module that belongs to ROS or to the message layer.
FRESH_RUN = """
import json, sys
from aiv_eval.cli import main

codes = [
    main(["run", path, "--dataset", sys.argv[1], "--mode", "inprocess", "--set", "evaluator.slice_end=3",
          "--set", "evaluator.save_crops=false", "--set", "evaluator.run_dir=" + run_dir])
    for path, run_dir in zip(sys.argv[2::2], sys.argv[3::2])
]

def ros(name):
    top = name.split(".")[0]
    return (
        top in ("rclpy", "aiv_interfaces", "rpyutils", "launch", "launch_ros")
        or top.startswith(("rosidl", "rmw", "rcl"))
        or top.endswith(("_msgs", "_srvs"))
        or name.endswith(("ros_messages", "ros_port", "_node"))
    )

print(json.dumps({"codes": codes, "ros": sorted(name for name in sys.modules if ros(name))}))
"""


def test_an_in_process_run_imports_no_ros_module(tmp_path: Path, micro_root: Path) -> None:
    oracle_params = tmp_path / "oracle.yaml"
    oracle_params.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / "unused"))
    runs = [(MAIN_JOB_PARAMS, tmp_path / "main"), (oracle_params, tmp_path / "oracle")]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_RUN, str(micro_root), *(str(item) for run in runs for item in run)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["codes"] == [0, 0], done.stderr[-3000:]
    for _, run_dir in runs:
        assert len((run_dir / "results.jsonl").read_text().splitlines()) == 3
    assert outcome["ros"] == []
