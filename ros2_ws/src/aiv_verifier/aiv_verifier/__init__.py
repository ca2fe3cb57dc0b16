"""Active instance verification: a ROS-free agent core plus thin ROS 2 nodes.

``aiv_verifier.ros`` holds the helpers every node shares (image conversion, QoS parsing);
nothing outside it and the node modules imports rclpy.
"""
