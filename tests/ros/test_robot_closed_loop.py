"""Whole pre-grasp verifications closed loop: robot stand-in + robot adapter + verifier as real processes.

The stand-in (``robot_sim``, under a Python audit hook: tests/ros/peers/audited_robot_sim.py) renders episodes of
the micro preset live from the base's pose; it starts 7 degrees further round the object and 0.1 m farther
out than a benchmark capture, so no view it shows is a pre-captured one. The adapter turns the verifier's
sector moves into pose goals (some land outside the room or inside a wall: the stand-in refuses them, the move
is ``unreachable``, as in the benchmark). Two verifiers run side by side, the privileged oracle (with the
stand-in's live visible attributes) and the weight-free classical backend, each asked a positive query (the
episode's object's own descriptions from the generated description db) and a negative one (an object of
another category). Every verdict is recorded to ``closed_loop_verdicts.json`` in the test's tmp dir (and to
``$AIV_CLOSED_LOOP_JSON`` when set) with its steps, moves and timings: wall time, the stand-in's simulated
navigation time at its stated speed, and perception (the verifier's ``verify`` stage).

Each object is asked with its own descriptions, a same-category look-alike's (where the dataset has one) and
another category's. By default two micro episodes run; ``AIV_CLOSED_LOOP_DATASET=DIR`` with
``AIV_CLOSED_LOOP_EPISODES=N`` runs the first N val episodes of a generated dataset instead (its preset and
seed from ``capture_complete.json``), the robot-setting check of docs/evidential.md.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiv_common.action_waits import send_goal_confirmed
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_dataset import PInVerifyDataset
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import GroundTruthView, Verdict
from aiv_robot_sim.frames import BasePose, quaternion_to_yaw, yaw_to_quaternion
from aiv_robot_sim.live_scene import LiveScene
from aiv_robot_sim.motion import move_duration
from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from robot_sim.poses import off_capture_pose
from std_msgs.msg import Header, String
from support.robot_nodes import start_adapter, start_stand_in, start_verifier, wait_for_robot
from support.ros_harness import wait_until

pytestmark = pytest.mark.ros

AUDITED_STANDIN = Path(__file__).resolve().parent / "peers" / "audited_robot_sim.py"

SCENE = "00800-Pnu8fTXhpCq"  # micro, seed 42: a room with a partition wall
#: episode 0: a backpack (sectors 1 and 2 of the start view lie outside the room, 3 and 4 only near);
#: episode 1: a mug (sectors 3, 4 and 5 lie in the partition wall or outside the room).
EPISODES = ("0", "1")
BACKENDS = ("oracle", "classical")
LINEAR_SPEED = 0.5  # m/s of simulated time: a slow indoor base
ANGULAR_SPEED_DEG = 90.0
TIME_SCALE = 25.0  # the stand-in drives 25x faster than that (rendering is not scaled)
NAVIGATION_TIMEOUT_S = 8.0  # wall seconds per drive: > 4 m at 0.5 m/s x 25
STEP_BUDGET = 6
QUERIES = ("positive", "lookalike", "negative")


@dataclass(frozen=True)
class Episode:
    """One stand-in episode: where it comes from and which objects to ask about."""

    preset: str
    seed: int
    scene: str
    episode: str
    lookalike: str = ""  # a same-category object's id (the index's neg_same query where there is one)


def _episodes(micro_root: Path) -> tuple[Path, list[Episode]]:
    """The dataset whose descriptions and privileged ground truth serve the episodes, and the episodes."""
    chosen = os.environ.get("AIV_CLOSED_LOOP_DATASET", "")
    if not chosen:
        return micro_root, [Episode("micro", 42, SCENE, episode) for episode in EPISODES]
    root = Path(chosen).resolve()
    made = json.loads((root / "capture_complete.json").read_text())
    count = int(os.environ.get("AIV_CLOSED_LOOP_EPISODES", "10"))
    found: dict[tuple[str, str], str] = {}
    for line in (root / "val" / "pv_index_all.jsonl").read_text().splitlines():
        entry = json.loads(line)
        key = (entry["scene"], entry["episode"])
        if key not in found and len(found) >= count:
            continue
        lookalike = entry["query_object_id"] if entry["pair_type"] == "neg_same" else ""
        found[key] = found.get(key) or lookalike
    return root, [
        Episode(made["preset"], int(made["seed"]), scene, episode, lookalike)
        for (scene, episode), lookalike in found.items()
    ]


def _pose(message: PoseStamped) -> BasePose:
    q = message.pose.orientation
    return BasePose(message.pose.position.x, message.pose.position.y, quaternion_to_yaw(q.x, q.y, q.z, q.w))


@dataclass
class Move:
    """One goal the adapter sent to the stand-in, and how the stand-in answered it."""

    start: BasePose
    goal: BasePose
    answer: str = ""
    ending: str = ""

    @property
    def simulated_s(self) -> float:
        """Seconds the drive takes at the stand-in's stated speed (0 for a refused goal)."""
        if self.answer != "accepted":
            return 0.0
        return move_duration(self.start, self.goal, LINEAR_SPEED, math.radians(ANGULAR_SPEED_DEG))


