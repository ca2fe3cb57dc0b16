"""Tour bags: a :class:`~.tour.Tour` as a rosbag2 file (mcap by default, sqlite3 on request), via rosbags.

Topic and frame convention (every name configurable; the defaults are what ``aiv-bag export`` writes and
what ``aiv-bag import`` looks for first):

=========================================  ========================================  ==========================
topic                                      type                                      content
=========================================  ========================================  ==========================
``/camera/image_raw``                      ``sensor_msgs/msg/Image`` (rgb8)          one frame per view
``/camera/image_raw/compressed``           ``sensor_msgs/msg/CompressedImage``       instead, png or jpeg
``/camera/camera_info``                    ``sensor_msgs/msg/CameraInfo``            one per view, same stamp
``/tf``                                    ``tf2_msgs/msg/TFMessage``                ``map -> camera_optical``
                                                                                     at each view's stamp
``/tf_static``                             ``tf2_msgs/msg/TFMessage``                ``map -> object``
``/detections`` (optional)                 ``aiv_interfaces/msg/Detection2DArray``   the object's boxes, one
                                                                                     message per image stamp
=========================================  ========================================  ==========================

Boxes are what a robot's detector publishes: the project's own ``Detection2DArray`` (vision_msgs is not
available everywhere), header stamp and frame id equal to the image's. Export writes the dataset's
ground-truth box of each view there (score 1, label the category; an empty array where the mask is empty);
import keeps, per view, the box of highest score as the episode's box (``mask_bbox_xyxy``), so the simulator
serves it as the ground-truth box. A tour without the topic has no boxes, as before. The two message
definitions are registered in the typestore from :data:`PROJECT_TYPES` (the text of the interface
package's files, without comments) and written into the bag, so any reader decodes them; boxes recorded
with an earlier definition (:data:`LEGACY_TYPES`) are still read.

The image header's ``frame_id`` is the camera's optical frame (REP-103: z along the view, x right, y down);
its pose is looked up in the fixed frame (``map``, z up) at the header stamp, composing any chain of /tf and
/tf_static edges (a robot records ``map -> odom -> base_link`` on /tf and the camera mount on /tf_static;
``camera_chain="base"`` writes such a chain). The object is a tf frame (``object``) or, for bags without
one, a position given in the sidecar. Export also stores the convention in the bag's ``custom_data``
(``aiv_tour.*`` keys), which import reads when neither the command line nor the sidecar names it.

Reading refuses, with the bag, the topic and the problem: a bag that cannot be opened or is cut short
(fewer messages than its metadata lists), missing topics, message types other than the above (or unknown
to the typestore), image encodings the verifier cannot use, stamps that repeat or go backwards (of the
images, and of each /tf edge), views without a pose, an object without a position, and box messages that
repeat a stamp, name no image or hold a box that is not finite, not in the image or scored outside [0, 1].
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import (
    Connection,
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from .geometry import Transform, Vector3
from .tf_tree import TfLookupError, TfTree
from .tour import (
    DEFAULT_FRAMES,
    DEFAULT_TOPICS,
    CameraModel,
    Tour,
    TourBox,
    TourError,
    TourFrames,
    TourImage,
    TourTopics,
    TourView,
)

IMAGE_TYPE = "sensor_msgs/msg/Image"
COMPRESSED_TYPE = "sensor_msgs/msg/CompressedImage"
CAMERA_INFO_TYPE = "sensor_msgs/msg/CameraInfo"
TF_TYPE = "tf2_msgs/msg/TFMessage"
DETECTIONS_TYPE = "aiv_interfaces/msg/Detection2DArray"

#: The project's message definitions a tour may hold (those of ``aiv_interfaces``, comments left out), so that
#: this ROS-free package reads and writes them without the built interface package.
PROJECT_TYPES: Mapping[str, str] = {
    "aiv_interfaces/msg/Detection2D": (
        "float32 x_min\nfloat32 y_min\nfloat32 x_max\nfloat32 y_max\nfloat32 score\nstring label\n"
    ),
    DETECTIONS_TYPE: "std_msgs/Header header\nDetection2D[] detections\nstring query\n",
}
#: Earlier definitions of :data:`PROJECT_TYPES`, tried when a message does not decode with the current one, so
#: bags recorded before a change stay readable (Detection2DArray had no ``query`` before the verifier drove
#: the detector's query).
LEGACY_TYPES: Mapping[str, str] = {DETECTIONS_TYPE: "std_msgs/Header header\nDetection2D[] detections\n"}

#: Storage plugins by the name users type.
STORAGES: Mapping[str, StoragePlugin] = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
#: rosbag2 metadata versions rosbags can write (8: Jazzy's, 9: Kilted's).
BAG_VERSIONS: tuple[int, ...] = (8, 9)
#: How export writes camera poses: directly ``fixed -> optical`` per view, or ``fixed -> base`` per view on
#: /tf plus a static camera mount ``base -> optical`` on /tf_static (what a robot records).
CAMERA_CHAINS: tuple[str, ...] = ("direct", "base")
#: Where export puts the object frame.
OBJECT_TOPICS: tuple[str, ...] = ("tf_static", "tf")

#: Key prefix of the convention stored in the bag metadata's custom_data.
CUSTOM_PREFIX = "aiv_tour."

#: Stamp of the first view of an exported tour (2023-11-14T22:13:20Z) and the spacing of views: fixed, so that
#: the same episode always gives the same bag.
EXPORT_START_NS = 1_700_000_000_000_000_000
EXPORT_SPACING_NS = 1_000_000_000

#: A camera mount for ``camera_chain="base"``: 1.31 m above the base (the benchmark's sensor height), looking
#: along the base's x axis, as optical axes (z forward, x right, y down).
DEFAULT_CAMERA_MOUNT = Transform.from_matrix(
    np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]), (0.0, 0.0, 1.31)
)

_TYPESTORES: dict[bool, Typestore] = {}


def typestore(*, legacy: bool = False) -> Typestore:
    """The ROS 2 Kilted typestore plus :data:`PROJECT_TYPES` (with ``legacy``: their :data:`LEGACY_TYPES`
    definitions where they have one), built once."""
    if legacy not in _TYPESTORES:
        store = get_typestore(Stores.ROS2_KILTED)
        types: dict[str, Any] = {}
        for name, text in PROJECT_TYPES.items():
            types.update(get_types_from_msg(LEGACY_TYPES.get(name, text) if legacy else text, name))
        store.register(types)
        _TYPESTORES[legacy] = store
    return _TYPESTORES[legacy]


def _latched_qos() -> Qos:
    """reliable + transient-local, depth 1: how tf2 publishes /tf_static, so that replay latches it too."""
    zero = QosTime(0, 0)
    return Qos(
        QosHistory.KEEP_LAST,
        1,
        QosReliability.RELIABLE,
        QosDurability.TRANSIENT_LOCAL,
        zero,
        zero,
        QosLiveliness.AUTOMATIC,
        zero,
        False,
    )


def _reliable_qos(depth: int) -> Qos:
    zero = QosTime(0, 0)
    return Qos(
        QosHistory.KEEP_LAST,
        depth,
        QosReliability.RELIABLE,
        QosDurability.VOLATILE,
        zero,
        zero,
        QosLiveliness.AUTOMATIC,
        zero,
        False,
    )


# -- writing ------------------------------------------------------------------------------------------------


class _Messages:
    """Builders of the standard messages, from the typestore's classes."""

    def __init__(self, store: Typestore) -> None:
        self.store = store
        t = store.types
        self.Time, self.Header = t["builtin_interfaces/msg/Time"], t["std_msgs/msg/Header"]
        self.Image, self.CompressedImage = t[IMAGE_TYPE], t[COMPRESSED_TYPE]
        self.CameraInfo, self.Roi = t[CAMERA_INFO_TYPE], t["sensor_msgs/msg/RegionOfInterest"]
        self.TFMessage, self.TransformStamped = t[TF_TYPE], t["geometry_msgs/msg/TransformStamped"]
        self.Transform, self.Vector3 = t["geometry_msgs/msg/Transform"], t["geometry_msgs/msg/Vector3"]
        self.Quaternion = t["geometry_msgs/msg/Quaternion"]
        self.Detection2D, self.Detection2DArray = t["aiv_interfaces/msg/Detection2D"], t[DETECTIONS_TYPE]

    def detections(self, stamp_ns: int, frame_id: str, boxes: tuple[TourBox, ...]) -> Any:
        return self.Detection2DArray(
            header=self.header(stamp_ns, frame_id),
            detections=[
                self.Detection2D(
                    x_min=box.x_min,
                    y_min=box.y_min,
                    x_max=box.x_max,
                    y_max=box.y_max,
                    score=box.score,
                    label=box.label,
                )
                for box in boxes
            ],
            query="",  # ground-truth boxes answer no text query
        )

    def header(self, stamp_ns: int, frame_id: str) -> Any:
        return self.Header(
            stamp=self.Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id=frame_id
        )

    def image(self, stamp_ns: int, frame_id: str, image: TourImage) -> Any:
        data = np.frombuffer(image.data, dtype=np.uint8)
        if image.compressed:
            return self.CompressedImage(
                header=self.header(stamp_ns, frame_id), format=image.encoding, data=data
            )
        return self.Image(
            header=self.header(stamp_ns, frame_id),
            height=image.height,
            width=image.width,
            encoding=image.encoding,
            is_bigendian=0,
            step=image.step,
            data=data,
        )

    def camera_info(self, stamp_ns: int, frame_id: str, camera: CameraModel) -> Any:
        k = np.array([camera.fx, 0, camera.cx, 0, camera.fy, camera.cy, 0, 0, 1], dtype=np.float64)
        p = np.array([camera.fx, 0, camera.cx, 0, 0, camera.fy, camera.cy, 0, 0, 0, 1, 0], dtype=np.float64)
        return self.CameraInfo(
            header=self.header(stamp_ns, frame_id),
            height=camera.height,
            width=camera.width,
            distortion_model=camera.distortion_model or "plumb_bob",
            d=np.array(camera.distortion or (0.0,) * 5, dtype=np.float64),
            k=k,
            r=np.eye(3, dtype=np.float64).reshape(9),
            p=p,
            binning_x=0,
            binning_y=0,
            roi=self.Roi(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False),
        )

    def transform(self, stamp_ns: int, parent: str, child: str, tf: Transform) -> Any:
        (tx, ty, tz), (qx, qy, qz, qw) = tf.translation, tf.rotation
        return self.TransformStamped(
            header=self.header(stamp_ns, parent),
            child_frame_id=child,
            transform=self.Transform(
                translation=self.Vector3(x=tx, y=ty, z=tz), rotation=self.Quaternion(x=qx, y=qy, z=qz, w=qw)
            ),
        )

    def tf(self, transforms: list[Any]) -> Any:
        return self.TFMessage(transforms=transforms)


