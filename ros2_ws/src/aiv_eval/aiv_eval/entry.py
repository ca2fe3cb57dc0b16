"""The ``evaluator`` executable: SIGINT / SIGTERM handlers first, then the node's imports (seconds on a busy machine).

See :func:`aiv_common.stop_signals.run_entry_point`: a Ctrl-C while the node is still importing then ends it
with exit code 0 instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable

from aiv_common.stop_signals import run_entry_point


def _node_main() -> Callable[[], int]:
    from .run.evaluator_node import main

    return main


def main() -> int:
    return run_entry_point(_node_main)
