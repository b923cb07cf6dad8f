"""Damped-least-squares inverse kinematics shared by the MuJoCo and SAPIEN backends.

Why here: both engines give forward kinematics and a geometric Jacobian but no IK
solver of PyBullet's kind (from the current joints, within limits, pulled towards a
rest pose), so one solver serves both, fed by each engine's own kinematics.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["Kinematics", "dls_inverse_kinematics", "quat_xyzw_matrix"]

Kinematics = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
"""Joint positions -> link origin (3), rotation (3x3) and geometric Jacobian (6, n)."""

_DAMPING = 1e-4
_REST_PULL = 0.1


def quat_xyzw_matrix(xyzw) -> np.ndarray:
    """Rotation matrix of an ``(x, y, z, w)`` quaternion."""
    x, y, z, w = (float(v) for v in xyzw)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def dls_inverse_kinematics(
    kinematics: Kinematics,
    start: np.ndarray,
    position,
    orientation,
    lower,
    upper,
    rest,
    max_iterations: int = 20,
    threshold: float = 1e-4,
) -> np.ndarray:
    """Joint positions putting a link at a pose: damped least squares from ``start``.

    Each iteration solves ``J Δq = e`` with damping, adds a null-space pull towards
    ``rest`` and clips to the limits; it stops when the error (position, plus the
    rotation vector when ``orientation`` is given) is below ``threshold``. It runs up
    to three times ``max_iterations`` steps: PyBullet's solver counts its own
    internal sweeps, so its iterations go further than one linearisation each.
    """
    q = np.asarray(start, dtype=float).copy()
    lo, hi, rest_q = np.asarray(lower, float), np.asarray(upper, float), np.asarray(rest, float)
    target = np.asarray(position, dtype=float)
    target_rotation = None if orientation is None else quat_xyzw_matrix(orientation)
    for _ in range(max(int(max_iterations), 1) * 3):
        origin, rotation, jac = kinematics(q)
        error = target - origin
        if target_rotation is not None:
            delta = target_rotation @ rotation.T
            turn = 0.5 * np.array([delta[2, 1] - delta[1, 2], delta[0, 2] - delta[2, 0], delta[1, 0] - delta[0, 1]])
            error = np.concatenate([error, turn])
        else:
            jac = jac[:3]
        if float(np.linalg.norm(error)) < threshold:
            break
        gram = jac @ jac.T + _DAMPING * np.eye(len(error))
        step = jac.T @ np.linalg.solve(gram, error)
        null = (np.eye(len(q)) - jac.T @ np.linalg.solve(gram, jac)) @ (rest_q - q)
        q = np.clip(q + step + _REST_PULL * null, lo, hi)
    return q
