"""Run real ROS 2 nodes in tests: in-process on a background executor, or as child processes.

Nothing here sleeps to synchronise: every wait is a predicate checked while the executor spins
(or while a child process runs), bounded by a deadline, and a timeout names what was awaited.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import rclpy
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

DEFAULT_TIMEOUT_S = 20.0
T = TypeVar("T")


class WaitTimeout(AssertionError):
    """A condition a test waited for did not become true in time."""


def wait_until(predicate: Callable[[], bool], what: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Block until ``predicate()`` is true; the executor thread does the ROS work meanwhile.

    The poll interval is short and only paces the check; correctness never depends on it.
    """
    deadline = time.monotonic() + timeout_s
    event = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise WaitTimeout(f"timed out after {timeout_s:.1f} s waiting for {what}")
        event.wait(0.01)


class SpinningExecutor:
    """A MultiThreadedExecutor spinning on a daemon thread for one rclpy context."""

    def __init__(self, context: Context, num_threads: int = 4) -> None:
        self.context = context
        self.executor = MultiThreadedExecutor(num_threads=num_threads, context=context)
        self._thread = threading.Thread(target=self._spin, name="test-executor", daemon=True)
        self._nodes: list[Node] = []
        self._thread.start()

    def _spin(self) -> None:
        # The context may be shut down while spinning; that ends the thread, nothing else does.
        with suppress(ExternalShutdownException):
            self.executor.spin()

    def add(self, node: Node) -> Node:
        self._nodes.append(node)
        self.executor.add_node(node)
        return node

    def create_node(self, name: str, **kwargs: Any) -> Node:
        """Create a plain node in this context and spin it (for nodes whose entities need no set-up)."""
        return self.add(Node(name, context=self.context, **kwargs))

    def spin_new(self, name: str, build: Callable[[Node], T]) -> T:
        """Create a node, let ``build`` create its clients and subscriptions, and only then spin it.

        Entities must exist before the executor sees their node: rclpy's ActionClient registers itself with
        the node before it creates its lock, so one created while another thread spins the node can be
        polled half-built (``AttributeError: ... '_lock'``) and its first goal reply is then never taken.
        """
        node = Node(name, context=self.context)
        built = build(node)
        self.add(node)
        return built

    @property
    def spinning(self) -> bool:
        """Whether the spin thread is still alive (an exception in a callback or a take ends it)."""
        return self._thread.is_alive()

    def run(self, future: Any, what: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
        """Wait for an rclpy future completed by the executor thread and return its result."""
        wait_until(future.done, what, timeout_s)
        return future.result()

    def ask(self, request: Callable[[], Any], what: str, attempts: int = 3) -> Any:
        """The reply to an idempotent service request, sent again when a try goes unanswered.

        A node can serve a request from a client it has not fully discovered and then drop the reply
        (the FastDDS profile's "service" writer makes that rare, not impossible); asking again is what a
        well-behaved client does, and it keeps the test about the node rather than about discovery.
        """
        for attempt in range(attempts):
            future = request()
            try:
                wait_until(future.done, what, DEFAULT_TIMEOUT_S / attempts)
            except WaitTimeout:
                if attempt == attempts - 1:
                    raise
                continue
            return future.result()
        raise AssertionError("unreachable: attempts must be >= 1")

    def shutdown(self) -> None:
        # Stop spinning first: destroying a node whose handles the spinning thread is waiting on can block
        # (fast timers, as a fake robot's, make that window wide), and a blocked teardown hangs the worker.
        self.executor.shutdown(timeout_sec=5.0)
        self._thread.join(timeout=5.0)
        for node in self._nodes:
            self.executor.remove_node(node)
            node.destroy_node()


@contextmanager
def ros_context() -> Iterator[Context]:
    """A fresh rclpy context for one test, shut down afterwards even if the test fails."""
    context = Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.try_shutdown(context=context)
        # The DDS participant lives until the last node of the context is freed; nodes a test made on its own
        # (and objects holding them in cycles) would otherwise keep it into later tests. Several participants in
        # one process is what Fast DDS 3.2 can deadlock on when it destroys a writer (eProsima/Fast-DDS#6193,
        # seen here as a test worker hung in a publisher's teardown with the GIL held, past pytest-timeout).
        gc.collect()
        context.destroy()


class NodeProcess:
    """A ROS node running as a child process, with its output captured to a log file."""

    def __init__(self, argv: Sequence[str], log_path: Path, env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            self.argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,  # our SIGINT goes to the node alone, not to pytest
        )

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def assert_running(self) -> None:
        if not self.running:
            raise AssertionError(
                f"node process {self.argv} exited with {self.process.returncode}:\n{self.output()}"
            )

    def kill(self) -> None:
        """SIGKILL, as a crash would: no shutdown handlers run."""
        if self.running:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self, timeout_s: float = 10.0) -> int:
        """SIGINT (the way ros2 launch stops nodes), SIGKILL if it does not exit; returns the code."""
        if self.running:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()
        return self.process.returncode


def python_node_argv(script: Path, *args: str) -> list[str]:
    """Command line that runs a Python node script with this interpreter."""
    return [sys.executable, str(script), *args]


def ros_args(params: dict[str, object]) -> list[str]:
    """``-p name:=value`` arguments of a node's command line (booleans lower-case, as ROS reads them)."""
    argv: list[str] = []
    for name, value in params.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        argv += ["-p", f"{name}:={text}"]
    return argv
