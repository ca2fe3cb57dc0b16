"""Every move the robot could not make names its cause: in the StepReport (``move_note``), the Verdict's notes,
the robot adapter's log and ``aiv-pregrasp``'s output.

The end-to-end test runs the robot adapter (``navigation: nav2``) and the verifier (oracle backend: it knows
nothing of the described object, so it keeps asking to move) as processes; the test holds a NavigateToPose
server (the real nav2_msgs type, built by scripts/install_ros2_tools.sh) that aborts every goal with TF_ERROR
and a robot standing still (its pose, the object's, camera frames). ``aiv-pregrasp`` asks for the verdict while
the test listens to the verifier's step and verdict topics. Without nav2_msgs that test skips with one line.

The rules underneath (which moves carry a note, one verdict line per distinct reason) are checked without DDS.
"""

from __future__ import annotations

import math
import subprocess
import threading
from pathlib import Path
from typing import Any

import numpy as np
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_dataset.vocabulary import MoveOutcome
from aiv_interfaces.msg import GroundTruthView, StepReport, Verdict
from aiv_robot.geometry import Pose2D, quaternion_from_yaw
from aiv_robot.mover import MoveSettings, NavStatus, PoseSample, SectorMover
from aiv_robot.pregrasp import format_step, format_verdict
from aiv_verifier.agent.episode_loop import run_episode
from aiv_verifier.agent.port import FrameRequest, MoveReport
from aiv_verifier.agent.steps import ViewFrame
from aiv_verifier.agent.trace import move_note_lines, summarize
from aiv_verifier.core.evidential import EvidenceSummary
from aiv_verifier.core.types import Decision
from geometry_msgs.msg import PoseStamped
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from support.robot_nodes import ADAPTER, ADAPTER_DEFAULTS, INSTALL, VERIFIER, VERIFIER_DEFAULTS
from support.ros2_cli import skip_unless_tools
from support.ros_harness import ros_args, wait_until

PREGRASP = INSTALL / "aiv_robot" / "lib" / "aiv_robot" / "aiv-pregrasp"
TF_ERROR = 9002
TF_WORDS = "Transform from base_link to map is too old"
#: What the adapter makes of the abort (aiv_robot.action_goal.GoalTracker.ending_words).
CAUSE = f"Nav2 aborted the goal: error code {TF_ERROR} (TF_ERROR): {TF_WORDS}"
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)
RELIABLE = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST, depth=50)
STANDING = Pose2D(1.5, 0.0, math.pi)  # east of the object at the origin, facing it


# -- the rules, without DDS ---------------------------------------------------------------------------------


def test_only_a_move_that_was_not_made_carries_the_servers_reason() -> None:
    said = "no way through"
    assert MoveReport(MoveOutcome.UNREACHABLE, warning=said).not_made_because == said
    assert MoveReport(MoveOutcome.ALREADY_VISITED, warning=said).not_made_because == said
    assert MoveReport(MoveOutcome.REJECTED, message="no pose", warning=said).not_made_because == "no pose"
    # a trap arrival's warning is about the view, not about the move: the move was made
    assert MoveReport(MoveOutcome.MOVED, trap_view=True, warning=said).not_made_because == ""
    assert MoveReport(MoveOutcome.STAYED, warning=said).not_made_because == ""


def test_verdict_notes_give_one_line_per_distinct_reason() -> None:
    assert move_note_lines([]) == ()
    assert move_note_lines([("back-left", CAUSE)]) == (f"move back-left not made: {CAUSE}",)
    lines = move_note_lines(
        [("back-left", CAUSE), ("back", CAUSE), ("back-left", CAUSE), ("front-left", "sector 1 is a wall")]
    )
    assert lines == (
        f"moves back-left, back not made (3 times): {CAUSE}",
        "move front-left not made: sector 1 is a wall",
    )


class _Move:
    def __init__(self, direction: str) -> None:
        self.direction = direction


class _Step:
    """An agent step that does not answer and asks to move to ``direction``."""

    def __init__(self, direction: str) -> None:
        self.move: _Move | None = _Move(direction)
        self.stopped = False
        self.decision = self.step_prediction = Decision.UNSURE
        self.stop_reason = ""


