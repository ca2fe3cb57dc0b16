"""``robot_sim``: a mobile base with a camera in one synthetic scene, rendered live (the robot stand-in).

Interface (names are parameters; defaults shown; world frame ``map``, z up, see :mod:`.frames`):

Published
  ``camera/image_raw``          sensor_msgs/Image rgb8, 360x640, at ``camera_rate_hz``; rendered from the base's
                                pose at the instant in its header stamp (camera QoS: reliable, volatile, depth 2)
  ``camera/image_raw/compressed`` sensor_msgs/CompressedImage (jpeg or png), same header
  ``camera/camera_info``        sensor_msgs/CameraInfo (plumb_bob, no distortion), same header
  ``camera/pose``               geometry_msgs/PoseStamped: the optical frame in ``map``, same stamp
  ``sim/ground_truth_view``     aiv_interfaces/GroundTruthView computed from the same render (privileged_output)
  ``odom_pose``                 geometry_msgs/PoseStamped of ``base_link`` in ``map`` at ``odom_rate_hz``
                                (always; reliable, volatile, depth 10)
  ``odom``                      nav_msgs/Odometry, same pose plus velocity, only where nav_msgs is importable
  ``object_pose``               geometry_msgs/PoseStamped of the object's bounding-box centre (latched:
                                reliable, transient_local, depth 1)
  ``goal_status``               std_msgs/String, one message per event (reliable, volatile, depth 10)
  ``joint_states``              sensor_msgs/JointState of the torso and head joints at ``odom_rate_hz`` (with
                                control_msgs)

Subscribed
  ``goal_pose``    geometry_msgs/PoseStamped in ``map`` (an empty frame id means ``map``; z, roll, pitch ignored)
  ``goal_cancel``  std_msgs/Empty: stop where the base is
  ``cmd_vel``      geometry_msgs/Twist: an all-zero twist stops like ``goal_cancel`` (others are ignored: the base
                   only drives to goals)
  ``sim/set_pose`` geometry_msgs/PoseStamped: put the base there at once (a push, for fault tests)

Served (where control_msgs is importable: scripts/install_ros2_tools.sh builds it, apt ROS has it)
  ``torso_controller/follow_joint_trajectory``  control_msgs/FollowJointTrajectory: the torso lift and head tilt
  ``head_controller/point_head``                control_msgs/PointHead: tilt the camera toward a point
  (see :mod:`.head_and_torso`; the camera is rendered from the torso height and head tilt at each stamp)

Goal semantics. Each goal is answered on ``goal_status``, in order, with exactly one of ``accepted`` or
``refused: <reason>`` (refused: another frame than ``map``, not finite, outside the room, inside a wall, inside
furniture or an obstacle; the base does not move). An accepted goal ends with exactly one of ``arrived`` (the
base stands exactly at the goal; the odometry shows it from then on, and every camera frame stamped after the
``arrived`` message is taken at the goal), ``preempted`` (a newer goal arrived first; its own answer follows)
or ``cancelled`` (``goal_cancel``; the base stops where it is). ``sim/set_pose`` drops a move in progress
with ``preempted``. Statuses carry no goal id: goals are answered strictly in the order received, so the
first ``accepted``/``refused`` after sending a goal is that goal's. The base drives the straight line at
``linear_speed`` while turning at ``angular_speed_deg`` (no path planning), in time scaled by ``time_scale``.

Ground truth per frame: ``has_box``/``box`` = the target mask's xyxy extent, ``mask_area_px``, the category's
``mask_threshold_px`` and ``mask_meets_threshold`` (area above it), ``episode_path`` and
``target_object_id`` of the stand-in's episode, ``goal_position`` in the scene frame (y up, as the offline
simulator gives it). ``capture_tag`` is the benchmark tag when the camera stands at one of the episode's
capture poses (1 cm, 0.5 deg), else ``live``; ``sector`` is -1 and ``layout`` empty (the robot adapter, not
the robot, owns the virtual sector frame). ``has_visible_attributes`` is true and ``visible_attributes`` lists
the attributes visible in this render (:attr:`.live_scene.LiveView.visible_attributes`, the generator's rule),
so the oracle verifiers judge any pose without looking a capture up.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import numpy as np
from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.parameter_spec import ParameterError
from aiv_common.parameters import declare_parameter_table, start_node
from aiv_common.qos import QoSSettings, qos_settings_from
from aiv_common.stop_signals import install_stop_handlers, spin_until_stopped
from aiv_interfaces.msg import Detection2D, GroundTruthView
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, Twist
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import CameraInfo, CompressedImage, Image
from std_msgs.msg import Empty, Header, String

from .frames import (
    BasePose,
    optical_pose_in_world,
    quaternion_to_yaw,
    world_from_scene_point,
    yaw_to_quaternion,
)
from .head_and_torso import HeadAndTorso, control_msgs_available
from .live_scene import LiveScene, LiveView, SceneError
from .motion import Base
from .robot_sim_parameters import CAMERA_QOS, ROBOT_SIM_PARAMETERS, START_AT_POSE

try:  # nav_msgs: apt ROS, or the PyPI wheel ros-nav-msgs (requirements/base.txt); still optional here
    from nav_msgs.msg import Odometry
except ImportError:  # pragma: no cover - depends on the installation
    Odometry = None

#: Tag in GroundTruthView.capture_tag for a view that is not one of the episode's benchmark captures.
LIVE_TAG = "live"
STATUS_QOS = QoSSettings(reliability="reliable", durability="volatile", history="keep_last", depth=10)
LATCHED = QoSSettings(reliability="reliable", durability="transient_local", history="keep_last", depth=1)


class RobotSimNode(Node):
    """The robot stand-in (see the module docstring for its interface)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("robot_sim", **kwargs)
        values = declare_parameter_table(self, ROBOT_SIM_PARAMETERS)
        camera_qos = qos_settings_from(values, CAMERA_QOS).to_profile(where=CAMERA_QOS)
        try:
            self.scene = LiveScene(
                str(values["preset"]),
                int(values["seed"]),
                str(values["split"]),
                str(values["scene"]),
                str(values["episode"]),
                pitch_rule=str(values["pitch_rule"]),
                fixed_pitch_deg=float(values["camera_pitch_deg"]),
            )
        except SceneError as error:
            raise ParameterError(f"scene: {error}") from error
        self.world_frame = str(values["world_frame"])
        self.base_frame = str(values["base_frame"])
        self.camera_frame = str(values["camera_frame"])
        self.privileged = bool(values["privileged_output"])
        self.compressed_format = str(values["compressed_format"])
        self.jpeg_quality = int(values["jpeg_quality"])

        self.lock = threading.Lock()
        self.base = Base(
            self.start_pose(values),
            float(values["linear_speed"]),
            math.radians(float(values["angular_speed_deg"])),
            float(values["time_scale"]),
        )
        self.last_stamp_ns = 0
        self.closing = False  # set by destroy_node: a render in flight then publishes nothing
        self.frames_published = 0
        self.render_seconds = 0.0

        image_topic = str(values["image_topic"])
        camera_group = MutuallyExclusiveCallbackGroup()
        self.image_pub = self.create_publisher(Image, image_topic, camera_qos)
        self.compressed_pub = self.create_publisher(CompressedImage, f"{image_topic}/compressed", camera_qos)
        self.info_pub = self.create_publisher(CameraInfo, str(values["camera_info_topic"]), camera_qos)
        self.camera_pose_pub = self.create_publisher(
            PoseStamped, str(values["camera_pose_topic"]), camera_qos
        )
        self.gt_pub = (
            self.create_publisher(GroundTruthView, str(values["ground_truth_topic"]), camera_qos)
            if self.privileged
            else None
        )
        self.odom_pose_pub = self.create_publisher(
            PoseStamped, str(values["odom_pose_topic"]), STATUS_QOS.to_profile()
        )
        self.odom_pub = (
            self.create_publisher(Odometry, str(values["odom_topic"]), STATUS_QOS.to_profile())
            if Odometry is not None
            else None
        )
        self.object_pub = self.create_publisher(
            PoseStamped, str(values["object_pose_topic"]), LATCHED.to_profile()
        )
        self.status_pub = self.create_publisher(
            String, str(values["goal_status_topic"]), STATUS_QOS.to_profile()
        )
        self.create_subscription(
            PoseStamped, str(values["goal_topic"]), self.on_goal, STATUS_QOS.to_profile()
        )
        self.create_subscription(Empty, str(values["cancel_topic"]), self.on_cancel, STATUS_QOS.to_profile())
        self.create_subscription(
            Twist, str(values["cmd_vel_topic"]), self.on_cmd_vel, STATUS_QOS.to_profile()
        )
        self.create_subscription(
            PoseStamped, str(values["set_pose_topic"]), self.on_set_pose, STATUS_QOS.to_profile()
        )
        self.head_and_torso: HeadAndTorso | None = None
        if control_msgs_available():
            try:
                self.head_and_torso = HeadAndTorso(
                    self,
                    values,
                    self.lock,
                    self.base,
                    -self.scene.pitch,
                    lambda: self.now_ns() * 1e-9,
                )
            except ValueError as error:
                raise ParameterError(str(error)) from error
            joint_group = ReentrantCallbackGroup()  # a joint goal runs while the other server takes its own
            self.joint_servers = [
                ActionServer(
                    self,
                    action_type,
                    str(values[name]),
                    execute_callback=execute,
                    goal_callback=lambda _goal: GoalResponse.ACCEPT,
                    cancel_callback=lambda _goal: CancelResponse.ACCEPT,
                    callback_group=joint_group,
                )
                for action_type, name, execute in (
                    (
                        self.head_and_torso.follow_type,
                        "follow_joint_trajectory_action",
                        self.head_and_torso.follow,
                    ),
                    (self.head_and_torso.point_type, "point_head_action", self.head_and_torso.point),
                )
            ]
        self.create_timer(
            1.0 / float(values["camera_rate_hz"]), self.publish_frame, callback_group=camera_group
        )
        self.create_timer(1.0 / float(values["odom_rate_hz"]), self.tick)
        self.publish_object_pose()
        self.get_logger().info(
            f"standing in {self.scene.episode_path} ({self.scene.category} {self.scene.object_id}); camera "
            f"{values['camera_rate_hz']} Hz, speed {values['linear_speed']} m/s x time_scale {values['time_scale']}, "
            f"odometry on {'odom and ' if self.odom_pub else ''}{values['odom_pose_topic']}; torso and head "
            + (
                f"on {values['follow_joint_trajectory_action']} and {values['point_head_action']}"
                if self.head_and_torso is not None
                else "not served (control_msgs is not installed)"
            )
        )

    def stop_publishing(self) -> None:
        """Asked to stop: a render under way publishes nothing (its frame would come after the shutdown)."""
        self.closing = True

    def destroy_node(self) -> None:
        self.closing = True
        for server in getattr(
            self, "joint_servers", []
        ):  # absent when the constructor refused its parameters
            server.destroy()
        super().destroy_node()

    # -- set-up --------------------------------------------------------------------------------------------

    def start_pose(self, values: dict[str, Any]) -> BasePose:
        start = str(values["start_view"])
        if start == START_AT_POSE:
            pose = BasePose(
                float(values["start_x"]),
                float(values["start_y"]),
                math.radians(float(values["start_yaw_deg"])),
            )
            problem = self.scene.refusal(pose)
            if problem:
                raise ParameterError(f"parameters start_x/start_y: {problem}")
            return pose
        captures = self.scene.captures()
        if not start:
            return captures[0].base_pose
        for view in captures:
            if view.tag == start:
                return view.base_pose
        tags = ", ".join(v.tag for v in captures)
        raise ParameterError(
            f"parameter 'start_view' = {start!r}; this episode's captures are {tags} (or '{START_AT_POSE}')"
        )

    def now_ns(self) -> int:
        return int(self.get_clock().now().nanoseconds)

    def header(self, stamp_ns: int, frame_id: str) -> Header:
        header = Header(frame_id=frame_id)
        header.stamp.sec, header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        return header

    def publish_object_pose(self) -> None:
        x, y, z = world_from_scene_point(self.scene.goal)
        message = PoseStamped(header=self.header(self.now_ns(), self.world_frame))
        message.pose = Pose(position=Point(x=x, y=y, z=z), orientation=Quaternion(w=1.0))
        self.object_pub.publish(message)

    # -- goals ---------------------------------------------------------------------------------------------

    def status(self, text: str) -> None:
        self.status_pub.publish(String(data=text))
        self.get_logger().info(f"goal status: {text}")

    def goal_pose(self, message: PoseStamped) -> tuple[BasePose | None, str | None]:
        frame = message.header.frame_id or self.world_frame
        if frame != self.world_frame:
            return None, f"the goal is in frame {frame!r}; this robot takes goals in {self.world_frame!r}"
        q = message.pose.orientation
        values = (message.pose.position.x, message.pose.position.y, q.x, q.y, q.z, q.w)
        if not all(math.isfinite(v) for v in values) or (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 0.0):
            return None, "the goal is not a finite pose"
        pose = BasePose(
            message.pose.position.x, message.pose.position.y, quaternion_to_yaw(q.x, q.y, q.z, q.w)
        )
        return pose, self.scene.refusal(pose)

    def on_goal(self, message: PoseStamped) -> None:
        pose, problem = self.goal_pose(message)
        with self.lock:
            now = self.now_ns() * 1e-9
            if self.base.moving:
                self.base.stop(now)
                self.status("preempted")
            if pose is None or problem:
                self.status(f"refused: {problem}")
                return
            self.base.start(pose, now)
            self.status("accepted")
        self.tick()

    def on_cancel(self, _message: Empty) -> None:
        with self.lock:
            if self.base.moving:
                self.base.stop(self.now_ns() * 1e-9)
                self.status("cancelled")

    def on_cmd_vel(self, message: Twist) -> None:
        values = (message.linear.x, message.linear.y, message.linear.z, message.angular.x, message.angular.y)
        if all(v == 0.0 for v in (*values, message.angular.z)):
            self.on_cancel(Empty())

    def on_set_pose(self, message: PoseStamped) -> None:
        pose, problem = self.goal_pose(message)
        if pose is None:
            self.get_logger().warning(f"set_pose ignored: {problem}")
            return
        with self.lock:
            if self.base.moving:
                self.status("preempted")
            self.base.teleport(pose)
        self.get_logger().warning(
            f"base put at x={pose.x:.3f} y={pose.y:.3f} yaw={math.degrees(pose.yaw):.1f} deg"
        )
        self.tick()

    # -- odometry ------------------------------------------------------------------------------------------

    def tick(self) -> None:
        """Advance the base, publish its pose (and ``arrived`` when a move has just ended)."""
        with self.lock:
            stamp_ns = self.now_ns()
            arrived = self.base.update(stamp_ns * 1e-9)
            pose = self.base.pose(stamp_ns * 1e-9)
            velocity = self.base.move.velocity(self.base.time_scale) if self.base.move else (0.0, 0.0, 0.0)
            self.publish_odometry(stamp_ns, pose, velocity)
            if self.head_and_torso is not None:
                self.head_and_torso.publish_joint_states(
                    self.header(stamp_ns, self.base_frame), stamp_ns * 1e-9
                )
            if arrived:
                self.status("arrived")

    def publish_odometry(self, stamp_ns: int, pose: BasePose, velocity: tuple[float, float, float]) -> None:
        header = self.header(stamp_ns, self.world_frame)
        qx, qy, qz, qw = yaw_to_quaternion(pose.yaw)
        body = Pose(position=Point(x=pose.x, y=pose.y, z=0.0), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw))
        self.odom_pose_pub.publish(PoseStamped(header=header, pose=body))
        if self.odom_pub is not None and Odometry is not None:
            odometry = Odometry(header=header, child_frame_id=self.base_frame)
            odometry.pose.pose = body
            vx, vy, wz = velocity  # world frame -> base frame
            c, s = math.cos(pose.yaw), math.sin(pose.yaw)
            odometry.twist.twist.linear.x = c * vx + s * vy
            odometry.twist.twist.linear.y = -s * vx + c * vy
            odometry.twist.twist.angular.z = wz
            self.odom_pub.publish(odometry)

    # -- camera --------------------------------------------------------------------------------------------

    def publish_frame(self) -> None:
        """Render the camera of the base's pose now and publish image, compressed image, info, pose, GT."""
        if not self.get_parameter("publish_camera").value:
            return
        try:
            self._render_and_publish()
        except Exception:
            if self.context.ok() and not self.closing:
                raise  # a render takes ~0.1 s: at shutdown the context may go away meanwhile, nothing else

    def _render_and_publish(self) -> None:
        with self.lock:
            stamp_ns = max(self.now_ns(), self.last_stamp_ns + 1)  # strictly increasing stamps
            self.last_stamp_ns = stamp_ns
            pose = self.base.pose(stamp_ns * 1e-9)
            lift, pitch = (
                self.head_and_torso.camera_lift_and_pitch(stamp_ns * 1e-9)
                if self.head_and_torso is not None
                else (0.0, None)
            )
        started = self.get_clock().now().nanoseconds
        view = self.scene.render(pose, lift, pitch)
        if self.closing or not self.context.ok():
            return
        self.render_seconds += (self.get_clock().now().nanoseconds - started) * 1e-9
        header = self.header(stamp_ns, self.camera_frame)
        self.image_pub.publish(numpy_to_imgmsg(view.rgb, "rgb8", header))
        compressed = compress(view.rgb, self.compressed_format, self.jpeg_quality)
        if compressed is not None:
            self.compressed_pub.publish(compressed_message(header, *compressed))
        self.info_pub.publish(self.camera_info(header))
        optical = optical_pose_in_world(view.pose.position, view.pose.quaternion_wxyz())
        camera_pose = PoseStamped(header=self.header(stamp_ns, self.world_frame))
        tx, ty, tz = optical.translation
        qx, qy, qz, qw = optical.rotation
        camera_pose.pose = Pose(
            position=Point(x=tx, y=ty, z=tz), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw)
        )
        self.camera_pose_pub.publish(camera_pose)
        if self.gt_pub is not None:
            self.gt_pub.publish(self.ground_truth(view, header))
        self.frames_published += 1
        self.get_logger().debug(
            f"frame {self.frames_published}: mask {view.mask_area_px} px, visible {view.visible_attributes}"
        )

    def camera_info(self, header: Header) -> CameraInfo:
        intr = self.scene.intr
        fx, fy, cx, cy = intr.fx, intr.fy, intr.cx, intr.cy
        return CameraInfo(
            header=header,
            width=intr.width,
            height=intr.height,
            distortion_model="plumb_bob",
            d=[0.0] * 5,
            k=[fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0],
            r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            p=[fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0],
        )

    def ground_truth(self, view: LiveView, header: Header) -> GroundTruthView:
        capture = self.scene.nearest_capture(view.pose)
        gx, gy, gz = self.scene.goal
        message = GroundTruthView(
            header=header,
            capture_tag=capture.tag if capture is not None else LIVE_TAG,
            sector=-1,
            has_box=view.bbox_xyxy is not None,
            mask_area_px=view.mask_area_px,
            mask_threshold_px=view.mask_threshold_px,
            mask_meets_threshold=view.mask_meets_threshold,
            episode_path=self.scene.episode_path,
            target_object_id=self.scene.object_id,
            has_visible_attributes=True,
            visible_attributes=list(view.visible_attributes),
            goal_position=Point(x=gx, y=gy, z=gz),
        )
        if view.bbox_xyxy is not None:
            x0, y0, x1, y1 = view.bbox_xyxy
            message.box = Detection2D(
                x_min=float(x0),
                y_min=float(y0),
                x_max=float(x1),
                y_max=float(y1),
                score=1.0,
                label=self.scene.category,
            )
        return message


