"""Full-size camera frames cross between two processes over real DDS without loss or corruption."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from aiv_common.image_conversion import imgmsg_to_numpy
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from support.frames import numbered_frame
from support.ros_harness import python_node_argv, wait_until

PEERS = Path(__file__).parent / "peers"


@pytest.mark.parametrize(
    ("width", "height"), [(640, 360), (360, 640)], ids=["landscape", "benchmark-portrait"]
)
def test_rgb8_frames_cross_processes_without_loss(ros_executor, node_process, width, height):
    count = 30
    received: list[Image] = []
    lock = threading.Lock()

    def on_image(msg: Image) -> None:
        with lock:
            received.append(msg)

    node = ros_executor.create_node("transport_checker")
    qos = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_ALL)
    node.create_subscription(Image, "camera/image", on_image, qos)

    publisher = node_process(
        python_node_argv(
            PEERS / "image_publisher.py",
            "--count",
            str(count),
            "--width",
            str(width),
            "--height",
            str(height),
        ),
        name="image_publisher",
    )
    wait_until(lambda: len(received) >= count or not publisher.running, f"{count} frames from the publisher")
    publisher.assert_running()

    assert [msg.header.frame_id for msg in received] == [f"frame_{i}" for i in range(count)]
    for index, msg in enumerate(received):
        assert (msg.width, msg.height, msg.encoding) == (width, height, "rgb8")
        np.testing.assert_array_equal(imgmsg_to_numpy(msg), numbered_frame(index, height, width))
