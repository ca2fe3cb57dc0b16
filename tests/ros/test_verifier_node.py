"""The verifier node over real DDS: complete episodes against the offline_sim node, parity with the in-process
agent, and failure handling (bad goals, a move that never completes, a frame in an unusable encoding).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from aiv_common.action_waits import send_goal_confirmed
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.setting_tree import nested_config
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.env_port import run_env_episode
from aiv_eval.run.episode_client import EpisodeInfrastructureError, EpisodeRequest, RosEpisodeClient
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import GroundTruthView, Verdict
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import pair_key
from aiv_verifier.agent.factory import AgentFactory
from aiv_verifier.verdict_codes import decision_code, decision_from_code
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
)
from sensor_msgs.msg import Image
from support.ros_harness import ros_args, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
INDEX = "val/pv_index_all.jsonl"
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)


def _start_sim(node_process, root: Path):
    return node_process(
        [
            str(SIM_EXECUTABLE),
            "--ros-args",
            *ros_args({"dataset_root": root, "index_file": INDEX, "privileged_output": True}),
        ],
        name="sim",
    )


def _start_verifier(node_process, params: dict[str, object]):
    argv = [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(VERIFIER_PARAMS), *ros_args(params)]
    return node_process(argv, name="verifier")


def _in_process(root: Path, agent_params: dict[str, object]):
    dataset = PInVerifyDataset(root)
    records = dataset.read_pair_index(INDEX)
    env = PInVerifyEnv(records, dataset, privileged=True, descriptions=dataset.load_descriptions())
    factory = AgentFactory.from_config(nested_config(agent_params))
    return records, env, factory


def _assert_same_episode(run, summary, trace) -> None:
    verdict = run.verdict
    key = run.start.episode_key
    assert verdict.decision == decision_code(summary.decision), key
    assert verdict.steps == summary.steps, key
    assert list(verdict.step_predictions) == [decision_code(p) for p in summary.step_predictions], key
    assert list(verdict.visited_sectors) == list(summary.visited_sectors), key
    assert (verdict.nav_fail_unreachable, verdict.nav_fail_trap) == (
        summary.nav_fail_unreachable,
        summary.nav_fail_trap,
    )
    assert [r.move_direction for r in verdict.transcript] == [
        e.step.move.direction if e.step.move else "" for e in trace.entries
    ], key
    assert [r.move_outcome for r in verdict.transcript] == [e.move_result.value for e in trace.entries], key
    assert [r.move_note for r in verdict.transcript] == [e.move_note for e in trace.entries], key
    assert list(verdict.notes) == list(summary.move_notes), key  # the queries get no note of their own
    for report, entry in zip(verdict.transcript, trace.entries, strict=True):
        assert [(a.name, a.state, a.last_answer) for a in report.attributes] == [
            (row.name, {"Missing": 0, "Matched": 1, "Contradictory": 2}[row.state.value], row.last_answer)
            for row in entry.step.attributes
        ], key
        assert report.detection_confidence == pytest.approx(entry.step.crop.confidence)


@pytest.mark.parametrize(
    "params",
    [
        {"verifier.backend": "oracle", "agent.nbv": "farthest"},
        {"verifier.backend": "oracle", "agent.nbv": "random", "agent.query_mode": "direct"},
    ],
    ids=["oracle-fps-attribute", "oracle-random-direct"],
)
def test_ros_episodes_equal_in_process_episodes(ros_executor, node_process, micro_root, params) -> None:
    params = {**params, "verifier.dataset_root": micro_root}
    sim = _start_sim(node_process, micro_root)
    verifier = _start_verifier(node_process, params)
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=30.0)
    records, env, factory = _in_process(micro_root, params)
    decisions = set()
    for index, record in enumerate(records):
        run = client.run(EpisodeRequest(index=index))
        assert run.start.episode_key == pair_key(record)
        _, trace, summary = run_env_episode(env, index, factory, episode_key=run.start.episode_key)
        _assert_same_episode(run, summary, trace)
        assert len(run.feedback) <= run.verdict.steps
        decisions.add(run.verdict.decision)
    assert decisions <= {Verdict.DECISION_YES, Verdict.DECISION_NO} and len(decisions) == 2
    sim.assert_running()
    verifier.assert_running()


def test_evidential_episodes_over_ros_equal_in_process_ones(ros_executor, node_process, micro_root) -> None:
    """The evidential fusion with the uncertainty next-best-view: same decisions (UNDECIDED included), same
    probability and opinions, same unverified attributes over DDS as in-process."""
    params = {
        "verifier.backend": "noisy_oracle",
        "verifier.noise.error_rate": 0.1,
        "verifier.dataset_root": micro_root,
        "agent.fusion": "evidential",
        "agent.nbv": "uncertainty",
    }
    _start_sim(node_process, micro_root)
    verifier = _start_verifier(node_process, params)
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=30.0)
    records, env, factory = _in_process(micro_root, params)
    for index in range(len(records)):
        run = client.run(EpisodeRequest(index=index))
        _session, trace, summary = run_env_episode(env, index, factory, episode_key=run.start.episode_key)
        _assert_same_episode(run, summary, trace)
        verdict = run.verdict
        assert summary.probability is not None
        assert verdict.probability == pytest.approx(summary.probability, abs=1e-12)
        assert list(verdict.unverified_attributes) == list(summary.unverified)
        assert [
            v for a in verdict.attributes for v in (a.belief, a.disbelief, a.uncertainty)
        ] == pytest.approx(
            [
                v
                for row in trace.entries[-1].step.attributes
                for v in (row.belief, row.disbelief, row.uncertainty)
            ],
            abs=1e-6,
        )
        assert [bool(r.abstained) for r in verdict.transcript] == [e.step.abstained for e in trace.entries]
    verifier.assert_running()


def test_classical_default_completes_real_episodes(ros_executor, node_process, micro_root) -> None:
    _start_sim(node_process, micro_root)
    verifier = _start_verifier(node_process, {})
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=30.0)
    _records, env, factory = _in_process(micro_root, {})
    for index in range(3):
        run = client.run(EpisodeRequest(index=index))
        assert run.verdict.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), run.verdict.failure_reason
        assert run.verdict.query_mode == "attribute" and run.verdict.category
        _, trace, summary = run_env_episode(env, index, factory, episode_key=run.start.episode_key)
        _assert_same_episode(run, summary, trace)
        assert any(t.stage == "verify" for t in run.verdict.timings)
    verifier.assert_running()


class GoalSender:
    def __init__(self, executor) -> None:
        self.client = executor.spin_new(
            "goal_sender", lambda node: ActionClient(node, VerifyInstance, "verify_instance")
        )
        self.executor = executor

    def send(self, **fields) -> Verdict:
        assert self.client.wait_for_server(timeout_sec=30.0)
        sent = send_goal_confirmed(self.client, VerifyInstance.Goal(**fields), timeout_s=30.0)
        assert sent is not None and sent.accepted, "goal not accepted"
        return sent.result(60.0, lambda: True, "verdict").result.verdict


def test_bad_goals_are_refused_with_reasons_and_odd_text_is_served(
    ros_executor, node_process, micro_root
) -> None:
    _start_sim(node_process, micro_root)
    verifier = _start_verifier(node_process, {})
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=30.0)
    start = client.start(EpisodeRequest(index=0))  # a frame is on the topics from here on
    sender = GoalSender(ros_executor)

    empty = sender.send(request_id="empty", descriptions=["", "   "])
    assert empty.decision == Verdict.DECISION_FAILED and empty.stop_reason == "rejected"
    assert "no descriptions" in empty.failure_reason
    absurd = sender.send(request_id="absurd", descriptions=["a red mug"], step_budget=100000)
    assert absurd.decision == Verdict.DECISION_FAILED and "absurd" in absurd.failure_reason
    unknown = sender.send(request_id="nbv", descriptions=["a red mug"], nbv_strategy="teleport")
    assert unknown.decision == Verdict.DECISION_FAILED and "teleport" in unknown.failure_reason

    # Odd but valid text is served: each goal re-starts the episode so the budget is fresh.
    for texts in (["ein blauer Becher mit weißen Blümchen 🌼", "杯子"], ["a red mug " * 1000]):
        fresh = client.start(EpisodeRequest(index=0))
        verdict = sender.send(
            request_id="odd",
            descriptions=texts,
            step_budget=fresh.max_steps,
            start_stamp=fresh.frame_stamp,
            start_sector=fresh.start_sector,
        )
        assert verdict.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), verdict.failure_reason
    assert start.success
    verifier.assert_running()


def test_move_that_never_completes_and_unusable_frames_fail_explicitly(
    ros_executor, node_process, micro_root
) -> None:
    """A hung move server and a depth image instead of colour end the request as FAILED, with the cause."""
    node = ros_executor.create_node("fake_robot")
    image_pub = node.create_publisher(Image, "camera/image_raw", LATCHED)
    gt_pub = node.create_publisher(GroundTruthView, "sim/ground_truth_view", LATCHED)
    released = threading.Event()
    calls: list[str] = []

    def never_finishes(goal_handle):
        calls.append(goal_handle.request.direction)
        released.wait(30.0)  # until the test ends; the verifier must give up first
        goal_handle.abort()
        return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_REJECTED)

    ActionServer(
        node,
        MoveToSector,
        "move_to_sector",
        execute_callback=never_finishes,
        cancel_callback=lambda _g: CancelResponse.ACCEPT,
        callback_group=ReentrantCallbackGroup(),
    )
    # The oracle knows nothing about these descriptions, so it answers Unsure and the agent wants to move.
    verifier = _start_verifier(
        node_process,
        {
            "verifier.backend": "oracle",
            "verifier.dataset_root": micro_root,
            "move_timeout_s": 1.0,
            "frame_timeout_s": 1.0,
        },
    )
    sender = GoalSender(ros_executor)

    def publish(array: np.ndarray, encoding: str, seconds: int) -> object:
        message = numpy_to_imgmsg(array, encoding)
        message.header.stamp.sec = seconds
        gt = GroundTruthView(
            capture_tag="s0_far", sector=0, has_box=False, episode_path="none", target_object_id="none"
        )
        gt.header.stamp = message.header.stamp
        gt_pub.publish(gt)
        image_pub.publish(message)
        return message.header.stamp

    try:
        stamp = publish(np.full((64, 36, 3), 90, np.uint8), "rgb8", 100)
        hung = sender.send(request_id="hung", descriptions=["a teal ceramic vase"], start_stamp=stamp)
        assert hung.decision == Verdict.DECISION_FAILED
        assert "no move result within 1.0 s" in hung.failure_reason
        assert calls and hung.steps == 0

        stamp = publish(np.zeros((64, 36), np.float32), "32FC1", 200)
        depth = sender.send(request_id="depth", descriptions=["a teal ceramic vase"], start_stamp=stamp)
        assert depth.decision == Verdict.DECISION_FAILED and "32FC1" in depth.failure_reason

        missing = sender.send(
            request_id="late", descriptions=["a teal vase"], start_stamp=type(stamp)(sec=300)
        )
        assert missing.decision == Verdict.DECISION_FAILED and "frame timeout" in missing.failure_reason
        wait_until(lambda: verifier.running, "verifier still running")
        verifier.assert_running()
    finally:
        released.set()


def test_the_evaluator_counts_a_goal_aborted_with_the_default_verdict_as_a_failure_not_a_no(
    ros_executor, node_process, micro_root
) -> None:
    """A verify server whose execute raises: rclpy aborts the goal with a default Verdict (DECISION_NO). The
    evaluator's episode client must report an infrastructure failure, which the evaluator retries, not a NO."""
    _start_sim(node_process, micro_root)
    calls: list[str] = []

    def raise_in_execute(goal_handle):
        calls.append(goal_handle.request.request_id)
        raise RuntimeError("a verifier bug, on purpose")

    ros_executor.spin_new(
        "crashing_verifier",
        lambda node: ActionServer(node, VerifyInstance, "verify_instance", execute_callback=raise_in_execute),
    )
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=30.0)
    with pytest.raises(EpisodeInfrastructureError) as raised:
        client.run(EpisodeRequest(index=0))
    assert str(raised.value) == "the verifier's goal was aborted by the server without a verdict"
    assert len(calls) == 1


