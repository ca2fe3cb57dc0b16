"""Run an evaluation over ROS: the simulator, the verifier and the evaluator as three node processes.

This is what ``ros2 launch aiv_verifier offline_eval.launch.py`` does on a machine with ROS 2 installed, for
machines without ``launch`` (``ros2 launch`` is not on PyPI): every node gets the same params file (written
from the spec, so ``--set`` overrides reach the nodes), the simulator and the verifier are restarted when they
die (``respawn`` in the launch file), and the run ends when the evaluator exits. Each child's peak resident
memory is taken from the kernel when it is reaped (``wait4``), which is what the benchmark reports.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .spec import EvalSpec

if TYPE_CHECKING:
    from resource import struct_rusage

#: (node name, package, executable) in start order; the evaluator comes last and decides when the run ends.
NODE_EXECUTABLES = (
    ("offline_sim", "aiv_offline_sim", "offline_sim"),
    ("verifier", "aiv_verifier", "verifier"),
    ("evaluator", "aiv_eval", "evaluator"),
)
RESPAWNED = ("offline_sim", "verifier")
POLL_S = 0.1
PR_SET_PDEATHSIG = 1  # linux/prctl.h
SIGTERM_NUMBER = int(signal.SIGTERM)
#: Nodes exit with 2 on bad parameters; restarting them cannot help.
CONFIG_ERROR_EXIT = 2


class RosModeError(RuntimeError):
    """The node executables cannot be found or a node keeps dying."""


def executable_path(package: str, executable: str) -> Path:
    """``<prefix>/lib/<package>/<executable>`` of an installed ament package (what ``ros2 run`` finds)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        prefix = Path(get_package_prefix(package))
    except PackageNotFoundError as error:
        raise RosModeError(
            f"package {package!r} is not installed in AMENT_PREFIX_PATH; build the workspace and "
            "`source .env.sh` (or ros2_ws/install/setup.bash)"
        ) from error
    path = prefix / "lib" / package / executable
    if not path.is_file():
        raise RosModeError(f"{path} does not exist; rebuild the workspace (make build)")
    return path


def _resolve_prctl() -> Callable[..., Any] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


