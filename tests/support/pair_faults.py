"""Kill the verifier serving one chosen episode, whichever simulator + verifier pair serves it.

A test that compares a run with a crash to another must crash both inside the *same* episode: with several pairs
the episode's pair is not known in advance, so the verifier is found by what it is doing. Each pair's verifier
publishes every request it accepts (``verifier/requests``, latched) and reports each step as feedback; the kill
lands on an early step that asks for a move, so more steps must follow and the goal surely still runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aiv_common.qos import VERIFY_REQUEST_QOS
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import StepReport
from rclpy.node import Node


class VerifierKiller:
    """Calls ``kill(pair)`` once, when the verifier of ``pair`` ("" = un-namespaced) is inside ``target``
    (the episode key of its requests: ``aiv_offline_sim.episode_service.pair_key``)."""

    def __init__(self, node: Node, pairs: Sequence[str], target: str, kill: Callable[[str], None]) -> None:
        self.target = target
        self.kill = kill
        self.serving: dict[str, str] = {}  # pair -> episode key of the request its verifier took last
        self.killed: list[str] = []
        for pair in pairs:
            prefix = f"/{pair}" if pair else ""
            node.create_subscription(
                VerifyInstance.Goal, f"{prefix}/verifier/requests",
                lambda goal, pair=pair: self.serving.__setitem__(pair, goal.episode_key),
                VERIFY_REQUEST_QOS.to_profile(),
            )  # fmt: skip
            node.create_subscription(
                VerifyInstance.Impl.FeedbackMessage, f"{prefix}/verify_instance/_action/feedback",
                lambda message, pair=pair: self._on_feedback(pair, message), 10,
            )  # fmt: skip

    def _on_feedback(self, pair: str, message: VerifyInstance.Impl.FeedbackMessage) -> None:
        step = message.feedback.step
        if self.killed or step.action != StepReport.ACTION_MOVE or step.step > 2:
            return
        if self.serving.get(pair) == self.target:
            self.killed.append(pair)
            self.kill(pair)
