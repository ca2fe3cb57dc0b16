"""Where an installed ament package's executable lives, for tools that start nodes as child processes.

``ros2 run`` is not available without apt ROS 2, so the evaluation runner and the bag replay find node
executables the way it does: ``<package prefix>/lib/<package>/<executable>`` from the ament index.
"""

from __future__ import annotations

from pathlib import Path


class ExecutableNotFoundError(RuntimeError):
    """The package is not in the ament index, or it has no such executable; the message says how to fix it."""


def executable_path(package: str, executable: str) -> Path:
    """``<prefix>/lib/<package>/<executable>`` of an installed ament package (what ``ros2 run`` finds)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        prefix = Path(get_package_prefix(package))
    except PackageNotFoundError as error:
        raise ExecutableNotFoundError(
            f"package {package!r} is not installed in AMENT_PREFIX_PATH; build the workspace and "
            "`source .env.sh` (or ros2_ws/install/setup.bash)"
        ) from error
    path = prefix / "lib" / package / executable
    if not path.is_file():
        raise ExecutableNotFoundError(f"{path} does not exist; rebuild the workspace (make build)")
    return path
