"""Isolate every test process's ROS 2 graph from every other one on the machine.

Each pytest process (the main one or an xdist worker) takes a DDS domain id of its own, held by
an exclusive file lock for the life of the process, so two test runs at once (a developer's and
CI's, or several xdist workers) never see each other's nodes. Discovery stays on loopback, and
ROS logs and ROS_HOME go to a temporary directory that is removed at the end.

This must run before rclpy is first imported, which is why conftest.py calls it at import time.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FASTDDS_PROFILE = REPO_ROOT / "config" / "fastdds_localhost_shm16mb.xml"
LOCK_DIR = Path(tempfile.gettempdir()) / "aiv-ros-domain-locks"
# Domain ids 0..101 are valid on every platform; 0 is left for interactive use.
DOMAIN_IDS = range(1, 102)

_held_lock = None  # keeps the lock file object (and so the flock) alive for the process lifetime


def allocate_domain_id() -> int:
    """Lock and return the first free domain id, preferring one derived from the xdist worker."""
    global _held_lock
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    offset = int(worker[2:]) if worker[2:].isdigit() else 0
    ordered = list(DOMAIN_IDS)
    ordered = ordered[offset % len(ordered) :] + ordered[: offset % len(ordered)]
    for domain_id in ordered:
        handle = open(LOCK_DIR / f"domain-{domain_id}.lock", "w")  # noqa: SIM115 - held until exit
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        _held_lock = handle
        return domain_id
    raise RuntimeError(f"all ROS domain ids {DOMAIN_IDS.start}..{DOMAIN_IDS.stop - 1} are in use by tests")


def clean_fastdds_shm() -> None:
    """Remove shared-memory segments of dead FastDDS participants (left by killed processes)."""
    fastdds = shutil.which("fastdds")
    if fastdds is None:
        return
    subprocess.run([fastdds, "shm", "clean"], capture_output=True, timeout=60, check=False)


def configure_process_environment() -> dict[str, str]:
    """Set this process's ROS environment variables (inherited by child processes) and return them."""
    if os.environ.get("AIV_TEST_ROS_ISOLATED") == str(os.getpid()):
        return {key: os.environ[key] for key in _ISOLATION_KEYS}
    scratch = Path(tempfile.mkdtemp(prefix="aiv-ros-test-"))
    (scratch / "log").mkdir()
    (scratch / "home").mkdir()
    settings = {
        "ROS_DOMAIN_ID": str(allocate_domain_id()),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "ROS_LOG_DIR": str(scratch / "log"),
        "ROS_HOME": str(scratch / "home"),
        "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
        "FASTDDS_DEFAULT_PROFILES_FILE": str(FASTDDS_PROFILE),
        "PYTHONUNBUFFERED": "1",
        "AIV_TEST_ROS_ISOLATED": str(os.getpid()),
    }
    os.environ.update(settings)
    # A stray localhost-only override from an older ROS distro would conflict with the range.
    os.environ.pop("ROS_LOCALHOST_ONLY", None)

    def _cleanup() -> None:
        clean_fastdds_shm()
        shutil.rmtree(scratch, ignore_errors=True)

    atexit.register(_cleanup)
    return settings


_ISOLATION_KEYS = (
    "ROS_DOMAIN_ID",
    "ROS_AUTOMATIC_DISCOVERY_RANGE",
    "ROS_LOG_DIR",
    "ROS_HOME",
    "RMW_IMPLEMENTATION",
    "FASTDDS_DEFAULT_PROFILES_FILE",
    "PYTHONUNBUFFERED",
    "AIV_TEST_ROS_ISOLATED",
)
