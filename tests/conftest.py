"""Test-wide set-up: isolate this process's ROS 2 graph before anything imports rclpy."""

from __future__ import annotations

from support.ros_isolation import configure_process_environment

# Runs at import, i.e. before any test module (or plugin) can import rclpy in this process.
ROS_TEST_ENVIRONMENT = configure_process_environment()
