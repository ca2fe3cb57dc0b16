"""The robot stand-in: a simulated mobile base with a camera in one synthetic aiv_synth scene, rendered live.

:mod:`.live_scene` rebuilds an ``aiv-capture`` episode in memory and renders it from any pose (no rclpy),
:mod:`.motion` drives the base, :mod:`.frames` maps the scene's y-up frame onto the ROS world frame, and
:mod:`.node` is the ``robot_sim`` node (its docstring lists topics, QoS and goal semantics).
"""
