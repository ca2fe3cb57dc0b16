"""PInVerify benchmark data, episode environment and the offline simulator node.

The dataset and environment modules are ROS-free so that the evaluator can run episodes
in-process; only :mod:`aiv_offline_sim.sim_node` imports rclpy.
"""
