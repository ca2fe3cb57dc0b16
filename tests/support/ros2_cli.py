"""Run the real ROS 2 command-line tools in tests: `ros2 launch` as a child process, one-shot `ros2` verbs.

The tools come from apt ROS 2 or from ``scripts/install_ros2_tools.sh`` (the upstream sources in
``../shared/ros2-upstream``, which ``make test`` installs when they exist). Where they are missing the tests that
need them skip with one line saying what is missing, unless ``AIV_REQUIRE_ROS2_TOOLS=1`` (set by ``make test``
after installing them), in which case their absence fails the run instead of hiding in a skip.

Every verb runs with ``--no-daemon`` where it has the flag, so no test starts a ``ros2`` daemon that outlives it;
the process environment (domain id, localhost discovery, log dirs) is the test process's isolated one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

INSTALL_HINT = "run `make ros2-tools` (needs ../shared/ros2-upstream) or source an apt ROS 2"
#: Verbs of `ros2` that accept --no-daemon (the others never start one).
DAEMON_VERBS = {
    ("node", "list"),
    ("node", "info"),
    ("param", "list"),
    ("param", "describe"),
    ("param", "get"),
    ("param", "set"),
    ("param", "dump"),
    ("topic", "list"),
    ("topic", "info"),
    ("topic", "echo"),
    ("service", "list"),
    ("lifecycle", "nodes"),
    ("lifecycle", "get"),
    ("lifecycle", "list"),
    ("lifecycle", "set"),
}
#: Verbs that look one node up and take --timeout to wait for it (without the daemon, discovery takes a moment).
NODE_TIMEOUT_VERBS = {("param", "describe"), ("param", "get"), ("param", "set"), ("param", "dump")}
NODE_TIMEOUT_S = "15"
DISCOVERY_SPIN_S = "2.0"
#: Verbs that query the graph through the daemon and have no --no-daemon: the daemon they start is stopped after.
DAEMON_ONLY_VERBS = {("action", "list"), ("action", "info"), ("topic", "hz"), ("service", "type")}


def missing_tools(*modules: str) -> str | None:
    """Why the `ros2` command or one of ``modules`` cannot be used here, or None when all are present."""
    if shutil.which("ros2") is None:
        return f"the `ros2` command is not installed: {INSTALL_HINT}"
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"{module} is not installed: {INSTALL_HINT}"
    return None


def require_tools(*modules: str) -> None:
    """Skip the calling test module (one line) when the tools are missing, or fail it where they are required."""
    reason = missing_tools(*modules)
    if reason is None:
        return
    if os.environ.get("AIV_REQUIRE_ROS2_TOOLS") == "1":
        raise RuntimeError(f"AIV_REQUIRE_ROS2_TOOLS=1 but {reason}")
    pytest.skip(reason, allow_module_level=True)


def skip_unless_tools(*modules: str) -> None:
    """Inside one test: skip it (one line) when the tools are missing, or fail it where they are required."""
    reason = missing_tools(*modules)
    if reason is None:
        return
    if os.environ.get("AIV_REQUIRE_ROS2_TOOLS") == "1":
        pytest.fail(f"AIV_REQUIRE_ROS2_TOOLS=1 but {reason}")
    pytest.skip(reason)


def with_no_daemon(argv: Sequence[str]) -> list[str]:
    """``argv`` (without the leading ``ros2``) with --no-daemon added where the verb takes it.

    Those verbs also get a longer --spin-time, and verbs that wait for a node get --timeout, so a node the fresh
    CLI process has not discovered yet is waited for rather than reported as not found.
    """
    argv = list(argv)
    if tuple(argv[:2]) in DAEMON_VERBS and "--no-daemon" not in argv:
        # Without the daemon each call discovers the graph afresh, for --spin-time (0.5 s by default: too short
        # for a dozen nodes on two busy cores).
        argv += ["--no-daemon", "--spin-time", DISCOVERY_SPIN_S]
    if tuple(argv[:2]) in NODE_TIMEOUT_VERBS and "--timeout" not in argv:
        argv += ["--timeout", NODE_TIMEOUT_S]
    return argv


def ros2(
    *argv: str, timeout_s: float = 60.0, cwd: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``ros2 ARGV`` to completion and return it; with ``check``, a non-zero exit fails with the output.

    A verb with no --timeout of its own (``param list``, ``node info``) that finds no such node is asked again
    for up to ``NODE_TIMEOUT_S``: each call discovers the graph afresh for ``DISCOVERY_SPIN_S``, which two busy
    cores have not always been enough for (a node running for seconds was "not found" once in CI)."""
    deadline = time.monotonic() + float(NODE_TIMEOUT_S)
    retry_unfound = tuple(argv[:2]) in DAEMON_VERBS and tuple(argv[:2]) not in NODE_TIMEOUT_VERBS
    try:
        while True:
            completed = subprocess.run(
                ["ros2", *with_no_daemon(argv)],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                cwd=cwd,
                check=False,
            )
            unfound = completed.returncode != 0 and "Node not found" in completed.stderr
            if not (retry_unfound and unfound and time.monotonic() < deadline):
                break
    finally:
        if tuple(argv[:2]) in DAEMON_ONLY_VERBS:
            subprocess.run(["ros2", "daemon", "stop"], capture_output=True, timeout=30, check=False)
    if check and completed.returncode != 0:
        raise AssertionError(
            f"`ros2 {' '.join(argv)}` exited {completed.returncode}:\n{completed.stdout}\n{completed.stderr}"
        )
    return completed


