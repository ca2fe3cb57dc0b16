"""``robot_adapter``: serves MoveToSector on a mobile base by driving it to viewing poses around the object.

The rules live in :class:`aiv_robot.mover.SectorMover` (ROS-free); this node only wires them to the robot:

* **object**: the newest ``geometry_msgs/PoseStamped`` on ``object_pose_topic``, or the parameters
  ``object_x`` / ``object_y`` (``object_from_parameters``);
* **robot pose**: ``nav_msgs/Odometry`` (when nav_msgs is importable), a ``geometry_msgs/PoseStamped`` topic,
  or TF ``world_frame -> base_frame`` (when tf2_ros is importable); see ``pose_source``;
* **navigation**: Nav2 ``NavigateToPose`` when nav2_msgs is importable (import-guarded: apt ROS, or Nav2's
  action built by scripts/install_ros2_tools.sh; a Nav2 rejection or abort, with its error_code and error_msg,
  makes the pose unreachable, a missing or silent server is a fault, a stop cancels the Nav2 goal), otherwise
  ``PoseStamped`` goals on ``goal_topic`` with arrival judged from the robot pose, an optional
  ``std_msgs/String`` status from the robot on ``goal_status_topic`` ("refused: ..." makes the move
  unreachable at once); to stop, a zero ``Twist`` on
  ``cmd_vel_topic`` and a ``std_msgs/Empty`` on ``cancel_topic`` (without one: a goal at the current pose);
* **camera height levels** (optional, ``height_joint_names``): ``up`` / ``down`` move the torso / mast joints
  with ``control_msgs/FollowJointTrajectory`` and aim the head at the object with ``control_msgs/PointHead``
  (:mod:`aiv_robot.height_actions`, rules in :mod:`aiv_robot.heights`); without them ``up`` / ``down`` are
  unreachable and nothing else changes;
* **camera**: only the header stamps of ``image_topic`` (``Image`` or ``CompressedImage``), best-effort QoS by
  default so it matches any driver.

Sessions: the verifier publishes every accepted VerifyInstance goal on its latched ``verifier/requests`` topic
before its first move; each message received there starts a new session here (the robot's current bearing from
the object becomes the goal's start sector, 0 = "front", and nothing else is visited). A move that arrives with
no session yet starts one at that moment. Every fault ends the move as ``rejected`` with its cause and stops the
robot; the node keeps serving.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import importlib.util
import math
import sys
import threading
import time
from dataclasses import replace
from typing import Any

from aiv_common.move_outcomes import outcome_code
from aiv_common.parameter_spec import ParameterError
from aiv_common.parameters import declare_parameter_table, start_node
from aiv_common.qos import LATCHED_CURRENT, VERIFY_REQUEST_QOS, qos_settings_from
from aiv_common.stamps import nanoseconds_to_stamp, stamp_to_nanoseconds
from aiv_common.stop_signals import install_stop_handlers, spin_until_stopped
from aiv_interfaces.action import MoveToSector, VerifyInstance
from geometry_msgs.msg import PoseStamped, Twist
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.time import Time
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Empty, String

from .action_goal import GoalTracker
from .geometry import Pose2D, quaternion_from_yaw, yaw_from_quaternion
from .height_actions import ControlHeightDriver
from .heights import height_settings
from .mover import MoveFault, MoveResult, NavStatus, PoseSample, SectorMover, UnknownStatus, status_from_text
from .robot_adapter_parameters import ADAPTER_PARAMETERS, CAMERA_QOS, move_settings

#: The verifier's request topic, as the verifier publishes it.
REQUEST_QOS = VERIFY_REQUEST_QOS.to_profile()
#: Object pose: latched, so a pose published once before the adapter started still arrives.
OBJECT_QOS = LATCHED_CURRENT.to_profile()
#: Robot pose / odometry / goal status: the usual sensor-style depth, reliable or best-effort publishers.
STATE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
GOAL_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE)
FRAMES_KEPT = 200
#: At shutdown, how long the move under way may take to stop the robot and end (its waits are sliced).
MOVE_STOP_GRACE_S = 2.0
#: At shutdown, the moment the executor takes to send an ended move's result.
RESULT_SETTLE_S = 0.3
DISCOVERY_SLICE_S = 0.05


def module_available(name: str) -> bool:
    """Whether ``name`` can be imported (nav_msgs, tf2_ros, nav2_msgs differ between machines)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def pose2d_from_pose(pose: Any) -> Pose2D:
    """A geometry_msgs/Pose on the floor plane."""
    q = pose.orientation
    return Pose2D(float(pose.position.x), float(pose.position.y), yaw_from_quaternion(q.z, q.w, q.x, q.y))


