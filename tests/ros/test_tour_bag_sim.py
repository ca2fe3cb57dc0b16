"""The offline_sim node serving tour bags answers exactly as it does for the dataset the tours came from.

A small benchmark-like dataset (traps, unreachable sectors, a sector with only a near view, an episode whose
lowest sector is not 0) is exported episode by episode as tour bags (raw rgb8, png, sqlite3, a camera on a
base); one simulator process serves the dataset, another the bags (in its own namespace), and a set of
action scripts is played against both through StartEpisode and MoveToSector: same pairs and keys, same
descriptions, start sector and start view, and for every move the same outcome, sector, trap flag, warning,
step counts and view (pixels), and the same ground-truth box (exported on the tour's box topic). Tours carry
no masks (no mask area), and a tour exported without boxes serves views without a box.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiv_bags import export_episode
from aiv_common.action_waits import call_idempotent, send_goal_confirmed
from aiv_common.image_conversion import imgmsg_to_numpy
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.action import MoveToSector
from aiv_interfaces.msg import GroundTruthView
from aiv_interfaces.srv import StartEpisode
from bags.tour_tools import benchmark_like_dataset
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from support.ros_harness import DEFAULT_TIMEOUT_S, wait_until

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
# Long enough to reach every outcome, the forced stop at T = 6 and the refusal after it.
SCRIPTS = [
    ["front-left", "back", "front", "back-right", "front-right", "back-left", "back"],
    ["back", "back", "front-left", "back-left", "front-right", "back-right", "front"],
    ["front-right", "front-right", "front-right", "front-right", "front", "back", "back-left"],
    ["back-left", "front-left", "back-left", "back", "front", "front-right", "back-right"],
]
EXPORTS: list[dict[str, Any]] = [
    {},
    {"compression": "png"},
    {"storage": "sqlite3", "boxes": False},
    {"camera_chain": "base"},
]


class Client:
    """StartEpisode, MoveToSector and the frame topics of one simulator, under ``namespace``."""

    def __init__(self, executor, namespace: str) -> None:
        self.executor = executor
        self.ns = namespace
        self.lock = threading.Lock()
        self.images: dict[int, Image] = {}
        self.truths: dict[int, GroundTruthView] = {}
        executor.spin_new(f"tour_test_client{namespace.replace('/', '_')}", self._create)

    def _create(self, node):
        self.start_client = node.create_client(StartEpisode, f"{self.ns}/start_episode")
        self.move_client = ActionClient(node, MoveToSector, f"{self.ns}/move_to_sector")
        node.create_subscription(Image, f"{self.ns}/camera/image_raw", self._store(self.images), LATCHED)
        node.create_subscription(
            GroundTruthView, f"{self.ns}/sim/ground_truth_view", self._store(self.truths), LATCHED
        )
        return node

    def _store(self, store: dict):
        def on_message(msg) -> None:
            with self.lock:
                store[stamp_to_nanoseconds(msg.header.stamp)] = msg

        return on_message

    def wait_ready(self, process) -> None:
        wait_until(lambda: (not process.running) or self.start_client.service_is_ready(), f"{self.ns} sim")
        process.assert_running()
        assert self.move_client.wait_for_server(timeout_sec=DEFAULT_TIMEOUT_S)

    def start(self, index: int = -1, key: str = "") -> StartEpisode.Response:
        request = StartEpisode.Request(index=index, episode_key=key)
        response = call_idempotent(self.start_client, request, timeout_s=DEFAULT_TIMEOUT_S)
        assert response is not None, f"{self.ns} StartEpisode({index}, {key!r}): no reply"
        return response

    def move(self, direction: str) -> MoveToSector.Result:
        sent = send_goal_confirmed(
            self.move_client, MoveToSector.Goal(direction=direction), timeout_s=DEFAULT_TIMEOUT_S
        )
        assert sent is not None and sent.accepted, f"{self.ns} move {direction}: no acceptance"
        return sent.result(DEFAULT_TIMEOUT_S, lambda: True, f"{self.ns} move {direction}").result

    def view(self, stamp) -> tuple[str, GroundTruthView]:
        """Digest of the frame's pixels and its ground truth."""
        key = stamp_to_nanoseconds(stamp)
        wait_until(lambda: key in self.images and key in self.truths, f"{self.ns} frame stamped {key}")
        pixels = imgmsg_to_numpy(self.images[key])
        digest = hashlib.sha256(pixels.tobytes() + str(pixels.shape).encode()).hexdigest()[:16]
        return digest, self.truths[key]


