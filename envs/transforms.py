"""Quaternion and axis-angle helpers (numpy, ``(x, y, z, w)`` convention).

Kept here so that the env, scripted policies and planners share one
implementation instead of each asking a simulator to do the maths.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "quat_multiply",
    "quat_conjugate",
    "quat_from_axis_angle",
    "quat_to_matrix",
    "quat_from_matrix",
    "quat_rotate",
    "quat_angle_between",
    "quat_look_along",
    "quat_align_z",
    "rpy_matrix",
]


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    """Inverse of a unit quaternion."""
    return np.array([-q[0], -q[1], -q[2], q[3]])


def quat_from_axis_angle(rotvec: np.ndarray) -> np.ndarray:
    """Quaternion of a rotation vector (axis * angle in radians)."""
    angle = float(np.linalg.norm(rotvec))
    if angle < 1e-12:
        return np.array([0.0, 0.0, 0.0, 1.0])
    axis = np.asarray(rotvec) / angle
    s = math.sin(angle / 2.0)
    return np.array([axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2.0)])


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """3x3 rotation matrix of a unit quaternion."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternion of a 3x3 rotation matrix."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [s / 4, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, s / 4, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, s / 4, (m[1, 0] - m[0, 1]) / s]
    quat = np.asarray(q)
    return quat / np.linalg.norm(quat)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector ``v`` by quaternion ``q``."""
    return quat_to_matrix(q) @ np.asarray(v, dtype=float)


def quat_angle_between(a: np.ndarray, b: np.ndarray) -> float:
    """Smallest rotation angle (rad) taking orientation ``a`` to ``b``."""
    dot = abs(float(np.dot(a, b)))
    return 2.0 * math.acos(min(1.0, dot))


def quat_look_along(z_axis: np.ndarray, x_hint: np.ndarray | None = None) -> np.ndarray:
    """Orientation whose local +z points along ``z_axis`` (the gripper's approach axis)."""
    z = np.asarray(z_axis, dtype=float)
    z = z / np.linalg.norm(z)
    hint = np.array([1.0, 0.0, 0.0]) if x_hint is None else np.asarray(x_hint, dtype=float)
    if abs(float(np.dot(hint, z))) > 0.95:
        hint = np.array([0.0, 1.0, 0.0]) if abs(z[1]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x = hint - np.dot(hint, z) * z
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return quat_from_matrix(np.column_stack([x, y, z]))


def quat_align_z(orientation: np.ndarray, z_axis: np.ndarray) -> np.ndarray:
    """``orientation`` turned by the smallest rotation that points its local +z along ``z_axis``.

    Why not :func:`quat_look_along`: keeping the roll of the current orientation
    avoids needless wrist spins when a controller re-aims the gripper.
    """
    target = np.asarray(z_axis, dtype=float)
    target = target / np.linalg.norm(target)
    current = quat_rotate(orientation, np.array([0.0, 0.0, 1.0]))
    axis = np.cross(current, target)
    sin = float(np.linalg.norm(axis))
    cos = float(np.dot(current, target))
    if sin < 1e-9:
        if cos > 0:
            return np.asarray(orientation, dtype=float)
        perpendicular = quat_rotate(orientation, np.array([1.0, 0.0, 0.0]))
        return quat_multiply(quat_from_axis_angle(perpendicular * math.pi), orientation)
    turn = quat_from_axis_angle(axis / sin * math.atan2(sin, cos))
    return quat_multiply(turn, orientation)


def rpy_matrix(rpy: tuple[float, ...] | list[float]) -> np.ndarray:
    """Rotation matrix of URDF fixed-axis roll, pitch, yaw: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (
        math.cos(r),
        math.sin(r),
        math.cos(p),
        math.sin(p),
        math.cos(y),
        math.sin(y),
    )
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )
