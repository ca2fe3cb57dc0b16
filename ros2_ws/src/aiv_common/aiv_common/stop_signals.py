"""SIGINT and SIGTERM end a node process cleanly: the first one asks it to stop, any later one is ignored.

Why a node does not leave this to rclpy's own handlers (what ``rclpy.init`` installs by default):

* ``ros2 launch`` sends SIGINT to every child when it shuts down, and, whenever its standard input is not a
  terminal (scripts, tests, CI, services), it does so even after a Ctrl-C, which the terminal has already
  sent to the whole process group: each node gets *two* SIGINTs. rclpy passes every SIGINT on to the handler
  that was there before it (Python's, which raises KeyboardInterrupt) and removes its own handlers in
  ``rclpy.shutdown``; a second SIGINT that lands while the node cleans up then raises KeyboardInterrupt in the
  middle of ``destroy_node``, and Python ends a process whose KeyboardInterrupt nobody caught with SIGINT:
  ``process has died [exit code -2]``. The same happens to a SIGINT that arrives while the node is still
  being built.
* rclpy shuts the context down the moment the signal arrives, so a node can no longer stop its robot or
  answer the request it is serving.
* SIGTERM (``ros2 launch``'s escalation, ``kill``, service managers) is handled by rclpy only in some
  set-ups; here it is always the same request to stop as SIGINT.

Here the signal only *asks*: :class:`StopRequest` is set (no lock is taken in the handler, so it cannot
deadlock with the code it interrupts), the node's ``main`` does what must be done while the context still
works (cancel a move, stop the base) and then shuts down in order. Use::

    def main(args=None) -> int:
        stop = install_stop_handlers()          # first: before rclpy.init and before the node is built
        node = start_node("my_node", MyNode, args, signal_handler_options=SignalHandlerOptions.NO)
        if node is None:
            return 2
        return spin_until_stopped(node, MultiThreadedExecutor(), stop, on_stop=node.stop_moving)

An executable's entry point calls :func:`run_entry_point`, which installs the handlers before the node's
module (rclpy, numpy, ...) is even imported; ``main`` calling :func:`install_stop_handlers` again gets the same
request. A node whose main thread runs long blocking code of its own (the evaluator's loop) passes
``interrupt_main=True``: the first signal also raises KeyboardInterrupt there, once. A signal the kernel hands
to another thread, and one that comes while the interpreter finalises, are taken care of too (see
:func:`install_stop_handlers`).
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

#: The signals that mean "stop" to every node.
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)
#: How long the shutdown waits for the executor's callbacks and its thread, each (seconds).
SHUTDOWN_TIMEOUT_S = 3.0
#: A shutdown still under way after this long prints every thread's stack (``ros2 launch`` escalates at 5 s).
SLOW_SHUTDOWN_S = 4.0
#: How long one wait of the spin thread lasts: the longest it takes to notice that it must stop.
SPIN_SLICE_S = 0.1
#: How long an executable that has shut its node down waits for its other threads before it leaves without them.
EXIT_JOIN_S = 1.0


class StopRequest:
    """Whether the process was asked to stop, and why; settable from a signal handler.

    A signal handler runs between two bytecodes of the main thread, possibly while that thread holds a
    ``threading`` lock; :meth:`request` therefore only sets a flag and writes one byte to a pipe, and
    :meth:`wait` watches the pipe (``select`` is resumed after a handler ran, PEP 475, and then sees the byte).
    The byte is never read back, so every waiter, present or future, sees the request.
    """

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self._requested = False
        self.reason = ""

    @property
    def requested(self) -> bool:
        return self._requested

    def request(self, reason: str) -> bool:
        """Ask to stop; True the first time. Safe in a signal handler and from any thread."""
        if self._requested:
            return False
        self._requested = True
        self.reason = reason
        with contextlib.suppress(OSError):  # a full pipe already wakes every waiter
            os.write(self._write_fd, b"\0")
        return True

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until a stop is requested or ``timeout_s`` passes (None: no limit); True if requested."""
        if self._requested:
            return True
        readable, _, _ = select.select([self._read_fd], [], [], timeout_s)
        return bool(readable) or self._requested


