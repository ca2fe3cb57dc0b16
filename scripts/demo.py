#!/usr/bin/env python3
"""Main job until the evaluator lands: real nodes over DDS on a PInVerify-format dataset.

1. Makes sure a dataset exists: the synthetic default preset (generated on first use and cached
   under data/), or the one given with --dataset.
2. Starts the ``offline_sim`` node as its own process with the package's params YAML.
3. Drives episodes through it as a verifier would: StartEpisode, then MoveToSector requests chosen
   by the verifier core's reproducible random next-best-view strategy, waiting each time for the
   camera frame whose stamp the move result names, and prints every transition.
4. Prints a summary: outcomes, trap arrivals, frames, and per-request latency over ROS.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO / "data" / "pv_synthetic_default"
SIM_PARAMS = REPO / "ros2_ws" / "install" / "aiv_offline_sim" / "share" / "aiv_offline_sim" / "config"
SIM_EXECUTABLE = REPO / "ros2_ws" / "install" / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
OUTCOME_NAMES = {0: "moved", 1: "stayed", 2: "unreachable", 3: "already-visited", 4: "rejected"}


def ensure_dataset(path: Path | None) -> Path:
    if path is not None:
        return path
    print(f"[demo] ensuring the default synthetic dataset in {DEFAULT_DATASET} (first run generates it)")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "aiv_offline_sim.capture.cli",
            "ensure-default",
            "--out",
            str(DEFAULT_DATASET),
        ],
        check=True,
    )
    return DEFAULT_DATASET


def find_index(dataset: Path, split: str) -> Path:
    for name in ("pv_index_100.jsonl", "pv_index_50.jsonl", "pv_index_all.jsonl"):
        candidate = dataset / split / name
        if candidate.is_file():
            return candidate
    raise SystemExit(f"[demo] no pair index under {dataset / split}; build one with aiv-dataset build-index")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="PInVerify dataset root (default: synthetic preset)")
    parser.add_argument("--split", default="val")
    parser.add_argument("--episodes", type=int, default=6, help="how many pairs to drive")
    args = parser.parse_args()

    # Keep this run's graph private and local, like the tests do.
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(100 - os.getpid() % 50))
    log_dir = Path(tempfile.mkdtemp(prefix="aiv-demo-"))
    os.environ.setdefault("ROS_LOG_DIR", str(log_dir))

    dataset = ensure_dataset(args.dataset)
    index = find_index(dataset, args.split)
    sim_log = log_dir / "offline_sim.log"
    with open(sim_log, "wb") as log:
        sim = subprocess.Popen(
            [
                str(SIM_EXECUTABLE),
                "--ros-args",
                "--params-file",
                str(SIM_PARAMS / "offline_sim.yaml"),
                "-p",
                f"dataset_root:={dataset}",
                "-p",
                f"index_file:={index}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            return drive(args.episodes, sim, sim_log)
        finally:
            sim.terminate()
            sim.wait(timeout=10)


def drive(episodes: int, sim: subprocess.Popen, sim_log: Path) -> int:
    import rclpy
    from aiv_common.stamps import stamp_to_nanoseconds
    from aiv_interfaces.action import MoveToSector
    from aiv_interfaces.srv import StartEpisode
    from aiv_verifier.core.nbv import NbvRequest, RandomNbv
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image

    rclpy.init()
    node = rclpy.create_node("aiv_demo_client")
    frames: dict[int, Image] = {}
    frame_arrived = threading.Condition()

    def on_image(msg: Image) -> None:
        with frame_arrived:
            frames[stamp_to_nanoseconds(msg.header.stamp)] = msg
            frame_arrived.notify_all()

    qos = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    node.create_subscription(Image, "camera/image_raw", on_image, qos)
    start_client = node.create_client(StartEpisode, "start_episode")
    move_client = ActionClient(node, MoveToSector, "move_to_sector")
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()

    def wait(future, what: str, timeout_s: float = 30.0):
        deadline = time.monotonic() + timeout_s
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        if not done.wait(max(0.0, deadline - time.monotonic())):
            raise SystemExit(f"[demo] timed out waiting for {what}; simulator log: {sim_log}")
        return future.result()

    def wait_frame(stamp) -> Image:
        key = stamp_to_nanoseconds(stamp)
        with frame_arrived:
            if not frame_arrived.wait_for(lambda: key in frames, timeout=30.0):
                raise SystemExit(f"[demo] frame {key} never arrived; simulator log: {sim_log}")
            return frames[key]

    if not start_client.wait_for_service(timeout_sec=30.0) or not move_client.wait_for_server(
        timeout_sec=30.0
    ):
        print(sim_log.read_text(errors="replace"), file=sys.stderr)
        raise SystemExit("[demo] the simulator did not come up")

    nbv = RandomNbv()
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []
    traps = 0
    started_all = time.perf_counter()
    for episode in range(episodes):
        started = wait(start_client.call_async(StartEpisode.Request(index=episode)), "StartEpisode")
        if not started.success:
            print(f"[demo] episode {episode}: {started.message}")
            continue
        image = wait_frame(started.frame_stamp)
        print(
            f"\n[demo] pair {started.index}/{started.index_size} {started.episode_key}: start sector "
            f"{started.start_sector}, frame {image.width}x{image.height}\n       query: {started.descriptions[0]!r}"
        )
        current, visited, failed = started.start_sector, {started.start_sector}, set()
        for step in range(started.max_steps - 1):
            choice = nbv.choose(
                NbvRequest(
                    episode_key=started.episode_key,
                    step=step,
                    current_sector=current,
                    visited=frozenset(visited),
                    failed=frozenset(failed),
                )
            )
            begin = time.perf_counter()
            handle = wait(move_client.send_goal_async(MoveToSector.Goal(direction=choice.direction)), "goal")
            result = wait(handle.get_result_async(), "move result").result
            wait_frame(result.frame_stamp)
            latencies.append(time.perf_counter() - begin)
            name = OUTCOME_NAMES[result.outcome]
            outcomes[name] += 1
            traps += result.trap_view
            print(
                f"       step {result.steps_taken}: {choice.direction:<11} -> {name:<15} sector {result.sector}"
                f"{'  TRAP' if result.trap_view else ''}  {result.visibility_warning}"
            )
            if result.outcome in (2, 3):
                failed.add(choice.target_index)
                visited.add(choice.target_index)
            current = result.sector
            visited.add(current)
    elapsed = time.perf_counter() - started_all
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()

    if not latencies:
        raise SystemExit("[demo] no move was made")
    print("\n[demo] summary")
    print(f"  pairs driven:      {episodes}")
    print(f"  move outcomes:     {dict(outcomes)}  (trap arrivals: {traps})")
    print(
        f"  move round trip:   median {statistics.median(latencies) * 1e3:.1f} ms, "
        f"max {max(latencies) * 1e3:.1f} ms (request -> result -> frame received)"
    )
    print(f"  wall time:         {elapsed:.2f} s")
    return 0 if sim.poll() is None else 1


if __name__ == "__main__":
    sys.exit(main())
