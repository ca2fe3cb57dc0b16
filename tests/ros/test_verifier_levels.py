"""The verifier node over real DDS with camera height levels: the level travels from the MoveToSector result and
the GroundTruthView into the agent, out in the step reports, and ``up`` / ``down`` are asked for only when the
episode has levels.

Against the offline simulator node on the ``micro`` episodes with views above and below added
(:mod:`support.leveled_dataset`), the farthest-point and uncertainty strategies play the same episodes over DDS
as in-process, height moves included. A small robot stand-in in the test serves MoveToSector over a tower of
views (six sectors at three heights) to pin the order of moves: each move publishes the new view's frame and
ground truth (its level and the whole layout) and answers with the sector, the level and the frame's stamp.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
import pytest
from aiv_common.action_waits import send_goal_confirmed
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.setting_tree import nested_config
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.levels import LEVEL_DIRECTIONS, level_tag_suffix
from aiv_dataset.vocabulary import DIRECTION_OFFSETS, SECTOR_COUNT
from aiv_eval.run.env_port import run_env_episode
from aiv_eval.run.episode_client import EpisodeRequest, RosEpisodeClient
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import GroundTruthView, SectorViewpoint, Verdict
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_verifier.agent.factory import AgentFactory
from aiv_verifier.verdict_codes import decision_code
from rclpy.action import ActionClient, ActionServer
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from support.leveled_dataset import add_height_levels
from support.ros_harness import ros_args

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
INDEX = "val/pv_index_all.jsonl"
#: Long enough for the ring to be used up, so farthest-point sampling goes up or down.
MAX_STEPS = 9
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)
HEIGHTS = {-1: 0.8, 0: 1.31, 1: 1.9}
GOAL_Y = 0.5


class TowerRobot:
    """MoveToSector over views at ``levels`` of every sector; publishes each view it arrives at."""

    def __init__(self, node, levels: tuple[int, ...]) -> None:
        self.levels = levels
        self.image_pub = node.create_publisher(Image, "camera/image_raw", LATCHED)
        self.gt_pub = node.create_publisher(GroundTruthView, "sim/ground_truth_view", LATCHED)
        self.sector, self.level, self.seconds = 0, 0, 100
        self.visited = {(0, 0)}
        self.calls: list[str] = []
        self.lock = threading.Lock()
        ActionServer(node, MoveToSector, "move_to_sector", execute_callback=self.execute)

    def layout(self) -> list[SectorViewpoint]:
        views = []
        for level in self.levels:
            for sector in range(SECTOR_COUNT):
                angle = math.radians(60.0 * sector)
                view = SectorViewpoint(
                    sector=sector, level=level, view_type="far", capture_tag=self.tag(sector, level)
                )
                view.has_position = True
                view.position.x, view.position.y = 1.5 * math.cos(angle), HEIGHTS[level]
                view.position.z = 1.5 * math.sin(angle)
                views.append(view)
        return views

    @staticmethod
    def tag(sector: int, level: int) -> str:
        return f"s{sector}_far{level_tag_suffix(level)}"

    def publish(self):
        """Publish the current view (a new stamp each time); returns the stamp."""
        image = numpy_to_imgmsg(np.full((64, 36, 3), 90 + 10 * self.level, np.uint8), "rgb8")
        image.header.stamp.sec = self.seconds
        self.seconds += 1
        gt = GroundTruthView(
            capture_tag=self.tag(self.sector, self.level),
            sector=self.sector,
            level=self.level,
            episode_path="none",  # the oracle knows nothing of it: Unsure on every view, so it keeps moving
            target_object_id="none",
            layout=self.layout(),
        )
        gt.goal_position.y = GOAL_Y
        gt.header.stamp = image.header.stamp
        self.gt_pub.publish(gt)
        self.image_pub.publish(image)
        return image.header.stamp

    def execute(self, goal_handle):
        direction = goal_handle.request.direction
        with self.lock:
            self.calls.append(direction)
            if direction in LEVEL_DIRECTIONS:
                if len(self.levels) == 1:
                    goal_handle.succeed()
                    return MoveToSector.Result(
                        outcome=MoveToSector.Result.OUTCOME_REJECTED,
                        sector=self.sector,
                        message="this episode has one camera height level",
                    )
                target = (self.sector, self.level + LEVEL_DIRECTIONS[direction])
            else:
                target = ((self.sector + DIRECTION_OFFSETS[direction]) % SECTOR_COUNT, self.level)
            result = MoveToSector.Result(sector=self.sector, level=self.level)
            if target[1] not in self.levels:
                result.outcome = MoveToSector.Result.OUTCOME_UNREACHABLE
            elif target in self.visited:
                result.outcome = MoveToSector.Result.OUTCOME_ALREADY_VISITED
            else:
                self.sector, self.level = target
                self.visited.add(target)
                result.outcome = MoveToSector.Result.OUTCOME_MOVED
                result.sector, result.level = target
            result.frame_stamp = self.publish()
            goal_handle.succeed()
            return result


def _verify(
    ros_executor, node_process, micro_root, levels: tuple[int, ...], budget: int
) -> tuple[Verdict, list]:
    node = ros_executor.create_node("tower_robot")
    robot = TowerRobot(node, levels)
    params = {"verifier.backend": "oracle", "verifier.dataset_root": micro_root, "agent.nbv": "farthest"}
    argv = [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(VERIFIER_PARAMS), *ros_args(params)]
    node_process(argv, name="verifier")
    stamp = robot.publish()
    client = ros_executor.spin_new(
        "goal_sender", lambda n: ActionClient(n, VerifyInstance, "verify_instance")
    )
    assert client.wait_for_server(timeout_sec=30.0)
    goal = VerifyInstance.Goal(
        request_id="tower", descriptions=["a teal ceramic vase"], start_stamp=stamp, step_budget=budget
    )
    sent = send_goal_confirmed(client, goal, timeout_s=30.0)
    assert sent is not None and sent.accepted
    return sent.result(90.0, lambda: True, "verdict").result.verdict, robot.calls


def test_with_levels_the_verifier_goes_up_or_down_once_the_ring_is_seen_and_reports_the_level(
    ros_executor, node_process, micro_root
) -> None:
    verdict, calls = _verify(ros_executor, node_process, micro_root, (-1, 0, 1), budget=8)
    assert verdict.decision != Verdict.DECISION_FAILED, verdict.failure_reason
    # Farthest-point sampling on the view sphere: round the ring first (the largest gaps), then up or down.
    assert all(call not in LEVEL_DIRECTIONS for call in calls[:5])
    vertical = next(index for index, call in enumerate(calls) if call in LEVEL_DIRECTIONS)
    assert vertical == 5
    levels = [int(report.level) for report in verdict.transcript]
    assert levels[:6] == [0] * 6
    assert levels[6] == LEVEL_DIRECTIONS[calls[5]]  # the level the move result named, in the step report
    assert [report.capture_tag for report in verdict.transcript][6].endswith(("_above", "_below"))
    assert verdict.steps == 8  # every move counts against the budget, the height move too


def test_a_one_level_episode_never_asks_for_up_or_down(ros_executor, node_process, micro_root) -> None:
    verdict, calls = _verify(ros_executor, node_process, micro_root, (0,), budget=8)
    assert verdict.decision != Verdict.DECISION_FAILED, verdict.failure_reason
    assert calls and not any(call in LEVEL_DIRECTIONS for call in calls)
    assert {int(report.level) for report in verdict.transcript} == {0}


@pytest.mark.parametrize("value", ["0,7", "1,2", "up"])
def test_a_bad_height_levels_parameter_stops_the_node_with_one_line(node_process, value: str) -> None:
    argv = [
        str(VERIFIER_EXECUTABLE),
        "--ros-args",
        "--params-file",
        str(VERIFIER_PARAMS),
        *ros_args({"verifier.backend": "classical", "height_levels": value}),
    ]
    process = node_process(argv, name="verifier")
    process.process.wait(timeout=60)
    assert process.process.returncode == 2
    assert "height_levels" in process.output()


@pytest.fixture(scope="module")
def tower_root(micro_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return add_height_levels(micro_root, tmp_path_factory.mktemp("levels") / "pv_micro_levels")


@pytest.mark.parametrize(
    "params",
    [
        {"verifier.backend": "oracle", "agent.nbv": "farthest"},
        {
            "verifier.backend": "noisy_oracle",
            "verifier.noise.error_rate": 0.1,
            "agent.fusion": "evidential",
            "agent.nbv": "uncertainty",
        },
    ],
    ids=["oracle-fps", "evidential-uncertainty"],
)
def test_episodes_with_levels_over_ros_equal_in_process_ones(
    ros_executor, node_process, tower_root, params
) -> None:
    params = {**params, "verifier.dataset_root": tower_root}
    sim_args = {
        "dataset_root": tower_root,
        "index_file": INDEX,
        "privileged_output": True,
        "max_steps": MAX_STEPS,
    }
    node_process([str(SIM_EXECUTABLE), "--ros-args", *ros_args(sim_args)], name="sim")
    argv = [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(VERIFIER_PARAMS), *ros_args(params)]
    verifier = node_process(argv, name="verifier")
    client = ros_executor.spin_new("episode_client", RosEpisodeClient)
    client.wait_for_servers(timeout_s=30.0)
    dataset = PInVerifyDataset(tower_root)
    records = dataset.read_pair_index(INDEX)
    env = PInVerifyEnv(
        records, dataset, max_steps=MAX_STEPS, privileged=True, descriptions=dataset.load_descriptions()
    )
    factory = AgentFactory.from_config(nested_config(params))
    height_moves = 0
    for index in range(len(records)):
        run = client.run(EpisodeRequest(index=index))
        _, trace, summary = run_env_episode(env, index, factory, episode_key=run.start.episode_key)
        verdict = run.verdict
        assert verdict.decision == decision_code(summary.decision), index
        moves = [e.step.move.direction if e.step.move else "" for e in trace.entries]
        assert [r.move_direction for r in verdict.transcript] == moves, index
        assert [r.move_outcome for r in verdict.transcript] == [e.move_result.value for e in trace.entries]
        assert [int(r.level) for r in verdict.transcript] == [e.level for e in trace.entries], index
        assert [int(r.level) for r in verdict.transcript] == [e.step.level for e in trace.entries], index
        height_moves += sum(move in LEVEL_DIRECTIONS for move in moves)
    assert height_moves > 0
    verifier.assert_running()


def test_the_frame_takes_its_level_and_the_episode_levels_from_where_they_are_known() -> None:
    """GroundTruthView of an offline view: its level and its layout's levels. A live view (sector -1, the robot
    stand-in) or no ground truth at all: the level the last move named and the ``height_levels`` parameter."""
    from aiv_verifier.agent.port import FrameRequest
    from aiv_verifier.frame_cache import FrameEntry
    from aiv_verifier.ros_port import view_frame

    image = np.zeros((4, 4, 3), np.uint8)
    request = FrameRequest(stamp=5, step_count=3, sector=2, navigation_failed=False, level=1)
    robot = TowerRobot.__new__(TowerRobot)
    robot.levels = (-1, 0, 1)
    offline = GroundTruthView(capture_tag="s4_far_below", sector=4, level=-1, layout=robot.layout())
    frame = view_frame(FrameEntry(5, image, ground_truth=offline), request, levels=(0, 1))
    assert (frame.current_sector, frame.current_level, frame.levels) == (4, -1, (-1, 0, 1))
    live = GroundTruthView(capture_tag="", sector=-1, level=0)
    frame = view_frame(FrameEntry(5, image, ground_truth=live), request, levels=(0, 1))
    assert (frame.current_sector, frame.current_level, frame.levels) == (2, 1, (0, 1))
    frame = view_frame(FrameEntry(5, image), request)
    assert (frame.current_level, frame.levels, frame.episode_levels) == (1, (0,), (0, 1))