@dataclass
class Record:
    episode: str
    object_category: str
    backend: str
    query: str
    query_object_id: str
    query_category: str
    decision: str
    failure_reason: str
    steps: int
    visited_sectors: list[int]
    move_outcomes: list[str]
    capture_tags: list[str]
    nav_fail_unreachable: int
    stop_reason: str = ""
    probability: float = math.nan  # P(the described object) of the evidential fusion
    unverified: list[str] = field(default_factory=list)  # attributes no view answered Yes or No
    attributes: list[str] = field(default_factory=list)  # "name: state (last answer: reason)"
    robot_goals: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    stage_s: dict[str, float] = field(default_factory=dict)
    navigation_wall_s: float = 0.0  # what the drives took here (time_scale)
    navigation_simulated_s: float = 0.0  # what they take at the stated speed

    @property
    def at_real_speed_s(self) -> float:
        """The verification's wall time had the base driven at the stated speed (time_scale 1)."""
        return self.elapsed_s - self.navigation_wall_s + self.navigation_simulated_s


DECISIONS = {
    Verdict.DECISION_YES: "YES",
    Verdict.DECISION_NO: "NO",
    Verdict.DECISION_UNDECIDED: "UNDECIDED",
    Verdict.DECISION_FAILED: "FAILED",
}

STATES = {0: "missing", 1: "matched", 2: "contradicted"}


