"""The verifier alone, for a robot: it serves VerifyInstance and asks a MoveToSector server to move the camera.

    ros2 launch aiv_verifier verifier.launch.py
    ros2 launch aiv_verifier verifier.launch.py namespace:=arm_cam params_file:=/path/to/robot_verifier.yaml \
        image:=/camera/color/image_raw camera_info:=/camera/color/camera_info detections:=/detector/detections \
        move_action:=/base/move_to_sector

Parameters come from ``params_file`` (default: the installed ``config/verifier.yaml``; its keys are written as
``/**/verifier`` so they apply under any namespace). The camera and detection topics are remapped by launch
arguments, and so is the MoveToSector client; the VerifyInstance server's name is the ``verify_action`` parameter
(in the params file), because the goal server runs on a companion node (``verifier_goals``) that takes no
command-line remappings. Nothing here needs the simulator, the synthetic generator or the evaluation packages.

The verifier is a managed (lifecycle) node, started as launch_ros' ``LifecycleNode``: launch configures and
activates it once its process is up (``ros2 lifecycle`` sees the transitions); ``autostart:=false`` leaves it
unconfigured for a lifecycle manager (``ros2 lifecycle set /verifier configure``, then ``activate``).
docs/verifier.md, "Lifecycle".
"""

from aiv_common.launch_signals import take_back_ctrl_c
from aiv_common.lifecycle_launch import CleanStopLifecycleNode, activate_when_started
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    take_back_ctrl_c()  # a launch started in the background must still stop on Ctrl-C
    arguments = [
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the verifier node"),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution([FindPackageShare("aiv_verifier"), "config", "verifier.yaml"]),
            description="params YAML with a /**/verifier section",
        ),
        DeclareLaunchArgument("image", default_value="camera/image_raw", description="camera image topic"),
        DeclareLaunchArgument(
            "camera_info",
            default_value="camera/camera_info",
            description="the camera's CameraInfo topic (its focal length calibrates the classical size cue)",
        ),
        DeclareLaunchArgument(
            "detections",
            default_value="detections",
            description="Detection2DArray topic (bbox_mode detections)",
        ),
        DeclareLaunchArgument(
            "ground_truth",
            default_value="sim/ground_truth_view",
            description="privileged GT topic (sim only)",
        ),
        DeclareLaunchArgument(
            "move_action", default_value="move_to_sector", description="MoveToSector action the robot serves"
        ),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock (bag replay)"),
        DeclareLaunchArgument(
            "autostart",
            default_value="true",
            description="launch configures and activates the verifier once it is up; false: leave it unconfigured "
            "(a managed node) for a lifecycle manager or `ros2 lifecycle set`",
        ),
    ]
    verifier = CleanStopLifecycleNode(
        package="aiv_verifier",
        executable="verifier",
        name="verifier",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        parameters=[
            LaunchConfiguration("params_file"),
            {"use_sim_time": LaunchConfiguration("use_sim_time"), "autostart": False},
        ],
        remappings=[
            ("camera/image_raw", LaunchConfiguration("image")),
            ("camera/camera_info", LaunchConfiguration("camera_info")),
            ("detections", LaunchConfiguration("detections")),
            ("sim/ground_truth_view", LaunchConfiguration("ground_truth")),
            ("move_to_sector", LaunchConfiguration("move_action")),
        ],
    )
    return LaunchDescription(
        [*arguments, verifier, *activate_when_started(verifier, LaunchConfiguration("autostart"))]
    )
