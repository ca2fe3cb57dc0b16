"""Rigid transforms, quaternions and the one mapping between a bag's world frame and the dataset's.

Two conventions meet in a tour:

* **The dataset** (PInVerify meta.json, spec §2.2) stores camera positions and rotations in the simulator's
  world frame: Habitat, **y up**, x right, z towards the viewer; the camera looks along its own -z with y up.
  Azimuths around the object are ``theta = atan2(z - g_z, x - g_x)``.
* **A bag** follows ROS: transforms on /tf carry ``geometry_msgs/Transform`` (quaternions x, y, z, w), the
  fixed frame is **z up** (REP-103: x forward, y left), and an image's frame is the camera's *optical* frame
  (REP-103 suffix ``_optical``: z forward along the view, x right, y down in the image).

The mapping (:data:`ROS_FROM_HABITAT`) is a proper rotation: ROS ``(x, y, z) = (-z_h, -x_h, y_h)``, i.e.
Habitat's forward (-z) is ROS +x, Habitat's right (+x) is ROS -y and up is up. Being a rotation it keeps
handedness, so "the agent's left" stays its left: +theta in the dataset is clockwise seen from above in the
ROS frame, which is exactly the sign flip the spec warns about. ``aiv-bag export`` writes z-up bags with this
mapping; ``aiv-bag import`` reads z-up bags (a robot's map) by default and undoes it, so a round trip
reproduces every azimuth to rounding. A bag recorded directly in a y-up simulator frame is imported with
``up_axis: y`` (identity mapping).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Matrix = NDArray[np.float64]
Vector3 = tuple[float, float, float]
QuatXYZW = tuple[float, float, float, float]

#: Up axes a bag's fixed frame may have.
UP_AXES: tuple[str, ...] = ("z", "y")

#: Habitat world coordinates -> ROS (REP-103, z up) world coordinates: v_ros = ROS_FROM_HABITAT @ v_hab.
ROS_FROM_HABITAT: Matrix = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])

#: Axes of a ROS optical frame expressed in a Habitat camera frame (x right, y down, z forward vs. x right,
#: y up, z backward): a half turn about x, its own inverse.
HABITAT_CAMERA_FROM_OPTICAL: Matrix = np.diag([1.0, -1.0, -1.0])


def dataset_from_world(up_axis: str) -> Matrix:
    """Rotation taking a bag's world coordinates to dataset (Habitat, y-up) coordinates."""
    if up_axis == "z":
        return ROS_FROM_HABITAT.T.copy()
    if up_axis == "y":
        return np.eye(3)
    raise ValueError(f"up axis must be one of {UP_AXES}, got {up_axis!r}")


def quat_to_matrix(q: Sequence[float]) -> Matrix:
    """Rotation matrix of a quaternion given as (x, y, z, w); normalised first."""
    x, y, z, w = (float(v) for v in q)
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if not n > 1e-9 or not math.isfinite(n):
        raise ValueError(f"quaternion {list(q)} has no direction (norm {n})")
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(m: Matrix) -> QuatXYZW:
    """Unit quaternion (x, y, z, w) of a rotation matrix, with w >= 0."""
    trace = float(m[0, 0] + m[1, 1] + m[2, 2])
    if trace > 0.0:
        s = math.sqrt(trace + 1.0) * 2.0
        w, x = 0.25 * s, (m[2, 1] - m[1, 2]) / s
        y, z = (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
        w, x = (m[2, 1] - m[1, 2]) / s, 0.25 * s
        y, z = (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
        w, x = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s
        y, z = 0.25 * s, (m[1, 2] + m[2, 1]) / s
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
        w, x = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s
        y, z = (m[1, 2] + m[2, 1]) / s, 0.25 * s
    sign = -1.0 if w < 0 else 1.0
    n = math.sqrt(x * x + y * y + z * z + w * w)
    return (sign * x / n, sign * y / n, sign * z / n, sign * w / n)


def axis_angle_matrix(axis: Sequence[float], angle: float) -> Matrix:
    """Rotation by ``angle`` radians about ``axis`` (right-hand rule)."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    s = math.sin(angle / 2.0)
    return quat_to_matrix((a[0] * s, a[1] * s, a[2] * s, math.cos(angle / 2.0)))


def slerp(q0: Sequence[float], q1: Sequence[float], t: float) -> QuatXYZW:
    """Spherical interpolation between two (x, y, z, w) quaternions, the short way round."""
    a = np.asarray(q0, dtype=np.float64) / np.linalg.norm(q0)
    b = np.asarray(q1, dtype=np.float64) / np.linalg.norm(q1)
    dot = float(a @ b)
    if dot < 0.0:
        b, dot = -b, -dot
    if dot > 0.9995:
        out = a + t * (b - a)
    else:
        theta = math.acos(dot)
        out = (math.sin((1 - t) * theta) * a + math.sin(t * theta) * b) / math.sin(theta)
    out = out / np.linalg.norm(out)
    return (float(out[0]), float(out[1]), float(out[2]), float(out[3]))


@dataclass(frozen=True)
class Transform:
    """A rigid transform ``parent <- child``: p_parent = rotation @ p_child + translation."""

    translation: Vector3
    rotation: QuatXYZW = (0.0, 0.0, 0.0, 1.0)

    @property
    def matrix(self) -> Matrix:
        return quat_to_matrix(self.rotation)

    @classmethod
    def from_matrix(cls, rotation: Matrix, translation: Sequence[float] | Matrix) -> Transform:
        t = tuple(float(v) for v in translation)
        return cls((t[0], t[1], t[2]), matrix_to_quat(rotation))

    def compose(self, other: Transform) -> Transform:
        """``self * other``: first ``other`` (child of self's child), then ``self``."""
        r = self.matrix
        t = r @ np.asarray(other.translation) + np.asarray(self.translation)
        return Transform.from_matrix(r @ other.matrix, t)

    def inverse(self) -> Transform:
        r = self.matrix
        return Transform.from_matrix(r.T, -(r.T @ np.asarray(self.translation)))

    def interpolate(self, other: Transform, t: float) -> Transform:
        """Linear in translation, spherical in rotation; ``t`` = 0 gives self, 1 gives other."""
        a, b = np.asarray(self.translation), np.asarray(other.translation)
        p = a + t * (b - a)
        return Transform((float(p[0]), float(p[1]), float(p[2])), slerp(self.rotation, other.rotation, t))

    def is_finite(self) -> bool:
        return all(math.isfinite(v) for v in (*self.translation, *self.rotation))


def dataset_pose(world_pose: Transform, up_axis: str) -> tuple[Vector3, tuple[float, float, float, float]]:
    """Camera position and rotation (w, x, y, z) in dataset coordinates from an optical-frame pose in a bag's
    world frame (``world <- optical``)."""
    c = dataset_from_world(up_axis)
    p = c @ np.asarray(world_pose.translation)
    r = c @ world_pose.matrix @ HABITAT_CAMERA_FROM_OPTICAL
    x, y, z, w = matrix_to_quat(r)
    return (float(p[0]), float(p[1]), float(p[2])), (w, x, y, z)


def world_pose(position: Sequence[float], rotation_wxyz: Sequence[float] | None, up_axis: str) -> Transform:
    """Inverse of :func:`dataset_pose`: the optical frame's pose in a bag's world frame."""
    c = dataset_from_world(up_axis).T
    p = c @ np.asarray(position, dtype=np.float64)
    if rotation_wxyz is None:
        rotation = np.eye(3)
    else:
        w, x, y, z = rotation_wxyz
        rotation = quat_to_matrix((x, y, z, w))
    r = c @ rotation @ HABITAT_CAMERA_FROM_OPTICAL
    return Transform.from_matrix(r, p)


def dataset_point(point: Sequence[float], up_axis: str) -> Vector3:
    """A point of a bag's world frame in dataset coordinates."""
    p = dataset_from_world(up_axis) @ np.asarray(point, dtype=np.float64)
    return (float(p[0]), float(p[1]), float(p[2]))


def world_point(point: Sequence[float], up_axis: str) -> Vector3:
    """A dataset point in a bag's world frame."""
    p = dataset_from_world(up_axis).T @ np.asarray(point, dtype=np.float64)
    return (float(p[0]), float(p[1]), float(p[2]))


def look_at_rotation_wxyz(
    position: Sequence[float], target: Sequence[float]
) -> tuple[float, float, float, float]:
    """Dataset (Habitat) camera rotation that looks from ``position`` at ``target`` with y up (no roll).

    Used by export for a view that has a position but no stored rotation.
    """
    forward = np.asarray(target, dtype=np.float64) - np.asarray(position, dtype=np.float64)
    if float(np.linalg.norm(forward)) < 1e-9:
        return (1.0, 0.0, 0.0, 0.0)
    back = -forward / np.linalg.norm(forward)
    up_hint = np.array([0.0, 1.0, 0.0])
    right = np.cross(up_hint, back)
    if float(np.linalg.norm(right)) < 1e-9:  # looking straight up or down
        right = np.array([1.0, 0.0, 0.0])
    right = right / np.linalg.norm(right)
    up = np.cross(back, right)
    x, y, z, w = matrix_to_quat(np.column_stack([right, up, back]))
    return (w, x, y, z)


def object_in_view(
    camera: Transform, point: Sequence[float], hfov_deg: float, vfov_deg: float, near: float = 0.05
) -> bool:
    """Whether ``point`` (world frame) is inside the frustum of an optical-frame camera pose (App. A test)."""
    local = camera.matrix.T @ (np.asarray(point, dtype=np.float64) - np.asarray(camera.translation))
    depth = float(local[2])
    if depth < near:
        return False
    return abs(float(local[0])) <= depth * math.tan(math.radians(hfov_deg) / 2) and abs(
        float(local[1])
    ) <= depth * math.tan(math.radians(vfov_deg) / 2)