def pose_stamped(pose: Pose2D, frame_id: str, stamp: Any) -> PoseStamped:
    message = PoseStamped()
    message.header.frame_id = frame_id
    message.header.stamp = stamp
    message.pose.position.x, message.pose.position.y = pose.x, pose.y
    qx, qy, qz, qw = quaternion_from_yaw(pose.yaw)
    message.pose.orientation.x, message.pose.orientation.y = qx, qy
    message.pose.orientation.z, message.pose.orientation.w = qz, qw
    return message


class RobotState:
    """What the subscriptions received, read by the mover from the goal's thread (a RobotView)."""

    def __init__(self, node: Node, world_frame: str) -> None:
        self.node = node
        self.world_frame = world_frame
        self.changed = threading.Condition()
        self._pose: tuple[Pose2D, float, float | None, float | None] | None = None
        #: Set when the node is asked to stop: the move under way ends as if it had been cancelled.
        self.shutting_down = False
        self._pose_problem = ""
        self._object: tuple[float, float] | None = None
        self._object_z = 0.0
        self._object_problem = ""
        self._frames: collections.deque[int] = collections.deque(maxlen=FRAMES_KEPT)
        self.goal_handle: Any = None

    # -- writers (subscription callbacks) -------------------------------------------------------------------

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def put_pose(
        self,
        frame_id: str,
        pose: Pose2D,
        linear: float | None = None,
        angular: float | None = None,
        received: float | None = None,
    ) -> None:
        with self.changed:
            if frame_id and frame_id.lstrip("/") != self.world_frame.lstrip("/"):
                self._pose_problem = (
                    f"the robot pose is stamped in frame {frame_id!r}, not world_frame {self.world_frame!r} "
                    "(publish it there, set world_frame, or use pose_source tf)"
                )
            else:
                self._pose_problem = ""
                self._pose = (pose, time.monotonic() if received is None else received, linear, angular)
            self.changed.notify_all()

    def put_object(self, xy: tuple[float, float] | None, problem: str = "", z: float = 0.0) -> None:
        with self.changed:
            if xy is not None:
                self._object = xy
                self._object_z = z
            self._object_problem = problem
            self.changed.notify_all()

    def put_frame(self, stamp_ns: int) -> None:
        with self.changed:
            self._frames.append(stamp_ns)
            self.changed.notify_all()

    # -- RobotView -------------------------------------------------------------------------------------------

    def pose(self) -> PoseSample | None:
        with self.changed:
            if self._pose_problem:
                raise MoveFault(self._pose_problem)
            if self._pose is None:
                return None
            pose, received, linear, angular = self._pose
        return PoseSample(pose, max(0.0, time.monotonic() - received), linear, angular)

    def object_xy(self) -> tuple[float, float] | None:
        with self.changed:
            if self._object_problem and self._object is None:
                raise MoveFault(self._object_problem)
            return self._object

    def object_point(self) -> tuple[float, float, float] | None:
        """The object's position with its height (where the head aims), if known."""
        with self.changed:
            if self._object is None:
                return None
            return (self._object[0], self._object[1], self._object_z)

    def newest_frame_ns(self) -> int | None:
        with self.changed:
            return max(self._frames) if self._frames else None

    def frame_at_or_after(self, stamp_ns: int) -> int | None:
        with self.changed:
            later = [stamp for stamp in self._frames if stamp >= stamp_ns]
        return min(later) if later else None

    def now_ns(self) -> int:
        return int(self.node.get_clock().now().nanoseconds)

    def wait(self, timeout_s: float) -> None:
        with self.changed:
            self.changed.wait(timeout_s)

    def cancel_requested(self) -> bool:
        handle = self.goal_handle
        return self.shutting_down or bool(handle is not None and handle.is_cancel_requested)


