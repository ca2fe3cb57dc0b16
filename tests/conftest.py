"""Test-wide set-up: isolate this process's ROS 2 graph before anything imports rclpy, and end a wedged test."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from collections.abc import Iterator

import pytest
from support.ros_isolation import configure_process_environment

# Runs at import, i.e. before any test module (or plugin) can import rclpy in this process.
ROS_TEST_ENVIRONMENT = configure_process_environment()

# The tests stop `ros2 launch` and nodes with SIGINT as a terminal's Ctrl-C does, and a terminal starts a command
# with SIGINT handled. A test run started as a script's background job (`make test &`, some CI runners) has it
# ignored, every child would inherit that, and `ros2 launch` would then never hear a Ctrl-C (seen: launches
# ending only after the test's grace period, killed). Starting with it ignored is asked for explicitly, by
# Ros2Process(sigint_ignored=True).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

#: Past pytest-timeout's limit (pyproject.toml): only a test that limit could not stop reaches this one.
WEDGED_TEST_LIMIT_S = float(os.environ.get("AIV_WEDGED_TEST_LIMIT_S", "480"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """End the process, with every thread's stack on stderr, when one test (set-up and teardown included)
    runs past ``WEDGED_TEST_LIMIT_S``.

    pytest-timeout cannot stop a test whose thread is blocked in native code that holds the GIL (its timer
    thread needs the GIL; a SIGALRM handler needs the main thread back in Python), as a Fast DDS deadlock
    in a publisher's teardown once did: the run then hung until CI's own limit. faulthandler's watchdog is a
    C thread: the worker exits, pytest-xdist reports the test as crashed by name and starts a new worker.
    """
    faulthandler.dump_traceback_later(WEDGED_TEST_LIMIT_S, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
