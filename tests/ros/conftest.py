"""Fixtures for tests that run real rclpy nodes over real DDS.

These tests need the built workspace on the path (``source .env.sh``; ``make test`` does it).
Without it they are skipped with the reason, unless AIV_REQUIRE_ROS=1 (set by ``make test`` and
CI), in which case a missing ROS installation is an error rather than a silent skip.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import aiv_interfaces.msg  # noqa: F401 - probe that the workspace is built and sourced
    import rclpy  # noqa: F401

    ROS_IMPORT_ERROR: str | None = None
except ImportError as error:  # pragma: no cover - depends on the environment
    ROS_IMPORT_ERROR = f"{error} (run `make test`, or `source .env.sh` first)"

if ROS_IMPORT_ERROR is not None:
    if os.environ.get("AIV_REQUIRE_ROS") == "1":
        raise ImportError(f"ROS tests required but ROS is not importable: {ROS_IMPORT_ERROR}")
    collect_ignore_glob = ["test_*.py"]
else:
    from support.ros2_cli import Ros2Process
    from support.ros_harness import NodeProcess, SpinningExecutor, ros_context
    from support.synthetic import micro_root  # noqa: F401 - session fixture shared by node tests

    @pytest.fixture
    def ros_executor() -> Iterator[SpinningExecutor]:
        """A fresh rclpy context with an executor spinning in the background."""
        with ros_context() as context:
            executor = SpinningExecutor(context)
            try:
                yield executor
            finally:
                executor.shutdown()

    def _process_factory(
        request: pytest.FixtureRequest, make: Callable[..., Any]
    ) -> Iterator[Callable[..., Any]]:
        """Yield a factory of child processes (``make(index, ...)``); stop them all afterwards and show their
        output when the test failed."""
        started: list[Any] = []

        def start(*args: Any, **kwargs: Any) -> Any:
            process = make(len(started), *args, **kwargs)
            started.append(process)
            return process

        yield start
        for process in started:
            process.stop()
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            for process in started:
                print(f"----- output of {process.argv} -----\n{process.output()}")

    @pytest.fixture
    def node_process(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., NodeProcess]]:
        """Factory starting node child processes; stops them all and shows their logs on failure."""

        def make(
            index: int, argv: list[str], name: str = "node", env: dict[str, str] | None = None
        ) -> NodeProcess:
            return NodeProcess(argv, tmp_path / f"{name}-{index}.log", env)

        yield from _process_factory(request, make)

    @pytest.fixture
    def ros2_process(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Ros2Process]]:
        """Factory starting `ros2 launch` / `ros2 run` / `ros2 topic echo` children; all stopped afterwards."""

        def make(
            index: int,
            argv: list[str],
            name: str = "ros2",
            cwd: Path | None = None,
            sigint_ignored: bool = False,
        ) -> Ros2Process:
            return Ros2Process(argv, tmp_path / f"{name}-{index}.log", cwd=cwd, sigint_ignored=sigint_ignored)

        yield from _process_factory(request, make)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
        """Keep each phase's report on the item so fixtures can tell whether the test failed."""
        outcome = yield
        report = outcome.get_result()
        setattr(item, f"rep_{report.when}", report)


def _dds_participants_alive() -> int:
    """Fast DDS participants alive in this process: each runs one event thread named ``dds.ev.N``."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm", encoding="utf-8") as comm:
                count += comm.read().startswith("dds.ev")
        except OSError:  # the thread ended meanwhile
            continue
    return count


@pytest.fixture(autouse=True)
def _one_dds_participant_at_a_time() -> None:
    """Free the previous test's participant before this test makes its own.

    A context's participant lives until its last node is freed, and the nodes of a finished test can sit in
    reference cycles until the next garbage collection. Several participants in one process is what Fast DDS
    3.2 can deadlock on while it destroys a writer (eProsima/Fast-DDS#6193): a worker hung in a publisher's
    teardown, holding the GIL, so pytest-timeout never fired and the whole run stalled.
    """
    if _dds_participants_alive():
        gc.collect()
