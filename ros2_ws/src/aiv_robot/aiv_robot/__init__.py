"""The robot side of active instance verification: a MoveToSector adapter for a mobile base (ROS-free
geometry and move procedure, a thin rclpy node) and the pre-grasp VerifyInstance client."""
