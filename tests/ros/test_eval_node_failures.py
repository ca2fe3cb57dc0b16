"""``aiv-eval run --mode ros`` when a node dies: the console says why, and a restart that cannot help is not made.

- a node that refuses its configuration (exit code 2) is not restarted; ``aiv-eval`` exits with 2 and prints
  the node's own one-line reason (through the public command, with the real nodes);
- relative dataset and run paths are written absolute into the nodes' params file;
- a node that fails twice in a row the same way is not started a third time, and every restart shows the
  reason, and a node stops on SIGINT even when ``aiv-eval`` was started with SIGINT ignored (stand-in node
  processes, so these cases take a second).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import yaml
from aiv_eval.run.ros_mode import NodeConfigurationError, RosEvaluation, absolute_paths, exit_reason
from aiv_eval.run.spec import EvalSpec
from support.ros_harness import wait_until
from support.tiny_dataset import EpisodeSpec, TinyDataset, ring

CLASSICAL_PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/pv_index_all.jsonl
evaluator:
  ros__parameters:
    run_dir: {run_dir}
    server_wait_s: 30.0
"""


def _aiv_eval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aiv_eval.cli", "run", *args, "--mode", "ros"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ),
        check=False,
    )


def _params(tmp_path: Path) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(CLASSICAL_PARAMS.format(run_dir="run"), encoding="utf-8")
    return path


def _error_line(stderr: str) -> str:
    """The command's one error line, without its program name (``cli.py`` under ``python -m``)."""
    lines = [line.split(": error: ", 1)[1] for line in stderr.splitlines() if ": error: " in line]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A one-pair dataset under ``tmp_path/tiny``, without the oracles' privileged ground truth."""
    data = TinyDataset(tmp_path / "tiny")
    episode = data.add_episode(EpisodeSpec(views=ring()))
    data.write_descriptions()
    data.write_index("pv_index_all.jsonl", [data.pair(episode)])
    return data.root


def test_a_value_the_simulator_refuses_stops_the_run_with_its_line_and_no_restart(
    tmp_path: Path, tiny: Path
) -> None:
    # aiv-eval accepts any string here; the node refuses it (rclpy would not create the topic).
    args = ("--dataset", "tiny", "--set", "offline_sim.camera_info_topic=camera info")
    completed = _aiv_eval(tmp_path, str(_params(tmp_path)), *args)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    line = _error_line(completed.stderr)
    reason = "offline_sim: parameter 'camera_info_topic' = 'camera info'; expected a valid ROS name: "
    assert line.startswith(
        f"offline_sim refused its configuration from {Path('run') / 'params.yaml'}: {reason}"
    )
    assert "restarting" not in completed.stderr and "exited with 2" not in completed.stderr
    log = (tmp_path / "run" / "logs" / "offline_sim.log").read_text(encoding="utf-8")
    assert log.count(reason) == 1 and "Traceback" not in log  # started once, refused in one line
    # Relative paths typed on the command line reach the nodes absolute.
    written = yaml.safe_load((tmp_path / "run" / "params.yaml").read_text(encoding="utf-8"))
    assert written["/**/offline_sim"]["ros__parameters"]["dataset_root"] == str(tiny)
    assert written["/**/evaluator"]["ros__parameters"]["run_dir"] == str(tmp_path / "run")


def test_a_verifier_that_refuses_its_backend_stops_the_run_with_its_reason(
    tmp_path: Path, tiny: Path
) -> None:
    args = ("--dataset", "tiny", "--set", "verifier.verifier.backend=oracle")
    completed = _aiv_eval(tmp_path, str(_params(tmp_path)), *args)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    line = _error_line(completed.stderr)
    assert line.startswith("verifier refused its configuration")
    assert "verifier: oracle verifier: tiny/privileged_gt: does not exist" in line and "dataset_root" in line
    assert "restarting" not in completed.stderr


# -- the supervisor, with stand-in node processes -------------------------------------------------------------

#: A server that runs until it is stopped (SIGINT ends it like a node).
IDLE = "import threading; threading.Event().wait(120)"


def _stand_ins(tmp_path: Path, **scripts: str) -> tuple[RosEvaluation, io.StringIO]:
    """A RosEvaluation whose node processes are the given Python scripts (default: idle ones)."""
    params = tmp_path / "params.yaml"
    params.write_text(CLASSICAL_PARAMS.format(run_dir=tmp_path / "run"), encoding="utf-8")
    spec = EvalSpec.load(params)
    spec.set_dataset(str(tmp_path))
    stream = io.StringIO()
    evaluation = RosEvaluation(spec, evaluator_output=tmp_path / "evaluator.log", stream=stream)
    for name, node in evaluation.nodes.items():
        node.argv = [sys.executable, "-c", textwrap.dedent(scripts.get(name, IDLE))]
    return evaluation, stream


