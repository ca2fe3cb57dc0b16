"""An object tour: every view around one object (image, camera pose, stamp), the object's position and the
camera model, independent of how it is stored.

A :class:`Tour` is what a tour bag holds (see :mod:`.tour_bag` for the topics and frames) and what
``aiv-bag import`` turns into a PInVerify episode. A view may carry the object's boxes in that image
(:class:`TourBox`, what a detector publishes; export writes the dataset's ground-truth box there). Poses
live in the bag's fixed frame (``map`` by default, z up per REP-103); :mod:`.geometry` converts them to and
from the dataset's y-up frame.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray
from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from .geometry import UP_AXES, Transform, Vector3

#: ``sensor_msgs/Image`` encodings the verifier can use (8-bit colour or grey), and their channel counts.
RAW_ENCODINGS: dict[str, int] = {"rgb8": 3, "bgr8": 3, "rgba8": 4, "bgra8": 4, "mono8": 1}
#: ``sensor_msgs/CompressedImage`` formats that can be decoded (as written by image_transport or by hand).
COMPRESSED_FORMATS: tuple[str, ...] = ("png", "jpeg")
#: PIL modes of decoded compressed images that hold 8-bit colour or grey pixels.
_USABLE_PIL_MODES = ("1", "L", "LA", "P", "PA", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr")


class TourError(Exception):
    """A tour bag, sidecar or episode that cannot be used.

    The message names the bag (or file), the topic when one is concerned, and what is wrong, so that the
    one-line report of ``aiv-bag`` says where to look.
    """

    def __init__(self, problem: str, *, bag: str | None = None, topic: str | None = None) -> None:
        self.problem = problem
        self.bag = bag
        self.topic = topic
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.bag, f"topic {self.topic}" if self.topic else None) if p]
        return ": ".join([*parts, self.problem])


@dataclass(frozen=True)
class TourTopics:
    """Topic names of a tour bag.

    ``image`` / ``camera_info`` None means the defaults: export writes ``/camera/image_raw`` (or
    ``/camera/image_raw/compressed``) and ``/camera/camera_info``; import takes the default name when the bag
    has it, else the bag's only topic of the right type (and the camera info beside the image topic).
    """

    image: str | None = None
    camera_info: str | None = None
    tf: str = "/tf"
    tf_static: str = "/tf_static"
    #: ``aiv_interfaces/msg/Detection2DArray`` boxes of the object, one message per image stamp. None: export
    #: writes :meth:`default_detections` when it writes boxes; import reads it when the bag has it.
    detections: str | None = None

    @staticmethod
    def default_image() -> str:
        return "/camera/image_raw"

    @staticmethod
    def default_detections() -> str:
        return "/detections"

    @staticmethod
    def compressed_image_default() -> str:
        return "/camera/image_raw/compressed"

    @staticmethod
    def default_camera_info() -> str:
        return "/camera/camera_info"


@dataclass(frozen=True)
class TourFrames:
    """Frame names and the fixed frame's up axis.

    ``fixed``: the world frame poses are looked up in; ``object``: the tf frame at the object's centre;
    ``camera``: the optical frame of the images (used when an image header has no frame id);
    ``base``: the robot frame export uses when it writes a camera mount (``camera_chain="base"``).
    """

    fixed: str = "map"
    object: str = "object"
    camera: str = "camera_optical"
    base: str = "base_link"
    up_axis: str = "z"

    def __post_init__(self) -> None:
        if self.up_axis not in UP_AXES:
            raise ValueError(f"up axis must be one of {UP_AXES}, got {self.up_axis!r}")


#: The default names, shared (both classes are immutable).
DEFAULT_TOPICS = TourTopics()
DEFAULT_FRAMES = TourFrames()


@dataclass(frozen=True)
class CameraModel:
    """Pinhole camera of a tour (``sensor_msgs/CameraInfo``: size and K; distortion kept, not applied)."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    distortion_model: str = ""
    distortion: tuple[float, ...] = ()

    @property
    def hfov_deg(self) -> float:
        return math.degrees(2.0 * math.atan(self.width / (2.0 * self.fx)))

    @property
    def vfov_deg(self) -> float:
        return math.degrees(2.0 * math.atan(self.height / (2.0 * self.fy)))

    def check(self) -> str | None:
        """A reason this model is unusable, or None."""
        if self.width <= 0 or self.height <= 0:
            return f"image size {self.width}x{self.height} is empty"
        values = (self.fx, self.fy, self.cx, self.cy)
        if not all(math.isfinite(v) for v in values) or self.fx <= 0 or self.fy <= 0:
            return f"focal lengths fx={self.fx}, fy={self.fy} must be positive and finite"
        return None


