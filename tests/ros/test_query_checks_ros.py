"""Queries that say nothing checkable, over ROS (issue 33): VerifyInstance goals to the verifier node.

- descriptions made only of punctuation or emoji are refused (``DECISION_FAILED``, stop reason "rejected") with
  the query rule's one line, as blank ones are, and never answered NO; the node keeps serving;
- a ``category_hint`` that the descriptions contradict is served as asked (the hint wins: ``Verdict.category``),
  and the verdict's ``notes`` and the node's log say that the descriptions name another category; an agreeing
  hint gets no note.
"""

from __future__ import annotations

from pathlib import Path

from aiv_common.action_waits import send_goal_confirmed
from aiv_dataset.query_rules import description_problem
from aiv_eval.run.episode_client import EpisodeRequest, RosEpisodeClient
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import Verdict
from rclpy.action import ActionClient
from support.colour_dataset import INDEX, build_colour_dataset
from support.ros_harness import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
GLASSES = ["a pair of brown glasses with thin metal frames", "brown glasses"]
LAPTOP_NOTE = (
    "category_hint 'laptop' contradicts the descriptions, which name 'eyeglasses' and never 'laptop'; the hint "
    "wins: the object is checked as a laptop"
)


def test_symbol_only_queries_are_refused_and_a_contradicting_hint_is_said(
    ros_executor, node_process, tmp_path
) -> None:
    root, _ = build_colour_dataset(tmp_path / "data")
    node_process(
        [
            str(SIM_EXECUTABLE), "--ros-args", "-p", f"dataset_root:={root}", "-p", f"index_file:=val/{INDEX}",
            "-p", "privileged_output:=true",
        ],
        name="sim",
    )  # fmt: skip
    verifier = node_process(
        [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(VERIFIER_PARAMS)], name="verifier"
    )
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=60.0)
    action = ros_executor.spin_new(
        "goal_sender", lambda node: ActionClient(node, VerifyInstance, "verify_instance")
    )

    def send(request_id: str, descriptions: list[str], hint: str = "") -> Verdict:
        start = client.start(EpisodeRequest(index=0))  # a fresh view and budget for every goal
        goal = VerifyInstance.Goal(
            request_id=request_id,
            descriptions=descriptions,
            category_hint=hint,
            step_budget=start.max_steps,
            start_stamp=start.frame_stamp,
            start_sector=start.start_sector,
        )
        sent = send_goal_confirmed(action, goal, timeout_s=30.0)
        assert sent is not None and sent.accepted
        return sent.result(60.0, lambda: True, "verdict").result.verdict

    for number, texts in enumerate((["?!", "..."], ["👓🕶", "", "🙂 !"])):
        refused = send(f"symbols-{number}", texts)
        assert refused.decision == Verdict.DECISION_FAILED and refused.stop_reason == "rejected"
        assert refused.failure_reason == description_problem(texts, 10, 20000)
        assert refused.failure_reason.startswith("no description names anything checkable (")
        assert refused.steps == 0 and not refused.transcript

    contradicted = send("hinted", GLASSES, hint="laptop")
    assert contradicted.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO), contradicted.failure_reason
    assert contradicted.category == "laptop" and list(contradicted.notes) == [LAPTOP_NOTE]
    wait_until(lambda: f"request hinted: {LAPTOP_NOTE}" in verifier.output(), "the note in the log", 10.0)

    agreeing = send("agreeing", ["a red mug"], hint="mug")
    assert agreeing.decision in (Verdict.DECISION_YES, Verdict.DECISION_NO) and list(agreeing.notes) == []
    verifier.assert_running()
