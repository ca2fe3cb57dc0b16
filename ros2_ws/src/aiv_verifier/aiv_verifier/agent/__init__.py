"""The verification agent: the core pieces assembled into an episode loop, free of ROS."""
