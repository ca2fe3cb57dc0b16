"""What the project's managed (lifecycle) nodes share: parameters that may be corrected while unconfigured,
entities that live exactly as long as a lifecycle state, self-start for ``ros2 run``, and measured memory release.

Why: a robot integrator brings nodes up and down with the ROS 2 lifecycle (``ros2 lifecycle set``, a lifecycle
manager, launch). A node then exists before it is configured, so a bad parameter must not kill it: configure fails
with one line saying why, ``ros2 param set`` corrects the value, and the next configure succeeds. Once configured
the node has read its parameters, so changing one would be silently ignored: they are read-only until cleanup.

- :class:`ParameterGate` declares a node's :class:`~aiv_common.parameter_spec.ParameterSpec` table with the same
  checks and one-line messages as :func:`~aiv_common.parameters.declare_parameter_table`, but keeps a refused
  start-up value as a problem that configure reports, instead of raising while the node is built.
- :class:`EntityScope` remembers which publishers, subscriptions, timers, clients, services and actions a
  transition created, so the opposite transition destroys exactly those.
- :func:`declare_autostart` / :func:`autostart`: ``autostart`` (default true) makes a node configure and
  activate itself, for ``ros2 run`` and for the evaluator that spawns verifiers without a lifecycle manager.
- :func:`released_memory`: a cleanup gives its memory back and says how much (process RSS before and after).
- :func:`stop_on_signals`: SIGINT / SIGTERM set an event the node's ``main`` loop watches.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

import psutil
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.parameter import Parameter

from .parameter_spec import ParameterError, ParameterSpec, table_by_name
from .parameters import (
    ROS_NAME_SUFFIXES,
    descriptor,
    given_parameters,
    refuse_unknown_parameters,
    ros_name_problem,
)

#: The parameter that makes a node take itself to active at start (read once, while the node is built).
AUTOSTART = ParameterSpec(
    "autostart",
    True,
    "configure and activate this node as soon as it starts (ros2 run, the evaluator); false: stay unconfigured "
    "until a lifecycle manager or `ros2 lifecycle set` configures it",
)


def declare_autostart(node: Node) -> bool:
    """Declare ``autostart`` (read-only) and return it; ParameterError for a value that is not a boolean."""
    given = given_parameters(node)
    value = AUTOSTART.check(given[AUTOSTART.name]) if AUTOSTART.name in given else AUTOSTART.default
    node.declare_parameter(AUTOSTART.name, value, descriptor(AUTOSTART), ignore_override=True)
    return bool(value)


class ParameterGate:
    """A node's parameter table, writable while the node is unconfigured and read-only while it is configured.

    Every given value (params file, ``-p``) is checked by its spec, as at start-up of an unmanaged node; a refused
    one is declared with its default and remembered, so the parameter exists and ``ros2 param set`` can correct
    it, and :meth:`values` (called by configure) raises the same one-line ParameterError until it is corrected.
    A key no spec declares is refused at configure too (it cannot be corrected: it names no parameter).
    ``ros2 param set`` is checked by the spec as well, and refused with the spec's one line.
    """

    def __init__(self, node: Node, table: Iterable[ParameterSpec]) -> None:
        self._node = node
        self._specs = table_by_name(table)
        self._problems: dict[str, str] = {}
        given = given_parameters(node)
        for spec in self._specs.values():
            value = spec.default
            if spec.name in given:
                try:
                    value = self._checked(spec, given[spec.name])
                except ParameterError as error:
                    self._problems[spec.name] = str(error)
            node.declare_parameter(spec.name, value, self._descriptor(spec, False), ignore_override=True)
        try:
            refuse_unknown_parameters(node, self._specs)
        except ParameterError as error:
            self._unknown = str(error)
        else:
            self._unknown = ""
        node.add_on_set_parameters_callback(self._on_set)

    def values(self) -> dict[str, Any]:
        """``{name: value}`` of the whole table; ParameterError (one line) for a refused or unknown given value."""
        for spec in self._specs.values():  # the first problem in table order, as an unmanaged node reports it
            if spec.name in self._problems:
                raise ParameterError(self._problems[spec.name])
        if self._unknown:
            raise ParameterError(self._unknown)
        return {name: self._node.get_parameter(name).value for name in self._specs}

    def set_read_only(self, read_only: bool) -> None:
        """Lock the table while the node is configured (it read the values), unlock it at cleanup.

        rclpy offers no public way to change a declared parameter's ``read_only`` flag (``set_descriptor`` refuses
        a read-only parameter), so the stored descriptors are changed here, in this one place.
        """
        stored: dict[str, Any] = getattr(self._node, "_descriptors", {})
        for name, spec in self._specs.items():
            if name in stored:
                stored[name].read_only = read_only and spec.read_only

    def _descriptor(self, spec: ParameterSpec, read_only: bool) -> Any:
        text = descriptor(spec)
        text.read_only = read_only
        return text

    def _checked(self, spec: ParameterSpec, value: Any) -> Any:
        checked = spec.check(value)
        if isinstance(checked, str) and checked and spec.name.endswith(ROS_NAME_SUFFIXES):
            problem = ros_name_problem(self._node, checked)
            if problem is not None:
                raise ParameterError(
                    f"parameter {spec.name!r} = {checked!r}; expected a valid ROS name: {problem}"
                )
        return checked

    def _on_set(self, parameters: list[Parameter[Any]]) -> SetParametersResult:
        for parameter in parameters:
            spec = self._specs.get(parameter.name)
            if spec is None:
                continue
            try:
                self._checked(spec, parameter.value)
            except ParameterError as error:
                return SetParametersResult(successful=False, reason=str(error))
        for parameter in parameters:
            self._problems.pop(parameter.name, None)  # corrected: the next configure reads the new value
        return SetParametersResult(successful=True)


class EntityScope:
    """The entities a node gained since this scope opened, destroyed together by :meth:`close`.

    A transition (configure, activate) builds its publishers, subscriptions, timers and clients through the
    node's usual ``create_*`` calls, some of them in helpers that know nothing of lifecycles; the opposite
    transition (cleanup, deactivate) must remove exactly those, or a reconfigured node would hold two of each.
    """

    def __init__(self, node: Node) -> None:
        self._node = node
        self._before = _entities(node)

    def close(self) -> None:
        node = self._node
        # Waitables last, looked up afresh: a publisher's or subscription's QoS event handlers are waitables
        # too, and destroying their owner removes them.
        for kind in ("publishers", "subscriptions", "timers", "clients", "services", "waitables"):
            for entity in _entities(node)[kind] - self._before[kind]:
                if kind == "waitables":  # action clients and servers leave the node as they are destroyed
                    destroy = getattr(entity, "destroy", None)
                    if callable(destroy):
                        destroy()
                    else:
                        node.remove_waitable(entity)
                elif kind == "publishers" and isinstance(node, LifecycleNode):
                    node.destroy_lifecycle_publisher(entity)
                else:
                    getattr(node, f"destroy_{kind[:-1]}")(entity)


def _entities(node: Node) -> dict[str, set[Any]]:
    return {
        "publishers": set(node.publishers),
        "subscriptions": set(node.subscriptions),
        "timers": set(node.timers),
        "clients": set(node.clients),
        "services": set(node.services),
        "waitables": set(node.waitables),
    }


class ManagedNode(Protocol):
    """What :func:`autostart` needs of a node: the lifecycle triggers and why the last transition failed."""

    transition_problem: str

    def trigger_configure(self) -> TransitionCallbackReturn: ...

    def trigger_activate(self) -> TransitionCallbackReturn: ...


def autostart(node: ManagedNode) -> None:
    """Configure and activate ``node``; ParameterError with the one line of the transition that failed.

    ``ros2 run`` and the evaluator start nodes without a lifecycle manager; for them a configure failure is a
    start-up failure (exit code 2, "do not restart"), exactly as before the nodes were managed.
    """
    if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
        raise ParameterError(node.transition_problem or "configure failed")
    if node.trigger_activate() != TransitionCallbackReturn.SUCCESS:
        raise ParameterError(node.transition_problem or "activate failed")


def process_rss_mib() -> float:
    """This process's resident memory in MiB."""
    return float(psutil.Process().memory_info().rss) / (1024 * 1024)


@contextlib.contextmanager
def released_memory(report: Callable[[str], object]) -> Iterator[None]:
    """Around dropping a node's backend: collect garbage, return freed heap to the system, report RSS before/after.

    ``gc.collect`` frees model objects caught in reference cycles; glibc keeps small freed blocks in its heap
    unless ``malloc_trim`` hands them back, so without it the RSS would not show what a cleanup released.
    """
    before = process_rss_mib()
    yield
    gc.collect()
    _malloc_trim()
    after = process_rss_mib()
    report(
        f"cleanup released memory: RSS {before:.1f} MiB -> {after:.1f} MiB ({before - after:.1f} MiB given back)"
    )


def _malloc_trim() -> None:
    name = ctypes.util.find_library("c")
    if name is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name).malloc_trim(0)


def stop_on_signals(stop: threading.Event) -> None:
    """SIGINT and SIGTERM set ``stop`` (checked by the node's ``main`` loop); an ignored signal stays ignored
    (a supervisor that made its children ignore Ctrl-C, as aiv-eval does, keeps it so)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, lambda _signum, _frame: stop.set())
