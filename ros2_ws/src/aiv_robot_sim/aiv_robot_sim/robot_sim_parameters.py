"""The ``robot_sim`` node's parameters: one table (ROS-free, so tools can check a params file against it)."""

from __future__ import annotations

from aiv_common.parameter_spec import ParameterSpec
from aiv_common.qos import QoSSettings, qos_parameter_specs

from .live_scene import PITCH_RULES

#: Prefix of the camera topics' QoS parameters (image, compressed image, camera info, camera pose, GT view).
CAMERA_QOS = "camera_qos"
#: Like a camera driver: reliable (a best-effort subscriber still matches), volatile, a short queue.
CAMERA_QOS_DEFAULT = QoSSettings(reliability="reliable", durability="volatile", history="keep_last", depth=2)
#: ``start_view`` value that places the base at (start_x, start_y, start_yaw_deg) instead of at a capture.
START_AT_POSE = "pose"
COMPRESSED_FORMATS = ("jpeg", "png")
#: Faults the joint action servers can be told to show (``trajectory_fault``, ``point_head_fault``).
JOINT_FAULTS = ("none", "abort", "hang")

ROBOT_SIM_PARAMETERS: tuple[ParameterSpec, ...] = (
    # Which synthetic episode to stand in.
    ParameterSpec(
        "preset", "micro", "aiv-capture preset whose scene plan is used (micro, tiny, default, ...)"
    ),
    ParameterSpec("seed", 42, "aiv-capture base seed (the dataset's seed)"),
    ParameterSpec("split", "val", "split of the preset the scene belongs to"),
    ParameterSpec("scene", "", "scene key, e.g. 00800-Pnu8fTXhpCq (empty: the split's first scene)"),
    ParameterSpec(
        "episode",
        "",
        "episode id inside the scene (empty: the scene's first); it decides the object and where it stands",
    ),
    # Where the base starts.
    ParameterSpec(
        "start_view",
        "",
        "capture tag (e.g. s0_far) whose camera pose the base starts at; empty: the episode's first capture; "
        f"'{START_AT_POSE}': start_x / start_y / start_yaw_deg",
    ),
    ParameterSpec("start_x", 0.0, "start position x in world_frame (m), with start_view 'pose'"),
    ParameterSpec("start_y", 0.0, "start position y in world_frame (m), with start_view 'pose'"),
    ParameterSpec(
        "start_yaw_deg", 0.0, "start heading about +z in world_frame (deg), with start_view 'pose'"
    ),
    # Motion.
    ParameterSpec(
        "linear_speed", 0.5, "driving speed (m/s of simulated time)", minimum=0.0, exclusive_minimum=True
    ),
    ParameterSpec(
        "angular_speed_deg",
        90.0,
        "turning speed (deg/s of simulated time)",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "time_scale",
        1.0,
        "simulated seconds per wall-clock second (tests use e.g. 50 to drive fast); rendering is not scaled",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    # Camera.
    ParameterSpec(
        "camera_rate_hz",
        5.0,
        "camera frames per wall-clock second (one render each, ~80 ms)",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "publish_camera",
        True,
        "publish camera frames (set false at run time to simulate a camera that stops publishing)",
        read_only=False,
    ),
    ParameterSpec(
        "pitch_rule",
        "benchmark",
        "benchmark: tilt one 30 deg look step when the object is >0.3 m above/below the sensor, as every "
        "capture did; fixed: camera_pitch_deg",
        choices=PITCH_RULES,
    ),
    ParameterSpec("camera_pitch_deg", 0.0, "camera pitch with pitch_rule fixed (deg, + = up)"),
    ParameterSpec(
        "compressed_format", "jpeg", "format of the CompressedImage stream", choices=COMPRESSED_FORMATS
    ),
    ParameterSpec("jpeg_quality", 90, "JPEG quality of the compressed stream", minimum=1, maximum=100),
    ParameterSpec(
        "privileged_output",
        True,
        "publish a GroundTruthView computed from each render (GT-box and oracle modes only)",
    ),
    ParameterSpec(
        "odom_rate_hz", 20.0, "odometry messages per wall-clock second", minimum=0.0, exclusive_minimum=True
    ),
    # Torso and head: the camera's height and tilt (served with control_msgs, where it is importable).
    ParameterSpec(
        "torso_joint",
        "torso_lift_joint",
        "prismatic joint that lifts the camera: its position is metres above (+) or below (-) the eye-level "
        "sensor height (1.31 m); starts at 0",
    ),
    ParameterSpec(
        "torso_min_m",
        -0.6,
        "lowest torso position (m; a goal below it is aborted)",
        minimum=-1.2,
        maximum=0.0,
    ),
    ParameterSpec(
        "torso_max_m", 1.0, "highest torso position (m; a goal above it is aborted)", minimum=0.0, maximum=1.5
    ),
    ParameterSpec(
        "torso_speed_mps",
        0.25,
        "torso speed (m/s of simulated time)",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "head_tilt_joint",
        "head_tilt_joint",
        "revolute joint that tilts the camera: radians, + = down (REP-103, about the head's +y); starts at the "
        "pitch rule's tilt, so an unmoved head renders as before",
    ),
    ParameterSpec(
        "head_tilt_min_deg", -60.0, "head tilt limit, looking up (deg)", minimum=-90.0, maximum=0.0
    ),
    ParameterSpec(
        "head_tilt_max_deg", 80.0, "head tilt limit, looking down (deg)", minimum=0.0, maximum=90.0
    ),
    ParameterSpec(
        "head_speed_deg",
        90.0,
        "head tilt speed (deg/s of simulated time; a PointHead goal's max_velocity may lower it)",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "follow_joint_trajectory_action",
        "torso_controller/follow_joint_trajectory",
        "control_msgs/FollowJointTrajectory action moving the torso and head joints (to the last point)",
    ),
    ParameterSpec(
        "point_head_action",
        "head_controller/point_head",
        "control_msgs/PointHead action tilting the head so the camera looks at a point in world_frame",
    ),
    ParameterSpec(
        "joint_states_topic", "joint_states", "sensor_msgs/JointState of the torso and head, at odom_rate_hz"
    ),
    ParameterSpec(
        "trajectory_fault",
        "none",
        "for fault tests: abort: every FollowJointTrajectory goal is aborted; hang: accepted and never finished "
        "(until cancelled); none: served",
        choices=JOINT_FAULTS,
        read_only=False,
    ),
    ParameterSpec(
        "point_head_fault",
        "none",
        "for fault tests: the same for PointHead goals",
        choices=JOINT_FAULTS,
        read_only=False,
    ),
    # Frames.
    ParameterSpec("world_frame", "map", "fixed frame of odometry, goals, object and camera poses (z up)"),
    ParameterSpec("base_frame", "base_link", "child frame of the odometry"),
    ParameterSpec("camera_frame", "aiv_camera_optical_frame", "frame id of the images and camera info"),
    # Topics.
    ParameterSpec(
        "image_topic",
        "camera/image_raw",
        "sensor_msgs/Image (rgb8); the compressed stream is on <image_topic>/compressed",
    ),
    ParameterSpec(
        "camera_info_topic", "camera/camera_info", "sensor_msgs/CameraInfo, same header as each image"
    ),
    ParameterSpec(
        "camera_pose_topic",
        "camera/pose",
        "geometry_msgs/PoseStamped of the optical frame in world_frame, same stamp as each image",
    ),
    ParameterSpec(
        "ground_truth_topic",
        "sim/ground_truth_view",
        "aiv_interfaces/GroundTruthView of each frame (with privileged_output)",
    ),
    ParameterSpec("odom_pose_topic", "odom_pose", "geometry_msgs/PoseStamped of the base in world_frame"),
    ParameterSpec("odom_topic", "odom", "nav_msgs/Odometry of the base (only where nav_msgs is importable)"),
    ParameterSpec(
        "object_pose_topic", "object_pose", "geometry_msgs/PoseStamped of the object's centre (latched)"
    ),
    ParameterSpec("goal_topic", "goal_pose", "geometry_msgs/PoseStamped base goals in world_frame"),
    ParameterSpec(
        "goal_status_topic",
        "goal_status",
        "std_msgs/String: accepted, refused: <why>, arrived, preempted, cancelled",
    ),
    ParameterSpec("cancel_topic", "goal_cancel", "std_msgs/Empty: stop where the base is"),
    ParameterSpec(
        "cmd_vel_topic", "cmd_vel", "geometry_msgs/Twist: an all-zero twist stops the base (others ignored)"
    ),
    ParameterSpec(
        "set_pose_topic",
        "sim/set_pose",
        "geometry_msgs/PoseStamped: put the base there at once (a push; for fault tests)",
    ),
    *qos_parameter_specs(CAMERA_QOS, CAMERA_QOS_DEFAULT),
)
