"""Active instance verification: a ROS-free agent core plus a thin ROS 2 node.

The core (``query``, ``detection``, ``verification``, ``core``, ``agent``) imports no rclpy; only the node
modules (``verifier_node``, ``ros_messages``) do. No module here imports the simulator (``aiv_offline_sim``),
the generator (``aiv_synth``) or the evaluation (``aiv_eval``): the verifier runs unchanged on a robot.
"""
