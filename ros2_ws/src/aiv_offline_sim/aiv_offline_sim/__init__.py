"""The offline simulator: PInVerify episodes served as a robot's camera and base would serve them.

:mod:`.sector_map` and :mod:`.environment` hold the benchmark's move semantics (ROS-free, so the in-process
evaluator runs the same rules), :mod:`.episode_service` turns them into request/reply operations, and
:mod:`.sim_node` is the thin rclpy node. The dataset format itself lives in :mod:`aiv_dataset`.
"""
