"""The offline_sim node, as a separate process, serves exactly the in-process environment's transitions."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
import pytest
from aiv_common.action_waits import call_idempotent, send_goal_confirmed
from aiv_common.image_conversion import imgmsg_to_numpy
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.vocabulary import MoveOutcome
from aiv_interfaces.action import MoveToSector
from aiv_interfaces.msg import GroundTruthView
from aiv_interfaces.srv import StartEpisode
from aiv_offline_sim.environment import Action, PInVerifyEnv
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from support.ros_harness import DEFAULT_TIMEOUT_S, wait_until
from support.tiny_dataset import EpisodeSpec, TinyDataset, ring

REPO_ROOT = Path(__file__).resolve().parents[2]
SIM_EXECUTABLE = (
    REPO_ROOT / "ros2_ws" / "install" / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
)
LATCHED = QoSProfile(
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
)
EXPECTED_OUTCOME = {
    MoveOutcome.MOVED: MoveToSector.Result.OUTCOME_MOVED,
    MoveOutcome.STAYED: MoveToSector.Result.OUTCOME_STAYED,
    MoveOutcome.UNREACHABLE: MoveToSector.Result.OUTCOME_UNREACHABLE,
    MoveOutcome.ALREADY_VISITED: MoveToSector.Result.OUTCOME_ALREADY_VISITED,
    MoveOutcome.REJECTED: MoveToSector.Result.OUTCOME_REJECTED,
}
# Scripts long enough to hit every outcome, including the forced stop at the horizon (T = 6).
SCRIPTS = [
    ["front-left", "back", "front", "back-right", "front-right", "back-left"],
    ["back", "back", "front-left", "back-left", "front-right", "back-right"],
    ["front-right", "front-right", "front-right", "front-right", "front", "back"],
]


def _dataset(root: Path) -> tuple[Path, Path]:
    data = TinyDataset(root / "pv")
    layouts = [
        ring(traps={4}, unreachable={8}),
        ring(traps={0, 6}),
        ring(unreachable={2, 4}, traps={10}),
        ring(far_traps={6}, traps={2}, unreachable={10}),
    ]
    records = []
    for number, views in enumerate(layouts):
        episode = data.add_episode(
            EpisodeSpec(
                scene=f"0010{number}-scene", episode=str(number), object_id=f"mug_{number}", views=views
            )
        )
        records.append(data.pair(episode))
    records.append(data.pair(data.episodes[0], query_object_id="keys_9", query_category="keys"))
    data.write_descriptions()
    return data.root, data.write_index("pv_index_test.jsonl", records)


def _sim_argv(root: Path, index: Path, *extra: str) -> list[str]:
    argv = [str(SIM_EXECUTABLE), "--ros-args", "-p", f"dataset_root:={root}", "-p", f"index_file:={index}"]
    for item in extra:
        argv += ["-p", item]
    return argv


class SimClient:
    """A scripted client: the StartEpisode service, the MoveToSector action and the frame topics."""

    def __init__(self, executor) -> None:
        self.executor = executor
        self.lock = threading.Lock()
        self.images: dict[int, Image] = {}
        self.infos: dict[int, CameraInfo] = {}
        self.truths: dict[int, GroundTruthView] = {}
        self.node = executor.spin_new("sim_test_client", self._create_entities)

    def _create_entities(self, node):
        self.start_client = node.create_client(StartEpisode, "start_episode")
        self.move_client = ActionClient(node, MoveToSector, "move_to_sector")
        for topic, kind, store in (
            ("camera/image_raw", Image, self.images),
            ("camera/camera_info", CameraInfo, self.infos),
            ("sim/ground_truth_view", GroundTruthView, self.truths),
        ):
            node.create_subscription(kind, topic, self._storer(store), LATCHED)
        return node

    def _storer(self, store: dict):
        def on_message(msg) -> None:
            with self.lock:
                store[stamp_to_nanoseconds(msg.header.stamp)] = msg

        return on_message

    def wait_ready(self, process) -> None:
        wait_until(
            lambda: (not process.running) or self.start_client.service_is_ready(), "the start_episode service"
        )
        process.assert_running()
        assert self.move_client.wait_for_server(timeout_sec=20.0)

    def start(self, index: int = -1, key: str = "") -> StartEpisode.Response:
        request = StartEpisode.Request(index=index, episode_key=key)
        response = call_idempotent(self.start_client, request, timeout_s=DEFAULT_TIMEOUT_S)
        assert response is not None, f"StartEpisode({index}, {key!r}): no reply"
        return response

    def move(self, direction: str) -> MoveToSector.Result:
        sent = send_goal_confirmed(
            self.move_client, MoveToSector.Goal(direction=direction), timeout_s=DEFAULT_TIMEOUT_S
        )
        assert sent is not None and sent.accepted, f"move {direction}: no acceptance"
        return sent.result(DEFAULT_TIMEOUT_S, lambda: True, f"move {direction}").result

    def frame(self, stamp) -> tuple[Image, CameraInfo]:
        key = stamp_to_nanoseconds(stamp)
        wait_until(lambda: key in self.images and key in self.infos, f"the frame stamped {key}")
        return self.images[key], self.infos[key]


def test_node_drives_episodes_exactly_like_the_in_process_environment(ros_executor, node_process, tmp_path):
    root, index = _dataset(tmp_path)
    process = node_process(_sim_argv(root, index, "privileged_output:=true"), name="offline_sim")
    client = SimClient(ros_executor)
    client.wait_ready(process)

    dataset = PInVerifyDataset(root)
    env = PInVerifyEnv(dataset.read_pair_index(index), dataset, max_steps=6, privileged=True)
    seen_outcomes: set[MoveOutcome] = set()
    trap_arrivals = 0
    for episode_index in range(len(env)):
        script = SCRIPTS[episode_index % len(SCRIPTS)]
        expected = env.reset(episode_index)
        started = client.start(index=episode_index)
        assert started.success, started.message
        assert started.index_size == len(env) and started.max_steps == 6
        assert started.start_sector == expected.current_sector
        assert list(started.descriptions) == list(
            dataset.load_descriptions()[env.records[episode_index].query_object_id].descriptions
        )
        _assert_frame_shows(client, started.frame_stamp, expected)

        for direction in script:
            observation, _, done, info = env.step(Action.move(direction))
            seen_outcomes.add(info.outcome)
            trap_arrivals += info.trap_view
            result = client.move(direction)
            where = f"episode {episode_index}, step {info.step} ({direction})"
            assert result.outcome == EXPECTED_OUTCOME[info.outcome], where
            assert result.sector == observation.current_sector, where
            assert result.trap_view == info.trap_view, where
            assert result.visibility_warning == (info.visibility_warning or ""), where
            assert (result.steps_taken, result.steps_remaining) == (info.step, 6 - info.step), where
            _assert_frame_shows(client, result.frame_stamp, observation)
            if done:
                break
        # Past the horizon the node refuses politely and consumes nothing.
        after = client.move("back")
        assert after.outcome == MoveToSector.Result.OUTCOME_REJECTED
        assert "episode is over" in after.message
    assert seen_outcomes == set(EXPECTED_OUTCOME), "the scripts must exercise every outcome"
    assert trap_arrivals > 0
    process.assert_running()


def _assert_frame_shows(client: SimClient, stamp, observation) -> None:
    image, info = client.frame(stamp)
    np.testing.assert_array_equal(imgmsg_to_numpy(image), observation.load_image())
    assert image.header == info.header and image.header.frame_id == "aiv_camera_optical_frame"
    assert (info.width, info.height) == (image.width, image.height)
    # Pinhole model of the benchmark camera (HFOV 42 degrees) at this image size.
    assert info.k[0] == pytest.approx((image.width / 2) / math.tan(math.radians(21.0)))
    assert (info.k[2], info.k[5]) == ((image.width - 1) / 2, (image.height - 1) / 2)
    truth = client.truths.get(stamp_to_nanoseconds(stamp))
    assert truth is not None and truth.header == image.header
    assert truth.mask_meets_threshold == observation.privileged.mask_meets_threshold
    assert truth.capture_tag == observation.privileged.capture_tag


def test_bad_requests_are_refused_and_the_node_keeps_serving(ros_executor, node_process, tmp_path):
    root, index = _dataset(tmp_path)
    process = node_process(_sim_argv(root, index), name="offline_sim")
    client = SimClient(ros_executor)
    client.wait_ready(process)

    early = client.move("front-left")
    assert early.outcome == MoveToSector.Result.OUTCOME_REJECTED and "StartEpisode" in early.message
    assert not client.start(index=99).success
    missing = client.start(key="no/such/key")
    assert not missing.success and "unknown episode key" in missing.message

    started = client.start(index=0)
    assert started.success
    by_key = client.start(key=started.episode_key)
    assert by_key.success and by_key.index == 0
    assert "mug_0" not in by_key.episode_key  # the key does not reveal the query object

    nonsense = client.move("upstairs")
    assert (
        nonsense.outcome == MoveToSector.Result.OUTCOME_REJECTED and "unknown direction" in nonsense.message
    )
    assert nonsense.steps_taken == 0  # a refused request costs no step
    assert client.move("front").outcome == MoveToSector.Result.OUTCOME_STAYED
    assert not client.truths, "ground truth must not be published unless privileged_output is set"
    process.assert_running()


def test_a_late_subscriber_still_receives_the_current_view(ros_executor, node_process, tmp_path):
    root, index = _dataset(tmp_path)
    process = node_process(_sim_argv(root, index), name="offline_sim")
    first = SimClient(ros_executor)
    first.wait_ready(process)
    started = first.start(index=1)
    late = SimClient(ros_executor)  # subscribes only now
    image, _ = late.frame(started.frame_stamp)
    assert image.encoding == "rgb8"


def test_node_exits_with_a_clear_error_without_a_dataset(node_process, tmp_path):
    process = node_process([str(SIM_EXECUTABLE)], name="offline_sim")
    assert process.process.wait(timeout=30) == 2
    assert "parameter 'dataset_root' is required" in process.output()


def test_node_runs_in_process_next_to_its_client(ros_executor, tmp_path):
    from aiv_offline_sim.sim_node import OfflineSimNode
    from rclpy.parameter import Parameter

    root, index = _dataset(tmp_path)
    ros_executor.add(
        OfflineSimNode(
            context=ros_executor.context,
            parameter_overrides=[
                Parameter("dataset_root", value=str(root)),
                Parameter("index_file", value=str(index)),
                Parameter("max_steps", value=2),
            ],
        )
    )
    client = SimClient(ros_executor)
    wait_until(client.start_client.service_is_ready, "the in-process start_episode service")
    started = client.start(index=3)
    assert started.success and started.max_steps == 2
    client.frame(started.frame_stamp)
    first = client.move("back")
    forced = client.move("back")
    assert first.steps_remaining == 1 and forced.outcome == MoveToSector.Result.OUTCOME_REJECTED
