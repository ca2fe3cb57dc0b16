"""Make ``ros2 launch`` stop on SIGINT even when whoever started it had SIGINT ignored.

A shell that runs a command in the background without job control (``ros2 launch ... &`` in a script, CI
runners, test harnesses started that way) gives it SIGINT ignored, and the ignore is inherited through every
``exec``. Python then installs no SIGINT handler at start-up, and launch's signal manager, which only watches
the wake-up file descriptor Python's handler writes to, never hears of the signal: ``kill -INT`` and a Ctrl-C
sent to the process group reach the launched nodes (ours take SIGINT back, ``aiv_common.stop_signals``) but not
launch. Launch then runs no shutdown at all; it ends only once it is idle, and a transition it is still asking
of a managed node kept it from ever being idle (measured: 5 of 5 such launches of ``verifier.launch.py``, stopped
0.3 s after the node's process started, were still running 60 s later; with SIGINT handled, 5 of 5 ended in
about 1 s with "user interrupted with ctrl-c").

Every launch file of ours calls :func:`take_back_ctrl_c` first: it puts back exactly what Python would have
installed in a terminal (``signal.default_int_handler``; launch turns the KeyboardInterrupt it raises into its
orderly shutdown), and leaves a handler somebody chose alone.
"""

from __future__ import annotations

import contextlib
import signal


def take_back_ctrl_c() -> bool:
    """Handle SIGINT in this (the launch) process if it was inherited ignored; True when it was taken back.

    Only possible in the main thread, where launch loads its launch files; elsewhere nothing changes.
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return False
    with contextlib.suppress(ValueError):  # not the main thread: signal handlers cannot be set there
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return True
    return False
