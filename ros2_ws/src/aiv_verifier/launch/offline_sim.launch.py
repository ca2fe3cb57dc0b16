"""Start the offline simulator alone, e.g. to drive it from your own client or record a bag.

    ros2 launch aiv_verifier offline_sim.launch.py dataset_root:=/data/pv_dataset \
        index_file:=val/pv_index_100.jsonl privileged_output:=true
"""

from aiv_common.launch_signals import take_back_ctrl_c
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    take_back_ctrl_c()  # a launch started in the background must still stop on Ctrl-C
    arguments = [
        DeclareLaunchArgument("dataset_root", description="PInVerify dataset directory"),
        DeclareLaunchArgument(
            "index_file",
            default_value="val/pv_index_all.jsonl",
            description="episode index, relative to dataset_root",
        ),
        DeclareLaunchArgument(
            "privileged_output",
            default_value="false",
            description="also publish the privileged ground truth (sim/ground_truth_view) the oracle verifiers need",
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution(
                [FindPackageShare("aiv_offline_sim"), "config", "offline_sim.yaml"]
            ),
            description="params YAML with an offline_sim section",
        ),
    ]
    simulator = Node(
        package="aiv_offline_sim",
        executable="offline_sim",
        name="offline_sim",
        output="screen",
        parameters=[
            LaunchConfiguration("params_file"),
            {
                "dataset_root": LaunchConfiguration("dataset_root"),
                "index_file": LaunchConfiguration("index_file"),
                "privileged_output": ParameterValue(
                    LaunchConfiguration("privileged_output"), value_type=bool
                ),
            },
        ],
    )
    return LaunchDescription([*arguments, simulator])
