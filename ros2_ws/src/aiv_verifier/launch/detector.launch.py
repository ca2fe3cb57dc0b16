"""The Grounding DINO detector node alone, feeding a verifier that runs with ``agent.bbox_mode: detections``.

    ros2 launch aiv_verifier detector.launch.py model_dir:=/models/grounding-dino-tiny
    ros2 launch aiv_verifier detector.launch.py model_dir:=/models/grounding-dino-tiny device:=cuda \
        image:=/camera/color/image_raw detections:=/detector/detections query:=mug

Parameters come from ``params_file`` (default: the installed ``config/detector.yaml``; its keys are written as
``/**/detector`` so they apply under any namespace), then the launch arguments on top. The camera and detection
topics are remapped by launch arguments; point the verifier's ``detections`` at the same topic. The verifier sets
the query per request (its ``detection_query_topic`` and this node's ``query_topic`` both default to
``detector/query``); ``query`` is only what is detected before the first request. The model
directory must hold a downloaded checkpoint: nothing is fetched at run time (docs/models.md).

The detector is a managed (lifecycle) node, started as launch_ros' ``LifecycleNode``: launch configures
(loads the model) and activates it once its process is up; ``autostart:=false`` leaves it unconfigured, without
the model in memory, for a lifecycle manager (``ros2 lifecycle set /detector configure``, then ``activate``).
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
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the detector node"),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution([FindPackageShare("aiv_verifier"), "config", "detector.yaml"]),
            description="params YAML with a /**/detector section",
        ),
        DeclareLaunchArgument("model_dir", description="local Grounding DINO checkpoint directory"),
        DeclareLaunchArgument("device", default_value="auto", description="auto | cpu | cuda | cuda:N"),
        DeclareLaunchArgument(
            "query", default_value="object", description="text to detect (until query_topic)"
        ),
        DeclareLaunchArgument("image", default_value="camera/image_raw", description="camera image topic"),
        DeclareLaunchArgument(
            "detections", default_value="detections", description="Detection2DArray output"
        ),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock (bag replay)"),
        DeclareLaunchArgument(
            "autostart",
            default_value="true",
            description="launch configures and activates the detector once it is up; false: leave it unconfigured "
            "(a managed node) for a lifecycle manager or `ros2 lifecycle set`",
        ),
    ]
    detector = CleanStopLifecycleNode(
        package="aiv_verifier",
        executable="detector_node",
        name="detector",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        parameters=[
            LaunchConfiguration("params_file"),
            {
                "detector.model_dir": LaunchConfiguration("model_dir"),
                "detector.device": LaunchConfiguration("device"),
                "query": LaunchConfiguration("query"),
                "use_sim_time": LaunchConfiguration("use_sim_time"),
                "autostart": False,
            },
        ],
        remappings=[
            ("camera/image_raw", LaunchConfiguration("image")),
            ("detections", LaunchConfiguration("detections")),
        ],
    )
    return LaunchDescription(
        [*arguments, detector, *activate_when_started(detector, LaunchConfiguration("autostart"))]
    )