class _Agent:
    """Never answers; asks for the scripted directions in turn (and is a summary source)."""

    def __init__(self, directions: list[str]) -> None:
        self.directions = list(directions)
        self.final_decision: Decision | None = None
        self.visited_order = (0,)
        self.evidence_summary: EvidenceSummary | None = None
        self.model_calls: dict[str, int] = {}

    def observe(self, frame: ViewFrame) -> _Step:
        return _Step(self.directions.pop(0))

    def confidence(self) -> float:
        return 0.0


class _Port:
    """Answers each move with the next scripted report; every frame is the same grey image."""

    def __init__(self, reports: list[MoveReport]) -> None:
        self.reports = list(reports)

    def frame(self, request: FrameRequest) -> ViewFrame:
        return ViewFrame(np.zeros((2, 2, 3), np.uint8), request.step_count, request.sector)

    def move(self, direction: str) -> MoveReport:
        return self.reports.pop(0)

    def cancelled(self) -> bool:
        return False


def test_the_episode_loop_keeps_each_refused_moves_reason_for_the_transcript_and_the_summary() -> None:
    port = _Port(
        [
            MoveReport(MoveOutcome.UNREACHABLE, warning=CAUSE),
            MoveReport(
                MoveOutcome.MOVED, sector=2, frame_stamp=5, warning="the target is hidden", trap_view=True
            ),
            MoveReport(MoveOutcome.UNREACHABLE, warning=CAUSE),
        ]
    )
    agent = _Agent(["back-left", "front-left", "back"])
    trace = run_episode(agent, port, episode_key="notes", budget=3)
    assert [entry.move_note for entry in trace.entries] == [CAUSE, "", CAUSE]
    assert trace.nav_fail_unreachable == 2 and trace.nav_fail_trap == 1
    summary = summarize(agent, trace)
    assert summary.move_notes == (f"moves back-left, back not made: {CAUSE}",)


class _StillView:
    """A robot standing east of the object, facing it, with a camera frame for every stamp asked."""

    def pose(self) -> PoseSample:
        return PoseSample(STANDING, age_s=0.0)

    def object_xy(self) -> tuple[float, float]:
        return (0.0, 0.0)

    def newest_frame_ns(self) -> int:
        return 1

    def frame_at_or_after(self, stamp_ns: int) -> int:
        return stamp_ns

    def now_ns(self) -> int:
        return 1

    def wait(self, timeout_s: float) -> None:
        return None

    def cancel_requested(self) -> bool:
        return False


class _AbortingNavigation:
    """Navigation that fails every goal at once with Nav2's words."""

    reports_arrival = True

    def send(self, goal: Pose2D) -> str | None:
        return None

    def status(self) -> tuple[NavStatus, str]:
        return NavStatus.FAILED, CAUSE

    def stop(self) -> None:
        return None


def test_the_mover_warns_with_the_cause_of_each_move_it_could_not_make() -> None:
    infos: list[str] = []
    warnings: list[str] = []
    mover = SectorMover(
        MoveSettings(), _StillView(), _AbortingNavigation(), log=infos.append, warn=warnings.append
    )
    mover.reset("tf-broken")
    result = mover.move("back-left")
    assert result.outcome is MoveOutcome.UNREACHABLE and CAUSE in result.warning
    assert warnings == [f"request 'tf-broken': move 'back-left' not made (unreachable): {result.warning}"]
    assert mover.move("front").outcome is MoveOutcome.STAYED and len(warnings) == 1  # a stay is a move made
    assert not any("not made" in line for line in infos)


def test_aiv_pregrasp_prints_the_cause_on_the_step_line_and_the_notes_after_the_verdict() -> None:
    report = StepReport(step=1, sector=0, action=StepReport.ACTION_MOVE, move_direction="back-left")
    report.move_outcome, report.move_note = "unreachable", CAUSE
    assert format_step(report).endswith(f"move back-left -> unreachable ({CAUSE})")
    report.move_outcome, report.move_note = "moved", ""
    assert format_step(report).endswith("move back-left -> moved")
    verdict = Verdict(decision=Verdict.DECISION_NO, steps=3, notes=[f"move back-left not made: {CAUSE}"])
    assert format_verdict(verdict)[-1] == f"  note: move back-left not made: {CAUSE}"


