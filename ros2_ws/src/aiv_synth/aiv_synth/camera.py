"""The benchmark camera: intrinsics, pose toward the goal, pitch rule and frustum test (paper A.1, A.5, A.6).

The synthetic captures must be interchangeable with the HM3D ones for everything downstream (GT boxes,
crops, sector geometry), so the camera reproduces the benchmark's numbers exactly: 360x640 portrait,
HFOV 42deg, VFOV = 2*atan(tan 21deg * 640/360) = 68.62deg, fx = fy ~ 469 px, principal point (179.5, 319.5),
sensor 1.31 m above the floor. Frames follow Habitat: world y up; the camera looks along its local -z with
+x to the right and +y up, and ``camera_rotation_quat_wxyz`` is the camera-to-world rotation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import aiv_dataset.vocabulary as benchmark
import numpy as np
from aiv_dataset.meta import CameraIntrinsics

SENSOR_HEIGHT = 1.31
AGENT_HEIGHT = 1.41
AGENT_RADIUS = 0.17
NEAR_CLIP = 0.05
FAR_CLIP = 100.0
#: |goal height - sensor height| above which one look_up / look_down step is taken (paper Eq. 14).
PITCH_THRESHOLD = 0.3
#: Size of one look_up / look_down step. The paper leaves it to "the Habitat agent configuration"; we use
#: 30 degrees (the tilt of Habitat's HM3D navigation configs), which keeps floor objects inside the frame
#: from the near ring. One step only, as in the paper, so extreme goals can still fail the frustum test.
PITCH_STEP_DEG = 30.0


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole intrinsics derived from image size and horizontal field of view (paper Eq. 5-6).

    Unlike :class:`aiv_dataset.meta.CameraIntrinsics`, which keeps the VFOV that meta.json rounds to two
    decimals, the renderer derives the VFOV exactly, so rays and projections carry no rounding error.
    """

    width: int
    height: int
    hfov_deg: float

    @classmethod
    def of(cls, camera: CameraIntrinsics) -> Intrinsics:
        """The renderer's model of a dataset camera: its size and HFOV (the VFOV is re-derived)."""
        return cls(width=camera.width, height=camera.height, hfov_deg=camera.hfov_deg)

    @property
    def vfov_deg(self) -> float:
        half = math.atan(math.tan(math.radians(self.hfov_deg) / 2.0) * self.height / self.width)
        return math.degrees(2.0 * half)

    @property
    def fx(self) -> float:
        return (self.width / 2.0) / math.tan(math.radians(self.hfov_deg) / 2.0)

    @property
    def fy(self) -> float:
        return (self.height / 2.0) / math.tan(math.radians(self.vfov_deg) / 2.0)

    @property
    def cx(self) -> float:
        return (self.width - 1) / 2.0

    @property
    def cy(self) -> float:
        return (self.height - 1) / 2.0

    @property
    def tan_half_h(self) -> float:
        return math.tan(math.radians(self.hfov_deg) / 2.0)

    @property
    def tan_half_v(self) -> float:
        return math.tan(math.radians(self.vfov_deg) / 2.0)

    def to_meta(self) -> dict[str, float | int]:
        """The ``camera_intrinsics`` block of meta.json."""
        return {
            "width": self.width,
            "height": self.height,
            "hfov_deg": round(self.hfov_deg, 2),
            "vfov_deg": round(self.vfov_deg, 2),
        }


#: The benchmark camera (:data:`aiv_dataset.vocabulary.BENCHMARK_INTRINSICS`) as the renderer models it.
BENCHMARK_INTRINSICS = Intrinsics.of(benchmark.BENCHMARK_INTRINSICS)


def pitch_action(goal_y: float, floor_y: float, sensor_height: float = SENSOR_HEIGHT) -> str:
    """``look_up`` / ``look_down`` / ``none`` from the goal's height above the sensor (paper Eq. 14)."""
    h_diff = goal_y - (floor_y + sensor_height)
    if h_diff > PITCH_THRESHOLD:
        return "look_up"
    if h_diff < -PITCH_THRESHOLD:
        return "look_down"
    return "none"


def pitch_for_action(action: str, step_deg: float = PITCH_STEP_DEG) -> float:
    """Camera pitch in radians after the pitch action (positive looks up)."""
    return {"look_up": 1.0, "look_down": -1.0}.get(action, 0.0) * math.radians(step_deg)


@dataclass(frozen=True)
class CameraPose:
    """A camera position and its orthonormal axes in world coordinates (y up)."""

    position: np.ndarray  # (3,)
    forward: np.ndarray  # (3,) viewing direction
    right: np.ndarray  # (3,)
    up: np.ndarray  # (3,)

    @classmethod
    def looking_at(
        cls, position: Sequence[float] | np.ndarray, goal: Sequence[float] | np.ndarray, pitch: float
    ) -> CameraPose:
        """Yaw toward the goal in the horizontal plane, then tilt by ``pitch`` (radians, + = up).

        Only the yaw aims at the goal; the pitch is the discrete look action, so a goal far above or below
        the sensor ends up off-centre or outside the frustum, as in the benchmark.
        """
        pos = np.asarray(position, dtype=np.float64)
        dx, dz = goal[0] - pos[0], goal[2] - pos[2]
        norm = math.hypot(dx, dz)
        hx, hz = (dx / norm, dz / norm) if norm > 1e-9 else (0.0, -1.0)
        cp, sp = math.cos(pitch), math.sin(pitch)
        forward = np.array([hx * cp, sp, hz * cp])
        right = np.array([-hz, 0.0, hx])
        up = np.cross(right, forward)
        return cls(pos, forward, right, up)

    def rotation_matrix(self) -> np.ndarray:
        """Camera-to-world rotation: columns are the camera's +x (right), +y (up), +z (backward)."""
        return np.stack([self.right, self.up, -self.forward], axis=1)

    def quaternion_wxyz(self) -> list[float]:
        """Camera-to-world rotation as a unit quaternion [w, x, y, z] with w >= 0."""
        return matrix_to_quaternion(self.rotation_matrix())

    def to_camera(self, point: Sequence[float]) -> tuple[float, float, float]:
        """(depth along forward, offset right, offset up) of a world point (paper Eq. 10-12)."""
        v = np.asarray(point, dtype=np.float64) - self.position
        return float(self.forward @ v), float(self.right @ v), float(self.up @ v)

    def project(self, point: Sequence[float], intr: Intrinsics = BENCHMARK_INTRINSICS) -> tuple[float, float]:
        """Pixel coordinates (column, row) of a world point in front of the camera."""
        d, rx, ry = self.to_camera(point)
        return intr.cx + intr.fx * rx / d, intr.cy - intr.fy * ry / d

    def in_frustum(self, point: Sequence[float], intr: Intrinsics = BENCHMARK_INTRINSICS) -> bool:
        """Paper Eq. 13: near < d < far, |r_x| <= d tan(HFOV/2), |r_y| <= d tan(VFOV/2)."""
        d, rx, ry = self.to_camera(point)
        return NEAR_CLIP < d < FAR_CLIP and abs(rx) <= d * intr.tan_half_h and abs(ry) <= d * intr.tan_half_v

    def ray_directions(self, intr: Intrinsics = BENCHMARK_INTRINSICS) -> np.ndarray:
        """Un-normalised world ray per pixel centre, shape (H, W, 3), float32; forward component is 1."""
        cols = ((np.arange(intr.width, dtype=np.float64) - intr.cx) / intr.fx).astype(np.float32)
        rows = (-(np.arange(intr.height, dtype=np.float64) - intr.cy) / intr.fy).astype(np.float32)
        out = np.empty((intr.height, intr.width, 3), dtype=np.float32)
        for i in range(3):
            out[..., i] = (
                cols[None, :] * np.float32(self.right[i])
                + rows[:, None] * np.float32(self.up[i])
                + np.float32(self.forward[i])
            )
        return out


def matrix_to_quaternion(m: np.ndarray) -> list[float]:
    """Rotation matrix to [w, x, y, z] (Shepperd's method; sign fixed so that w >= 0)."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        s = math.sqrt(trace + 1.0) * 2.0
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    if q[0] < 0.0:
        q = [-c for c in q]
    norm = math.sqrt(sum(c * c for c in q))
    return [c / norm for c in q]
