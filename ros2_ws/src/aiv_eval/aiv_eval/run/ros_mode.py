"""Run an evaluation over ROS: the simulator, the verifier and the evaluator as three node processes.

This is what ``ros2 launch aiv_verifier offline_eval.launch.py`` does on a machine with ROS 2 installed, for
machines without ``launch`` (``ros2 launch`` is not on PyPI): every node gets the same params file (written
from the spec, so ``--set`` overrides reach the nodes; relative dataset and run paths are written absolute,
so the file means the same from any working directory), the simulator and the verifier are restarted when
they die (``respawn`` in the launch file), and the run ends when the evaluator exits. With ``evaluator.pairs`` set,
one simulator + verifier pair is started per name, in that namespace (``pair0/verifier`` in the results'
node names, its log in ``logs/pair0/verifier.log``), each restarted on its own. Each child's peak
resident memory is taken from the kernel when it is reaped (``wait4``), which is what the benchmark reports.

When a node dies, the console gets its reason: the last line it wrote that is not routine logging (the
one-line refusal the nodes print for bad parameters, or the last line of a traceback). A node that exits with
:data:`CONFIG_ERROR_EXIT` refused its configuration: it is not restarted and the run ends with
:class:`NodeConfigurationError`. A node that fails twice in a row the same way (same exit status, same
reason) is not restarted again either, since a third start would only repeat it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from aiv_common.executables import ExecutableNotFoundError
from aiv_common.executables import executable_path as _installed_executable

from .pairs import in_pair, node_namespace, parse_pairs
from .spec import EvalSpec, SpecError

if TYPE_CHECKING:
    from resource import struct_rusage

#: (node name, package, executable) in start order; the evaluator comes last and decides when the run ends.
NODE_EXECUTABLES = (
    ("offline_sim", "aiv_offline_sim", "offline_sim"),
    ("verifier", "aiv_verifier", "verifier"),
    ("evaluator", "aiv_eval", "evaluator"),
)
POLL_S = 0.1
PR_SET_PDEATHSIG = 1  # linux/prctl.h
SIGTERM_NUMBER = int(signal.SIGTERM)
#: Seconds the session recorder may take to see the verifier's and the camera's publishers (--record-bags).
RECORDER_READY_S = 60.0
#: The simulator's camera_info topic when the spec does not set it (the recorder needs the name).
SIM_TOPIC_DEFAULTS = {"camera_info_topic": "camera/camera_info"}
#: Nodes exit with 2 on bad parameters; restarting them cannot help.
CONFIG_ERROR_EXIT = 2
#: How much of the end of a node's log is read back to find why it exited.
REASON_TAIL_BYTES = 16 * 1024
#: Routine ROS logging, never the reason a node exited.
_ROUTINE_LOG_LINE = re.compile(r"^\[(?:DEBUG|INFO)\] ")
#: Parameters that name a path and are not part of the run's identity: written absolute into the params file.
ABSOLUTE_PATH_PARAMETERS = {"offline_sim": ("dataset_root",), "evaluator": ("dataset_root", "run_dir")}


class RosModeError(RuntimeError):
    """The node executables cannot be found or a node keeps dying."""


def executable_path(package: str, executable: str) -> Path:
    """The installed node executable, or :class:`RosModeError` saying how to build it."""
    try:
        return _installed_executable(package, executable)
    except ExecutableNotFoundError as error:
        raise RosModeError(str(error)) from error


class NodeConfigurationError(SpecError):
    """A node refused the configuration it was started with (it exited with :data:`CONFIG_ERROR_EXIT`).

    A :class:`~aiv_eval.run.spec.SpecError`: like a value ``aiv-eval`` refuses itself, the run cannot start until
    the params file or the command line is fixed. The message carries the node's own one-line reason.
    """


def exit_reason(output: str) -> str:
    """The line of a node's output that says why it exited: its last line that is not routine logging.

    For the nodes' start-up refusals that is the one line they print; for an uncaught exception, the last line
    of the traceback. Empty when there is nothing but routine logging.
    """
    for line in reversed(output.splitlines()):
        text = line.strip()
        if text and not _ROUTINE_LOG_LINE.match(text):
            return text
    return ""


def describe_exit(code: int) -> str:
    """``exited with 1`` or, for a death by signal (negative code), ``was killed by SIGKILL``."""
    if code >= 0:
        return f"exited with {code}"
    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


@dataclass(frozen=True)
class NodeExit:
    """How one incarnation of a node ended."""

    name: str
    code: int
    reason: str
    log_path: Path | None

    def same_failure(self, other: NodeExit | None) -> bool:
        return other is not None and (other.code, other.reason) == (self.code, self.reason)

    def describe(self) -> str:
        """One line: the node, how it ended, its reason and where its whole output is."""
        reason = f": {self.reason}" if self.reason else " without saying why"
        where = f" (log: {self.log_path})" if self.log_path is not None else ""
        return f"{self.name} {describe_exit(self.code)}{reason}{where}"


def absolute_paths(spec: EvalSpec, cwd: Path | None = None) -> EvalSpec:
    """A copy of ``spec`` whose relative path parameters (:data:`ABSOLUTE_PATH_PARAMETERS`) are absolute.

    The nodes would resolve them against their own working directory; written absolute, the params file means
    the same wherever it is used. Only parameters outside the run's identity are rewritten (the verifier's
    paths are agent parameters, part of the run id shared with the in-process mode, so they stay as given),
    and a run dir is left alone when that would change its name (``.``), which names the run.
    """
    base = Path.cwd() if cwd is None else cwd
    values = {"offline_sim": dict(spec.sim), "evaluator": dict(spec.evaluator)}
    for node, names in ABSOLUTE_PATH_PARAMETERS.items():
        for name in names:
            text = str(values[node].get(name) or "")
            path = Path(text)
            if text and not path.is_absolute() and (base / path).name == path.name:
                values[node][name] = str(base / path)
    return dataclasses.replace(spec, sim=values["offline_sim"], evaluator=values["evaluator"])


def _resolve_prctl() -> Callable[..., Any] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


# Looked up here, in the parent: between fork and exec the child should do as little as possible (it may have
# been forked while another thread held a lock), so it only makes this one call.
_PRCTL = _resolve_prctl() if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask the kernel to SIGTERM this child when the process that started it dies, and let SIGINT stop it.

    Nodes run in their own session (so a terminal's Ctrl-C reaches only us and we stop them in order); without
    this, a killed ``aiv-eval`` would leave three nodes running in the same ROS domain, where they would answer
    the next run's requests alongside its own nodes. SIGINT is how :meth:`ManagedNode.stop` ends a node, so an
    ignored SIGINT inherited from us (``aiv-eval`` started in the background by a shell, or under ``nohup``) is
    reset: the verifier keeps an ignored SIGINT ignored and would otherwise be killed only after the stop's
    timeout, once per pair.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, SIGTERM_NUMBER)


def _start_ignoring_sigint() -> None:  # pragma: no cover - runs in the child between fork and exec
    """As :func:`_die_with_parent`, and SIGINT ignored until the node's ``main`` takes it back.

    Python raises KeyboardInterrupt wherever a SIGINT lands, imports included, so a run stopped while the
    evaluator was still starting printed a traceback on the console; an ignored SIGINT is instead followed by
    :meth:`ManagedNode.stop`'s SIGKILL, and nothing had been recorded yet.
    """
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ManagedNode:
    """One node process; remembers the peak RSS over all its incarnations. ``sigint_after_start``: the node's
    ``main`` re-enables SIGINT itself (see :func:`_start_ignoring_sigint`)."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        log_path: Path | None,
        env: dict[str, str],
        *,
        sigint_after_start: bool = False,
    ) -> None:
        self.name = name
        self.sigint_after_start = sigint_after_start
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None
        self.peak_rss_kib = 0
        self.starts = 0
        self._output_start = 0  # where this incarnation's output begins in the (appended) log
        self._lock = threading.Lock()  # the supervisor loop and a caller's kill() may meet

    def start(self) -> None:
        output = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            output = open(self.log_path, "ab")  # noqa: SIM115 - the child owns it; closed after Popen
            self._output_start = output.tell()
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdout=output,
                stderr=subprocess.STDOUT if output is not None else None,
                env=self.env,
                start_new_session=True,  # a Ctrl-C reaches us first; we stop the nodes in order
                preexec_fn=_start_ignoring_sigint if self.sigint_after_start else _die_with_parent,
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

    def last_exit(self) -> NodeExit | None:
        """How the current incarnation ended (None while it runs), with the reason from its log.

        A death by signal has no reason of its own: whatever the node logged last was not about it.
        """
        code = self.poll()
        if code is None:
            return None
        reason = ""
        if code >= 0 and self.log_path is not None:
            reason = exit_reason(self._read_output_tail())
        return NodeExit(self.name, code, reason, self.log_path)

    def _read_output_tail(self) -> str:
        assert self.log_path is not None
        try:
            with open(self.log_path, "rb") as log:
                end = log.seek(0, os.SEEK_END)
                log.seek(max(self._output_start, end - REASON_TAIL_BYTES))
                return log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""