# -- end to end over DDS ------------------------------------------------------------------------------------


class AbortingNav2:
    """A NavigateToPose server (nav2_msgs) that aborts every goal with TF_ERROR, as a navigator whose TF is
    broken does; ``goals`` counts them."""

    def __init__(self, node: Node) -> None:
        from nav2_msgs.action import NavigateToPose
        from rclpy.action import ActionServer

        self.result_type = NavigateToPose.Result
        self.goals = 0
        self.lock = threading.Lock()
        self.server = ActionServer(node, NavigateToPose, "navigate_to_pose", execute_callback=self._execute)

    def _execute(self, goal_handle: Any) -> Any:
        with self.lock:
            self.goals += 1
        goal_handle.abort()
        return self.result_type(error_code=TF_ERROR, error_msg=TF_WORDS)


def _pose_message(node: Node, pose: Pose2D) -> PoseStamped:
    message = PoseStamped()
    message.header.frame_id = "map"
    message.header.stamp = node.get_clock().now().to_msg()
    message.pose.position.x, message.pose.position.y = pose.x, pose.y
    _, _, message.pose.orientation.z, message.pose.orientation.w = quaternion_from_yaw(pose.yaw)
    return message


class StillRobot:
    """A robot that never moves: its pose, the object's (latched), and camera frames with a live ground truth
    (sector -1, as the robot stand-in sends), which is what the oracle verifier reads."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.pose_pub = node.create_publisher(PoseStamped, "robot_pose", 10)
        self.object_pub = node.create_publisher(PoseStamped, "object_pose", LATCHED)
        self.image_pub = node.create_publisher(Image, "camera/image_raw", 2)
        self.gt_pub = node.create_publisher(GroundTruthView, "sim/ground_truth_view", 2)
        self.image = np.full((36, 64, 3), 90, np.uint8)
        node.create_timer(0.05, self._publish)
        self.object_pub.publish(_pose_message(node, Pose2D(0.0, 0.0, 0.0)))

    def _publish(self) -> None:
        self.pose_pub.publish(_pose_message(self.node, STANDING))
        frame = numpy_to_imgmsg(self.image, "rgb8")
        frame.header.stamp = self.node.get_clock().now().to_msg()
        frame.header.frame_id = "camera"
        truth = GroundTruthView(
            capture_tag="live", sector=-1, has_box=False, episode_path="none", target_object_id="none"
        )
        truth.header = frame.header
        self.gt_pub.publish(truth)
        self.image_pub.publish(frame)

    def wait_until_the_adapter_has_the_object(self) -> None:
        wait_until(
            lambda: self.object_pub.get_subscription_count() > 0, "the adapter subscribes to object_pose"
        )
        wait_until(
            lambda: self.object_pub.wait_for_all_acked(Duration(seconds=1)),
            "the adapter to acknowledge the object pose",
        )


class VerifierTopics:
    """The verifier's step reports and verdicts as published (what a session recorder sees)."""

    def __init__(self, node: Node) -> None:
        self.lock = threading.Lock()
        self.steps: list[StepReport] = []
        self.verdicts: list[Verdict] = []
        node.create_subscription(StepReport, "verifier/steps", self._on_step, RELIABLE)
        node.create_subscription(Verdict, "verifier/verdict", self._on_verdict, RELIABLE)

    def _on_step(self, message: StepReport) -> None:
        with self.lock:
            self.steps.append(message)

    def _on_verdict(self, message: Verdict) -> None:
        with self.lock:
            self.verdicts.append(message)