#: The process's one request and whether its first signal also interrupts the main thread (see below).
_process_request: StopRequest | None = None
_interrupt_main = False
_interrupted = (
    False  # the KeyboardInterrupt of interrupt_main was raised (or a request predates asking for it)
)
_main_nudged = False


def install_stop_handlers(
    *, interrupt_main: bool = False, signals: Sequence[signal.Signals] = STOP_SIGNALS
) -> StopRequest:
    """Make SIGINT and SIGTERM a request to stop; return the request the node's ``main`` watches.

    Call it first in ``main``, before ``rclpy.init`` (which must then be told
    ``signal_handler_options=SignalHandlerOptions.NO``), so that a signal while rclpy starts or while the node
    is being built is a request like any other; an executable's entry point may call it even before the
    node's module is imported (:func:`run_entry_point`). Calling it again returns the same request (a
    signal that came in between is not lost) and only changes ``interrupt_main``.

    The first signal sets the request; every later one is ignored, so the second SIGINT that ``ros2 launch``
    sends cannot interrupt the shutdown. That holds after ``main`` returned too: while the interpreter
    finalises (threads joined, rclpy and DDS torn down, tenths of a second), Python puts the default action
    back for every signal it handled, and a late SIGINT would then kill the process (exit code -2 without a
    traceback); an ``atexit`` hook sets both signals to "ignore" first, which Python leaves alone.

    With ``interrupt_main`` the first signal also raises KeyboardInterrupt in the main thread (for a ``main``
    that runs blocking code which does not watch the request); a signal that came before that was asked for
    is only in the request, so check :attr:`StopRequest.requested` right after. A signal ignored by whoever
    started us is taken back: stopping a node by SIGINT must work even when its parent runs in the background.

    Outside the main thread (a node's ``main`` called from a test thread) no handler can be installed; the
    request is returned all the same and can be set with :meth:`StopRequest.request`.
    """
    global _process_request, _interrupt_main, _interrupted
    if threading.current_thread() is not threading.main_thread():
        return StopRequest()
    if _process_request is None:
        _process_request = StopRequest()
        atexit.register(_ignore_signals, tuple(signals))
        _start_relay(frozenset(int(signum) for signum in signals))
    _interrupt_main = interrupt_main
    _interrupted = _interrupted or _process_request.requested  # the caller checks ``requested`` for that one
    for signum in signals:
        signal.signal(signum, _on_stop_signal)
    return _process_request


def _start_relay(numbers: frozenset[int]) -> None:
    """Pass every stop signal to the request from a thread of its own, whichever thread the signal hit.

    Python runs signal handlers in the main thread only, between bytecodes. The kernel may deliver a
    process's signal to any of its threads (DDS and executor threads included); then nothing wakes a main
    thread blocked in a system call, and the handler waits until that call returns, possibly for good (seen:
    the stand-in, waiting for its stop, ran until ros2 launch's SIGTERM 5 s later). Python's low-level
    handler, in whatever thread, also writes the signal's number to the wake-up file descriptor; the relay
    reads it there and sets the request at once. With ``interrupt_main`` it also sends the main thread a
    SIGINT of its own, once: a signal to a thread interrupts that thread's system call, and the handler runs.
    """
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    main_thread = threading.main_thread().ident
    relay = threading.Thread(
        target=_relay, args=(read_fd, numbers, main_thread), name="stop-signal-relay", daemon=True
    )
    relay.start()


def _relay(read_fd: int, numbers: frozenset[int], main_thread: int | None) -> None:
    global _main_nudged
    while True:
        try:
            received = os.read(read_fd, 64)
        except OSError:
            return
        request = _process_request
        for number in received:
            if number not in numbers or request is None:
                continue
            request.request(signal.Signals(number).name)
            if _interrupt_main and not _interrupted and not _main_nudged and main_thread is not None:
                _main_nudged = True
                with contextlib.suppress(OSError, ValueError):
                    signal.pthread_kill(main_thread, signal.SIGINT)


