"""The robot stand-in, the robot adapter and the verifier as child processes with their installed parameter files,
as ``robot_verify.launch.py standin:=true`` starts them, and the MoveToSector calls the robot tests make.

``node_process`` is the tests' process factory (tests/ros/conftest.py); each ``start_*`` adds ``-p`` overrides
after the parameter files, so a test's own values win.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aiv_common.action_waits import SentGoal, send_goal_confirmed
from aiv_interfaces.action import MoveToSector

from support.ros_harness import ros_args, wait_until

INSTALL = Path(__file__).resolve().parents[2] / "ros2_ws" / "install"
ADAPTER = INSTALL / "aiv_robot" / "lib" / "aiv_robot" / "robot_adapter"
ADAPTER_DEFAULTS = INSTALL / "aiv_robot" / "share" / "aiv_robot" / "config" / "robot_adapter.yaml"
STAND_IN = INSTALL / "aiv_robot_sim" / "lib" / "aiv_robot_sim" / "robot_sim"
VERIFIER = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_DEFAULTS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
#: The robot settings robot_verify.launch.py standin:=true loads into every node (stand-in, adapter, verifier).
STANDIN_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "robot_verify_standin.yaml"


def start_stand_in(
    node_process: Any,
    params: Mapping[str, object],
    *,
    name: str = "robot_sim",
    program: Sequence[str] = (str(STAND_IN),),
) -> Any:
    """The stand-in with the stand-in's parameter file; ``program`` replaces its executable (with arguments
    before ``--ros-args``, e.g. an audited wrapper)."""
    return node_process(
        [*program, "--ros-args", "--params-file", str(STANDIN_PARAMS), *ros_args(dict(params))], name=name
    )


def start_adapter(
    node_process: Any,
    params: Mapping[str, object] | None = None,
    *,
    name: str = "adapter",
    env: dict[str, str] | None = None,
) -> Any:
    """The robot adapter with its defaults, then the stand-in's parameter file."""
    argv = [
        str(ADAPTER),
        "--ros-args",
        "--params-file",
        str(ADAPTER_DEFAULTS),
        "--params-file",
        str(STANDIN_PARAMS),
        *ros_args(dict(params or {})),
    ]
    return node_process(argv, name=name, env=env)


def start_verifier(node_process: Any, params: Mapping[str, object], *, name: str = "verifier") -> Any:
    """The verifier with its defaults, then the stand-in's parameter file."""
    argv = [
        str(VERIFIER),
        "--ros-args",
        "--params-file",
        str(VERIFIER_DEFAULTS),
        "--params-file",
        str(STANDIN_PARAMS),
        *ros_args(dict(params)),
    ]
    return node_process(argv, name=name)


def wait_for_robot(
    ready: Callable[[], bool], what: str, processes: Sequence[Any], mover: Any, timeout_s: float = 60.0
) -> None:
    """Until ``ready()`` (the processes all still running), then until the adapter serves moves on ``mover``."""

    def up() -> bool:
        for process in processes:
            process.assert_running()
        return ready()

    wait_until(up, what, timeout_s=timeout_s)
    assert mover.wait_for_server(timeout_sec=60.0), "the adapter serves no moves"


def send_move(mover: Any, direction: str) -> SentGoal:
    """A MoveToSector goal the adapter accepted."""
    sent = send_goal_confirmed(mover, MoveToSector.Goal(direction=direction), timeout_s=30.0)
    assert sent is not None and sent.accepted
    return sent


def move(mover: Any, direction: str, timeout_s: float) -> tuple[int, Any]:
    """One MoveToSector move to its end: the goal's final status and its result."""
    response = send_move(mover, direction).result(timeout_s, lambda: True, f"the move {direction!r}")
    assert response is not None, f"the move {direction!r} never ended"
    return int(response.status), response.result