def _start_nodes(node_process: Any, micro_root: Path) -> tuple[Any, Any]:
    adapter = node_process(
        [
            str(ADAPTER),
            "--ros-args",
            "--params-file",
            str(ADAPTER_DEFAULTS),
            *ros_args(
                {
                    "navigation": "nav2",
                    "pose_source": "pose",
                    "world_frame": "map",
                    # Margins for a loaded 2-core machine (the robot's poses come from the test process).
                    "answer_timeout_s": 5.0,
                    "pose_timeout_s": 3.0,
                    "frame_timeout_s": 2.0,
                }
            ),
        ],
        name="adapter",
    )
    verifier = node_process(
        [
            str(VERIFIER),
            "--ros-args",
            "--params-file",
            str(VERIFIER_DEFAULTS),
            *ros_args(
                {
                    "verifier.backend": "oracle",
                    "verifier.dataset_root": micro_root,
                    "move_timeout_s": 30.0,
                    "frame_timeout_s": 5.0,
                    "frame_qos.reliability": "best_effort",
                    "frame_qos.durability": "volatile",
                    "frame_qos.depth": 5,
                    "frame_stamp_window_s": 1.0,
                }
            ),
        ],
        name="verifier",
    )
    return adapter, verifier


def test_a_nav2_abort_reaches_the_step_report_the_verdict_the_adapters_log_and_aiv_pregrasp(
    ros_executor, node_process, micro_root
) -> None:
    skip_unless_tools("nav2_msgs")
    nav2 = ros_executor.spin_new("bt_navigator", AbortingNav2)
    robot = ros_executor.spin_new("still_robot", StillRobot)
    topics = ros_executor.spin_new("verifier_listener", VerifierTopics)
    adapter, verifier = _start_nodes(node_process, micro_root)
    robot.wait_until_the_adapter_has_the_object()

    run = subprocess.run(
        [str(PREGRASP), "a teal ceramic vase", "--budget", "3", "--server-wait", "60", "--timeout", "240"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode in (0, 1, 3), run.stdout + run.stderr  # an answer, not a failure
    wait_until(lambda: len(topics.verdicts) == 1, "the verdict on verifier/verdict")
    (verdict,) = topics.verdicts
    # No move could be made (Nav2 aborted every goal): each one's reason is kept, and only theirs.
    refused = [report for report in verdict.transcript if report.move_outcome == "unreachable"]
    assert len(refused) == verdict.nav_fail_unreachable >= 1, verdict.transcript
    for report in verdict.transcript:
        if report.move_outcome == "unreachable":
            assert report.move_note.startswith("sector ") and CAUSE in report.move_note, report.move_note
        else:
            assert report.move_outcome in ("stayed", "decided") and report.move_note == "", report
    # The published step reports (action feedback's twins) carry the same notes.
    wait_until(lambda: len(topics.steps) == len(verdict.transcript), "every step on verifier/steps")
    assert [step.move_note for step in topics.steps] == [step.move_note for step in verdict.transcript]
    # The verdict's notes: one line per distinct reason (each names its sector), each naming the Nav2 error.
    moves_notes = [note for note in verdict.notes if " not made" in note]
    assert moves_notes == list(move_note_lines((r.move_direction, r.move_note) for r in refused))
    assert all(CAUSE in note for note in moves_notes), verdict.notes
    with nav2.lock:
        assert nav2.goals == 2 * len(refused)  # the far and the near stand-off, both aborted

    # aiv-pregrasp: the cause on each refused step's line, the notes after the verdict.
    lines = run.stdout.splitlines()
    step_lines = {line.split(":", 1)[0]: line for line in lines if line.startswith("step ")}
    assert len(step_lines) == len(verdict.transcript), run.stdout
    for report in refused:
        line = step_lines[f"step {report.step}"]
        assert f"move {report.move_direction} -> unreachable ({report.move_note})" in line, line
    assert [line for line in lines if line.startswith("  note: ")] == [
        f"  note: {note}" for note in verdict.notes
    ]

    # The adapter's log: a warning per move it could not make, naming the cause.
    warnings = [line for line in adapter.output().splitlines() if "not made (unreachable)" in line]
    assert len(warnings) == len(refused), adapter.output()[-3000:]
    assert all("WARN" in line and CAUSE in line for line in warnings), warnings
    adapter.assert_running()
    verifier.assert_running()
