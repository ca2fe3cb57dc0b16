"""The offline evaluation: simulator, verifier and evaluator with one params file.

    ros2 launch aiv_verifier offline_eval.launch.py
    ros2 launch aiv_verifier offline_eval.launch.py params_file:=/path/to/my_eval.yaml
    ros2 launch aiv_verifier offline_eval.launch.py namespace:=pair1 params_file:=/path/to/slice1.yaml
    ros2 launch aiv_verifier offline_eval.launch.py pairs:=2 params_file:=/path/to/my_eval.yaml

The params file has an ``offline_sim``, a ``verifier`` and an ``evaluator`` section (see the installed
``config/offline_eval.yaml``: weight-free default, classical verifier, GT boxes, FPS, T = 6). Relative paths in
it (dataset_root, run_dir) are taken from the directory you launch in. The simulator and the verifier are
restarted if they crash; the evaluator records the interrupted episode as an infrastructure failure, retries it,
and the launch ends when the evaluator has gone through its slice. With ``namespace`` the nodes and every name
they use move into it, so several evaluations (each with its own slice and run_dir) can share one DDS domain.
``aiv-eval run PARAMS --mode ros`` starts the same nodes the same way where ``ros2 launch`` is not installed.

``pairs:=N`` (N > 1) starts N simulator + verifier pairs in the namespaces ``pair0`` … ``pair{N-1}`` and one
evaluator that hands the next episode to whichever pair is free (``evaluator.pairs``): the same records, in
index order, in one run directory, about N times as fast where N cores are free. Each pair is restarted on its
own. Pairs may run on other machines of the same DDS domain: there, ``first_pair:=K evaluator:=false`` starts
pairs ``pairK`` … without an evaluator, and the evaluator's machine names every pair with ``evaluator_pairs``
(a pair that is not up yet joins when it answers). docs/parallel-evaluation.md has the commands.
"""

from aiv_common.launch_signals import take_back_ctrl_c
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode, Node
from launch_ros.substitutions import FindPackageShare

#: The pair count `pairs:=` accepts (one evaluator drives them all).
MAX_PAIRS = 64


class LaunchArgumentError(ValueError):
    """A launch argument's value is refused; the message names it and what is accepted."""


def _count(context: LaunchContext, name: str, minimum: int) -> int:
    text = LaunchConfiguration(name).perform(context).strip()
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if not minimum <= value <= MAX_PAIRS:
        raise LaunchArgumentError(
            f"launch argument {name}:={text!r}; expected an integer from {minimum} to {MAX_PAIRS}"
        )
    return value


def _flag(context: LaunchContext, name: str) -> bool:
    text = LaunchConfiguration(name).perform(context).strip().lower()
    if text not in ("true", "false"):
        raise LaunchArgumentError(f"launch argument {name}:={text!r}; expected true or false")
    return text == "true"


def _pair(pair_namespace: str, params_file: str) -> list:
    """One simulator + verifier pair in ``pair_namespace``, each restarted when it dies.

    The verifier is a managed node that takes itself to active (its ``autostart`` parameter, default true), not
    one that launch drives (``aiv_common.lifecycle_launch``): a respawned node's ``configure`` request from
    launch goes to the killed process's service, which the graph still lists, and is never answered."""
    simulator = Node(
        package="aiv_offline_sim",
        executable="offline_sim",
        name="offline_sim",
        namespace=pair_namespace,
        output="log",
        parameters=[params_file],
        respawn=True,
        respawn_delay=1.0,
    )
    verifier = LifecycleNode(
        package="aiv_verifier",
        executable="verifier",
        name="verifier",
        namespace=pair_namespace,
        output="log",
        parameters=[params_file],
        respawn=True,
        respawn_delay=1.0,
    )
    return [simulator, verifier]


def _nodes(context: LaunchContext) -> list:
    """The pairs and the evaluator, once the arguments are known (their number is one of them)."""
    params_file = LaunchConfiguration("params_file").perform(context)
    namespace = LaunchConfiguration("namespace").perform(context).strip("/")
    count = _count(context, "pairs", 1)
    first = _count(context, "first_pair", 0)
    with_evaluator = _flag(context, "evaluator")
    driven = LaunchConfiguration("evaluator_pairs").perform(context).strip()
    # One pair next to the evaluator keeps today's layout (no pair namespace); anything else names the pairs.
    named = count > 1 or first > 0 or bool(driven)
    pair_names = [f"pair{number}" for number in range(first, first + count)] if named else [""]
    actions: list = []
    for pair in pair_names:
        actions += _pair("/".join(part for part in (namespace, pair) if part), params_file)
    if not with_evaluator:
        return actions
    parameters: list = [params_file]
    if named:  # relative pair names: the evaluator (in `namespace`) finds them in its own namespace
        parameters.append({"pairs": driven or ",".join(pair_names)})
    evaluator = Node(
        package="aiv_eval",
        executable="evaluator",
        name="evaluator",
        namespace=namespace,
        output="screen",
        parameters=parameters,
    )
    end_with_evaluator = RegisterEventHandler(
        OnProcessExit(
            target_action=evaluator,
            on_exit=[EmitEvent(event=Shutdown(reason="the evaluation finished"))],
        )
    )
    return [*actions, evaluator, end_with_evaluator]


def generate_launch_description() -> LaunchDescription:
    take_back_ctrl_c()  # a launch started in the background must still stop on Ctrl-C
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
            description="namespace of the nodes (one per evaluation sharing a DDS domain); pairs go inside it",
        ),
        DeclareLaunchArgument(
            "pairs",
            default_value="1",
            description="simulator + verifier pairs started here (1 to 64); above 1 each gets a namespace "
            "pair<K> and the evaluator hands the next episode to whichever pair is free",
        ),
        DeclareLaunchArgument(
            "first_pair",
            default_value="0",
            description="K of the first pair started here (pair<K>): another machine lending pairs to one "
            "evaluation starts where the others stop",
        ),
        DeclareLaunchArgument(
            "evaluator",
            default_value="true",
            description="start the evaluator here (false: only lend pairs to an evaluator on another machine; "
            "the launch then runs until stopped)",
        ),
        DeclareLaunchArgument(
            "evaluator_pairs",
            default_value="",
            description="every pair the evaluator drives, comma-separated (pairs on other machines too); "
            "empty = the pairs started here",
        ),
    ]
    return LaunchDescription([*arguments, OpaqueFunction(function=_nodes)])