def _abort_with_the_default_result(goal_handle):
    goal_handle.abort()
    return MoveToSector.Result()  # outcome 0 is OUTCOME_MOVED


def _moved_without_a_frame(goal_handle):
    goal_handle.succeed()
    return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_MOVED, sector=1)


@pytest.mark.parametrize(
    ("answer_move", "reason"),
    [
        # rclpy hands back whatever result an aborting server returns; the default one reads "moved to sector 0".
        (_abort_with_the_default_result, "the move was aborted by the server without saying why"),
        # MOVED names the frame showing the new view; without it the next step would judge the old view.
        (
            _moved_without_a_frame,
            "the move server reported a move to sector 1 without the stamp of a frame showing it "
            "(MoveToSector.Result.frame_stamp)",
        ),
    ],
    ids=["aborted-with-the-default-result", "moved-without-a-frame"],
)
def test_a_move_result_that_cannot_be_believed_fails_the_request_at_its_step(
    ros_executor, node_process, micro_root, answer_move, reason: str
) -> None:
    """The verifier believes a move's result only from a goal that succeeded (naming the frame of a new view)
    or one that says it refused; anything else ends the request FAILED, never as a move."""
    node = ros_executor.create_node("untrustworthy_robot")
    image_pub = node.create_publisher(Image, "camera/image_raw", LATCHED)
    gt_pub = node.create_publisher(GroundTruthView, "sim/ground_truth_view", LATCHED)
    calls: list[str] = []

    def execute(goal_handle):
        calls.append(goal_handle.request.direction)
        return answer_move(goal_handle)

    ActionServer(node, MoveToSector, "move_to_sector", execute_callback=execute)
    _start_verifier(node_process, {"verifier.backend": "oracle", "verifier.dataset_root": micro_root})
    stamp = _publish_unsure_start_view(image_pub, gt_pub)
    verdict = GoalSender(ros_executor).send(
        request_id="untrusted", descriptions=["a teal ceramic vase"], start_stamp=stamp
    )
    assert len(calls) == 1
    assert verdict.decision == Verdict.DECISION_FAILED
    assert verdict.failure_reason == f"step 0: move {calls[0]!r} failed: {reason}"


