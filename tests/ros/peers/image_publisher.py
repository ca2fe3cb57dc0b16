"""Peer process: publish N deterministic rgb8 frames once a subscriber is matched, then idle.

Used by the transport test to prove that full-size camera frames cross between processes
without loss through the shared-memory profile.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tests/ directory

import rclpy
from aiv_common.image_conversion import numpy_to_imgmsg
from rclpy.duration import Duration
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from std_msgs.msg import Header
from support.frames import numbered_frame


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topic", default="camera/image")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=360)
    args = parser.parse_args()

    rclpy.init()
    node = Node("test_image_publisher")
    qos = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_ALL)
    publisher = node.create_publisher(Image, args.topic, qos)
    try:
        while publisher.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.05)
        for index in range(args.count):
            header = Header(frame_id=f"frame_{index}")
            header.stamp = node.get_clock().now().to_msg()
            publisher.publish(numpy_to_imgmsg(numbered_frame(index, args.height, args.width), "rgb8", header))
        acked = publisher.wait_for_all_acked(Duration(seconds=20))
        node.get_logger().info(f"published {args.count} frames, all acknowledged: {acked}")
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
