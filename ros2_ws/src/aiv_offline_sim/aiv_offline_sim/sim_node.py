"""``offline_sim``: serves PInVerify episodes over ROS 2 as a robot's camera and base would.

* ``start_episode`` (aiv_interfaces/srv/StartEpisode) loads a pair and publishes its start view;
* ``move_to_sector`` (aiv_interfaces/action/MoveToSector) applies the benchmark's move rules and, after
  a successful move, publishes the new view; ``up`` / ``down`` change the camera height level of a dataset
  with height levels (the result's ``level``; refused without a step where the episode has one level), and
  ``height_levels`` = ``eye`` serves such a dataset at eye level only;
* every view goes out as ``sensor_msgs/Image`` (rgb8) + ``sensor_msgs/CameraInfo`` with one header
  stamp and frame id, and, when ``privileged_output`` is true, an ``aiv_interfaces/GroundTruthView``
  with the same header. Frame topics default to reliable + transient-local, depth 1, so a verifier
  that subscribes late still receives the current view.

The episodes come from a dataset directory (``dataset_root`` + ``index_file``) or from tour bags
(``tour_bags``): each bag is imported at start-up by ``aiv_bags``' import into a directory of its own (see
:mod:`aiv_offline_sim.tour_source`) and served by the same environment, so the actions and their rules are the
same. Tours carry no masks: with ``privileged_output`` their GroundTruthView carries the tour's box of the
view (its box topic, e.g. the dataset's GT box an export wrote; ``has_box`` false where there is none, and
always for a tour without a box topic), no mask area, and ``mask_meets_threshold`` from the sidecar's
``target_visible``. A bag that cannot be imported stops the node
at start-up with one line naming the bag, the topic and the problem (exit status 2).

Labels and pair types never leave this node. Bad requests are answered with a reason and the node
keeps serving; so are episodes whose files are broken (StartEpisode refuses them, naming the file and the
field, see ``aiv_dataset.episode_checks``). What makes the whole dataset unusable stops the node at start-up
with one line naming the file (and line), exit status 2: an index that repeats a pair, has a line naming a key
twice or holds no pair, a description file that leads outside the dataset root.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from aiv_common.image_conversion import numpy_to_imgmsg
from aiv_common.move_outcomes import outcome_code
from aiv_common.parameter_spec import ParameterError
from aiv_common.parameters import declare_parameter_table, start_node
from aiv_common.qos import qos_settings_from
from aiv_common.stop_signals import install_stop_handlers, spin_until_stopped
from aiv_dataset.errors import DatasetError, ProblemReport
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.vocabulary import MoveOutcome, mask_threshold_px
from aiv_interfaces.action import MoveToSector
from aiv_interfaces.msg import Detection2D, GroundTruthView, SectorViewpoint
from aiv_interfaces.srv import StartEpisode
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import CameraInfo
from std_msgs.msg import Header

from .environment import LayoutEntry, Observation, PInVerifyEnv
from .episode_service import (
    EpisodeRequestError,
    EpisodeService,
    MoveReply,
    camera_matrix,
)
from .offline_sim_parameters import FRAME_QOS, SIM_PARAMETERS, check_sim_values, parse_bag_list

if TYPE_CHECKING:
    from .tour_source import TourDataset


def layout_entry_message(entry: LayoutEntry) -> SectorViewpoint:
    """One capture of the episode layout as a message (zero position when the dataset has none)."""
    position = entry.camera_position
    return SectorViewpoint(
        sector=int(entry.virtual_sector),
        level=int(entry.level),
        view_type=entry.view_type,
        capture_tag=entry.capture_tag,
        has_position=position is not None,
        position=Point()
        if position is None
        else Point(x=float(position[0]), y=float(position[1]), z=float(position[2])),
    )


class OfflineSimNode(Node):
    """Thin ROS wrapper around :class:`EpisodeService`."""

    def __init__(self, **kwargs) -> None:
        super().__init__("offline_sim", **kwargs)
        self.tours: TourDataset | None = None  # set before anything can fail: destroy_node reads it
        values = declare_parameter_table(self, SIM_PARAMETERS)
        dataset_root = str(values["dataset_root"])
        index_file = str(values["index_file"])
        max_steps = int(values["max_steps"])
        seed = int(values["seed"])
        seed_policy = str(values["seed_policy"])
        view_priority = str(values["view_priority"])
        height_levels = str(values["height_levels"])
        self.privileged = bool(values["privileged_output"])
        self.frame_id = str(values["frame_id"])
        image_topic = str(values["image_topic"])
        info_topic = str(values["camera_info_topic"])
        gt_topic = str(values["ground_truth_topic"])
        service_name = str(values["start_episode_service"])
        action_name = str(values["move_action"])
        frame_qos = qos_settings_from(values, FRAME_QOS).to_profile(where=FRAME_QOS)

        check_sim_values(values)
        bags = parse_bag_list(str(values["tour_bags"]))
        if bags:
            dataset_root, index_file = self.import_tours(bags, dataset_root, index_file)
        elif not dataset_root:
            raise ParameterError(
                "parameter 'dataset_root' is required (the PInVerify dataset directory), unless tour_bags "
                "names tour bags to serve"
            )
        elif not Path(dataset_root).is_dir():
            raise ParameterError(
                f"parameter 'dataset_root' = {dataset_root!r}; expected an existing directory"
            )

        try:
            dataset = PInVerifyDataset(dataset_root)
            self.problems = ProblemReport()
            records = dataset.read_pair_index(index_file, report=self.problems)
            descriptions = dataset.load_descriptions(report=self.problems)
        except BaseException:
            self.remove_private_tours()
            raise
        for problem in self.problems:
            self.get_logger().warning(f"dataset problem (skipped): {problem}")
        env = PInVerifyEnv(
            records,
            dataset,
            max_steps=max_steps,
            seed=seed,
            seed_policy=seed_policy,
            view_priority=view_priority,
            privileged=self.privileged,
            height_levels=height_levels,
        )
        self.service = EpisodeService(env, descriptions)
        self.category_of_target = ""
        self.last_stamp = None

        self.image_pub = self.create_publisher(_image_type(), image_topic, frame_qos)
        self.info_pub = self.create_publisher(CameraInfo, info_topic, frame_qos)
        self.gt_pub = self.create_publisher(GroundTruthView, gt_topic, frame_qos) if self.privileged else None
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_service(StartEpisode, service_name, self.on_start_episode)
        self.move_server = ActionServer(self, MoveToSector, action_name, self.on_move)
        self.create_timer(1.0, self.publish_diagnostics)
        source = (
            f"{len(self.tours.bags)} tour bag(s) imported into {dataset_root}" if self.tours else dataset_root
        )
        self.get_logger().info(
            f"serving {self.service.size} pairs from {source} ({dataset.index_path(index_file)}); "
            f"max_steps={max_steps}, seed={seed} ({seed_policy}), privileged_output={self.privileged}, "
            f"height_levels={height_levels}"
        )

    def import_tours(self, bags: tuple[str, ...], dataset_root: str, index_file: str) -> tuple[str, str]:
        """Import the tour bags (aiv_bags, imported only here: serving a dataset needs no rosbags); return
        the directory and index to serve."""
        from .tour_source import import_tours

        self.tours = import_tours(bags, dataset_root, index_file)
        for line in self.tours.report:
            self.get_logger().info(f"tour import: {line}")
        if self.privileged and self.tours.without_boxes:
            self.get_logger().warning(
                f"tour bag(s) without a box topic ({', '.join(self.tours.without_boxes)}): their GroundTruthView "
                "carries no box (has_box false, mask_area_px 0), so a verifier in agent.bbox_mode gt sees the "
                "full image at the no-box confidence; mask_meets_threshold is the sidecar's target_visible "
                "(false = trap view). Use a detector (agent.bbox_mode detections or detector) for boxes"
            )
        return str(self.tours.root), self.tours.index_file

    def remove_private_tours(self) -> None:
        """Remove the private directory the tours were imported into (a named one stays)."""
        tours = getattr(self, "tours", None)  # None when the constructor failed early
        if tours is not None:
            tours.cleanup()

    def destroy_node(self) -> None:
        self.remove_private_tours()
        super().destroy_node()

    # -- StartEpisode -------------------------------------------------------------------------------------

    def on_start_episode(self, request: StartEpisode.Request, response: StartEpisode.Response):
        response.index_size = self.service.size
        try:
            start = self.service.start(
                index=int(request.index), key=request.episode_key, slice_start=int(request.slice_start)
            )
            stamp = self.publish_view(start.observation)
        except (EpisodeRequestError, DatasetError) as error:
            response.success = False
            response.message = str(error)
            self.get_logger().error(
                f"StartEpisode(index={request.index}, key={request.episode_key!r}): {error}"
            )
            return response
        response.success = True
        response.episode_key = start.key
        response.index = start.index
        response.descriptions = list(start.descriptions)
        response.max_steps = start.max_steps
        response.start_sector = start.observation.current_sector
        response.frame_stamp = stamp
        self.get_logger().info(
            f"episode {start.index} ({start.key}) started in sector {response.start_sector}"
        )
        return response

    # -- MoveToSector -------------------------------------------------------------------------------------

    def on_move(self, goal_handle) -> MoveToSector.Result:
        direction = goal_handle.request.direction
        goal_handle.publish_feedback(MoveToSector.Feedback(phase="planning", progress=0.0))
        reply = self.service.move(direction)
        result = self.to_result(reply)
        if reply.observation is None:  # refused: no step consumed, nothing moved
            self.get_logger().warning(f"MoveToSector({direction!r}) rejected: {reply.message}")
            goal_handle.abort()
            return result
        goal_handle.publish_feedback(MoveToSector.Feedback(phase="moving", progress=0.5))
        try:
            if reply.new_view:
                result.frame_stamp = self.publish_view(reply.observation)
        except DatasetError as error:
            result.outcome = outcome_code(MoveOutcome.REJECTED)
            result.message = f"the new view cannot be shown: {error}"
            self.get_logger().error(result.message)
            goal_handle.abort()
            return result
        goal_handle.publish_feedback(MoveToSector.Feedback(phase="capturing", progress=1.0))
        goal_handle.succeed()
        return result

    def to_result(self, reply: MoveReply) -> MoveToSector.Result:
        result = MoveToSector.Result(
            outcome=outcome_code(reply.outcome),
            sector=reply.sector,
            level=reply.level,
            trap_view=reply.trap_view,
            visibility_warning=reply.warning,
            steps_taken=reply.steps_taken,
            steps_remaining=reply.steps_remaining,
            message=reply.message,
        )
        if self.last_stamp is not None:
            result.frame_stamp = self.last_stamp
        return result

    # -- frames -------------------------------------------------------------------------------------------

    def publish_view(self, observation: Observation):
        """Publish image, camera info (and GT) for the observation with one fresh stamp; return it."""
        image = self.service.image_of(observation)
        stamp = self.get_clock().now().to_msg()
        if self.last_stamp is not None and (stamp.sec, stamp.nanosec) <= (
            self.last_stamp.sec,
            self.last_stamp.nanosec,
        ):
            stamp.sec, stamp.nanosec = self.last_stamp.sec, self.last_stamp.nanosec + 1  # strictly increasing
            if stamp.nanosec >= 1_000_000_000:
                stamp.sec, stamp.nanosec = stamp.sec + 1, stamp.nanosec - 1_000_000_000
        header = Header(stamp=stamp, frame_id=self.frame_id)
        self.image_pub.publish(numpy_to_imgmsg(image, "rgb8", header))
        self.info_pub.publish(self.camera_info(observation, header))
        if self.gt_pub is not None and observation.privileged is not None:
            self.gt_pub.publish(self.ground_truth(observation, header))
        self.last_stamp = stamp
        return stamp

    def camera_info(self, observation: Observation, header: Header) -> CameraInfo:
        width, height, k = camera_matrix(observation.camera_intrinsics)
        fx, cx, fy, cy = k[0], k[2], k[4], k[5]
        return CameraInfo(
            header=header,
            width=width,
            height=height,
            distortion_model="plumb_bob",
            d=[0.0] * 5,
            k=k,
            r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            p=[fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0],
        )

    def ground_truth(self, observation: Observation, header: Header) -> GroundTruthView:
        view = observation.privileged
        assert view is not None
        category = view.truth.target_object_category
        message = GroundTruthView(
            header=header,
            capture_tag=view.capture_tag,
            sector=observation.current_sector,
            level=observation.current_level,
            has_box=view.mask_bbox_xyxy is not None,
            mask_area_px=int(view.mask_area_px or 0),
            mask_threshold_px=mask_threshold_px(category),
            mask_meets_threshold=view.mask_meets_threshold,
            episode_path=view.truth.episode_path,
            target_object_id=view.truth.target_object_id,
            goal_position=Point(
                x=float(view.goal_position[0]), y=float(view.goal_position[1]), z=float(view.goal_position[2])
            ),
            layout=[layout_entry_message(entry) for entry in view.layout],
        )
        if view.mask_bbox_xyxy is not None:
            x0, y0, x1, y1 = view.mask_bbox_xyxy
            message.box = Detection2D(
                x_min=float(x0), y_min=float(y0), x_max=float(x1), y_max=float(y1), score=1.0, label=category
            )
        return message

    def publish_diagnostics(self) -> None:
        env = self.service.env
        status = DiagnosticStatus(
            level=DiagnosticStatus.WARN if len(self.problems) else DiagnosticStatus.OK,
            name="offline_sim: dataset",
            message=f"{self.service.size} pairs, {len(self.problems)} dataset problem(s)",
            hardware_id="offline_sim",
        )
        status.values = [
            KeyValue(key="pairs", value=str(self.service.size)),
            KeyValue(key="tour_bags", value=str(len(self.tours.bags) if self.tours else 0)),
            KeyValue(key="dataset_problems", value=str(len(self.problems))),
            KeyValue(key="episode_loaded", value=str(env.started)),
            KeyValue(key="step", value=str(env.step_count if env.started else 0)),
        ]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.diagnostics_pub.publish(array)


def _image_type():
    from sensor_msgs.msg import Image

    return Image


def main(args: list[str] | None = None) -> int:
    # SIGINT / SIGTERM (once or twice, even while the node is being built) end it with exit code 0.
    stop = install_stop_handlers()
    node = start_node(
        "offline_sim",
        OfflineSimNode,
        args,
        config_errors=(DatasetError,),
        signal_handler_options=SignalHandlerOptions.NO,
    )
    if node is None:
        return 2
    return spin_until_stopped(node, SingleThreadedExecutor(), stop)


if __name__ == "__main__":
    sys.exit(main())