def test_the_same_crash_twice_is_not_restarted_again_and_each_exit_says_why(tmp_path: Path) -> None:
    crash = """
        import sys
        print("[INFO] [1.0] [offline_sim]: serving 12 pairs", flush=True)
        print("RuntimeError: the camera driver went away", file=sys.stderr)
        sys.exit(1)
    """
    evaluation, stream = _stand_ins(tmp_path, offline_sim=crash)
    result = evaluation.run()
    lines = stream.getvalue().splitlines()
    assert lines == [
        f"[aiv-eval] offline_sim exited with 1: RuntimeError: the camera driver went away "
        f"(log: {tmp_path / 'run' / 'logs' / 'offline_sim.log'}); restarting it",
        f"[aiv-eval] offline_sim exited with 1: RuntimeError: the camera driver went away "
        f"(log: {tmp_path / 'run' / 'logs' / 'offline_sim.log'}); not restarting it (it failed the same way "
        "the last time; another start would only repeat it); stopping the run",
    ]
    assert result.restarts["offline_sim"] == 1 and result.stopped_by is not None
    assert result.stopped_by.name == "offline_sim" and result.stopped_by.code == 1


def test_different_failures_are_restarted_with_their_reasons(tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    flaky = f"""
        import pathlib, sys, threading
        counter = pathlib.Path({str(counter)!r})
        starts = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(starts))
        if starts <= 2:
            print(f"verifier: lost the camera (start {{starts}})", file=sys.stderr)
            sys.exit(1)
        threading.Event().wait(120)
    """
    evaluation, stream = _stand_ins(tmp_path, verifier=flaky)
    outcome: dict[str, object] = {}
    runner = threading.Thread(target=lambda: outcome.setdefault("result", evaluation.run()), daemon=True)
    runner.start()
    wait_until(lambda: evaluation.nodes["verifier"].starts == 3, "the verifier's third start", timeout_s=60.0)
    evaluation.request_stop()
    runner.join(timeout=60.0)
    assert not runner.is_alive()
    text = stream.getvalue()
    assert "verifier exited with 1: verifier: lost the camera (start 1)" in text
    assert "verifier exited with 1: verifier: lost the camera (start 2)" in text
    assert text.count("restarting it") == 2 and "not restarting" not in text


def test_a_config_exit_is_never_restarted_and_is_raised_with_the_nodes_line(tmp_path: Path) -> None:
    refuses = """
        import sys
        print("[INFO] [1.0] [verifier]: starting", flush=True)
        print("verifier: parameter 'agent.nbv' = 'x'; expected one of farthest, llm, random", file=sys.stderr)
        sys.exit(2)
    """
    evaluation, stream = _stand_ins(tmp_path, verifier=refuses)
    with pytest.raises(NodeConfigurationError) as caught:
        evaluation.run()
    assert "verifier: parameter 'agent.nbv' = 'x'; expected one of farthest, llm, random" in str(caught.value)
    assert evaluation.nodes["verifier"].starts == 1 and stream.getvalue() == ""
    assert all(node.poll() is not None for node in evaluation.nodes.values())  # every node was stopped


def test_the_reason_is_the_last_line_that_is_not_routine_logging() -> None:
    assert exit_reason("[INFO] [1.0] [n]: up\nboom\n[INFO] [2.0] [n]: bye\n\n") == "boom"
    traceback = "Traceback (most recent call last):\n  File 'x', line 1\nValueError: bad\n"
    assert exit_reason(traceback) == "ValueError: bad"
    assert exit_reason("[WARN] [1.0] [n]: disk nearly full\n") == "[WARN] [1.0] [n]: disk nearly full"
    assert exit_reason("[INFO] [1.0] [n]: up\n") == ""


def test_relative_paths_outside_the_run_identity_are_made_absolute(tmp_path: Path) -> None:
    spec = EvalSpec.load(_params(tmp_path), ["verifier.verifier.dataset_root=data/x"])
    spec.set_dataset("data/x")
    written = absolute_paths(spec, tmp_path)
    assert written.sim["dataset_root"] == str(tmp_path / "data" / "x")
    assert written.evaluator["run_dir"] == str(tmp_path / "run")
    assert written.verifier["verifier.dataset_root"] == "data/x"  # an agent parameter: part of the run id
    assert spec.sim["dataset_root"] == "data/x"  # the spec itself is left as it was
    spec.evaluator["run_dir"] = "."
    assert absolute_paths(spec, tmp_path).evaluator["run_dir"] == "."  # its name would change


def test_nodes_stop_on_sigint_even_when_aiv_eval_was_started_with_sigint_ignored(tmp_path: Path) -> None:
    # A shell starts a background job (`aiv-eval run ... &`, nohup) with SIGINT ignored, and children inherit that;
    # the stop's SIGINT must still end the servers (else each waits out the stop's timeout and is killed).
    reports = """
        import signal, sys, threading
        print("SIGINT ignored" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "SIGINT handled", flush=True)
        threading.Event().wait(120)
    """
    evaluation, _stream = _stand_ins(tmp_path, offline_sim=reports, verifier=reports)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for name in ("offline_sim", "verifier"):
            evaluation.nodes[name].start()
    finally:
        signal.signal(signal.SIGINT, previous)
    for name in ("offline_sim", "verifier"):
        node = evaluation.nodes[name]
        assert node.log_path is not None
        wait_until(
            lambda node=node: "SIGINT" in node.log_path.read_text(), f"{name}'s report", timeout_s=30.0
        )
        assert "SIGINT handled" in node.log_path.read_text()
        assert node.stop(timeout_s=30.0) == -signal.SIGINT  # ended by the SIGINT, not by the SIGKILL after it
