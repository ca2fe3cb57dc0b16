"""Helpers shared by every AIV node; importing this package does not import rclpy."""
