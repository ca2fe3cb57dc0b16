"""``aiv_common.stop_signals``: what a node process does with SIGINT and SIGTERM, checked in child processes.

- a signal that the kernel hands to another thread than the main one still wakes a main thread blocked in its
  wait for the stop (Python runs handlers in the main thread only, between bytecodes);
- with ``interrupt_main`` the first signal raises KeyboardInterrupt in a main thread blocked in an untimed wait,
  and a second one during the clean-up is ignored;
- a signal that arrives while the interpreter finalises, after ``main`` returned, does not kill the process
  (Python puts the default action back for the signals it handled; exit code -2 without a traceback);
- ``aiv_common.launch_signals``: a launch process that inherited SIGINT ignored gets Python's handler back, and
  a handler somebody chose is left alone.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

TIMEOUT_S = 60.0


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=TIMEOUT_S
    )


def test_a_signal_delivered_to_another_thread_wakes_the_waiting_main_thread() -> None:
    completed = _run(
        """
        import signal, threading, time
        from aiv_common.stop_signals import install_stop_handlers

        stop = install_stop_handlers()
        parked = threading.Event()
        bystander = threading.Thread(target=parked.wait, daemon=True)  # blocked, as a DDS thread is
        bystander.start()
        threading.Timer(0.2, signal.pthread_kill, (bystander.ident, signal.SIGTERM)).start()
        started = time.monotonic()
        # Without help the wait ends only at its timeout (the handler runs once select returns).
        stop.wait(30.0)
        print(stop.reason, time.monotonic() - started < 10.0)
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "SIGTERM True"


def test_interrupt_main_raises_once_in_a_blocked_main_thread_and_ignores_the_second_signal() -> None:
    completed = _run(
        """
        import os, signal, threading
        from aiv_common.stop_signals import install_stop_handlers

        stop = install_stop_handlers(interrupt_main=True)
        parked = threading.Event()
        bystander = threading.Thread(target=parked.wait, daemon=True)
        bystander.start()
        threading.Timer(0.2, signal.pthread_kill, (bystander.ident, signal.SIGINT)).start()
        try:
            threading.Event().wait(30.0)  # only the signal ends it early
            print("not interrupted")
        except KeyboardInterrupt:
            os.kill(os.getpid(), signal.SIGINT)  # the second SIGINT, during the clean-up
            os.kill(os.getpid(), signal.SIGTERM)
            print("interrupted by", stop.reason)
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "interrupted by SIGINT"
    assert "Traceback" not in completed.stderr, completed.stderr


def test_a_signal_while_the_interpreter_finalises_is_ignored() -> None:
    completed = _run(
        """
        import atexit, os, signal
        # Registered first, so it runs last among the exit hooks: after the module's own.
        atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))
        from aiv_common.stop_signals import install_stop_handlers

        stop = install_stop_handlers()
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.wait(10.0)
        print("main returns")
        """
    )
    assert completed.returncode == 0, (completed.returncode, completed.stderr)
    assert completed.stdout.strip() == "main returns"


def test_an_executable_leaves_without_a_thread_still_blocked_after_its_shutdown_and_names_it() -> None:
    completed = _run(
        """
        import sys, threading
        from aiv_common.stop_signals import leave_without_lingering_threads

        threading.Thread(target=threading.Event().wait, name="stuck-callback").start()  # never ends, not daemon
        threading.Thread(target=lambda: None, name="finished").start()
        sys.exit(leave_without_lingering_threads(0))
        """
    )
    # Without it Python's exit would join the stuck thread for ever (the test's timeout would end it instead).
    assert completed.returncode == 0, completed.stderr
    assert "left 1 thread(s) still blocked after the shutdown: stuck-callback" in completed.stderr


def test_an_executable_whose_threads_all_ended_exits_normally_with_its_code() -> None:
    completed = _run(
        """
        import sys, threading
        from aiv_common.stop_signals import leave_without_lingering_threads

        worker = threading.Thread(target=lambda: None, name="finished")
        worker.start()
        sys.exit(leave_without_lingering_threads(3))
        """
    )
    assert completed.returncode == 3, completed.stderr
    assert "still blocked" not in completed.stderr


def test_a_launch_process_takes_back_an_ignored_sigint_and_leaves_a_chosen_handler_alone() -> None:
    completed = _run(
        """
        import signal
        from aiv_common.launch_signals import take_back_ctrl_c
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a background job of a script starts
        assert take_back_ctrl_c()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        chosen = lambda *_: None
        signal.signal(signal.SIGINT, chosen)
        assert not take_back_ctrl_c()
        assert signal.getsignal(signal.SIGINT) is chosen
        print("ok")
        """
    )
    assert completed.stdout.strip() == "ok", completed.stderr
