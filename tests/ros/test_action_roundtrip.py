"""MoveToSector and VerifyInstance goals round-trip between processes with every field intact."""

from __future__ import annotations

from pathlib import Path

from aiv_eval.episode_client import warm_up_verifier
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import AttributeState, Verdict
from rclpy.action import ActionClient
from support.ros_harness import python_node_argv, wait_until

PEERS = Path(__file__).parent / "peers"


def _start_peers(node_process, ros_executor):
    peers = node_process(
        python_node_argv(PEERS / "action_peers.py", "--unreachable", "3", "--traps", "1"), name="action_peers"
    )
    node = ros_executor.create_node("action_client")
    move = ActionClient(node, MoveToSector, "move_to_sector")
    verify = ActionClient(node, VerifyInstance, "verify_instance")
    assert move.wait_for_server(timeout_sec=20.0), peers.output()
    assert verify.wait_for_server(timeout_sec=20.0), peers.output()
    # Feedback is a volatile topic: it only reaches us once discovery has matched its publisher, which
    # under load can trail the goal services the wait above checks.
    for action in ("move_to_sector", "verify_instance"):
        topic = f"/{action}/_action/feedback"
        wait_until(lambda topic=topic: node.count_publishers(topic) >= 1, f"feedback publisher of {action}")
    warm_up_verifier(verify, attempts=10, wait_s=2.0)  # goal replies can be lost right after discovery
    return peers, move, verify


def _send(ros_executor, client, goal, feedback: list):
    handle = ros_executor.run(
        client.send_goal_async(goal, feedback_callback=lambda fb: feedback.append(fb.feedback)),
        "goal acceptance",
    )
    return handle


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
        result = ros_executor.run(handle.get_result_async(), f"result of move {direction}").result
        assert (result.outcome, result.sector, result.trap_view) == (outcome, sector, trap), direction
        assert result.steps_taken == step
        assert result.steps_remaining == 6 - step
        assert (result.frame_stamp.sec, result.frame_stamp.nanosec) != (0, 0)
        if outcome in (MoveToSector.Result.OUTCOME_UNREACHABLE, MoveToSector.Result.OUTCOME_ALREADY_VISITED):
            assert "not moved" in result.visibility_warning
        # Feedback travels on its own topic and may trail the result: wait for it, then check order.
        wait_until(lambda received=feedback: len(received) >= 3, f"feedback of move {direction}")
        assert [fb.phase for fb in feedback] == ["planning", "moving", "capturing"]


def test_move_to_sector_rejects_unknown_direction(ros_executor, node_process):
    _, move, _ = _start_peers(node_process, ros_executor)
    handle = _send(ros_executor, move, MoveToSector.Goal(direction="sideways"), [])
    response = ros_executor.run(handle.get_result_async(), "result of a bad move")
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
    verdict = ros_executor.run(handle.get_result_async(), "verdict").result.verdict
    assert verdict.request_id == "req-7"
    assert verdict.decision == Verdict.DECISION_YES
    assert verdict.steps == 3 and verdict.category == "mug"
    assert [a.evidence_phrase for a in verdict.attributes] == goal.descriptions
    assert all(a.state == AttributeState.STATE_MATCHED for a in verdict.attributes)
    wait_until(lambda: len(feedback) >= 3, "three step reports")
    assert [report.step.step for report in feedback] == [0, 1, 2]
    assert [len(report.step.attributes) for report in feedback] == [1, 2, 3]


def test_verify_instance_without_descriptions_is_rejected(ros_executor, node_process):
    _, _, verify = _start_peers(node_process, ros_executor)
    handle = _send(ros_executor, verify, VerifyInstance.Goal(request_id="empty"), [])
    assert not handle.accepted
