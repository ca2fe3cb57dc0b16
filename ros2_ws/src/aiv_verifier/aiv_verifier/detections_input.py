"""The ``verifier`` node's external detections (``agent.bbox_mode: detections``): the topic it reads and the
query it asks the detector for.

Detector query: the spec's rule is "detector query = the predicted category" (§5.4), so before its first frame
each request publishes its category, as the caption :func:`~aiv_verifier.detection.grounding_dino.grounding_query`
makes of it ("mug" -> "mug."), latched on ``detection_query_topic`` (the detector node's ``query_topic``), and
accepts only detections whose ``Detection2DArray.query`` is that caption ("" = a detector that does not say:
accepted as before). Why a field in the message rather than rules on arrival time and labels: boxes computed
for the previous request's query still arrive after the new query is published (a forward in flight, or the
same frame detected again), and an empty result carries no label to tell it by; the query the detector ran, in
the very message, is exact. The detector node re-runs its last frame when the query changes, so the first view
of a request gets boxes for the new query; the frame cache keeps each frame's detections per query, so stale
ones never replace them.

Detection messages (``detections_type``): ``aiv_interfaces/Detection2DArray`` or ``vision_msgs/Detection2DArray``
as isaac_ros_grounding_dino publishes it (centre + size boxes, ``class_id`` = prompt phrase, no query, so its
boxes are accepted for any query); ``auto`` reads the type the topic's publisher offers. Both become the same
boxes in one converter (:func:`~aiv_verifier.ros_messages.checked_detections`), so stamp matching, the checks
(a non-finite value, a score outside [0, 1], a negative size or a box wholly outside the image refuses the whole
message with one warning line) and the best-box rule are the same for both.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from aiv_common.parameter_spec import ParameterError
from aiv_common.qos import DETECTION_QUERY_QOS
from aiv_common.stamps import stamp_to_nanoseconds
from aiv_interfaces.msg import Detection2DArray
from std_msgs.msg import String

from .camera_model import LatestCamera
from .detection.grounding_dino import grounding_query
from .frame_cache import FrameCache
from .ros_messages import (
    AIV_DETECTIONS_TYPE,
    VISION_DETECTIONS_TYPE,
    BadDetections,
    checked_detections,
    offered_detections_type,
)
from .verifier_parameters import Wiring

#: ``detections_type: auto``: seconds between two looks at the type the detections topic's publishers offer.
DETECTIONS_TYPE_CHECK_S = 0.5

try:  # optional: read detections of a vision_msgs detector (isaac_ros_grounding_dino and most ROS perception)
    _vision: Any = importlib.import_module("vision_msgs.msg")
except ImportError:
    _vision = None
#: ``detections_type`` value -> the full type name, as the graph and ``ros2 topic info`` say it.
DETECTIONS_TYPE_NAMES = {"aiv": AIV_DETECTIONS_TYPE, "vision_msgs": VISION_DETECTIONS_TYPE}


class DetectionsInput:
    """Subscribes ``node`` to the detections topic and files each message's boxes in ``frames``."""

    def __init__(
        self,
        node: Any,
        wiring: Wiring,
        frames: FrameCache,
        camera: LatestCamera,
        note_bad_message: Callable[[str], None],
    ) -> None:
        if wiring.detections_type == "vision_msgs" and _vision is None:
            raise ParameterError(
                "parameter 'detections_type' = 'vision_msgs' but vision_msgs is not installed here "
                "(ros-<distro>-vision-msgs); use 'aiv' or install it"
            )
        self._node, self._topic, self._frames, self._camera = node, wiring.detections_topic, frames, camera
        self._note_bad_message = note_bad_message
        self._subscription: Any = None
        self.kind = ""  # the type read now: aiv | vision_msgs
        self._offered_kind: str | None = None  # auto: what the publishers offered at the last look
        self.query = ""  # the caption the current (or last) request asked the detector for
        self._query_pub = None
        self._read_as("vision_msgs" if wiring.detections_type == "vision_msgs" else "aiv")
        if wiring.detections_type == "auto":
            node.create_timer(DETECTIONS_TYPE_CHECK_S, self._follow_offered_type)
        if wiring.detection_query_topic:
            self._query_pub = node.create_publisher(
                String, wiring.detection_query_topic, DETECTION_QUERY_QOS.to_profile()
            )

    def ask(self, category: str) -> str | None:
        """Publish a request's detector query (see the module docstring) before any frame is waited for; the
        query the accepted detections must carry, or None (no query topic: any detections)."""
        if self._query_pub is None:
            return None
        self.query = grounding_query(category)
        self._query_pub.publish(String(data=self.query))
        return self.query

    def diagnostic_values(self) -> list[tuple[str, str]]:
        values = [("detections_type", DETECTIONS_TYPE_NAMES[self.kind])]
        if self._query_pub is not None:
            values.insert(0, ("detection_query", self.query))
        return values

    def _read_as(self, kind: str) -> None:
        """(Re)subscribe to the detections topic with the message type ``kind`` (aiv | vision_msgs)."""
        if self._subscription is not None:
            self._node.destroy_subscription(self._subscription)
        message_type = _vision.Detection2DArray if kind == "vision_msgs" else Detection2DArray
        self._subscription = self._node.create_subscription(message_type, self._topic, self.on_detections, 10)
        self.kind = kind

    def _follow_offered_type(self) -> None:
        """``detections_type: auto``: read the type the topic's publishers offer (ours until one appears)."""
        topic = self._subscription.topic_name
        offered = {info.topic_type for info in self._node.get_publishers_info_by_topic(topic)}
        kind = offered_detections_type(offered)
        if kind is None or kind == self._offered_kind:
            return
        self._offered_kind = kind
        logger = self._node.get_logger()
        if kind == "vision_msgs" and _vision is None:
            logger.warning(
                f"detections_type auto: {topic} is published as {VISION_DETECTIONS_TYPE}, but vision_msgs is not "
                "installed here: those detections cannot be read"
            )
            return
        others = sorted(offered - {DETECTIONS_TYPE_NAMES[kind]})
        logger.info(
            f"detections_type auto: reading {topic} as {DETECTIONS_TYPE_NAMES[kind]}, the type its publisher offers"
            + (f" (also offered, ignored: {', '.join(others)})" if others else "")
        )
        if kind != self.kind:
            self._read_as(kind)

    def on_detections(self, message: Any) -> None:
        """Boxes of one frame, from either message type through the one converter; a message with a bad box is
        refused whole (one warning line, counted) and the frame waits for other detections."""
        stamp = stamp_to_nanoseconds(message.header.stamp)
        try:
            detections, query = checked_detections(message, self._image_size(stamp))
        except BadDetections as error:
            kind = DETECTIONS_TYPE_NAMES[self.kind]
            self._note_bad_message(f"detections stamped {stamp} ns ({kind}) refused: {error}")
            return
        self._frames.put_detections(stamp, detections, grounding_query(query) if query.strip() else "")

    def _image_size(self, stamp_ns: int) -> tuple[int, int] | None:
        """(width, height) the boxes of the frame ``stamp_ns`` must lie in: its image when it is here, else the
        camera's calibration; None when neither is known (then only the boxes' own values are checked)."""
        size = self._frames.image_size(stamp_ns)
        if size is None and (camera := self._camera.get()) is not None:
            size = (camera.width, camera.height)
        return size