def write_tour_bag(
    tour: Tour,
    path: Path,
    *,
    topics: TourTopics = DEFAULT_TOPICS,
    storage: str = "mcap",
    version: int = 9,
    camera_chain: str = "direct",
    object_topic: str = "tf_static",
    camera_mount: Transform = DEFAULT_CAMERA_MOUNT,
) -> TourTopics:
    """Write ``tour`` as a rosbag2 directory at ``path`` (which must not exist); returns the topics used.

    Each view gets a /tf message with its camera pose, a CameraInfo and an image, all stamped (header and bag
    time) with the view's stamp; /tf_static comes first and holds the object frame (unless
    ``object_topic="tf"``) and, with ``camera_chain="base"``, the camera mount. Views with ``boxes`` (not
    None) get a Detection2DArray on ``topics.detections`` (default ``/detections``) at their stamp.
    """
    if storage not in STORAGES:
        raise ValueError(f"storage must be one of {list(STORAGES)}, got {storage!r}")
    if version not in BAG_VERSIONS:
        raise ValueError(f"bag version must be one of {BAG_VERSIONS}, got {version}")
    if camera_chain not in CAMERA_CHAINS:
        raise ValueError(f"camera_chain must be one of {CAMERA_CHAINS}, got {camera_chain!r}")
    if object_topic not in OBJECT_TOPICS:
        raise ValueError(f"object_topic must be one of {OBJECT_TOPICS}, got {object_topic!r}")
    if not tour.views:
        raise ValueError("a tour needs at least one view")
    compressed = {view.image.compressed for view in tour.views}
    if len(compressed) != 1:
        raise ValueError("all views of a tour must be compressed, or none")
    is_compressed = compressed.pop()
    image_topic = topics.image or (
        TourTopics.compressed_image_default() if is_compressed else TourTopics.default_image()
    )
    info_topic = topics.camera_info or TourTopics.default_camera_info()
    detections_topic = (topics.detections or TourTopics.default_detections()) if tour.has_boxes else None
    used = replace(topics, image=image_topic, camera_info=info_topic, detections=detections_topic)

    store, msgs, frames = typestore(), _Messages(typestore()), tour.frames
    start = tour.views[0].stamp_ns
    with Writer(path, version=version, storage_plugin=STORAGES[storage]) as writer:  # type: ignore[arg-type]
        for key, value in (
            ("up_axis", frames.up_axis),
            ("fixed_frame", frames.fixed),
            ("object_frame", frames.object),
            ("camera_frame", frames.camera),
            ("image_topic", image_topic),
        ):
            writer.set_custom_data(CUSTOM_PREFIX + key, value)
        static = writer.add_connection(
            topics.tf_static, TF_TYPE, typestore=store, offered_qos_profiles=[_latched_qos()]
        )
        dynamic = writer.add_connection(
            topics.tf, TF_TYPE, typestore=store, offered_qos_profiles=[_reliable_qos(100)]
        )
        info = writer.add_connection(
            info_topic, CAMERA_INFO_TYPE, typestore=store, offered_qos_profiles=[_reliable_qos(10)]
        )
        image = writer.add_connection(
            image_topic,
            COMPRESSED_TYPE if is_compressed else IMAGE_TYPE,
            typestore=store,
            offered_qos_profiles=[_reliable_qos(10)],
        )
        boxes = (
            writer.add_connection(
                detections_topic, DETECTIONS_TYPE, typestore=store, offered_qos_profiles=[_reliable_qos(10)]
            )
            if detections_topic is not None
            else None
        )

        def put(connection: Connection, stamp: int, message: Any) -> None:
            writer.write(connection, stamp, bytes(store.serialize_cdr(message, connection.msgtype)))

        object_tf = msgs.transform(start, frames.fixed, frames.object, Transform(tour.object_position))
        static_tfs = [object_tf] if object_topic == "tf_static" else []
        if camera_chain == "base":
            static_tfs.append(msgs.transform(start, frames.base, frames.camera, camera_mount))
        if static_tfs:
            put(static, start, msgs.tf(static_tfs))
        for view in tour.views:
            if camera_chain == "base":
                base_pose = view.pose.compose(camera_mount.inverse())
                transforms = [msgs.transform(view.stamp_ns, frames.fixed, frames.base, base_pose)]
            else:
                transforms = [msgs.transform(view.stamp_ns, frames.fixed, frames.camera, view.pose)]
            if object_topic == "tf":
                at_object = Transform(tour.object_position)
                transforms.append(msgs.transform(view.stamp_ns, frames.fixed, frames.object, at_object))
            put(dynamic, view.stamp_ns, msgs.tf(transforms))
            put(info, view.stamp_ns, msgs.camera_info(view.stamp_ns, frames.camera, tour.camera))
            put(image, view.stamp_ns, msgs.image(view.stamp_ns, frames.camera, view.image))
            if boxes is not None and view.boxes is not None:
                put(boxes, view.stamp_ns, msgs.detections(view.stamp_ns, frames.camera, view.boxes))
    return used


