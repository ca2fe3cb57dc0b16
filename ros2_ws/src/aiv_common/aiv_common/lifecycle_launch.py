"""Launch actions that take a managed node to active from ``ros2 launch``, with launch_ros' lifecycle events.

Why launch and not the node's own ``autostart`` parameter: when launch drives the transitions, they go through
the node's ``change_state`` service like any lifecycle manager's, so ``ros2 lifecycle`` and the launch log show
them, and a launch argument (``autostart:=false``) can leave the node unconfigured for a lifecycle manager. A
launch file starts the node with its ``autostart`` parameter false, so that exactly one party drives it.

The installed launch_ros's ``LifecycleNode`` has no ``autostart`` argument of its own, so the transitions are
event handlers: every time the node's process starts (the first start and every respawn) launch asks for
``configure``, and every time the node reaches ``inactive`` from ``configuring`` launch asks for ``activate``.
A configure that fails leaves the node unconfigured and alive, with one line in its log saying why and launch's
"Failed to make transition" line; it is not retried.

Launch stopping (Ctrl-C) while a transition is asked for: launch_ros 0.28 destroys its ROS node while the
request's thread still waits for the service, and ``ros2 launch`` then ended with exit code 1 and "cannot use
Destroyable because destruction was requested" (a Ctrl-C 1.5 s after the start, before the node's service was
up; or an ``activate`` asked for after the Ctrl-C, once the interrupted node finished configuring).
:class:`CleanStopLifecycleNode` asks for no transition once launch is stopping and drops a request that launch's
own shutdown broke.

The node's process ending while a transition is asked for (it crashed while starting, or it was stopped by a
signal launch itself never saw, ``aiv_common.launch_signals``): launch_ros 0.28 keeps waiting for the service,
or for the answer, until launch shuts down, and that pending request keeps launch from ever being idle, so
``ros2 launch`` never ended (seen: 5 of 5 launches whose node was stopped 0.3 s after it started, each still
running 60 s later). :class:`CleanStopLifecycleNode` gives a request up as soon as the process it was meant for
has ended, with one line saying so.

Not for a node that launch respawns: launch_ros sends the respawned node's ``configure`` through the one service
client it made for the first process, whose killed server the DDS graph still lists for a while, so the client
finds "a" server at once, the request goes to the dead one, and the new node stays unconfigured (seen with
launch_ros 0.28). Respawned managed nodes (``offline_eval.launch.py``, ``bag_replay.launch.py``) therefore take
themselves to active with their own ``autostart`` parameter.
"""

from __future__ import annotations

import threading
from typing import Any

from launch.action import Action
from launch.actions import EmitEvent, RegisterEventHandler
from launch.condition import Condition
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessStart
from launch.events import matches_action
from launch.launch_context import LaunchContext
from launch.logging import get_logger
from launch.some_substitutions_type import SomeSubstitutionsType
from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from launch_ros.ros_adapters import get_ros_node
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState as ChangeStateService

#: How often a transition request that is still waiting checks whether it should give up (seconds).
REQUEST_CHECK_S = 0.5


class CleanStopLifecycleNode(LifecycleNode):
    """launch_ros' ``LifecycleNode`` action whose transition requests end when launch stops or the node's process
    ends, instead of waiting for a service that will not answer."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._transition_client: Any = None
        self._logger = get_logger(__name__)

    def execute(self, context: LaunchContext) -> Any:
        started = super().execute(context)  # expands node_name and starts the process
        self._transition_client = get_ros_node(context).create_client(
            ChangeStateService, f"{self.node_name}/change_state"
        )
        return started

    def _on_change_state_event(self, context: LaunchContext) -> None:
        if context.is_shutdown:  # e.g. activate, asked for when a configure that the Ctrl-C interrupted ended
            return None
        return super()._on_change_state_event(context)

    def _why_give_up(self, context: LaunchContext) -> str | None:
        if context.is_shutdown:
            return "launch is stopping"
        if self.return_code is not None:
            return f"its process ended (exit code {self.return_code})"
        return None

    def _call_change_state(self, request: Any, context: LaunchContext) -> None:
        """Ask for one transition (on launch's thread pool); give up as soon as nobody can answer any more."""
        transition = ChangeState.valid_transitions.get(request.transition.id, str(request.transition.id))
        try:
            while not self._transition_client.wait_for_service(timeout_sec=REQUEST_CHECK_S):
                if (reason := self._why_give_up(context)) is not None:
                    self._give_up(transition, reason)
                    return
            future = self._transition_client.call_async(request)
            answered = threading.Event()
            future.add_done_callback(lambda _future: answered.set())
            while not answered.wait(REQUEST_CHECK_S):
                if (reason := self._why_give_up(context)) is not None:
                    future.cancel()
                    self._give_up(transition, reason)
                    return
            response = future.result()
        except Exception:
            if self._why_give_up(context) is None:
                raise
            return  # launch destroyed its ROS node (and the client) under the waiting request: nothing to ask
        if not response.success:
            # The line launch_ros prints, which the docs and tests refer to.
            self._logger.error(
                f"Failed to make transition '{transition}' for LifecycleNode '{self.node_name}'"
            )

    def _give_up(self, transition: str, reason: str) -> None:
        if reason != "launch is stopping":  # launch's own shutdown needs no line per request
            self._logger.warning(f"'{transition}' of {self.node_name} not asked for any more: {reason}")


def _change_state(node: LifecycleNode, transition_id: int) -> EmitEvent:
    return EmitEvent(
        event=ChangeState(lifecycle_node_matcher=matches_action(node), transition_id=transition_id)
    )


def activate_when_started(
    node: LifecycleNode, autostart: SomeSubstitutionsType | None = None
) -> list[Action]:
    """The event handlers that configure ``node`` whenever its process starts and then activate it.

    ``autostart`` (a launch argument's substitution, ``true`` / ``false``) switches them off; None: always on.
    Put them in the launch description next to ``node``.
    """
    condition: Condition | None = IfCondition(autostart) if autostart is not None else None
    configure_on_start = RegisterEventHandler(
        OnProcessStart(target_action=node, on_start=[_change_state(node, Transition.TRANSITION_CONFIGURE)]),
        condition=condition,
    )
    activate_once_configured = RegisterEventHandler(
        OnStateTransition(
            target_lifecycle_node=node,
            start_state="configuring",
            goal_state="inactive",
            entities=[_change_state(node, Transition.TRANSITION_ACTIVATE)],
        ),
        condition=condition,
    )
    return [configure_on_start, activate_once_configured]
