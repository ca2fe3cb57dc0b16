"""Running benchmark configurations: in-process (no ROS) and over ROS, writing one shared record format."""