# -- reading ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BagSummary:
    """What a tour bag held, for the import report."""

    path: str
    storage: str
    image_topic: str
    image_type: str
    camera_info_topic: str
    views: int
    tf_messages: int
    tf_static_messages: int
    detections_topic: str | None = None  # None: the bag has no boxes
    views_with_box: int = 0


@dataclass(frozen=True)
class ReadTour:
    tour: Tour
    summary: BagSummary


def check_bag_opens(path: Path) -> None:
    """Raise the TourError :func:`read_tour_bag` would for a bag that cannot even be opened."""
    reader = _BagReader(path).open()
    with contextlib.suppress(Exception):
        reader.close()


def custom_convention(path: Path) -> dict[str, str]:
    """The ``aiv_tour.*`` convention export stored in a bag's custom_data (empty for other bags)."""
    try:
        reader = Reader(path)
        reader.open()
    except Exception:  # read_tour_bag reports the real problem
        return {}
    try:
        custom = reader.storage.metadata.custom or {}
        return {k[len(CUSTOM_PREFIX) :]: str(v) for k, v in custom.items() if k.startswith(CUSTOM_PREFIX)}
    except AttributeError:
        return {}
    finally:
        reader.close()


class _BagReader:
    """One pass over a tour bag, turning every failure into a TourError naming bag and topic."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)
        self.store = typestore()

    def fail(self, problem: str, topic: str | None = None) -> TourError:
        return TourError(problem, bag=self.name, topic=topic)

    def open(self) -> Reader:
        if not self.path.exists():
            raise self.fail("bag does not exist")
        if self.path.is_dir() and not (self.path / "metadata.yaml").is_file():
            raise self.fail("not a rosbag2 directory (no metadata.yaml)")
        try:
            reader = Reader(self.path)
            reader.open()
        except Exception as exc:  # rosbags and its storage back ends (apsw, mcap) raise many kinds
            raise self.fail(f"bag cannot be opened, it is corrupt or truncated ({_reason(exc)})") from None
        return reader

    def check_type(self, topic: str, msgtype: str | None, expected: tuple[str, ...]) -> str:
        if msgtype is None:
            raise self.fail("carries several message types", topic)
        if msgtype not in expected:
            known = (
                "" if msgtype in self.store.fielddefs else ", a message type unknown to the ROS 2 typestore"
            )
            raise self.fail(f"has message type {msgtype}{known}; expected {' or '.join(expected)}", topic)
        return msgtype

    def _decode(self, raw: bytes, msgtype: str) -> Any:
        """A message decoded with the current definition, or with its legacy one (an older recording)."""
        try:
            return self.store.deserialize_cdr(raw, msgtype)
        except Exception as current:
            if msgtype not in LEGACY_TYPES:
                raise
            try:
                return typestore(legacy=True).deserialize_cdr(raw, msgtype)
            except Exception:
                raise current from None

    def messages(self, reader: Reader, connections: list[Connection]) -> Iterator[tuple[Connection, Any]]:
        """Decoded messages of ``connections`` in bag order; then checks nothing is missing."""
        counts = {c.id: 0 for c in connections}
        current: Connection | None = None
        try:
            for connection, _, raw in reader.messages(connections=connections):
                current = connection
                counts[connection.id] += 1
                try:
                    message = self._decode(raw, connection.msgtype)
                except Exception as exc:  # any decoding failure: a corrupt message
                    raise self.fail(
                        f"message {counts[connection.id]} cannot be decoded as {connection.msgtype} "
                        f"({_reason(exc)}); the bag is corrupt",
                        connection.topic,
                    ) from None
                yield connection, message
        except TourError:
            raise
        except Exception as exc:  # as in open(): any failure of the storage back end means a damaged bag
            topic = current.topic if current is not None else None
            raise self.fail(f"bag is corrupt or truncated: reading failed ({_reason(exc)})", topic) from None
        for connection in connections:
            if connection.msgcount and counts[connection.id] != connection.msgcount:
                raise self.fail(
                    f"bag is truncated: {counts[connection.id]} message(s) read, its metadata lists "
                    f"{connection.msgcount}",
                    connection.topic,
                )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _stamp_ns(header: Any) -> int:
    return int(header.stamp.sec) * 10**9 + int(header.stamp.nanosec)


def _image_of(message: Any, compressed: bool) -> TourImage:
    data = bytes(np.asarray(message.data, dtype=np.uint8).tobytes())
    if compressed:
        return TourImage(data, str(message.format), True)
    return TourImage(
        data, str(message.encoding), False, int(message.width), int(message.height), int(message.step)
    )


def _camera_of(message: Any) -> CameraModel:
    k = [float(v) for v in message.k]
    return CameraModel(
        width=int(message.width),
        height=int(message.height),
        fx=k[0],
        fy=k[4],
        cx=k[2],
        cy=k[5],
        distortion_model=str(message.distortion_model),
        distortion=tuple(float(v) for v in message.d),
    )


def _sibling_camera_info(image_topic: str) -> str:
    """``/ns/image_raw[/compressed]`` -> ``/ns/camera_info`` (image_transport's naming)."""
    parts = image_topic.rstrip("/").split("/")
    if len(parts) > 2 and parts[-1] in ("compressed", "theora", "compressedDepth"):
        parts = parts[:-1]
    return "/".join([*parts[:-1], "camera_info"])


def read_tour_bag(
    path: Path,
    *,
    topics: TourTopics = DEFAULT_TOPICS,
    frames: TourFrames = DEFAULT_FRAMES,
    object_position: Vector3 | None = None,
    tolerance_ns: int = 100_000_000,
    max_interval_ns: int = 1_000_000_000,
) -> ReadTour:
    """Read a tour bag. ``topics.image`` / ``topics.camera_info`` None means: the default name if the bag has
    it, else the bag's only topic of that type. ``object_position`` (fixed frame) replaces the object frame.
    Raises :class:`TourError` naming the bag, the topic and the problem for everything it cannot use."""
    bag = _BagReader(path)
    reader = bag.open()
    try:
        return _read(bag, reader, topics, frames, object_position, tolerance_ns, max_interval_ns)
    finally:
        with contextlib.suppress(Exception):
            reader.close()


def _pick_topic(
    bag: _BagReader,
    available: Mapping[str, Any],
    wanted: str | None,
    default: str,
    types: tuple[str, ...],
    what: str,
) -> str:
    if wanted is not None:
        if wanted not in available:
            listing = ", ".join(f"{t} ({i.msgtype})" for t, i in sorted(available.items())) or "none"
            raise bag.fail(f"the bag has no {what} topic {wanted}; its topics: {listing}", wanted)
        return wanted
    if default in available:
        return default
    candidates = sorted(t for t, i in available.items() if i.msgtype in types)
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        listing = ", ".join(f"{t} ({i.msgtype})" for t, i in sorted(available.items())) or "none"
        raise bag.fail(
            f"the bag has no {what} topic: expected {default} or one topic of type {' or '.join(types)}; "
            f"its topics: {listing}",
            default,
        )
    raise bag.fail(f"several {what} topics ({', '.join(candidates)}); name the one to use", default)


def _read(
    bag: _BagReader,
    reader: Reader,
    topics: TourTopics,
    frames: TourFrames,
    object_position: Vector3 | None,
    tolerance_ns: int,
    max_interval_ns: int,
) -> ReadTour:
    available = reader.topics
    image_topic = _pick_topic(
        bag, available, topics.image, TourTopics.default_image(), (IMAGE_TYPE, COMPRESSED_TYPE), "image"
    )
    image_type = bag.check_type(image_topic, available[image_topic].msgtype, (IMAGE_TYPE, COMPRESSED_TYPE))
    compressed = image_type == COMPRESSED_TYPE
    info_default = _sibling_camera_info(image_topic)
    info_topic = _pick_topic(
        bag, available, topics.camera_info, info_default, (CAMERA_INFO_TYPE,), "camera_info"
    )
    bag.check_type(info_topic, available[info_topic].msgtype, (CAMERA_INFO_TYPE,))
    tf_topics = [t for t in (topics.tf, topics.tf_static) if t in available]
    if not tf_topics:
        raise bag.fail(
            f"the bag has neither {topics.tf} nor {topics.tf_static}: a tour needs camera poses", topics.tf
        )
    for t in tf_topics:
        bag.check_type(t, available[t].msgtype, (TF_TYPE,))

    detections_topic = _detections_topic(bag, available, topics.detections)
    read_topics = (image_topic, info_topic, *tf_topics, *([detections_topic] if detections_topic else []))
    wanted = [c for t in read_topics for c in available[t].connections]
    boxes: dict[int, tuple[TourBox, ...]] = {}
    tree = TfTree(tolerance_ns=tolerance_ns, max_interval_ns=max_interval_ns)
    images: list[tuple[int, str, TourImage, tuple[int, int]]] = []
    camera: CameraModel | None = None
    tf_counts = {topics.tf: 0, topics.tf_static: 0}
    for connection, message in bag.messages(reader, wanted):
        topic = connection.topic
        if topic == image_topic:
            stamp = _stamp_ns(message.header)
            if images and stamp <= images[-1][0]:
                kind = "duplicate" if stamp == images[-1][0] else "non-monotonic"
                raise bag.fail(
                    f"{kind} image stamps: image {len(images) + 1} has stamp {stamp} ns, the previous one "
                    f"{images[-1][0]} ns; a tour's views must be in strictly increasing time",
                    topic,
                )
            tour_image = _image_of(message, compressed)
            try:
                height, width = tour_image.to_rgb().shape[:2]
            except ValueError as exc:
                raise bag.fail(f"image {len(images) + 1} (stamp {stamp} ns): {exc}", topic) from None
            images.append((stamp, str(message.header.frame_id), tour_image, (width, height)))
        elif topic == detections_topic:
            stamp = _stamp_ns(message.header)
            if stamp in boxes:
                raise bag.fail(f"two box messages stamped {stamp} ns; one per image is expected", topic)
            boxes[stamp] = tuple(
                TourBox(
                    float(d.x_min),
                    float(d.y_min),
                    float(d.x_max),
                    float(d.y_max),
                    float(d.score),
                    str(d.label),
                )
                for d in message.detections
            )
        elif topic == info_topic:
            model = _camera_of(message)
            problem = model.check()
            if problem:
                raise bag.fail(f"camera info is unusable: {problem}", topic)
            if camera is None:
                camera = model
            elif (model.width, model.height) != (camera.width, camera.height):
                raise bag.fail(
                    f"camera info changes image size mid-tour ({camera.width}x{camera.height} -> "
                    f"{model.width}x{model.height})",
                    topic,
                )
        else:
            static = topic == topics.tf_static and topic != topics.tf
            tf_counts[topic] = tf_counts.get(topic, 0) + 1
            for ts in message.transforms:
                r, t = ts.transform.rotation, ts.transform.translation
                transform = Transform(
                    (float(t.x), float(t.y), float(t.z)), (float(r.x), float(r.y), float(r.z), float(r.w))
                )
                try:
                    tree.add(
                        str(ts.header.frame_id),
                        str(ts.child_frame_id),
                        _stamp_ns(ts.header),
                        transform,
                        static=static,
                        topic=topic,
                    )
                except ValueError as exc:
                    raise bag.fail(str(exc), topic) from None
    if not images:
        raise bag.fail("no images: the tour has no views", image_topic)
    if camera is None:
        raise bag.fail("no camera info message: the camera model is unknown", info_topic)

    image_stamps = {stamp for stamp, *_ in images}
    for stamp, found in boxes.items():
        if stamp not in image_stamps:
            raise bag.fail(
                f"box message stamped {stamp} ns matches no image of {image_topic} (its header stamp must equal "
                "the image's)",
                detections_topic,
            )
        for box in found:
            problem = box.problem(camera.width, camera.height)
            if problem:
                raise bag.fail(f"box message stamped {stamp} ns: {problem}", detections_topic)

    views = []
    pose_topic = topics.tf if topics.tf in available else topics.tf_static
    for n, (stamp, frame_id, tour_image, size) in enumerate(images, start=1):
        if size != (camera.width, camera.height):
            raise bag.fail(
                f"image {n} is {size[0]}x{size[1]}, the camera info says {camera.width}x{camera.height}",
                image_topic,
            )
        camera_frame = frame_id.lstrip("/") or frames.camera
        try:
            pose = tree.lookup(frames.fixed, camera_frame, stamp)
        except TfLookupError as exc:
            absent = "" if topics.tf in available else f" (the bag has no {topics.tf} topic)"
            raise bag.fail(
                f"no camera pose for image {n} (stamp {stamp} ns, frame {camera_frame!r}) in fixed frame "
                f"{frames.fixed!r}: {exc}{absent}",
                pose_topic,
            ) from None
        views.append(TourView(stamp, tour_image, pose, boxes=boxes.get(stamp) if detections_topic else None))

    if object_position is None:
        try:
            object_pose = tree.lookup(frames.fixed, frames.object, images[0][0])
        except TfLookupError as exc:
            raise bag.fail(
                f"no position for the object frame {frames.object!r} in {frames.fixed!r} ({exc}); publish it on "
                f"{topics.tf_static} or give object.position in the sidecar",
                topics.tf_static,
            ) from None
        object_position = object_pose.translation

    tour = Tour(tuple(views), object_position, camera, frames)
    summary = BagSummary(
        path=bag.name,
        storage=_storage_name(bag.path),
        image_topic=image_topic,
        image_type=image_type,
        camera_info_topic=info_topic,
        views=len(views),
        tf_messages=tf_counts.get(topics.tf, 0),
        tf_static_messages=tf_counts.get(topics.tf_static, 0),
        detections_topic=detections_topic,
        views_with_box=sum(1 for view in views if view.best_box() is not None),
    )
    return ReadTour(tour, summary)


def _detections_topic(bag: _BagReader, available: Mapping[str, Any], wanted: str | None) -> str | None:
    """The box topic: the one named, else the default name or the bag's only Detection2DArray topic; None
    when the bag has none (a tour without boxes)."""
    if wanted is None:
        default = TourTopics.default_detections()
        candidates = sorted(t for t, i in available.items() if i.msgtype == DETECTIONS_TYPE)
        if default in available:
            wanted = default
        elif len(candidates) == 1:
            wanted = candidates[0]
        elif candidates:
            raise bag.fail(f"several box topics ({', '.join(candidates)}); name the one to use", default)
        else:
            return None
    elif wanted not in available:
        listing = ", ".join(f"{t} ({i.msgtype})" for t, i in sorted(available.items())) or "none"
        raise bag.fail(f"the bag has no box topic {wanted}; its topics: {listing}", wanted)
    bag.check_type(wanted, available[wanted].msgtype, (DETECTIONS_TYPE,))
    return wanted


def _storage_name(path: Path) -> str:
    files = [path] if path.is_file() else list(path.iterdir())
    if any(f.suffix == ".mcap" for f in files):
        return "mcap"
    if any(f.suffix == ".db3" for f in files):
        return "sqlite3"
    return "unknown"
