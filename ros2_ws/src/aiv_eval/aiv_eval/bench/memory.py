"""Peak proportional set size (PSS) of process trees, sampled while a benchmark runs.

``wait4``'s peak RSS (what :mod:`aiv_eval.run.ros_mode` reports) counts every shared page in full in every process that maps
it: the ~100 MiB of numpy, OpenCV and onnxruntime libraries that three node processes share from the page cache
appear three times, and a node's children are not counted at all. PSS divides each shared page between the
processes that map it, so the PSS of a node and its children is what that node really costs the machine, which
is the budget a robot computer has to fit (issue 18: the verifier's tree at or under 400 MiB).

The kernel computes PSS only when asked (``/proc/PID/smaps_rollup``, read through psutil), so it is sampled by a
background thread every :data:`DEFAULT_INTERVAL_S`: a peak shorter than that can be missed, which is why the
figure is reported next to RSS and not instead of it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping

import psutil

#: Seconds between samples. Reading smaps_rollup walks the process's page tables (about 1 ms for a 1 GiB
#: process), so 0.1 s keeps the sampler's own CPU use near 1 % while catching model loads, which take longer.
DEFAULT_INTERVAL_S = 0.1
MIB = 1024.0 * 1024.0


def tree_pss_bytes(pid: int) -> int:
    """PSS of ``pid`` and all of its descendants in bytes; processes that end meanwhile count as 0.

    Raises :class:`psutil.NoSuchProcess` (or :class:`psutil.ZombieProcess`) only when ``pid`` itself is gone.
    """
    root = psutil.Process(pid)
    processes = [root]
    with contextlib.suppress(psutil.NoSuchProcess):  # the root ended: its own read below says so
        processes += root.children(recursive=True)
    total = 0
    for process in processes:
        try:
            total += int(process.memory_full_info().pss)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            if process is root:
                raise
        except (psutil.Error, OSError, AttributeError):  # not ours, or no PSS on this platform
            continue
    return total


class PssSampler:
    """Samples the tree PSS of named processes in a background thread and keeps each name's peak.

    ``pids`` is called on every sample and returns the current pid of each name (None while it is not
    running), so restarted nodes are followed. Use as a context manager around the run.
    """

    def __init__(
        self, pids: Callable[[], Mapping[str, int | None]], interval_s: float = DEFAULT_INTERVAL_S
    ) -> None:
        self._pids = pids
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pss-sampler", daemon=True)
        self._lock = threading.Lock()
        self.peak_bytes: dict[str, int] = {}
        self.samples = 0

    def sample(self) -> None:
        """Take one sample now (also what the thread does every interval)."""
        for name, pid in dict(self._pids()).items():
            if pid is None:
                continue
            try:
                pss = tree_pss_bytes(pid)
            except (psutil.Error, OSError):  # exited (or was never ours) between two samples
                continue
            with self._lock:
                self.peak_bytes[name] = max(self.peak_bytes.get(name, 0), pss)
        self.samples += 1

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self._interval_s)

    def peak_mib(self) -> dict[str, float]:
        """Each name's peak tree PSS so far, in MiB (names never seen running are left out)."""
        with self._lock:
            return {name: peak / MIB for name, peak in self.peak_bytes.items()}

    def __enter__(self) -> PssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