# Looked up here, in the parent: between fork and exec the child should do as little as possible (it may have
# been forked while another thread held a lock), so it only makes this one call.
_PRCTL = _resolve_prctl() if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask the kernel to SIGTERM this child when the process that started it dies.

    Nodes run in their own session (so a terminal's Ctrl-C reaches only us and we stop them in order); without
    this, a killed ``aiv-eval`` would leave three nodes running in the same ROS domain, where they would answer
    the next run's requests alongside its own nodes.
    """
    if _PRCTL is not None:  # only installed as the preexec_fn when it is
        _PRCTL(PR_SET_PDEATHSIG, SIGTERM_NUMBER)


class ManagedNode:
    """One node process; remembers the peak RSS over all its incarnations."""

    def __init__(self, name: str, argv: list[str], log_path: Path | None, env: dict[str, str]) -> None:
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None
        self.peak_rss_kib = 0
        self.starts = 0
        self._lock = threading.Lock()  # the supervisor loop and a caller's kill() may meet

    def start(self) -> None:
        output = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            output = open(self.log_path, "ab")  # noqa: SIM115 - the child owns it; closed after Popen
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdout=output,
                stderr=subprocess.STDOUT if output is not None else None,
                env=self.env,
                start_new_session=True,  # a Ctrl-C reaches us first; we stop the nodes in order
                preexec_fn=_die_with_parent if _PRCTL is not None else None,
            )
        finally:
            if output is not None:
                output.close()
        self.returncode = None
        self.starts += 1

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def poll(self) -> int | None:
        """Reap the child if it exited (recording its peak RSS); its exit code, or None while it runs."""
        with self._lock:
            if self.process is None or self.returncode is not None:
                return self.returncode
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid == 0:
                return None
            self._reaped(status, usage)
            return self.returncode

    def _reaped(self, status: int, usage: struct_rusage) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        assert self.process is not None
        self.process.returncode = self.returncode  # keep Popen from waiting on a reaped pid
        self.peak_rss_kib = max(self.peak_rss_kib, int(usage.ru_maxrss))

    def wait(self, timeout_s: float) -> int | None:
        deadline = time.monotonic() + timeout_s
        pause = threading.Event()
        while self.poll() is None:
            if time.monotonic() > deadline:
                return None
            pause.wait(POLL_S)
        return self.returncode

    def stop(self, timeout_s: float = 10.0) -> int | None:
        """SIGINT (as ``ros2 launch`` does), then SIGKILL if it does not exit."""
        if self.poll() is not None or self.process is None:
            return self.returncode
        self.process.send_signal(signal.SIGINT)
        if self.wait(timeout_s) is None:
            self.kill()
            self.wait(30.0)
        return self.returncode

    def kill(self) -> None:
        """SIGKILL, as a crash would (tests use it to simulate one); whoever polls next reaps the child."""
        with self._lock:
            if self.process is not None and self.returncode is None:
                self.process.kill()


@dataclass
class RosRunResult:
    run_dir: Path
    params_file: Path
    evaluator_exit_code: int | None
    wall_s: float
    peak_rss_mib: dict[str, float] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)


class RosEvaluation:
    """Three node processes sharing one params file; see the module docstring."""

    def __init__(
        self,
        spec: EvalSpec,
        *,
        respawn: bool = True,
        max_restarts: int = 5,
        log_dir: Path | None = None,
        evaluator_output: Path | None = None,
        stream: TextIO = sys.stderr,
    ) -> None:
        self.spec = spec
        self.respawn = respawn
        self.max_restarts = max_restarts
        self.stream = stream
        self.run_dir = spec.run_dir
        self.params_file = self.run_dir / "params.yaml"
        log_dir = log_dir or self.run_dir / "logs"
        self.nodes: dict[str, ManagedNode] = {}
        env = dict(os.environ)
        for name, package, executable in NODE_EXECUTABLES:
            argv = [
                str(executable_path(package, executable)),
                "--ros-args",
                "--params-file",
                str(self.params_file),
            ]
            log = evaluator_output if name == "evaluator" else log_dir / f"{name}.log"
            self.nodes[name] = ManagedNode(name, argv, log, env)
        self._stop = threading.Event()

    def request_stop(self) -> None:
        """Ask :meth:`run` to stop the nodes and return (from another thread or a signal handler)."""
        self._stop.set()

    def run(self) -> RosRunResult:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.spec.write(self.params_file)
        started = time.perf_counter()
        for node in self.nodes.values():
            node.start()
        evaluator = self.nodes["evaluator"]
        try:
            while evaluator.poll() is None and not self._stop.is_set():
                for name in RESPAWNED:
                    self._supervise(self.nodes[name])
                self._stop.wait(POLL_S)
        finally:
            # Evaluator first (it may still be writing), then the servers.
            for node in (evaluator, *(self.nodes[name] for name in RESPAWNED)):
                node.stop()
        return RosRunResult(
            run_dir=self.run_dir,
            params_file=self.params_file,
            evaluator_exit_code=evaluator.returncode,
            wall_s=time.perf_counter() - started,
            peak_rss_mib={name: node.peak_rss_kib / 1024.0 for name, node in self.nodes.items()},
            restarts={name: node.starts - 1 for name, node in self.nodes.items()},
        )

    def _supervise(self, node: ManagedNode) -> None:
        code = node.poll()
        if code is None:
            return
        if not self.respawn or node.starts > self.max_restarts or code == CONFIG_ERROR_EXIT:
            print(
                f"[aiv-eval] {node.name} exited with {code}; stopping the run (log: {node.log_path})",
                file=self.stream,
            )
            self._stop.set()
            return
        print(
            f"[aiv-eval] {node.name} exited with {code}; restarting it (log: {node.log_path})",
            file=self.stream,
        )
        node.start()
