"""MoveToSector and VerifyInstance goals round-trip between processes with every field intact."""

from __future__ import annotations

from pathlib import Path

from aiv_common.action_waits import send_goal_confirmed, send_goal_request
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import AttributeState, Verdict
from rclpy.action import ActionClient
from ros.peers.action_peers import FEEDBACK_QOS
from support.ros_harness import DEFAULT_TIMEOUT_S, python_node_argv, wait_until

PEERS = Path(__file__).parent / "peers"


def _start_peers(node_process, ros_executor):
    peers = node_process(
        python_node_argv(PEERS / "action_peers.py", "--unreachable", "3", "--traps", "1"), name="action_peers"
    )
    node, move, verify = ros_executor.spin_new(
        "action_client",
        lambda node: (
            node,
            ActionClient(node, MoveToSector, "move_to_sector", feedback_sub_qos_profile=FEEDBACK_QOS),
            ActionClient(node, VerifyInstance, "verify_instance", feedback_sub_qos_profile=FEEDBACK_QOS),
        ),
    )
    assert move.wait_for_server(timeout_sec=20.0), peers.output()
    assert verify.wait_for_server(timeout_sec=20.0), peers.output()
    # Feedback is a volatile topic: it only reaches us once discovery has matched its publisher, which
    # under load can trail the goal services the wait above checks.
    for action in ("move_to_sector", "verify_instance"):
        topic = f"/{action}/_action/feedback"
        wait_until(lambda topic=topic: node.count_publishers(topic) >= 1, f"feedback publisher of {action}")
    return peers, move, verify


def _send(ros_executor, client, goal, feedback: list):
    sent = send_goal_confirmed(
        client, goal, timeout_s=DEFAULT_TIMEOUT_S, feedback_callback=lambda fb: feedback.append(fb.feedback)
    )
    assert sent is not None, "no answer to the goal"
    return sent


def test_move_to_sector_outcomes_and_feedback(ros_executor, node_process):
    _, move, _ = _start_peers(node_process, ros_executor)
    expected = [
        ("front-left", MoveToSector.Result.OUTCOME_MOVED, 1, True),
        ("front", MoveToSector.Result.OUTCOME_STAYED, 1, False),
        ("front-right", MoveToSector.Result.OUTCOME_ALREADY_VISITED, 1, False),
        ("back-left", MoveToSector.Result.OUTCOME_UNREACHABLE, 1, False),
        ("back", MoveToSector.Result.OUTCOME_MOVED, 4, False),
    ]
    for step, (direction, outcome, sector, trap) in enumerate(expected, start=1):
        feedback: list = []
        handle = _send(ros_executor, move, MoveToSector.Goal(direction=direction), feedback)
        assert handle.accepted
        # rclpy drops feedback that is taken after the goal's result (it forgets the callback then), so the
        # feedback is awaited before the result is asked for.
        wait_until(lambda received=feedback: len(received) >= 3, f"feedback of move {direction}")
        assert [fb.phase for fb in feedback] == ["planning", "moving", "capturing"]
        result = handle.result(DEFAULT_TIMEOUT_S, lambda: True, f"move {direction}").result
        assert (result.outcome, result.sector, result.trap_view) == (outcome, sector, trap), direction
        assert result.steps_taken == step
        assert result.steps_remaining == 6 - step
        assert (result.frame_stamp.sec, result.frame_stamp.nanosec) != (0, 0)
        if outcome in (MoveToSector.Result.OUTCOME_UNREACHABLE, MoveToSector.Result.OUTCOME_ALREADY_VISITED):
            assert "not moved" in result.visibility_warning


def test_move_to_sector_rejects_unknown_direction(ros_executor, node_process):
    _, move, _ = _start_peers(node_process, ros_executor)
    handle = _send(ros_executor, move, MoveToSector.Goal(direction="sideways"), [])
    response = handle.result(DEFAULT_TIMEOUT_S, lambda: True, "a bad move")
    assert response.result.outcome == MoveToSector.Result.OUTCOME_REJECTED
    assert "sideways" in response.result.message


def test_verify_instance_round_trip(ros_executor, node_process):
    _, _, verify = _start_peers(node_process, ros_executor)
    goal = VerifyInstance.Goal(
        request_id="req-7",
        episode_key="scene/3/obj_12",
        descriptions=["a blue mug", "mug with white floral print", "a mug"],
        category_hint="mug",
        step_budget=6,
        query_mode="attribute",
        nbv_strategy="farthest",
        fusion="attr_majority",
    )
    feedback: list = []
    handle = _send(ros_executor, verify, goal, feedback)
    assert handle.accepted
    wait_until(lambda: len(feedback) >= 3, "three step reports")  # before the result: see the move test
    verdict = handle.result(DEFAULT_TIMEOUT_S, lambda: True, "verdict").result.verdict
    assert verdict.request_id == "req-7"
    assert verdict.decision == Verdict.DECISION_YES
    assert verdict.steps == 3 and verdict.category == "mug"
    assert [a.evidence_phrase for a in verdict.attributes] == goal.descriptions
    assert all(a.state == AttributeState.STATE_MATCHED for a in verdict.attributes)
    assert [report.step.step for report in feedback] == [0, 1, 2]
    assert [len(report.step.attributes) for report in feedback] == [1, 2, 3]


def test_verify_instance_without_descriptions_is_rejected(ros_executor, node_process):
    _, _, verify = _start_peers(node_process, ros_executor)
    handle = _send(ros_executor, verify, VerifyInstance.Goal(request_id="empty"), [])
    assert not handle.accepted


class _RegistrationLog(dict):
    """A client's pending-goal table that notes, for every registration, whether the client's lock was held."""

    def __init__(self, lock) -> None:
        super().__init__()
        self.lock = lock
        self.under_lock: list[bool] = []

    def __setitem__(self, key, value) -> None:
        self.under_lock.append(self.lock.locked())
        super().__setitem__(key, value)


def test_goal_requests_register_one_reply_future_under_the_client_lock(ros_executor, node_process):
    """rclpy 9.1.2's send_goal_async registers a second reply future outside the lock; a reply handled in that
    gap raised ValueError in a verifier move once in CI. send_goal_request must register exactly one future per
    request, while the lock the executor takes replies under is held, and leave none behind."""
    _, move, _ = _start_peers(node_process, ros_executor)
    log = _RegistrationLog(move._lock)
    move._pending_goal_requests = log
    for direction in ("front-left", "back", "front"):
        future = send_goal_request(move, MoveToSector.Goal(direction=direction))
        wait_until(future.done, f"the reply to move {direction}")
        handle = future.result()
        assert handle.accepted, direction
        result = handle.get_result_async()
        wait_until(result.done, f"the result of move {direction}")
    assert log.under_lock == [True, True, True]
    assert not log, "a reply future is still pending"
    wait_until(lambda: not move._futures, "the client to drop its finished futures")
