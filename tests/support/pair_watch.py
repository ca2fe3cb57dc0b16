"""Watch one simulator + verifier pair from another network namespace and print what is seen, one line each.

A test that cuts the link between two namespaces needs eyes on the evaluator's side of the link: the test
process itself lives in neither namespace, so this runs there as a child (``python -m support.pair_watch PAIR``)
and prints, each line starting with the ``time.monotonic()`` it happened at (one clock for every process of the
host):

- ``request <episode key>``: the pair's verifier accepted a request (``<pair>/verifier/requests``, latched);
- ``feedback <step> <action>``: the verifier reported a step of its goal;
- ``graph present`` / ``graph absent``: the verifier's action server (its goal-status publisher, which is what the
  evaluator watches too) appeared in / left this side's ROS graph: it leaves when its participant's lease runs
  out without a word from it, e.g. while the link is down, and comes back when the participant is found again;
- ``node present`` / ``node absent``: the same for the verifier's node name. It is printed apart because the
  two differ after a lease ran out: the endpoints come back with the participant, the node name was seen not to
  (rmw learns node names from one transient-local sample per participant, which is not delivered again).
"""

from __future__ import annotations

import contextlib
import sys
import time

import rclpy
from aiv_common.qos import VERIFY_REQUEST_QOS
from aiv_interfaces.action import VerifyInstance
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node


def _say(*words: object) -> None:
    print(f"{time.monotonic():.3f}", *words, flush=True)


class PairWatch(Node):
    def __init__(self, pair: str) -> None:
        super().__init__("pair_watch")
        self.pair = pair
        self.seen = {"graph": False, "node": False}
        self.create_subscription(
            VerifyInstance.Goal, f"/{pair}/verifier/requests",
            lambda goal: _say("request", goal.episode_key), VERIFY_REQUEST_QOS.to_profile(),
        )  # fmt: skip
        self.create_subscription(
            VerifyInstance.Impl.FeedbackMessage, f"/{pair}/verify_instance/_action/feedback",
            lambda message: _say("feedback", message.feedback.step.step, message.feedback.step.action), 10,
        )  # fmt: skip
        self.create_timer(0.05, self._check_graph)

    def _check_graph(self) -> None:
        now = {
            "graph": self.count_publishers(f"/{self.pair}/verify_instance/_action/status") > 0,
            "node": ("verifier", f"/{self.pair}") in self.get_node_names_and_namespaces(),
        }
        for what, present in now.items():
            if present != self.seen[what]:
                self.seen[what] = present
                _say(what, "present" if present else "absent")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m support.pair_watch PAIR_NAMESPACE", file=sys.stderr)
        return 2
    rclpy.init()
    node = PairWatch(argv[0])
    _say("ready")
    with contextlib.suppress(KeyboardInterrupt, ExternalShutdownException):
        rclpy.spin(node)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
