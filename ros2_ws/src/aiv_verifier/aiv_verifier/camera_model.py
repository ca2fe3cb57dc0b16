"""The camera's focal length, from a ``sensor_msgs/CameraInfo``, for cues that turn pixels into metres.

Why the verifier needs it: the classical backend rules a category out by size (a box that spans 30 cm at the
robot's stand-off is no mug; see ``aiv_checks.checks.category``), and pixels become centimetres only
through the focal length. Its parameter ``category.hfov_deg`` describes the benchmark camera (42°); a robot's
camera is another one (a wide-angle RGB-D camera sees the same mug in half the pixels), and a wrong focal length
turns the size cue into confident wrong answers: too small for a backpack, too large for a mug. Camera drivers
publish their calibration next to the images, so the verifier node reads it when it is there and the parameter
stays the fallback (the benchmark's simulator publishes none, so benchmark runs use the parameter on both
transports).

ROS-free: the node passes the message fields; every check says in one line what is wrong with them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

#: Relative difference of aspect ratios below which a frame is taken as a resized copy of the calibrated one.
ASPECT_TOLERANCE = 0.01


@dataclass(frozen=True)
class PinholeCamera:
    """Horizontal focal length ``fx`` (pixels) of images ``width`` × ``height`` pixels."""

    width: int
    height: int
    fx: float

    def focal_for(self, width: int, height: int) -> float | None:
        """The focal length in pixels of a ``width`` × ``height`` frame from this camera: scaled when the frame
        is a resized copy of the calibrated one (same aspect ratio), None when it cannot be this camera's."""
        if width <= 0 or height <= 0:
            return None
        if (width, height) == (self.width, self.height):
            return self.fx
        calibrated, given = self.width / self.height, width / height
        if abs(given - calibrated) > ASPECT_TOLERANCE * calibrated:
            return None
        return self.fx * width / self.width

    def describe(self) -> str:
        hfov = 2.0 * math.degrees(math.atan(self.width / (2.0 * self.fx)))
        return f"fx {self.fx:.1f} px for {self.width}x{self.height} (horizontal field of view {hfov:.1f} deg)"


def camera_from_info(
    width: int,
    height: int,
    k: Sequence[float],
    binning_x: int = 0,
    binning_y: int = 0,
    roi_width: int = 0,
    roi_height: int = 0,
) -> PinholeCamera:
    """The camera of a CameraInfo's fields (REP 104: binning divides, a region of interest crops; neither
    changes what one pixel of the delivered image spans beyond that). Raises ValueError saying what is wrong:
    an uncalibrated driver's all-zero K, a non-positive or non-finite focal length, a size of zero."""
    if len(k) != 9:
        raise ValueError(f"camera_info K has {len(k)} entries, expected 9 (row-major 3x3)")
    fx = float(k[0])
    if not math.isfinite(fx) or fx <= 0.0:
        raise ValueError(
            f"camera_info K[0] (fx) is {fx:g}: the camera is not calibrated (an uncalibrated driver sends zeros)"
        )
    bin_x, bin_y = max(1, int(binning_x)), max(1, int(binning_y))
    full_width = int(roi_width) if roi_width > 0 else int(width)
    full_height = int(roi_height) if roi_height > 0 else int(height)
    if full_width <= 0 or full_height <= 0:
        raise ValueError(f"camera_info size is {width}x{height}: it describes no image")
    return PinholeCamera(width=full_width // bin_x, height=full_height // bin_y, fx=fx / bin_x)


class LatestCamera:
    """The camera of the newest valid CameraInfo (topic callbacks write, the episode thread reads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._camera: PinholeCamera | None = None

    def put(self, camera: PinholeCamera) -> None:
        with self._lock:
            self._camera = camera

    def get(self) -> PinholeCamera | None:
        with self._lock:
            return self._camera

    def focal_for(self, width: int, height: int) -> float | None:
        """The focal length for a frame of this size, None when no usable CameraInfo has come."""
        camera = self.get()
        return None if camera is None else camera.focal_for(width, height)