def _box(truth: GroundTruthView, boxless: set[str]) -> Any:
    """The served box (None for the episodes of tours exported without boxes)."""
    if truth.episode_path in boxless:
        return None
    box = truth.box
    return (truth.has_box, box.x_min, box.y_min, box.x_max, box.y_max, box.score, box.label)


def _trace(client: Client, keys: list[str], boxless: set[str]) -> tuple[list[Any], list[GroundTruthView]]:
    """Everything a verifier sees of every pair under every script (and the ground truth shown)."""
    trace: list[Any] = []
    truths: list[GroundTruthView] = []
    for key in keys:
        for script in SCRIPTS:
            started = client.start(key=key)
            assert started.success, started.message
            view, truth = client.view(started.frame_stamp)
            truths.append(truth)
            trace.append(
                (
                    "start",
                    started.index,
                    started.index_size,
                    started.episode_key,
                    tuple(started.descriptions),
                    started.max_steps,
                    started.start_sector,
                    view,
                    truth.sector,
                    truth.mask_meets_threshold,
                    _box(truth, boxless),
                )
            )
            for direction in script:
                result = client.move(direction)
                view, truth = client.view(result.frame_stamp)
                truths.append(truth)
                trace.append(
                    (
                        direction,
                        result.outcome,
                        result.sector,
                        result.trap_view,
                        result.visibility_warning,
                        result.steps_taken,
                        result.steps_remaining,
                        result.message,
                        view,
                        truth.sector,
                        truth.mask_meets_threshold,
                        _box(truth, boxless),
                    )
                )
    return trace, truths


@pytest.fixture
def dataset_and_tours(tmp_path: Path) -> tuple[Path, Path, list[Path]]:
    ds, episodes, index = benchmark_like_dataset(tmp_path / "pv_dataset")
    bags = []
    for episode, options in zip(episodes, EXPORTS, strict=True):
        bag = tmp_path / "tours" / f"tour_{episode.spec.episode}"
        export_episode(ds.root, episode.episode_path, bag, index=index, **options)
        bags.append(bag)
    return ds.root, index, bags


def _episode_paths(bags: list[Path]) -> list[str]:
    """The episode path each tour bag was exported from (its sidecar's split, scene and episode)."""
    paths = []
    for bag in bags:
        sidecar = yaml.safe_load((bag / "tour.yaml").read_text())
        paths.append(f"pin_capture/{sidecar['split']}/{sidecar['scene']}/{sidecar['episode']}")
    return paths


def _sim(node_process, namespace: str, *params: str):
    argv = [str(SIM_EXECUTABLE), "--ros-args", "-r", f"__ns:={namespace}"]
    for item in ("privileged_output:=true", "seed_policy:=seed_plus_index", *params):
        argv += ["-p", item]
    return node_process(argv, name=namespace.strip("/"))