def ros2_until(argv: Sequence[str], accept: Callable[[str], bool], what: str, timeout_s: float = 30.0) -> str:
    """Repeat a one-shot ``ros2`` query until its output satisfies ``accept`` (discovery takes a moment)."""
    deadline = time.monotonic() + timeout_s
    output = ""
    while time.monotonic() < deadline:
        completed = ros2(*argv, check=False, timeout_s=timeout_s)
        output = completed.stdout + completed.stderr
        if completed.returncode == 0 and accept(completed.stdout):
            return completed.stdout
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}; last output:\n{output}")


#: Ignore SIGINT, then become the command (an ignore survives exec; the pid stays the same).
_EXEC_WITH_SIGINT_IGNORED = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


class Ros2Process:
    """A long-running ``ros2 launch`` / ``ros2 run`` / ``ros2 topic echo`` child, stopped the way a user stops it.

    It runs in a session of its own, so Ctrl-C (SIGINT) reaches the launch process and not pytest; whatever is
    left of the process group after the launch exited or the grace period passed is killed, so nothing
    outlives the test.
    """

    def __init__(
        self, argv: Sequence[str], log_path: Path, cwd: Path | None = None, *, sigint_ignored: bool = False
    ) -> None:
        """``sigint_ignored``: start it the way a script's background job starts (``ros2 launch ... &``), with
        SIGINT ignored; otherwise as a terminal starts a command, with SIGINT at its default (tests/conftest.py
        takes back an ignore the test run itself may have inherited)."""
        self.argv = ["ros2", *with_no_daemon(argv)]
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        command = (
            [sys.executable, "-c", _EXEC_WITH_SIGINT_IGNORED, *self.argv] if sigint_ignored else self.argv
        )
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True
        )

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_for_output(self, text: str, timeout_s: float = 60.0) -> None:
        """Block until ``text`` appears in the output (checked while the child runs), or fail with the output."""
        deadline = time.monotonic() + timeout_s
        while text not in self.output():
            if not self.running and text not in self.output():
                raise AssertionError(
                    f"{self.argv} exited {self.process.returncode} before printing {text!r}:\n{self.output()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {text!r} from {self.argv}:\n{self.output()}")
            time.sleep(0.05)

    def wait(self, timeout_s: float) -> int:
        """The exit code once the child ends by itself (fails with its output after ``timeout_s``)."""
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired as error:
            raise AssertionError(
                f"{self.argv} still running after {timeout_s:.0f} s:\n{self.output()}"
            ) from error

    def stop(self, grace_s: float = 20.0) -> int:
        """SIGINT to the process group, as Ctrl-C does; the exit code. The group is killed after the grace period."""
        if self.running:
            # A terminal's Ctrl-C goes to the whole foreground process group; `ros2 run` relies on that.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace_s)
        self._kill_group()
        self._log.close()
        return self.process.wait(timeout=10)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