class TopicNavigator:
    """PoseStamped goals on a topic; the robot's String status (optional); stop = zero Twist + goal here."""

    reports_arrival = False

    def __init__(self, node: Node, state: RobotState, values: dict[str, Any], group: Any) -> None:
        self.node = node
        self.state = state
        self.world_frame = str(values["world_frame"])
        self.goal_topic = str(values["goal_topic"])
        self.answer_timeout_s = float(values["answer_timeout_s"])
        self.goal_pub = node.create_publisher(
            PoseStamped,
            self.goal_topic,
            GOAL_QOS,
            event_callbacks=PublisherEventCallbacks(matched=lambda _info: state._notify()),
        )
        cmd_vel = str(values["cmd_vel_topic"])
        self.stop_pub = node.create_publisher(Twist, cmd_vel, 10) if cmd_vel else None
        cancel = str(values["cancel_topic"])
        self.cancel_pub = node.create_publisher(Empty, cancel, 10) if cancel else None
        status_topic = str(values["goal_status_topic"])
        if status_topic:
            node.create_subscription(String, status_topic, self.on_status, 10, callback_group=group)
        self._lock = threading.Lock()
        self._status: tuple[NavStatus, str] = (NavStatus.PENDING, "")

    def on_status(self, message: String) -> None:
        try:
            status = status_from_text(message.data)
        except UnknownStatus as error:
            self.node.get_logger().warning(f"{error}; ignored")
            return
        if status is None:
            return
        with self._lock:
            self._status = (status, message.data)
        self.state._notify()

    def _wait_for_navigation(self) -> bool:
        """Wait up to answer_timeout_s for the goal topic's subscriber, as Nav2's client waits for its server.

        Discovery is per side: the robot may already see our publisher while we do not yet see its
        subscription, and a goal published then is silently dropped. The publisher's matched event wakes
        the wait; the short slices only guard against a middleware that does not raise it.
        """
        deadline = time.monotonic() + self.answer_timeout_s
        with self.state.changed:
            while self.goal_pub.get_subscription_count() == 0:
                left = deadline - time.monotonic()
                if left <= 0.0:
                    return False
                self.state.changed.wait(min(left, DISCOVERY_SLICE_S))
        return True

    def send(self, goal: Pose2D) -> str | None:
        if not self._wait_for_navigation():
            return (
                f"nothing subscribed to the goal topic {self.node.resolve_topic_name(self.goal_topic)!r} "
                f"within {self.answer_timeout_s:g} s (answer_timeout_s)"
            )
        with self._lock:
            self._status = (NavStatus.PENDING, "")
        self.goal_pub.publish(pose_stamped(goal, self.world_frame, self.node.get_clock().now().to_msg()))
        return None

    def status(self) -> tuple[NavStatus, str]:
        with self._lock:
            return self._status

    def stop(self) -> None:
        if self.stop_pub is not None:
            self.stop_pub.publish(Twist())
        if self.cancel_pub is not None:  # the robot's own way to stop
            self.cancel_pub.publish(Empty())
            return
        try:
            sample = self.state.pose()
        except MoveFault:
            sample = None
        if sample is not None and self.goal_pub.get_subscription_count() > 0:
            self.goal_pub.publish(
                pose_stamped(sample.pose, self.world_frame, self.node.get_clock().now().to_msg())
            )


class Nav2Navigator:
    """Nav2's NavigateToPose (nav2_msgs): accepted -> active, SUCCEEDED -> arrival (checked against the pose too);
    rejected, aborted (with Nav2's error_code and error_msg) or canceled by someone else -> the pose cannot be
    reached. A server that is missing or does not answer the goal within answer_timeout_s is a fault. Stop =
    cancel the goal being pursued (+ zero Twist)."""

    reports_arrival = True

    def __init__(self, node: Node, state: RobotState, values: dict[str, Any], group: Any) -> None:
        from rclpy.action import ActionClient

        navigate = importlib.import_module("nav2_msgs.action").NavigateToPose
        self.node = node
        self.state = state
        self.world_frame = str(values["world_frame"])
        self.action_type = navigate
        self.action_name = str(values["navigate_action"])
        self.client: Any = ActionClient(node, navigate, self.action_name, callback_group=group)
        self.goal = GoalTracker(
            node, navigate.Result, "error_msg", float(values["answer_timeout_s"]), lambda: state._notify()
        )
        cmd_vel = str(values["cmd_vel_topic"])
        self.stop_pub = node.create_publisher(Twist, cmd_vel, 10) if cmd_vel else None

    def send(self, goal: Pose2D) -> str | None:
        def request() -> Any:
            message = self.action_type.Goal()  # behavior_tree empty: the navigator's default tree
            message.pose = pose_stamped(goal, self.world_frame, self.node.get_clock().now().to_msg())
            return message

        return self.goal.send(self.client, self.action_name, request, server="NavigateToPose", speaker="Nav2")

    def status(self) -> tuple[NavStatus, str]:
        return self.goal.status()

    def stop(self) -> None:
        self.goal.stop()
        if self.stop_pub is not None:
            self.stop_pub.publish(Twist())


