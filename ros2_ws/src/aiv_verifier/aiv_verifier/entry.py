"""The ``verifier`` and ``detector_node`` executables: SIGINT / SIGTERM handlers first, then the node's imports
(rclpy, numpy, the backends: seconds on a busy machine).

See :func:`aiv_common.stop_signals.run_entry_point`: a Ctrl-C while the node is still importing then ends it
with exit code 0 instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable

from aiv_common.stop_signals import run_entry_point


def _verifier_main() -> Callable[[], int]:
    from .verifier_node import main

    return main


def _detector_main() -> Callable[[], int]:
    from .detector_node import main

    return main


def verifier() -> int:
    return run_entry_point(_verifier_main)


def detector() -> int:
    return run_entry_point(_detector_main)