def _publish_unsure_start_view(image_pub, gt_pub):
    """A start view the oracle knows nothing about (it answers Unsure and asks to move); returns its stamp."""
    image = numpy_to_imgmsg(np.full((64, 36, 3), 90, np.uint8), "rgb8")
    image.header.stamp.sec = 100
    gt = GroundTruthView(capture_tag="s0_far", sector=0, episode_path="none", target_object_id="none")
    gt.header.stamp = image.header.stamp
    gt_pub.publish(gt)
    image_pub.publish(image)
    return image.header.stamp


def test_a_cancelled_request_cancels_its_move_and_stops_before_its_next_step(
    ros_executor, node_process, micro_root
) -> None:
    """A cancel that arrives while a move is under way is passed on to the move (the base stops) and ends the
    request in that step: no frame is judged after it and no second move is asked for.

    The move server holds the move until the verifier cancels it, so the order of events does not depend on
    timing: whether the verifier notices the cancel before or just after the move's acceptance reaches it,
    the request ends during step 0's move and the move is cancelled.
    """
    node = ros_executor.create_node("slow_robot")
    image_pub = node.create_publisher(Image, "camera/image_raw", LATCHED)
    gt_pub = node.create_publisher(GroundTruthView, "sim/ground_truth_view", LATCHED)
    calls: list[str] = []
    move_cancel_requested = threading.Event()
    release = threading.Event()  # ends a held move in the finally below, should the verifier never cancel it

    def move_held_until_cancelled(goal_handle):
        calls.append(goal_handle.request.direction)
        while not goal_handle.is_cancel_requested and not release.wait(0.02):
            pass
        if goal_handle.is_cancel_requested:
            move_cancel_requested.set()
            goal_handle.canceled()
            return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_REJECTED, sector=-1)
        goal_handle.succeed()
        return MoveToSector.Result(outcome=MoveToSector.Result.OUTCOME_STAYED, sector=0)

    ActionServer(
        node,
        MoveToSector,
        "move_to_sector",
        execute_callback=move_held_until_cancelled,
        cancel_callback=lambda _goal: CancelResponse.ACCEPT,
        callback_group=ReentrantCallbackGroup(),
    )
    _start_verifier(
        node_process,
        {"verifier.backend": "oracle", "verifier.dataset_root": micro_root, "move_timeout_s": 30.0},
    )
    stamp = _publish_unsure_start_view(image_pub, gt_pub)
    sender = GoalSender(ros_executor)
    assert sender.client.wait_for_server(timeout_sec=30.0)
    goal = VerifyInstance.Goal(request_id="cancel", descriptions=["a teal ceramic vase"], start_stamp=stamp)
    try:
        sent = send_goal_confirmed(sender.client, goal, timeout_s=30.0)
        assert sent is not None and sent.accepted
        wait_until(lambda: bool(calls), "the verifier asks to move")  # the oracle is unsure: it moves
        sent.cancel()
        wait_until(move_cancel_requested.is_set, "the verifier cancelling its move", timeout_s=30.0)
    finally:
        release.set()
    response = sent.result(60.0, lambda: True, "verdict")
    verdict = response.result.verdict
    assert response.status == GoalStatus.STATUS_CANCELED
    assert (verdict.decision, verdict.stop_reason) == (Verdict.DECISION_FAILED, "canceled")
    assert verdict.failure_reason.startswith(
        f"the request was canceled during the move {calls[0]!r} of step 0"
    )
    assert calls == [calls[0]]


def test_verifier_exits_with_a_message_on_bad_configuration(node_process) -> None:
    process = _start_verifier(node_process, {"verifier.backend": "oracle"})
    process.process.wait(timeout=60)
    assert process.process.returncode == 2
    assert "verifier.dataset_root" in process.output()


def test_decision_codes_round_trip() -> None:
    from aiv_verifier.core.types import Decision

    for decision in (Decision.YES, Decision.NO, Decision.UNSURE, None):
        assert decision_from_code(decision_code(decision)) is decision