class RobotAdapterNode(Node):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__("robot_adapter", **kwargs)
        values = declare_parameter_table(self, ADAPTER_PARAMETERS)
        self.world_frame = str(values["world_frame"])
        self.state = RobotState(self, self.world_frame)
        self.tf_buffer: Any = None
        inputs = MutuallyExclusiveCallbackGroup()

        pose_source = str(values["pose_source"])
        if pose_source == "auto":
            pose_source = "odometry" if module_available("nav_msgs") else "pose"
        if pose_source == "odometry" and not module_available("nav_msgs"):
            raise ParameterError(
                "parameter 'pose_source' = 'odometry' needs nav_msgs, which is not installed"
            )
        if pose_source == "tf" or not bool(values["object_from_parameters"]):
            self._start_tf(required=pose_source == "tf", base_frame=str(values["base_frame"]))
        if pose_source == "odometry":
            odometry = importlib.import_module("nav_msgs.msg").Odometry
            topic = str(values["odometry_topic"])
            self.create_subscription(odometry, topic, self.on_odometry, STATE_QOS, callback_group=inputs)
            pose_label = f"nav_msgs/Odometry on {self.resolve_topic_name(topic)!r}"
        elif pose_source == "pose":
            topic = str(values["pose_topic"])
            self.create_subscription(PoseStamped, topic, self.on_robot_pose, STATE_QOS, callback_group=inputs)
            pose_label = f"geometry_msgs/PoseStamped on {self.resolve_topic_name(topic)!r}"
        else:
            self.base_frame = str(values["base_frame"])
            self.create_timer(0.05, self.poll_tf, callback_group=inputs)
            pose_label = f"TF {self.world_frame} -> {self.base_frame}"

        if bool(values["object_from_parameters"]):
            self.state.put_object(
                (float(values["object_x"]), float(values["object_y"])), z=float(values["object_z"])
            )
            object_label = "parameters object_x / object_y"
        else:
            topic = str(values["object_pose_topic"])
            self.create_subscription(PoseStamped, topic, self.on_object, OBJECT_QOS, callback_group=inputs)
            object_label = f"geometry_msgs/PoseStamped on {self.resolve_topic_name(topic)!r}"

        camera_qos = qos_settings_from(values, CAMERA_QOS).to_profile(where=CAMERA_QOS)
        image_type = CompressedImage if values["image_transport"] == "compressed" else Image
        self.create_subscription(
            image_type, str(values["image_topic"]), self.on_frame, camera_qos, callback_group=inputs
        )

        navigation = str(values["navigation"])
        if navigation == "auto":
            navigation = "nav2" if module_available("nav2_msgs") else "topic"
        if navigation == "nav2" and not module_available("nav2_msgs"):
            raise ParameterError("parameter 'navigation' = 'nav2' needs nav2_msgs, which is not installed")
        navigator: TopicNavigator | Nav2Navigator = (
            Nav2Navigator(self, self.state, values, inputs)
            if navigation == "nav2"
            else TopicNavigator(self, self.state, values, inputs)
        )
        self.navigator = navigator
        try:
            settings = move_settings(values, pose_label, object_label)
        except ValueError as error:
            raise ParameterError(str(error)) from error
        heights = height_settings(values)
        self.heights: ControlHeightDriver | None = None
        if heights.levels and not module_available("control_msgs"):
            # The table was checked above; only the message package is missing on this machine (a params file
            # shared with machines that have it): run as a robot without levels and say so once.
            self.get_logger().warning(
                "height levels are configured (height_joint_names) but control_msgs is not installed "
                "(FollowJointTrajectory, PointHead: apt ROS, or scripts/install_ros2_tools.sh): up / down will be "
                "unreachable"
            )
            heights = replace(heights, joint_names=())
            settings = replace(settings, no_levels_reason="control_msgs is not installed")
        if heights.levels:
            self.heights = ControlHeightDriver(
                self, heights, values, self.state.object_point, self.state._notify, inputs
            )
        logger = self.get_logger()
        self.mover = SectorMover(
            settings,
            self.state,
            navigator,
            log=lambda text: logger.info(text),
            heights=self.heights,
            warn=lambda text: logger.warning(text),
        )

        request_topic = str(values["request_topic"])
        if request_topic:
            self.create_subscription(
                VerifyInstance.Goal, request_topic, self.on_request, REQUEST_QOS, callback_group=inputs
            )
        self._moves_under_way = 0  # MoveToSector goals executing now (read at shutdown)
        self._moves_changed = threading.Condition()
        self.server = ActionServer(
            self,
            MoveToSector,
            str(values["move_action"]),
            execute_callback=self.execute,
            goal_callback=self.on_goal,
            cancel_callback=self.on_cancel,
            callback_group=ReentrantCallbackGroup(),
        )
        self.get_logger().info(
            f"robot adapter ready: navigation={navigation}, robot pose from {pose_label}, object from "
            f"{object_label}, stand-offs far {settings.far_distance:g} m / near {settings.near_distance:g} m, "
            f"sessions from {request_topic or '(none: one session)'}; height levels "
            + (
                f"{', '.join(str(level) for level in heights.levels)} via {values['follow_joint_trajectory_action']}"
                + (f" and {values['point_head_action']}" if heights.aim else " (head not aimed)")
                if heights.levels
                else "none (up / down are unreachable)"
            )
        )

    # -- inputs ---------------------------------------------------------------------------------------------

    def _start_tf(self, *, required: bool, base_frame: str) -> None:
        if not module_available("tf2_ros"):
            if required:
                raise ParameterError("parameter 'pose_source' = 'tf' needs tf2_ros, which is not installed")
            return
        tf2_ros = importlib.import_module("tf2_ros")  # pragma: no cover - apt ROS only
        self.tf_buffer = tf2_ros.Buffer()  # pragma: no cover
        self.tf_listener = tf2_ros.TransformListener(self.tf_buffer, self)  # pragma: no cover
        self.base_frame = base_frame  # pragma: no cover

    def _to_world(self, frame_id: str, pose: Pose2D) -> Pose2D | str:
        """``pose`` in world_frame, transformed by TF when it is stamped elsewhere; a text when it cannot be."""
        if not frame_id or frame_id.lstrip("/") == self.world_frame.lstrip("/"):
            return pose
        if self.tf_buffer is None:
            return (
                f"the object pose is stamped in frame {frame_id!r}, not world_frame {self.world_frame!r}, and "
                "tf2_ros is not available to transform it"
            )
        try:  # pragma: no cover - apt ROS only
            transform = self.tf_buffer.lookup_transform(self.world_frame, frame_id, Time())
        except Exception as error:  # pragma: no cover - tf2's exceptions differ between distributions
            return f"no TF from {frame_id!r} to {self.world_frame!r}: {error}"
        t, q = transform.transform.translation, transform.transform.rotation  # pragma: no cover
        yaw = yaw_from_quaternion(q.z, q.w, q.x, q.y)  # pragma: no cover
        cos, sin = math.cos(yaw), math.sin(yaw)  # pragma: no cover
        return Pose2D(  # pragma: no cover
            t.x + cos * pose.x - sin * pose.y, t.y + sin * pose.x + cos * pose.y, pose.yaw + yaw
        )

    def on_object(self, message: PoseStamped) -> None:
        pose = self._to_world(message.header.frame_id, pose2d_from_pose(message.pose))
        if isinstance(pose, str):
            self.get_logger().warning(pose)
            self.state.put_object(None, pose)
            return
        self.state.put_object(pose.as_xy(), z=float(message.pose.position.z))

    def on_robot_pose(self, message: PoseStamped) -> None:
        self.state.put_pose(message.header.frame_id, pose2d_from_pose(message.pose))

    def on_odometry(self, message: Any) -> None:
        twist = message.twist.twist
        self.state.put_pose(
            message.header.frame_id,
            pose2d_from_pose(message.pose.pose),
            math.hypot(twist.linear.x, twist.linear.y),
            abs(twist.angular.z),
        )

    def poll_tf(self) -> None:  # pragma: no cover - apt ROS only
        try:
            transform = self.tf_buffer.lookup_transform(self.world_frame, self.base_frame, Time())
        except Exception:  # tf2's exceptions differ between distributions; a missing pose shows as stale
            return
        t, q = transform.transform.translation, transform.transform.rotation
        age_s = max(0.0, (self.state.now_ns() - stamp_to_nanoseconds(transform.header.stamp)) / 1e9)
        self.state.put_pose(
            "", Pose2D(t.x, t.y, yaw_from_quaternion(q.z, q.w, q.x, q.y)), received=time.monotonic() - age_s
        )

    def on_frame(self, message: Image | CompressedImage) -> None:
        self.state.put_frame(stamp_to_nanoseconds(message.header.stamp))

    def on_request(self, message: VerifyInstance.Goal) -> None:
        self.mover.reset(message.request_id, int(message.start_sector), int(message.step_budget))

    # -- MoveToSector ---------------------------------------------------------------------------------------

    def on_goal(self, _goal: MoveToSector.Goal) -> GoalResponse:
        return GoalResponse.REJECT if self.state.shutting_down else GoalResponse.ACCEPT

    def on_cancel(self, _goal_handle: Any) -> CancelResponse:
        self.state._notify()  # wake the move so it sees the request at once
        return CancelResponse.ACCEPT

    def execute(self, goal_handle: Any) -> MoveToSector.Result:
        with self._moves_changed:
            self._moves_under_way += 1
        try:
            return self._execute(goal_handle)
        finally:
            with self._moves_changed:
                self._moves_under_way -= 1
                self._moves_changed.notify_all()

    def _execute(self, goal_handle: Any) -> MoveToSector.Result:
        direction = goal_handle.request.direction
        goal_handle.publish_feedback(MoveToSector.Feedback(phase="moving", progress=0.0))
        self.state.goal_handle = goal_handle
        try:
            moved = self.mover.move(direction)
        finally:
            self.state.goal_handle = None
        result = self.to_result(moved)
        if moved.cancelled and not goal_handle.is_cancel_requested:  # our shutdown ended it, not the client
            result.message = "the robot adapter is shutting down; the robot was stopped"
            goal_handle.abort()
        elif moved.cancelled:
            goal_handle.canceled()
        elif moved.message:
            self.get_logger().error(f"MoveToSector({direction!r}) failed: {moved.message}")
            goal_handle.abort()
        else:
            goal_handle.publish_feedback(MoveToSector.Feedback(phase="capturing", progress=1.0))
            goal_handle.succeed()
        return result

    # -- shutdown -------------------------------------------------------------------------------------------

    def stop_moving(self, grace_s: float = MOVE_STOP_GRACE_S) -> None:
        """Asked to stop: end the move under way (the mover stops the robot and the client gets the reason),
        refuse new ones, then stop the robot once more. Runs while the context still works."""
        self.state.shutting_down = True
        self.state._notify()
        deadline = time.monotonic() + grace_s
        with self._moves_changed:
            was_moving = self._moves_under_way > 0
            while self._moves_under_way > 0 and (left := deadline - time.monotonic()) > 0:
                self._moves_changed.wait(left)
        with contextlib.suppress(Exception):
            self.navigator.stop()
        if self.heights is not None:
            with contextlib.suppress(Exception):
                self.heights.stop()
        if was_moving:
            # The action server sends the ended move's result from the executor right after the move returns.
            threading.Event().wait(RESULT_SETTLE_S)

    @staticmethod
    def to_result(moved: MoveResult) -> MoveToSector.Result:
        result = MoveToSector.Result(
            outcome=outcome_code(moved.outcome),
            sector=moved.sector,
            trap_view=False,  # the adapter cannot tell whether the object is visible; the verifier's box does
            visibility_warning=moved.warning,
            steps_taken=moved.steps_taken,
            steps_remaining=moved.steps_remaining,
            message=moved.message,
            level=moved.level,
        )
        if moved.frame_stamp_ns is not None:
            result.frame_stamp = nanoseconds_to_stamp(moved.frame_stamp_ns)
        return result


def main(args: list[str] | None = None) -> int:
    # SIGINT / SIGTERM (once or twice, even while the node is being built) stop the move under way and the
    # robot while the context still works, then end the node with exit code 0.
    stop = install_stop_handlers()
    node = start_node("robot_adapter", RobotAdapterNode, args, signal_handler_options=SignalHandlerOptions.NO)
    if node is None:
        return 2
    executor = MultiThreadedExecutor(num_threads=3)  # one thread runs a move, the others feed it
    return spin_until_stopped(node, executor, stop, on_stop=node.stop_moving)


if __name__ == "__main__":
    sys.exit(main())