@dataclass
class RosRunResult:
    run_dir: Path
    params_file: Path
    evaluator_exit_code: int | None
    wall_s: float
    peak_rss_mib: dict[str, float] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)
    #: Set when a server node's failure ended the run early: how it ended and why.
    stopped_by: NodeExit | None = None


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
        stream: TextIO | None = None,
        record_bags: bool = False,
    ) -> None:
        self.spec = spec
        self.respawn = respawn
        self.max_restarts = max_restarts
        # Resolved per call: a default bound at import would keep whatever sys.stderr was then (a test's
        # captured stream, closed by the time a later test runs).
        self.stream = sys.stderr if stream is None else stream
        self.run_dir = spec.run_dir
        self.params_file = self.run_dir / "params.yaml"
        log_dir = log_dir or self.run_dir / "logs"
        self.nodes: dict[str, ManagedNode] = {}
        env = dict(os.environ)
        pairs = parse_pairs(str(spec.evaluator.get("pairs", "")))
        if pairs and record_bags:
            raise SpecError(
                "--record-bags records the topics of one simulator + verifier pair; leave evaluator.pairs empty"
            )
        #: The simulators and verifiers, restarted when they die: one of each, or one of each per pair.
        self.respawned: list[str] = []
        for pair in pairs or ("",):
            for name, package, executable in NODE_EXECUTABLES:
                if name == "evaluator":
                    continue
                key = in_pair(pair, name)
                argv = [
                    str(executable_path(package, executable)),
                    "--ros-args",
                    "--params-file",
                    str(self.params_file),
                ]
                if pair:
                    argv += ["-r", f"__ns:={node_namespace(pair)}"]
                log = log_dir / pair.strip("/") / f"{name}.log" if pair else log_dir / f"{name}.log"
                self.nodes[key] = ManagedNode(key, argv, log, env)
                self.respawned.append(key)
        self.nodes["evaluator"] = ManagedNode(
            "evaluator",
            [
                str(executable_path("aiv_eval", "evaluator")),
                "--ros-args",
                "--params-file",
                str(self.params_file),
            ],
            evaluator_output,
            env,
            sigint_after_start=True,
        )
        #: With record_bags, a session recorder writes one bag per episode to run_dir/bags/<episode key>; the
        #: evaluator starts only once it sees the verifier's and the camera's publishers.
        self.bags_dir = self.run_dir / "bags" if record_bags else None
        self.recorder_ready = log_dir / "recorder.ready"
        if record_bags:
            recorder = ManagedNode("recorder", self._recorder_argv(), log_dir / "recorder.log", env)
            evaluator = self.nodes.pop("evaluator")
            self.nodes.update(recorder=recorder, evaluator=evaluator)  # the evaluator stays last
        self._stop = threading.Event()
        self._last_exits: dict[str, NodeExit] = {}
        self._stopped_by: NodeExit | None = None

    def _recorder_argv(self) -> list[str]:
        """The session recorder's command line: the topics the verifier and the simulator are configured with."""
        verifier = self.spec.verifier_values()
        sim = {**SIM_TOPIC_DEFAULTS, **self.spec.sim}
        topics = {
            "image": verifier["image_topic"],
            "camera_info": sim["camera_info_topic"],
            "ground_truth": verifier["ground_truth_topic"],
            "detections": verifier["detections_topic"],
            "requests": verifier["request_topic"],
            "steps": verifier["step_topic"],
            "verdicts": verifier["verdict_topic"],
        }
        assert self.bags_dir is not None
        return [
            str(executable_path("aiv_bags_ros", "session_recorder")),
            "--split-dir", str(self.bags_dir),
            "--verifier-params", str(self.params_file),
            "--ready-file", str(self.recorder_ready),
            *(f"--topic={role}={topic}" for role, topic in topics.items()),
            "--require=camera_info",
            "--require=steps",
            *(["--require=ground_truth"] if sim.get("privileged_output") else []),
        ]  # fmt: skip

    def _wait_for_recorder(self) -> None:
        """Until the recorder has matched the publishers it records (bounded; the recorder's own reason if it
        exits first), so that no episode starts before it is recorded."""
        recorder = self.nodes["recorder"]
        deadline = time.monotonic() + RECORDER_READY_S
        while not self.recorder_ready.exists():
            ended = recorder.last_exit()
            if ended is not None:
                raise RosModeError(f"the session recorder could not start: {ended.describe()}")
            if time.monotonic() > deadline or self._stop.is_set():
                raise RosModeError(
                    f"the session recorder saw no verifier and camera publishers within {RECORDER_READY_S:.0f} s "
                    f"(log: {recorder.log_path})"
                )
            self._stop.wait(POLL_S)

    def request_stop(self) -> None:
        """Ask :meth:`run` to stop the nodes and return (from another thread or a signal handler)."""
        self._stop.set()

    def run(self) -> RosRunResult:
        """Run the nodes until the evaluator exits; the result says how it ended.

        Raises :class:`NodeConfigurationError` (after stopping every node) when the simulator or the verifier
        refused its configuration.
        """
        self.run_dir.mkdir(parents=True, exist_ok=True)
        absolute_paths(self.spec).write(self.params_file)
        started = time.perf_counter()
        evaluator = self.nodes["evaluator"]
        self.recorder_ready.unlink(missing_ok=True)
        supervised = [name for name in (*self.respawned, "recorder") if name in self.nodes]
        for node in self.nodes.values():
            if node is evaluator and "recorder" in self.nodes:
                try:
                    self._wait_for_recorder()
                except RosModeError:
                    for other in self.nodes.values():
                        other.stop()
                    raise
            node.start()
        try:
            while evaluator.poll() is None and not self._stop.is_set():
                for name in supervised:
                    self._supervise(self.nodes[name])
                self._stop.wait(POLL_S)
            if self._stopped_by is None:  # a server that refused its configuration as the evaluator ended
                for name in self.respawned:
                    ended = self.nodes[name].last_exit()
                    if ended is not None and ended.code == CONFIG_ERROR_EXIT:
                        self._stopped_by = ended
                        break
        finally:
            # Evaluator first (it may still be writing), then the servers, then the recorder (it closes the
            # bag of the last episode once that episode's verdict and frames are in).
            for node in (evaluator, *(self.nodes[name] for name in supervised)):
                node.stop()
        stopped_by = self._stopped_by
        if stopped_by is not None and stopped_by.code == CONFIG_ERROR_EXIT:
            raise NodeConfigurationError(
                f"{stopped_by.name} refused its configuration from {self.params_file}: "
                f"{stopped_by.reason or 'it gave no reason'} (not restarted; log: {stopped_by.log_path})"
            )
        if stopped_by is None:
            self._report_evaluator_exit(evaluator)
        return RosRunResult(
            run_dir=self.run_dir,
            params_file=self.params_file,
            evaluator_exit_code=evaluator.returncode,
            wall_s=time.perf_counter() - started,
            peak_rss_mib={name: node.peak_rss_kib / 1024.0 for name, node in self.nodes.items()},
            restarts={name: node.starts - 1 for name, node in self.nodes.items()},
            stopped_by=stopped_by,
        )

    def _report_evaluator_exit(self, evaluator: ManagedNode) -> None:
        """The evaluator's reason for a failed run when its output went to a file (else it is on the console)."""
        ended = evaluator.last_exit()
        if ended is None or ended.code == 0 or ended.log_path is None or self._stop.is_set():
            return
        print(f"[aiv-eval] {ended.describe()}", file=self.stream)

    def _supervise(self, node: ManagedNode) -> None:
        ended = node.last_exit()
        if ended is None:
            return
        previous = self._last_exits.get(node.name)
        self._last_exits[node.name] = ended
        if ended.code == CONFIG_ERROR_EXIT:  # run() raises with the node's reason once every node is stopped
            self._stop_run(ended)
            return
        why_not = None
        if not self.respawn:
            why_not = "respawn is off"
        elif node.starts > self.max_restarts:
            why_not = f"it was restarted {self.max_restarts} times already"
        elif ended.same_failure(previous):
            why_not = "it failed the same way the last time; another start would only repeat it"
        if why_not is not None:
            print(
                f"[aiv-eval] {ended.describe()}; not restarting it ({why_not}); stopping the run",
                file=self.stream,
            )
            self._stop_run(ended)
            return
        print(f"[aiv-eval] {ended.describe()}; restarting it", file=self.stream)
        node.start()

    def _stop_run(self, ended: NodeExit) -> None:
        if self._stopped_by is None:
            self._stopped_by = ended
        self._stop.set()
