"""Replay object tours: the simulator serves tour bags, the verifier moves around them (optionally evaluated).

    ros2 launch aiv_verifier bag_replay.launch.py tour_bags:=bags/tour_micro_mug
    ros2 launch aiv_verifier bag_replay.launch.py tour_bags:=/data/tours/a,/data/tours/b \
        tour_root:=/tmp/tours evaluate:=true run_dir:=runs/tours

``offline_sim`` imports every tour bag at start-up (``aiv-bag import``'s rules: sectors and view types from the
poses, descriptions and pairs from the sidecar ``tour.yaml``) and then serves StartEpisode / MoveToSector exactly
as it does for a dataset; the verifier is the same node as in ``offline_eval.launch.py``, with the same params
file. Drive it with VerifyInstance goals of your own, or set ``evaluate:=true`` to start the evaluator, which
then goes through every pair of the tours. The evaluator reads the labels from the directory the tours were
imported into, so it needs ``tour_root`` (an empty or new directory; "" = a private temporary one, removed at
exit). A bag that cannot be imported stops the simulator with one line naming the bag, topic and problem.

Tours have no masks. A tour that carries the object's box per view (its ``/detections`` topic; ``aiv-bag export``
writes the dataset's ground-truth boxes there) is verified with ``bbox_mode:=gt`` (the params file's default) on
the same crops as the dataset episode; without boxes every view is judged on the full image at the no-box
confidence, so run a detector and use ``bbox_mode:=detections detections:=/your/detections``.

Time: the simulator stamps each frame it publishes with its own clock and the verifier compares frame stamps
with its clock, so both (and the evaluator) follow one ``use_sim_time`` setting. Leave it false unless a
``/clock`` is published (e.g. ``ros2 bag play --clock`` running alongside); with true, nothing is stamped or
timed out correctly until that clock ticks.
"""

from aiv_common.launch_signals import take_back_ctrl_c
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode, Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    take_back_ctrl_c()  # a launch started in the background must still stop on Ctrl-C
    params_file = LaunchConfiguration("params_file")
    use_sim_time = ParameterValue(LaunchConfiguration("use_sim_time"), value_type=bool)
    arguments = [
        DeclareLaunchArgument(
            "tour_bags", description="tour bag directories, comma-separated (aiv-bag export or a robot's)"
        ),
        DeclareLaunchArgument(
            "tour_root",
            default_value="",
            description="directory the tours are imported into (new, empty or made by offline_sim; "
            "'' = private temporary); needed by evaluate:=true",
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution(
                [FindPackageShare("aiv_verifier"), "config", "offline_eval.yaml"]
            ),
            description="params YAML with offline_sim / verifier / evaluator sections",
        ),
        DeclareLaunchArgument(
            "bbox_mode", default_value="gt", description="verifier boxes: gt (none on tours) | detections"
        ),
        DeclareLaunchArgument(
            "detections", default_value="detections", description="Detection2DArray topic (detections)"
        ),
        DeclareLaunchArgument(
            "use_sim_time", default_value="false", description="follow /clock (all nodes together)"
        ),
        DeclareLaunchArgument(
            "evaluate", default_value="false", description="start the evaluator over every tour pair"
        ),
        DeclareLaunchArgument(
            "run_dir", default_value="runs/bag_replay", description="evaluator output (evaluate:=true)"
        ),
    ]
    simulator = Node(
        package="aiv_offline_sim",
        executable="offline_sim",
        name="offline_sim",
        output="screen",
        parameters=[
            params_file,
            {
                "tour_bags": LaunchConfiguration("tour_bags"),
                "dataset_root": LaunchConfiguration("tour_root"),
                "use_sim_time": use_sim_time,
            },
        ],
        respawn=True,
        respawn_delay=1.0,
    )
    # Respawned, so it takes itself to active (its autostart parameter), as in offline_eval.launch.py: launch's
    # configure request for a respawned node reaches the killed process's service and is never answered.
    verifier = LifecycleNode(
        package="aiv_verifier",
        executable="verifier",
        name="verifier",
        namespace="",
        output="screen",
        parameters=[
            params_file,
            {"agent.bbox_mode": LaunchConfiguration("bbox_mode"), "use_sim_time": use_sim_time},
        ],
        remappings=[("detections", LaunchConfiguration("detections"))],
        respawn=True,
        respawn_delay=1.0,
    )
    evaluator = Node(
        package="aiv_eval",
        executable="evaluator",
        name="evaluator",
        output="screen",
        parameters=[
            params_file,
            {
                "run_dir": LaunchConfiguration("run_dir"),
                "dataset_root": LaunchConfiguration("tour_root"),
                "use_sim_time": use_sim_time,
            },
        ],
        condition=IfCondition(LaunchConfiguration("evaluate")),
    )
    end_with_evaluator = RegisterEventHandler(
        OnProcessExit(
            target_action=evaluator,
            on_exit=[EmitEvent(event=Shutdown(reason="the evaluation of the tours finished"))],
        )
    )
    return LaunchDescription([*arguments, simulator, verifier, evaluator, end_with_evaluator])
