"""The offline evaluation: simulator, verifier and evaluator with one params file.

    ros2 launch aiv_verifier offline_eval.launch.py
    ros2 launch aiv_verifier offline_eval.launch.py params_file:=/path/to/my_eval.yaml
    ros2 launch aiv_verifier offline_eval.launch.py namespace:=pair1 params_file:=/path/to/slice1.yaml

The params file has an ``offline_sim``, a ``verifier`` and an ``evaluator`` section (see the installed
``config/offline_eval.yaml``: weight-free default, classical verifier, GT boxes, FPS, T = 6). Relative paths in
it (dataset_root, run_dir) are taken from the directory you launch in. The simulator and the verifier are
restarted if they crash; the evaluator records the interrupted episode as an infrastructure failure, retries it,
and the launch ends when the evaluator has gone through its slice. With ``namespace`` the three nodes and every
name they use move into it, so several evaluations (each with its own slice and run_dir) can share one DDS
domain. ``aiv-eval run PARAMS --mode ros`` starts the same three nodes the same way where ``ros2 launch`` is not
installed.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    params_file = LaunchConfiguration("params_file")
    namespace = LaunchConfiguration("namespace")
    arguments = [
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution(
                [FindPackageShare("aiv_verifier"), "config", "offline_eval.yaml"]
            ),
            description="params YAML with offline_sim / verifier / evaluator sections",
        ),
        DeclareLaunchArgument(
            "namespace",
            default_value="",
            description="namespace of the three nodes (one per evaluation sharing a DDS domain)",
        ),
    ]
    simulator = Node(
        package="aiv_offline_sim",
        executable="offline_sim",
        name="offline_sim",
        namespace=namespace,
        output="log",
        parameters=[params_file],
        respawn=True,
        respawn_delay=1.0,
    )
    verifier = Node(
        package="aiv_verifier",
        executable="verifier",
        name="verifier",
        namespace=namespace,
        output="log",
        parameters=[params_file],
        respawn=True,
        respawn_delay=1.0,
    )
    evaluator = Node(
        package="aiv_eval",
        executable="evaluator",
        name="evaluator",
        namespace=namespace,
        output="screen",
        parameters=[params_file],
    )
    end_with_evaluator = RegisterEventHandler(
        OnProcessExit(
            target_action=evaluator,
            on_exit=[EmitEvent(event=Shutdown(reason="the evaluation finished"))],
        )
    )
    return LaunchDescription([*arguments, simulator, verifier, evaluator, end_with_evaluator])
