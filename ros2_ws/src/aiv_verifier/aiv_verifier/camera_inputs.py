"""What the ``verifier`` node reads from the camera while it is active: images (raw or compressed), the camera's
calibration (CameraInfo) and, in simulation, the privileged ground-truth view.

Why apart from the node: these callbacks only file what arrives (a frame by its stamp in the
:class:`~aiv_verifier.frame_cache.FrameCache`, the newest usable calibration in a
:class:`~aiv_verifier.camera_model.LatestCamera`) and count what is wrong with it; they know nothing of
lifecycles or requests. The node builds one :class:`CameraInputs` per configure (with that configuration's cache
and camera) and subscribes it on activate; the deactivation destroys the subscriptions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aiv_common.image_conversion import ImageConversionError, imgmsg_to_rgb
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.msg import GroundTruthView
from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from .camera_model import LatestCamera, camera_from_info
from .compressed_image import compressed_to_rgb
from .frame_cache import FrameCache, StampAhead
from .service_stats import ServiceStats
from .verifier_parameters import Wiring

#: A frame's stamp-to-arrival time above this is not a transport time (a bag's or a simulated clock's stamp).
ARRIVAL_PLAUSIBLE_S = 60.0


class CameraInputs:
    """Files camera messages for the requests; bad ones are counted in ``stats`` and warned about on ``logger``."""

    def __init__(
        self,
        frames: FrameCache,
        camera: LatestCamera,
        stats: ServiceStats,
        logger: RcutilsLogger,
        max_stamp_ahead_s: float,
    ) -> None:
        self.frames = frames
        self.camera = camera
        self.stats = stats
        self.logger = logger
        self.max_stamp_ahead_s = max_stamp_ahead_s
        self._camera_problem = ""  # the last CameraInfo's problem, warned about once until it changes

    def subscribe(self, node: Node, wiring: Wiring, qos: QoSProfile, ground_truth: bool) -> None:
        """Subscribe ``node`` to the camera topics ``wiring`` names (and the ground truth when asked for)."""
        if wiring.image_transport == "compressed":
            node.create_subscription(CompressedImage, wiring.image_topic, self.on_compressed_image, qos)
        else:
            node.create_subscription(Image, wiring.image_topic, self.on_image, qos)
        if wiring.camera_info_topic:
            node.create_subscription(CameraInfo, wiring.camera_info_topic, self.on_camera_info, qos)
        if ground_truth:
            node.create_subscription(GroundTruthView, wiring.ground_truth_topic, self.on_ground_truth, qos)

    def on_image(self, message: Image) -> None:
        self._put_frame(message, imgmsg_to_rgb)

    def on_compressed_image(self, message: CompressedImage) -> None:
        self._put_frame(message, lambda compressed: compressed_to_rgb(compressed.format, compressed.data))

    def _put_frame(self, message: Image | CompressedImage, decode: Callable[[Any], Any]) -> None:
        """Decode a camera message once and file it by stamp (an undecodable one is filed with its error).

        The decode time and how long the message took from its stamp to here (on the wall clock, the one the
        simulator stamps with; 0 when the stamp is not from it, e.g. a bag's) go with the frame into the
        request's ``ros.*`` timings, so the cost of the ROS path is measured where it is paid."""
        reached = time.time_ns()
        stamp = stamp_to_nanoseconds(message.header.stamp)
        arrival_s = (reached - stamp) / 1e9
        if not 0.0 <= arrival_s < ARRIVAL_PLAUSIBLE_S:
            arrival_s = 0.0
        try:
            started = time.perf_counter()
            image = decode(message)
            ahead = self.frames.put_image(
                stamp, image, decode_s=time.perf_counter() - started, arrival_s=arrival_s
            )
        except (ImageConversionError, ValueError) as error:
            self.note_bad_message(f"image at {stamp} ns: {error}")
            ahead = self.frames.put_image(stamp, None, error=str(error))
        if ahead is not None:
            self._note_stamp_ahead(ahead)

    def _note_stamp_ahead(self, ahead: StampAhead) -> None:
        """Count an image stamped too far ahead of the clock; warn at most once per period, with the count."""
        count = self.stats.stamp_ahead()
        if count is not None:
            self.logger.warning(
                f"image stamped {ahead.stamp_ns} ns is {ahead.ahead_s:.3f} s ahead of this node's clock "
                f"(max_stamp_ahead_s = {self.max_stamp_ahead_s:g}; {count} such image(s) since the last "
                "warning): it is kept for a request that names its stamp but never taken as the newest frame; "
                "check the camera's clock, or use_sim_time when replaying a bag"
            )

    def on_camera_info(self, message: CameraInfo) -> None:
        """Keep the newest usable calibration; a bad one is counted and warned about, the previous one stays."""
        try:
            camera = camera_from_info(
                message.width,
                message.height,
                list(message.k),
                message.binning_x,
                message.binning_y,
                message.roi.width,
                message.roi.height,
            )
        except ValueError as error:
            # A driver without calibration sends the same bad CameraInfo with every frame: each one is counted,
            # the warning is logged once per different problem.
            text = f"camera_info at {stamp_to_nanoseconds(message.header.stamp)} ns: {error}"
            self.note_bad_message(text, warn=str(error) != self._camera_problem)
            self._camera_problem = str(error)
            return
        self._camera_problem = ""
        if camera != self.camera.get():
            self.logger.info(f"camera calibration: {camera.describe()}")
        self.camera.put(camera)

    def on_ground_truth(self, message: GroundTruthView) -> None:
        self.frames.put_ground_truth(stamp_to_nanoseconds(message.header.stamp), message)

    def note_bad_message(self, text: str, warn: bool = True) -> None:
        """Count a message that could not be used (also the detections input's); warn unless told not to."""
        self.stats.bad_message(text)
        if warn:
            self.logger.warning(text)