@dataclass(frozen=True)
class TourImage:
    """One image as stored in the bag: raw rows (``sensor_msgs/Image``) or a compressed file."""

    data: bytes = field(repr=False)
    encoding: str  # Image: the encoding; CompressedImage: the format string
    compressed: bool = False
    width: int = 0  # raw images only
    height: int = 0
    step: int = 0

    @classmethod
    def from_rgb(cls, rgb: NDArray[np.uint8], compression: str | None = None) -> TourImage:
        """An H x W x 3 uint8 array as ``rgb8`` rows, or compressed as "png" (lossless) or "jpeg"."""
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise ValueError(f"expected an H x W x 3 uint8 image, got {rgb.shape} {rgb.dtype}")
        if compression is None:
            h, w = rgb.shape[:2]
            return cls(np.ascontiguousarray(rgb).tobytes(), "rgb8", False, w, h, 3 * w)
        if compression not in COMPRESSED_FORMATS:
            raise ValueError(f"compression must be one of {COMPRESSED_FORMATS}, got {compression!r}")
        buffer = io.BytesIO()
        image = PILImage.fromarray(rgb, "RGB")
        if compression == "png":
            image.save(buffer, format="PNG", compress_level=6)
        else:
            image.save(buffer, format="JPEG", quality=95)
        return cls(buffer.getvalue(), compression, True)

    def to_rgb(self) -> NDArray[np.uint8]:
        """Decode to H x W x 3 uint8; ValueError with the reason when the verifier cannot use the image."""
        if self.compressed:
            return self._decode_compressed()
        return self._decode_raw()

    def _decode_raw(self) -> NDArray[np.uint8]:
        channels = RAW_ENCODINGS.get(self.encoding.lower())
        if channels is None:
            raise ValueError(
                f"image encoding {self.encoding!r} cannot be used by the verifier (expected one of "
                f"{', '.join(RAW_ENCODINGS)})"
            )
        w, h, step = self.width, self.height, self.step
        if w <= 0 or h <= 0:
            raise ValueError(f"image size {w}x{h} is empty")
        if step < w * channels:
            raise ValueError(f"row step {step} is shorter than {w} pixels of {self.encoding}")
        if len(self.data) < step * h:
            raise ValueError(
                f"image data has {len(self.data)} bytes, expected {step * h} ({h} rows of {step})"
            )
        rows = np.frombuffer(self.data, dtype=np.uint8, count=step * h).reshape(h, step)
        pixels = rows[:, : w * channels].reshape(h, w, channels)
        encoding = self.encoding.lower()
        if channels == 1:
            return np.repeat(pixels, 3, axis=2)
        rgb = pixels[:, :, :3]
        if encoding.startswith("bgr"):
            rgb = rgb[:, :, ::-1]
        return np.ascontiguousarray(rgb)

    def _decode_compressed(self) -> NDArray[np.uint8]:
        fmt = self.encoding.lower()
        if "compresseddepth" in fmt:
            raise ValueError(
                f"compressed depth image (format {self.encoding!r}) cannot be used by the verifier"
            )
        if not any(name in fmt for name in (*COMPRESSED_FORMATS, "jpg")):
            raise ValueError(
                f"compressed format {self.encoding!r} cannot be decoded (expected png or jpeg, as written by "
                "image_transport)"
            )
        try:
            with PILImage.open(io.BytesIO(self.data)) as image:
                image.load()
                if image.mode not in _USABLE_PIL_MODES:
                    raise ValueError(
                        f"compressed image decodes to pixel mode {image.mode!r}; the verifier needs 8-bit "
                        "colour or grey"
                    )
                return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
        except (UnidentifiedImageError, OSError, SyntaxError, EOFError) as exc:
            raise ValueError(f"compressed image data cannot be decoded ({exc})") from None


@dataclass(frozen=True)
class TourBox:
    """One box of the object in a view's image: pixel corners (xyxy, origin top-left), score in [0, 1], label."""

    x_min: float
    y_min: float
    x_max: float
    y_max: float
    score: float = 1.0
    label: str = ""

    @property
    def xyxy(self) -> tuple[float, float, float, float]:
        return (self.x_min, self.y_min, self.x_max, self.y_max)

    def problem(self, width: int, height: int) -> str | None:
        """Why this box cannot be the object's box in a ``width`` x ``height`` image, or None."""
        values = (*self.xyxy, self.score)
        if not all(math.isfinite(v) for v in values):
            return f"box {list(self.xyxy)} score {self.score} has a non-finite value"
        if not 0.0 <= self.score <= 1.0:
            return f"box score {self.score} is outside [0, 1]"
        if self.x_max < self.x_min or self.y_max < self.y_min:
            return f"box {list(self.xyxy)} is not [x_min, y_min, x_max, y_max] with min <= max"
        if self.x_min < 0 or self.y_min < 0 or self.x_max > width or self.y_max > height:
            return f"box {list(self.xyxy)} lies outside the {width}x{height} image"
        return None


@dataclass(frozen=True)
class TourView:
    """One view: when it was taken, what it shows and where the camera's optical frame was.

    ``pose`` is ``fixed <- optical``. ``label`` is informative only (export writes the dataset tag there, via
    the sidecar), never used to place the view. ``boxes``: the object's boxes in this image (best first is
    not required); None when the tour has no box message for the view, empty when one says "not seen".
    """

    stamp_ns: int
    image: TourImage
    pose: Transform
    label: str | None = None
    boxes: tuple[TourBox, ...] | None = None

    def best_box(self) -> TourBox | None:
        """The box of highest score (the first of equals), or None."""
        if not self.boxes:
            return None
        return max(self.boxes, key=lambda box: box.score)


@dataclass(frozen=True)
class Tour:
    """Every view around one object, in time order, with the object's position in the fixed frame."""

    views: tuple[TourView, ...]
    object_position: Vector3
    camera: CameraModel
    frames: TourFrames = DEFAULT_FRAMES

    @property
    def has_boxes(self) -> bool:
        """Whether the tour carries box messages (for any view)."""
        return any(view.boxes is not None for view in self.views)

    def with_views(self, views: tuple[TourView, ...]) -> Tour:
        return replace(self, views=views)