def _ignore_signals(signals: tuple[signal.Signals, ...]) -> None:
    for signum in signals:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, signal.SIG_IGN)


def _on_stop_signal(signum: int, _frame: FrameType | None) -> None:
    global _interrupted
    request = _process_request
    if request is None:  # not reachable: installed together with the request
        return
    request.request(signal.Signals(signum).name)
    if _interrupt_main and not _interrupted:
        _interrupted = True
        raise KeyboardInterrupt(request.reason)


def run_entry_point(target: Callable[[], Callable[[], int]]) -> int:
    """An executable's entry point: the stop handlers first, then ``target()`` imports the node and its
    ``main`` runs.

    A node's module imports rclpy, numpy and more (seconds on a busy machine); a SIGINT during those imports
    would meet Python's own handler and end the process with a traceback and exit code -2. The console
    script's own imports still come first, a fraction of a second that no code of ours can cover.
    """
    stop = install_stop_handlers()
    node_main = target()
    if stop.requested:
        return 0
    return leave_without_lingering_threads(node_main())


def leave_without_lingering_threads(code: int) -> int:
    """``code``, once every other non-daemon thread has ended; else leave at once with it, naming them.

    After the node is shut down, Python's exit still joins every non-daemon thread (an executor's worker, a
    client library's helper) with no time limit, and the stop handlers ignore every later signal by design, so
    one callback still blocked there (seen once in 60 Ctrl-C's of a launch under load: the robot adapter,
    killed by ros2 launch 15 s later) would hang the process until SIGKILL. Everything the node owns has been
    released by now, so leaving without those threads loses nothing; the line says which ones were left.
    """
    deadline = time.monotonic() + EXIT_JOIN_S
    lingering = []
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            lingering.append(thread.name)
    if not lingering:
        return code
    print(
        f"left {len(lingering)} thread(s) still blocked after the shutdown: {', '.join(lingering)}",
        file=sys.stderr,
        flush=True,
    )
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(code)


def spin_until_stopped(
    node: Any,
    executor: Any,
    stop: StopRequest,
    *,
    on_stop: Callable[[], None] | None = None,
    shutdown_timeout_s: float = SHUTDOWN_TIMEOUT_S,
) -> int:
    """Spin ``node`` on ``executor`` until a stop is requested, then shut everything down in order; 0.

    The executor spins on a thread of its own while the main thread waits for the request (a signal, or the
    spin ending because the context was shut down elsewhere). Then, while the context still works and the
    executor still spins, ``on_stop`` runs (cancel the move under way, stop the robot, let the client hear why
    its request ended). Then the spin thread stops, and only after it the executor is shut down (rclpy
    destroys the executor's guard condition there; a spin still under way dies on it, "cannot use
    Destroyable"), the node destroyed and the context shut down. An exception a callback raised out of the
    executor is raised here once all that is done, so a crash still ends the process with a traceback and a
    non-zero code.
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException

    failure: list[BaseException] = []
    halt = threading.Event()

    def spin() -> None:
        try:
            while not halt.is_set() and node.context.ok():
                executor.spin_once(timeout_sec=SPIN_SLICE_S)
        except ExternalShutdownException:
            pass
        except BaseException as error:  # re-raised by the main thread after the shutdown
            failure.append(error)
        finally:
            stop.request("the executor stopped spinning")

    executor.add_node(node)
    spinner = threading.Thread(target=spin, name=f"{node.get_name()}-spin", daemon=True)
    spinner.start()
    try:
        stop.wait()
        # A shutdown that hangs says where: every thread's stack on stderr, before ros2 launch escalates.
        faulthandler.dump_traceback_later(SLOW_SHUTDOWN_S)
        if on_stop is not None and node.context.ok() and spinner.is_alive():
            on_stop()
    finally:
        halt.set()
        spinner.join(shutdown_timeout_s)
        executor.shutdown(timeout_sec=shutdown_timeout_s)
        node.destroy_node()
        rclpy.try_shutdown(context=node.context)
        faulthandler.cancel_dump_traceback_later()
    if failure:
        raise failure[0]
    return 0
