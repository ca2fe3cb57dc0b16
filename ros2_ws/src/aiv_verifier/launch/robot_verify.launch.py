"""Pre-grasp verification on a robot: the verifier and the robot adapter (and, for trying it out, the stand-in).

    ros2 launch aiv_verifier robot_verify.launch.py                      # a real base: Nav2 or a goal topic
    ros2 launch aiv_verifier robot_verify.launch.py standin:=true        # the live-rendering robot stand-in
    ros2 launch aiv_verifier robot_verify.launch.py image:=/camera/color/image_raw/compressed \
        image_transport:=compressed camera_info:=/camera/color/camera_info detections:=/detector/detections \
        params_file:=/path/to/my_robot.yaml

Then ask for a verdict: ``aiv-pregrasp "a blue mug with white flowers"`` (exit code 0 = YES).

Parameters: each node reads its installed defaults (``config/verifier.yaml``, ``aiv_robot``'s
``config/robot_adapter.yaml``) and then ``params_file`` on top: by default ``config/robot_verify.yaml`` for a real
robot (verifier timeouts that cover a base's drives, best-effort camera QoS that matches any driver, boxes from
a detector topic) or ``config/robot_verify_standin.yaml`` with ``standin:=true`` (short timeouts, the stand-in's
topics, ground-truth boxes from the stand-in). The verifier learns nothing from the adapter but move results;
the adapter starts a new session (the current bearing becomes "front") on every request the verifier publishes
on ``verifier/requests``.

Camera height levels (``up`` / ``down``): the adapter moves a torso / mast through
``control_msgs/FollowJointTrajectory`` and aims the head through ``control_msgs/PointHead`` when its
``height_joint_names`` / ``height_level_positions`` are set (``robot_verify_standin.yaml`` sets them for the
stand-in's torso: levels -1, 0, 1); the verifier plans such moves when its ``height_levels`` names the same levels
(e.g. ``'-1,0,1'`` in your params file). docs/robot.md, "Camera height levels".

The verifier is a managed (lifecycle) node, started as launch_ros' ``LifecycleNode``: launch configures and
activates it once its process is up; ``autostart:=false`` leaves it unconfigured for a lifecycle manager
(docs/verifier.md, "Lifecycle"). The adapter and the stand-in are plain nodes.
"""

from aiv_common.launch_signals import take_back_ctrl_c
from aiv_common.lifecycle_launch import CleanStopLifecycleNode, activate_when_started
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

TRUE = ("true", "1", "yes")


def _nodes(context):
    standin = LaunchConfiguration("standin").perform(context).strip().lower() in TRUE
    params_file = LaunchConfiguration("params_file").perform(context) or (
        PathJoinSubstitution([FindPackageShare("aiv_verifier"), "config", "robot_verify_standin.yaml"])
        if standin
        else PathJoinSubstitution([FindPackageShare("aiv_verifier"), "config", "robot_verify.yaml"])
    )
    image = LaunchConfiguration("image")
    transport = LaunchConfiguration("image_transport").perform(context)
    transport_override = {"image_transport": transport} if transport else {}
    use_sim_time = {"use_sim_time": LaunchConfiguration("use_sim_time")}
    verifier = CleanStopLifecycleNode(
        package="aiv_verifier",
        executable="verifier",
        name="verifier",
        namespace="",
        output="screen",
        parameters=[
            PathJoinSubstitution([FindPackageShare("aiv_verifier"), "config", "verifier.yaml"]),
            params_file,
            {**transport_override, **use_sim_time, "autostart": False},
        ],
        remappings=[
            ("camera/image_raw", image),
            ("camera/camera_info", LaunchConfiguration("camera_info")),
            ("detections", LaunchConfiguration("detections")),
            ("move_to_sector", LaunchConfiguration("move_action")),
        ],
    )
    adapter = Node(
        package="aiv_robot",
        executable="robot_adapter",
        name="robot_adapter",
        output="screen",
        parameters=[
            PathJoinSubstitution([FindPackageShare("aiv_robot"), "config", "robot_adapter.yaml"]),
            params_file,
            {**transport_override, **use_sim_time},
        ],
        remappings=[
            ("camera/image_raw", image),
            ("move_to_sector", LaunchConfiguration("move_action")),
        ],
    )
    nodes = [verifier, *activate_when_started(verifier, LaunchConfiguration("autostart")), adapter]
    if standin:
        nodes.append(
            Node(
                package="aiv_robot_sim",
                executable="robot_sim",
                name="robot_sim",
                output="screen",
                parameters=[params_file, use_sim_time],
            )
        )
    return nodes


def generate_launch_description() -> LaunchDescription:
    take_back_ctrl_c()  # a launch started in the background must still stop on Ctrl-C
    arguments = [
        DeclareLaunchArgument(
            "standin",
            default_value="false",
            description="true: also start the robot stand-in (aiv_robot_sim)",
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value="",
            description="params YAML with verifier / robot_adapter (/ robot_sim) sections; empty: the installed "
            "robot_verify.yaml, or robot_verify_standin.yaml with standin:=true",
        ),
        DeclareLaunchArgument("image", default_value="camera/image_raw", description="camera image topic"),
        DeclareLaunchArgument(
            "camera_info",
            default_value="camera/camera_info",
            description="the camera's CameraInfo topic (its focal length calibrates the classical size cue)",
        ),
        DeclareLaunchArgument(
            "image_transport",
            default_value="",
            description="raw (sensor_msgs/Image) or compressed (sensor_msgs/CompressedImage); empty: as the "
            "params files say",
        ),
        DeclareLaunchArgument(
            "detections",
            default_value="detections",
            description="Detection2DArray topic (bbox_mode detections)",
        ),
        DeclareLaunchArgument(
            "move_action", default_value="move_to_sector", description="MoveToSector action between the two"
        ),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock"),
        DeclareLaunchArgument(
            "autostart",
            default_value="true",
            description="launch configures and activates the verifier once it is up; false: leave it unconfigured "
            "(a managed node) for a lifecycle manager or `ros2 lifecycle set`",
        ),
    ]
    return LaunchDescription([*arguments, OpaqueFunction(function=_nodes)])