def compress(rgb: np.ndarray, fmt: str, quality: int) -> tuple[str, bytes] | None:
    """(format string, bytes) of an rgb8 image as image_transport's compressed plugin names them."""
    import cv2

    bgr = np.ascontiguousarray(rgb[..., ::-1])
    if fmt == "png":
        ok, data = cv2.imencode(".png", bgr)
    else:
        ok, data = cv2.imencode(".jpg", bgr, [int(cv2.IMWRITE_JPEG_QUALITY), quality])
    if not ok:
        return None
    return f"rgb8; {fmt} compressed bgr8", data.tobytes()


def compressed_message(header: Header, fmt: str, data: bytes) -> CompressedImage:
    message = CompressedImage(header=header, format=fmt)
    message.data = data
    return message


def main(args: list[str] | None = None) -> int:
    # SIGINT / SIGTERM (once or twice, even while the scene is being built) end the node with exit code 0; a
    # render under way publishes nothing, a joint goal under way ends first (it lasts height_move_time_s).
    stop = install_stop_handlers()
    node = start_node("robot_sim", RobotSimNode, args, signal_handler_options=SignalHandlerOptions.NO)
    if node is None:
        return 2
    executor = MultiThreadedExecutor(num_threads=4)  # camera, odometry, and a joint goal or two
    return spin_until_stopped(node, executor, stop, on_stop=node.stop_publishing)


if __name__ == "__main__":
    sys.exit(main())