class Robot:
    """The test's view of the stand-in: its odometry, camera stamps, the adapter's goals and their answers."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.lock = threading.Lock()
        self.odometry: BasePose | None = None
        self.odometry_stamp_ns = 0
        self.camera_stamp_ns = 0
        self.moves: list[Move] = []
        self._answered = 0
        sensor = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(PoseStamped, "odom_pose", self.on_odometry, 10)
        node.create_subscription(PoseStamped, "camera/pose", self.on_camera, sensor)
        node.create_subscription(PoseStamped, "goal_pose", self.on_goal, 10)
        node.create_subscription(String, "goal_status", self.on_status, 10)
        node.create_subscription(PoseStamped, "object_pose", lambda _m: None, latched)
        self.set_pose_pub = node.create_publisher(PoseStamped, "sim/set_pose", 10)
        self.clients = {
            backend: ActionClient(node, VerifyInstance, f"verify_{backend}") for backend in BACKENDS
        }
        self.mover = ActionClient(node, MoveToSector, "move_to_sector")

    def on_odometry(self, message: PoseStamped) -> None:
        with self.lock:
            self.odometry = _pose(message)
            self.odometry_stamp_ns = stamp_to_nanoseconds(message.header.stamp)

    def on_camera(self, message: PoseStamped) -> None:
        with self.lock:
            self.camera_stamp_ns = max(self.camera_stamp_ns, stamp_to_nanoseconds(message.header.stamp))

    def on_goal(self, message: PoseStamped) -> None:
        with self.lock:
            assert self.odometry is not None
            self.moves.append(Move(self.odometry, _pose(message)))  # the base stands still when a goal comes

    def on_status(self, message: String) -> None:
        text = message.data
        with self.lock:
            if text == "accepted" or text.startswith("refused"):
                if self._answered < len(self.moves):
                    self.moves[self._answered].answer = text
                    self._answered += 1
            elif self._answered:
                self.moves[self._answered - 1].ending = text

    def put_at(self, pose: BasePose) -> None:
        """Put the base at ``pose`` and wait for a camera frame taken there."""
        message = PoseStamped()
        message.header.frame_id = "map"
        message.pose.position.x, message.pose.position.y = pose.x, pose.y
        o = message.pose.orientation
        o.x, o.y, o.z, o.w = yaw_to_quaternion(pose.yaw)
        self.set_pose_pub.publish(message)

        def there() -> bool:
            with self.lock:
                here = self.odometry
                return (
                    here is not None
                    and math.hypot(here.x - pose.x, here.y - pose.y) < 1e-6
                    and abs(math.remainder(here.yaw - pose.yaw, 2 * math.pi)) < 1e-6
                )

        wait_until(there, "odometry at the start pose")
        with self.lock:
            at_start_ns = self.odometry_stamp_ns
        self.wait_for_frame_after(at_start_ns)
        # Two frames more: by then the verifier's newest frame (its first view) shows the start pose too.
        for _ in range(2):
            self.wait_for_frame_after(self.camera_stamp_ns)

    def wait_for_frame_after(self, stamp_ns: int) -> None:
        wait_until(lambda: self.camera_stamp_ns > stamp_ns, "a camera frame at the start pose")

    def adapter_has_the_object(self) -> bool:
        """Probe the adapter with a move (it needs the object's pose to plan one); True once it could plan."""
        sent = send_goal_confirmed(self.mover, MoveToSector.Goal(direction="back"), timeout_s=30.0)
        assert sent is not None and sent.accepted
        result = sent.result(60.0, lambda: True, "the probing move").result
        return "no object pose yet" not in result.message

    def verify(self, backend: str, request_id: str, descriptions: list[str]) -> tuple[Verdict, list[Move]]:
        client = self.clients[backend]
        with self.lock:
            first_move = len(self.moves)
        goal = VerifyInstance.Goal(
            request_id=request_id,
            episode_key=request_id,
            descriptions=descriptions,
            step_budget=STEP_BUDGET,
        )
        sent = send_goal_confirmed(client, goal, timeout_s=30.0)
        assert sent is not None and sent.accepted, f"{backend} refused {request_id}"
        verdict = sent.result(120.0, lambda: True, f"the verdict of {request_id}").result.verdict
        with self.lock:
            return verdict, list(self.moves[first_move:])


def _record(
    episode: str,
    scene: LiveScene,
    backend: str,
    query: str,
    query_id: str,
    query_category: str,
    verdict: Verdict,
    moves: list[Move],
) -> Record:
    simulated = sum(move.simulated_s for move in moves)
    return Record(
        episode=episode,
        object_category=scene.category,
        backend=backend,
        query=query,
        query_object_id=query_id,
        query_category=query_category,
        decision=DECISIONS[verdict.decision],
        failure_reason=verdict.failure_reason,
        steps=int(verdict.steps),
        visited_sectors=[int(s) for s in verdict.visited_sectors],
        move_outcomes=[report.move_outcome for report in verdict.transcript],
        capture_tags=[report.capture_tag for report in verdict.transcript],
        nav_fail_unreachable=int(verdict.nav_fail_unreachable),
        stop_reason=verdict.stop_reason,
        probability=float(verdict.probability),
        unverified=list(verdict.unverified_attributes),
        attributes=[
            f"{a.name}: {STATES.get(a.state, a.state)} ({a.last_answer}: {a.last_reason})"
            for a in verdict.attributes
        ],
        robot_goals=[f"{move.answer}/{move.ending}" if move.ending else move.answer for move in moves],
        elapsed_s=float(verdict.elapsed_s),
        stage_s={timing.stage: round(float(timing.seconds), 3) for timing in verdict.timings},
        navigation_wall_s=simulated / TIME_SCALE,
        navigation_simulated_s=simulated,
    )


def _start_verifier(node_process, backend: str, root: Path):
    return start_verifier(
        node_process,
        {
            "verify_action": f"verify_{backend}",
            "verifier.backend": backend,
            "verifier.dataset_root": root,  # the oracle's privileged_gt and description db
            "move_timeout_s": 3 * NAVIGATION_TIMEOUT_S + 5.0,
        },
        name=f"verifier-{backend}",
    )


def _start_robot(node_process, root: Path, episode: Episode, start: BasePose):
    stand_in = start_stand_in(
        node_process,
        {
            "preset": episode.preset,
            "seed": episode.seed,
            "scene": episode.scene,
            "episode": episode.episode,
            "start_view": "pose",
            "start_x": start.x,
            "start_y": start.y,
            "start_yaw_deg": math.degrees(start.yaw),
            "linear_speed": LINEAR_SPEED,
            "angular_speed_deg": ANGULAR_SPEED_DEG,
            "time_scale": TIME_SCALE,
        },
        name=f"robot_sim-{episode.episode}",
        # the stand-in must not open anything under the dataset
        program=(sys.executable, str(AUDITED_STANDIN), str(root)),
    )
    adapter = start_adapter(
        node_process, {"navigation_timeout_s": NAVIGATION_TIMEOUT_S}, name=f"adapter-{episode.episode}"
    )
    return stand_in, adapter


def _wait_for_robot(robot: Robot, processes: list[Any]) -> None:
    wait_for_robot(
        lambda: robot.odometry is not None and robot.camera_stamp_ns > 0,
        "the stand-in's odometry and camera",
        processes,
        robot.mover,
    )
    wait_until(robot.adapter_has_the_object, "the adapter to have the object's pose", timeout_s=60.0)
    for backend, client in robot.clients.items():
        assert client.wait_for_server(timeout_sec=60.0), f"the {backend} verifier serves no goals"


def _audit_lines(stand_in) -> list[str]:
    return [line for line in stand_in.output().splitlines() if line.startswith("AUDIT")]


def test_live_visible_attributes_reach_the_oracle_s_privileged_input() -> None:
    from aiv_verifier.ros_messages import privileged_from_ground_truth

    live = GroundTruthView(
        capture_tag="live", mask_meets_threshold=True, has_visible_attributes=True, visible_attributes=["a"]
    )
    assert privileged_from_ground_truth(live).visible_attributes == frozenset({"a"})
    nothing = GroundTruthView(capture_tag="live", has_visible_attributes=True)
    assert privileged_from_ground_truth(nothing).visible_attributes == frozenset()
    offline = GroundTruthView(capture_tag="s0_far", mask_meets_threshold=True)  # the offline simulator's
    assert privileged_from_ground_truth(offline).visible_attributes is None


def test_the_stand_in_s_ground_truth_carries_the_visible_attributes_of_its_render() -> None:
    from aiv_robot_sim.node import RobotSimNode

    scene = LiveScene(scene=SCENE, episode="0")
    _, pose = off_capture_pose(scene)
    view = scene.render(pose)
    message = RobotSimNode.ground_truth(SimpleNamespace(scene=scene), view, Header())  # type: ignore[arg-type]
    assert message.capture_tag == "live" and message.sector == -1 and message.mask_meets_threshold
    assert message.has_visible_attributes and view.visible_attributes
    assert list(message.visible_attributes) == view.visible_attributes


def test_whole_verifications_closed_loop_on_live_renders(
    ros_executor, node_process, micro_root: Path, tmp_path: Path
) -> None:
    root, episodes = _episodes(micro_root)
    dataset = PInVerifyDataset(root)
    descriptions = dataset.load_descriptions()
    assert descriptions is not None
    categories = {
        path.stem: json.loads(path.read_text())["object_category"]
        for path in root.glob("privileged_gt/*/*.json")
    }
    robot = ros_executor.spin_new("closed_loop_test", Robot)
    records: list[Record] = []
    audits: dict[str, list[str]] = {}

    for episode in episodes:
        scene = LiveScene(
            preset=episode.preset, seed=episode.seed, scene=episode.scene, episode=episode.episode
        )
        _, start = off_capture_pose(scene)  # 7 deg round and 0.1 m off a capture showing the object
        assert scene.nearest_capture(scene.camera_pose(start)) is None
        known = sorted(object_id for object_id in categories if object_id in descriptions)
        negative = next(object_id for object_id in known if categories[object_id] != scene.category)
        lookalike = episode.lookalike or next(
            (o for o in known if categories[o] == scene.category and o != scene.object_id), ""
        )
        asked = {"positive": scene.object_id, "lookalike": lookalike, "negative": negative}
        # Fresh processes per episode: a verifier never holds a frame of another episode's stand-in.
        stand_in, adapter = _start_robot(node_process, root, episode, start)
        verifiers = [_start_verifier(node_process, backend, root) for backend in BACKENDS]
        _wait_for_robot(robot, [stand_in, adapter, *verifiers])
        label = f"{episode.scene}/{episode.episode}"
        for query in QUERIES:
            object_id = asked[query]
            if not object_id:
                continue  # the dataset has no other object of this category
            for backend in BACKENDS:
                robot.put_at(start)  # every request starts at the off-capture pose
                verdict, moves = robot.verify(
                    backend,
                    f"ep{episode.episode}-{query}-{backend}",
                    list(descriptions.descriptions_for(object_id)),
                )
                records.append(
                    _record(label, scene, backend, query, object_id, categories[object_id], verdict, moves)
                )
        for process in (adapter, stand_in, *verifiers):
            process.assert_running()
            process.stop()
        audits[label] = _audit_lines(stand_in)

    report = [{**asdict(r), "at_real_speed_s": round(r.at_real_speed_s, 3)} for r in records]
    text = json.dumps({"time_scale": TIME_SCALE, "linear_speed": LINEAR_SPEED, "verdicts": report}, indent=2)
    (tmp_path / "closed_loop_verdicts.json").write_text(text)
    if os.environ.get("AIV_CLOSED_LOOP_JSON"):
        Path(os.environ["AIV_CLOSED_LOOP_JSON"]).write_text(text)
    for r in records:
        print(
            f"{r.episode} {r.object_category:8s} {r.backend:9s} {r.query:9s} -> {r.decision:9s} "
            f"P {r.probability:.3f} unverified {r.unverified} "
            f"steps {r.steps} sectors {r.visited_sectors} outcomes {r.move_outcomes} | wall {r.elapsed_s:.2f} s, "
            f"verify {r.stage_s.get('verify', 0.0):.2f} s, drives {r.navigation_wall_s:.2f} s here = "
            f"{r.navigation_simulated_s:.1f} s at {LINEAR_SPEED} m/s -> {r.at_real_speed_s:.1f} s on a real base"
        )

    # Every request got an answer (no infrastructure failure), each judged live renders only.
    for r in records:
        assert r.decision != "FAILED", (r.episode, r.backend, r.query, r.failure_reason)
        assert r.capture_tags and set(r.capture_tags) == {"live"}, r
    # The stand-in's params use the evidential fusion (robot setting): never a YES to another object; the
    # oracle, fed the stand-in's live visibility, answers its own descriptions YES unless some attribute stayed
    # out of every view it could reach (UNDECIDED, naming them), and another category NO.
    for backend in BACKENDS:
        mine = [r for r in records if r.backend == backend]
        print(
            f"{backend}: true objects YES {sum(r.decision == 'YES' for r in mine if r.query == 'positive')} of "
            f"{sum(r.query == 'positive' for r in mine)}; look-alikes YES "
            f"{sum(r.decision == 'YES' for r in mine if r.query == 'lookalike')} of "
            f"{sum(r.query == 'lookalike' for r in mine)}; other categories YES "
            f"{sum(r.decision == 'YES' for r in mine if r.query == 'negative')} of "
            f"{sum(r.query == 'negative' for r in mine)}"
        )
    for r in records:
        if r.query != "positive":
            assert r.decision in ("NO", "UNDECIDED"), r
        if r.backend == "oracle":
            if r.query == "negative":
                assert r.decision == "NO", r
            elif r.query == "positive":
                assert r.decision in ("YES", "UNDECIDED"), r
                assert (r.decision == "UNDECIDED") == bool(r.unverified), r
    assert any(r.decision == "YES" for r in records if r.backend == "oracle"), records
    # Unreachable sectors are reported as the benchmark does: the step's move outcome, the verdict's counter,
    # and behind them a goal the stand-in refused.
    for r in records:
        assert r.nav_fail_unreachable == r.move_outcomes.count("unreachable"), r
        if "unreachable" in r.move_outcomes:
            assert any(goal.startswith("refused") for goal in r.robot_goals), r
    assert any("unreachable" in r.move_outcomes for r in records), "no request met a blocked sector"
    # The stand-in rendered every frame: it opened files (the hook works) but no image and nothing of the dataset.
    for episode, lines in audits.items():
        assert lines and lines[-1].startswith("AUDIT opened ") and lines[-1].endswith(" 0 forbidden"), (
            episode,
            lines,
        )
        assert int(lines[-1].split()[2]) > 0, lines
