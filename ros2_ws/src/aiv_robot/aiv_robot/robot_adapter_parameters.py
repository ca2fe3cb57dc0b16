"""The ``robot_adapter`` node's parameters: one ROS-free table (declared by the node, listed in
``config/robot_adapter.yaml`` at the defaults, which suit a real base), and the move settings they make."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aiv_common.parameter_spec import ParameterError, ParameterSpec
from aiv_common.qos import QoSSettings, qos_parameter_specs, qos_settings_from

from .mover import MoveSettings

#: Prefix of the camera subscription's QoS parameters.
CAMERA_QOS = "camera_qos"
#: Best-effort + volatile: matches any camera driver (reliable or best-effort publishers alike).
SENSOR_FRAME = QoSSettings(reliability="best_effort", durability="volatile", history="keep_last", depth=5)

POSE_SOURCES = ("auto", "odometry", "pose", "tf")
NAVIGATION_MODES = ("auto", "nav2", "topic")
IMAGE_TRANSPORTS = ("raw", "compressed")

ADAPTER_PARAMETERS: tuple[ParameterSpec, ...] = (
    # --- where the object is
    ParameterSpec(
        "object_pose_topic",
        "object_pose",
        "geometry_msgs/PoseStamped of the object to verify (e.g. from the grasp pipeline's detector); the newest "
        "one is used for every move",
    ),
    ParameterSpec(
        "object_from_parameters",
        False,
        "true: the object stands at (object_x, object_y) in world_frame and the object pose topic is ignored",
    ),
    ParameterSpec("object_x", 0.0, "object position x in world_frame (object_from_parameters only), metres"),
    ParameterSpec("object_y", 0.0, "object position y in world_frame (object_from_parameters only), metres"),
    ParameterSpec(
        "object_z",
        0.0,
        "object height z in world_frame (object_from_parameters only), metres: where PointHead aims",
    ),
    # --- where the robot is
    ParameterSpec(
        "pose_source",
        "auto",
        "odometry: nav_msgs/Odometry on odometry_topic; pose: geometry_msgs/PoseStamped on pose_topic; tf: "
        "world_frame -> base_frame from TF (needs tf2_ros); auto: odometry when nav_msgs is importable, "
        "else pose",
        choices=POSE_SOURCES,
    ),
    ParameterSpec("odometry_topic", "odom", "nav_msgs/Odometry topic (pose_source odometry)"),
    ParameterSpec("pose_topic", "robot_pose", "geometry_msgs/PoseStamped topic (pose_source pose)"),
    ParameterSpec(
        "world_frame",
        "map",
        "frame the object pose, the robot pose and the goals are expressed in (a pose stamped in another "
        "frame is refused unless pose_source is tf, which transforms it)",
    ),
    ParameterSpec("base_frame", "base_link", "the robot's base frame (pose_source tf)"),
    ParameterSpec(
        "pose_timeout_s",
        0.5,
        "a robot pose older than this (by arrival time) is stale and fails the move",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    # --- the viewing poses
    ParameterSpec(
        "far_distance_m",
        1.5,
        "stand-off of a far view from the object, metres",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "near_distance_m",
        0.9,
        "stand-off of a near view from the object, metres",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "view_priority",
        "far",
        "the stand-off tried first (the benchmark shows a sector's far view when it has one)",
        choices=("far", "near"),
    ),
    ParameterSpec(
        "try_other_distance", True, "when the preferred stand-off cannot be reached, try the other one"
    ),
    ParameterSpec(
        "camera_yaw_offset_deg",
        0.0,
        "camera axis relative to the base's +x, counter-clockwise, degrees (0: the camera looks forward)",
        minimum=-180.0,
        maximum=180.0,
    ),
    # --- navigation
    ParameterSpec(
        "navigation",
        "auto",
        "nav2: NavigateToPose on navigate_action (needs nav2_msgs); topic: "
        "PoseStamped goals on goal_topic, arrival from the robot pose; auto: nav2 when nav2_msgs is "
        "importable, else topic",
        choices=NAVIGATION_MODES,
    ),
    ParameterSpec("navigate_action", "navigate_to_pose", "Nav2 NavigateToPose action (navigation nav2)"),
    ParameterSpec("goal_topic", "goal_pose", "geometry_msgs/PoseStamped goal topic (navigation topic)"),
    ParameterSpec(
        "goal_status_topic",
        "goal_status",
        "std_msgs/String the robot publishes about the goal (navigation topic): its first word decides -- "
        "refused/rejected/aborted/failed/unreachable: the pose cannot be reached (the move is unreachable at "
        "once); accepted/active: under way; succeeded/arrived: there. Empty: not used",
    ),
    ParameterSpec(
        "cancel_topic",
        "",
        "std_msgs/Empty topic that stops the robot's current goal (navigation topic; empty: stop by sending a "
        "goal at the current pose instead)",
    ),
    ParameterSpec(
        "cmd_vel_topic",
        "cmd_vel",
        "geometry_msgs/Twist topic a zero velocity is published on to stop the robot (empty: none)",
    ),
    ParameterSpec(
        "navigation_timeout_s",
        90.0,
        "seconds one drive to a viewing pose may take before the move counts as unreachable",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "answer_timeout_s",
        5.0,
        "seconds navigation has to answer a goal (a status, or the robot starting to move); silence fails the "
        "move as a fault. With Nav2 also how long a success may leave the robot outside the tolerances, and how "
        "long a move waits for the first robot and object poses",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "position_tolerance_m",
        0.15,
        "arrival: distance to the viewing pose, metres",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "yaw_tolerance_deg", 10.0, "arrival: heading error, degrees", minimum=0.0, exclusive_minimum=True
    ),
    ParameterSpec(
        "arrival_max_speed",
        0.05,
        "arrival: the base moves slower than this (m/s; twice that in rad/s) when the pose source gives "
        "velocities",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "motion_epsilon_m",
        0.02,
        "the robot counts as moving (navigation answered) once it is this far (m, or rad) from where it was",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "push_tolerance_m",
        0.3,
        "the robot is pushed off its view when it stands farther than this from the pose it saw it from",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "push_yaw_tolerance_deg",
        20.0,
        "the same for its heading, degrees",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "return_after_failure",
        True,
        "after an unreachable move, drive back to the pose the current view was seen from",
    ),
    # --- camera height levels (up / down): a torso, mast or arm joint and the head
    ParameterSpec(
        "height_joint_names",
        "",
        "joints that set the camera height, comma-separated (e.g. torso_lift_joint), moved with "
        "control_msgs/FollowJointTrajectory. Empty: the robot has no height levels and up / down are unreachable",
    ),
    ParameterSpec(
        "height_level_positions",
        "",
        "joint positions of each level, 'LEVEL: POSITION ...; ...' with one position per joint, e.g. "
        "'-1: -0.4; 0: 0.0; 1: 0.45'. Level 0 (required) is the eye-level position; levels -2..2",
    ),
    ParameterSpec(
        "height_joint_min",
        "",
        "lower limit of each height joint, comma-separated; a level position below it is refused at start-up",
    ),
    ParameterSpec(
        "height_joint_max",
        "",
        "upper limit of each height joint, comma-separated; a level position above it is refused at start-up",
    ),
    ParameterSpec(
        "height_move_time_s",
        4.0,
        "time_from_start of the FollowJointTrajectory point that moves to a level, seconds",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "joint_timeout_s",
        20.0,
        "seconds a FollowJointTrajectory or PointHead goal may take to finish; longer is a fault (the goal is "
        "cancelled)",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "follow_joint_trajectory_action",
        "torso_controller/follow_joint_trajectory",
        "control_msgs/FollowJointTrajectory action of the height joints",
    ),
    ParameterSpec(
        "point_head_action",
        "head_controller/point_head",
        "control_msgs/PointHead action that aims the camera at the object after each height move (empty: the "
        "head is not aimed)",
    ),
    ParameterSpec(
        "point_head_pointing_frame",
        "",
        "PointHead pointing_frame: the camera frame whose axis is aimed (empty: the head controller's default)",
    ),
    ParameterSpec(
        "point_head_pointing_axis",
        "0 0 1",
        "PointHead pointing_axis in pointing_frame, three numbers (0 0 1: an optical frame's z)",
    ),
    ParameterSpec(
        "point_head_min_duration_s",
        0.0,
        "PointHead min_duration, seconds",
        minimum=0.0,
    ),
    ParameterSpec(
        "point_head_max_velocity",
        0.0,
        "PointHead max_velocity, rad/s (0: the head controller's own limit)",
        minimum=0.0,
    ),
    # --- the camera
    ParameterSpec("image_topic", "camera/image_raw", "the camera's image topic (only its stamps are read)"),
    ParameterSpec(
        "image_transport",
        "raw",
        "raw: sensor_msgs/Image; compressed: sensor_msgs/CompressedImage (e.g. .../image_raw/compressed)",
        choices=IMAGE_TRANSPORTS,
    ),
    ParameterSpec(
        "frame_timeout_s",
        3.0,
        "seconds after arrival a frame stamped after the stop may take; none fails the move",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "frame_settle_s",
        0.3,
        "a frame counts when stamped this long after the stop (motion blur, auto exposure), seconds",
        minimum=0.0,
    ),
    *qos_parameter_specs(CAMERA_QOS, SENSOR_FRAME),
    # --- wiring
    ParameterSpec("move_action", "move_to_sector", "MoveToSector action this node serves"),
    ParameterSpec(
        "request_topic",
        "verifier/requests",
        "the verifier's latched VerifyInstance.Goal topic: each new request id starts a new session (the "
        "current bearing becomes the start sector, nothing visited). Empty: one session for the node's life",
    ),
)


def move_settings(values: Mapping[str, Any], pose_source: str, object_source: str) -> MoveSettings:
    """The mover's settings from the node's parameter values (names of the sources go into messages)."""
    check_adapter_values(values)
    return MoveSettings(
        far_distance=float(values["far_distance_m"]),
        near_distance=float(values["near_distance_m"]),
        view_priority=str(values["view_priority"]),
        try_other_distance=bool(values["try_other_distance"]),
        camera_yaw_offset=math.radians(float(values["camera_yaw_offset_deg"])),
        position_tolerance=float(values["position_tolerance_m"]),
        yaw_tolerance=math.radians(float(values["yaw_tolerance_deg"])),
        arrival_max_speed=float(values["arrival_max_speed"]),
        push_tolerance=float(values["push_tolerance_m"]),
        push_yaw_tolerance=math.radians(float(values["push_yaw_tolerance_deg"])),
        motion_epsilon=float(values["motion_epsilon_m"]),
        navigation_timeout_s=float(values["navigation_timeout_s"]),
        answer_timeout_s=float(values["answer_timeout_s"]),
        pose_timeout_s=float(values["pose_timeout_s"]),
        frame_timeout_s=float(values["frame_timeout_s"]),
        frame_settle_s=float(values["frame_settle_s"]),
        return_after_failure=bool(values["return_after_failure"]),
        joint_timeout_s=float(values["joint_timeout_s"]),
        pose_source=pose_source,
        object_source=object_source,
    )


def check_adapter_values(values: Mapping[str, Any]) -> None:
    """Rules between parameters; ParameterError names the rule."""
    qos_settings_from(values, CAMERA_QOS)
    if values["push_tolerance_m"] < values["position_tolerance_m"]:
        raise ParameterError(
            f"parameter 'push_tolerance_m' = {values['push_tolerance_m']}; expected at least "
            f"position_tolerance_m ({values['position_tolerance_m']}): an arrived robot would count as pushed"
        )
    if values["push_yaw_tolerance_deg"] < values["yaw_tolerance_deg"]:
        raise ParameterError(
            f"parameter 'push_yaw_tolerance_deg' = {values['push_yaw_tolerance_deg']}; expected at least "
            f"yaw_tolerance_deg ({values['yaw_tolerance_deg']})"
        )