def test_tour_bags_are_served_exactly_like_their_dataset(ros_executor, node_process, dataset_and_tours):
    root, index, bags = dataset_and_tours
    original = _sim(node_process, "/orig", f"dataset_root:={root}", f"index_file:={index}")
    tours = _sim(node_process, "/tour", "tour_bags:=" + ",".join(str(b) for b in bags))
    from_dataset, from_tours = Client(ros_executor, "/orig"), Client(ros_executor, "/tour")
    from_dataset.wait_ready(original)
    from_tours.wait_ready(tours)

    first = from_dataset.start(index=0)
    keys = [first.episode_key] + [from_dataset.start(index=i).episode_key for i in range(1, first.index_size)]
    assert len(keys) == 12

    boxless = {
        episode_path
        for episode_path, options in zip(_episode_paths(bags), EXPORTS, strict=True)
        if options.get("boxes") is False
    }
    expected, dataset_truths = _trace(from_dataset, keys, boxless)
    served, tour_truths = _trace(from_tours, keys, boxless)
    assert len(expected) == len(keys) * sum(1 + len(script) for script in SCRIPTS)
    for step, (want, got) in enumerate(zip(expected, served, strict=True)):
        assert got == want, f"call {step}: the tour simulator answered {got}, the dataset simulator {want}"

    outcomes = {entry[1] for entry in expected if entry[0] != "start"}
    result = MoveToSector.Result
    assert outcomes == {
        result.OUTCOME_MOVED,
        result.OUTCOME_STAYED,
        result.OUTCOME_UNREACHABLE,
        result.OUTCOME_ALREADY_VISITED,
        result.OUTCOME_REJECTED,
    }, "the scripts must reach every outcome"
    assert any(entry[3] for entry in expected if entry[0] != "start"), "the scripts must reach a trap view"
    # No masks in a tour: no mask area; boxes where the export wrote them (compared above), none otherwise.
    assert any(truth.has_box for truth in dataset_truths)
    assert not any(truth.mask_area_px for truth in tour_truths)
    assert any(truth.has_box for truth in tour_truths)
    assert boxless and not any(truth.has_box for truth in tour_truths if truth.episode_path in boxless)
    assert f"without a box topic ({bags[2]})" in tours.output()
    assert {truth.episode_path for truth in tour_truths} == {truth.episode_path for truth in dataset_truths}
    original.assert_running()
    tours.assert_running()


def test_a_private_tour_directory_is_removed_when_the_node_stops(
    ros_executor, node_process, dataset_and_tours
):
    _, _, bags = dataset_and_tours
    process = _sim(node_process, "/tour", f"tour_bags:={bags[1]}")
    client = Client(ros_executor, "/tour")
    client.wait_ready(process)
    started = client.start(index=0)
    assert started.success and started.index_size == 3
    found = re.search(r"tour bag\(s\) imported into (\S+) ", process.output())
    assert found, process.output()
    private = Path(found.group(1))
    assert (private / ".offline_sim_tours").is_file()
    assert "boxes: from /detections" in process.output()  # the import report is logged
    assert process.stop() == 0
    assert not private.exists()


def test_a_bad_tour_bag_stops_the_node_with_one_line(node_process, dataset_and_tours, tmp_path):
    _, _, bags = dataset_and_tours
    broken = tmp_path / "broken_tour"
    broken.mkdir()
    (broken / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: 9\n")
    process = _sim(node_process, "/tour", f"tour_bags:={bags[0]},{broken}")
    assert process.process.wait(timeout=30) == 2
    lines = [line for line in process.output().splitlines() if line.startswith("offline_sim:")]
    assert len(lines) == 1 and str(broken) in lines[0] and "corrupt" in lines[0], process.output()
    assert "stream end" in lines[0], "the YAML parser's multi-line detail must be on the one line"
    assert "Traceback" not in process.output()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (["index_file:=/abs/pairs.jsonl"], "parameter 'index_file' = '/abs/pairs.jsonl'; with tour_bags"),
        (["dataset_root:={root}"], "holds files offline_sim did not import"),
    ],
)
def test_tour_parameters_that_would_misplace_files_are_refused(
    node_process, dataset_and_tours, params, message
):
    root, _, bags = dataset_and_tours
    before = sorted(str(path) for path in root.rglob("*"))
    process = _sim(node_process, "/tour", f"tour_bags:={bags[0]}", *(p.format(root=root) for p in params))
    assert process.process.wait(timeout=30) == 2
    assert message in process.output() and "Traceback" not in process.output(), process.output()
    assert sorted(str(path) for path in root.rglob("*")) == before  # the dataset is untouched
