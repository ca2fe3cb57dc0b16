"""Peer process: a scripted MoveToSector server and a VerifyInstance server for round-trip tests.

These are test peers, not product logic: they exercise every field of the two actions across a
process boundary. The move server keeps a ring of 6 sectors with a configurable set of
unreachable and trap sectors; the verify server rejects goals without descriptions and answers
one step report per description. A goal whose first description is ``RAISE_IN_EXECUTE`` makes its execute
callback raise, as a verifier with a bug would: rclpy then aborts the goal with the default result.
"""

from __future__ import annotations

import argparse

import rclpy
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import AttributeState, StepReport, Verdict
from rclpy.action import ActionServer, GoalResponse
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

#: Feedback is volatile by default: what a server publishes before its writer has matched the client's
#: reader is never delivered, and right after discovery a client can send a goal before that match exists.
#: These peers keep the last feedback for late readers, so the round-trip tests can assert every message.
FEEDBACK_QOS = QoSProfile(
    depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)

#: The description that makes the verify server's execute callback raise.
RAISE_IN_EXECUTE = "raise in execute"

OFFSETS = {"front": 0, "front-left": 1, "back-left": 2, "back": 3, "back-right": 4, "front-right": 5}


class ScriptedMoveServer:
    def __init__(self, node: Node, unreachable: set[int], traps: set[int]) -> None:
        self.node = node
        self.unreachable = unreachable
        self.traps = traps
        self.current = 0
        self.visited = {0}
        self.steps = 0
        self.budget = 6
        ActionServer(
            node,
            MoveToSector,
            "move_to_sector",
            self.execute,
            goal_callback=self.on_goal,
            feedback_pub_qos_profile=FEEDBACK_QOS,
        )

    def on_goal(self, goal: MoveToSector.Goal) -> GoalResponse:
        return GoalResponse.ACCEPT

    def execute(self, handle) -> MoveToSector.Result:
        direction = handle.request.direction
        for phase, progress in (("planning", 0.2), ("moving", 0.6), ("capturing", 1.0)):
            handle.publish_feedback(MoveToSector.Feedback(phase=phase, progress=progress))
        result = MoveToSector.Result(sector=self.current)
        if direction not in OFFSETS:
            result.outcome = MoveToSector.Result.OUTCOME_REJECTED
            result.message = f"unknown direction {direction!r}"
            handle.abort()
            return result
        self.steps += 1
        target = (self.current + OFFSETS[direction]) % 6
        if direction == "front":
            result.outcome = MoveToSector.Result.OUTCOME_STAYED
        elif target in self.visited:
            result.outcome = MoveToSector.Result.OUTCOME_ALREADY_VISITED
            result.visibility_warning = f"sector {direction} was already visited; not moved"
        elif target in self.unreachable:
            result.outcome = MoveToSector.Result.OUTCOME_UNREACHABLE
            result.visibility_warning = f"sector {direction} is unreachable; not moved"
        else:
            result.outcome = MoveToSector.Result.OUTCOME_MOVED
            self.current = target
            self.visited.add(target)
            result.trap_view = target in self.traps
            if result.trap_view:
                result.visibility_warning = "target not clearly visible from this view"
        result.sector = self.current
        result.frame_stamp = self.node.get_clock().now().to_msg()
        result.steps_taken = self.steps
        result.steps_remaining = max(0, self.budget - self.steps)
        handle.succeed()
        return result


class EchoVerifyServer:
    def __init__(self, node: Node) -> None:
        self.node = node
        ActionServer(
            node,
            VerifyInstance,
            "verify_instance",
            self.execute,
            goal_callback=self.on_goal,
            feedback_pub_qos_profile=FEEDBACK_QOS,
        )

    def on_goal(self, goal: VerifyInstance.Goal) -> GoalResponse:
        return GoalResponse.ACCEPT if len(goal.descriptions) > 0 else GoalResponse.REJECT

    def execute(self, handle) -> VerifyInstance.Result:
        goal = handle.request
        if goal.descriptions[0] == RAISE_IN_EXECUTE:
            raise RuntimeError("the verify server failed on purpose")
        attributes = []
        reports = []
        for step, description in enumerate(goal.descriptions):
            attributes.append(
                AttributeState(
                    name=f"desc_{step + 1}",
                    type="other",
                    evidence_phrase=description,
                    state=AttributeState.STATE_MATCHED,
                    reconciled_state=AttributeState.STATE_MATCHED,
                    votes_matched=1.0,
                    converged=True,
                    last_answer="Yes",
                )
            )
            report = StepReport(step=step, sector=step, action=StepReport.ACTION_MOVE, move_direction="back")
            report.attributes = list(attributes)
            report.belief = Verdict.DECISION_YES
            reports.append(report)
            handle.publish_feedback(VerifyInstance.Feedback(step=report))
        verdict = Verdict(
            request_id=goal.request_id,
            decision=Verdict.DECISION_YES,
            confidence=1.0,
            steps=len(goal.descriptions),
            first_view_decision=Verdict.DECISION_YES,
            stop_reason="final",
            attributes=attributes,
            category=goal.category_hint,
            # Like the verifier node: every step is also in the verdict, since feedback is best effort
            # (the last one can arrive after the result, when the client no longer reads feedback).
            transcript=reports,
        )
        verdict.header.stamp = self.node.get_clock().now().to_msg()
        handle.succeed()
        return VerifyInstance.Result(verdict=verdict)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--unreachable", type=int, nargs="*", default=[])
    parser.add_argument("--traps", type=int, nargs="*", default=[])
    args = parser.parse_args()
    rclpy.init()
    node = Node("test_action_peers")
    ScriptedMoveServer(node, set(args.unreachable), set(args.traps))
    EchoVerifyServer(node)
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
