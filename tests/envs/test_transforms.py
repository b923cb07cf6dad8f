"""Quaternion helpers agree with rotation matrices."""

from __future__ import annotations

import numpy as np

from simjudge.envs.transforms import (
    quat_angle_between,
    quat_from_axis_angle,
    quat_from_matrix,
    quat_look_along,
    quat_multiply,
    quat_rotate,
    quat_to_matrix,
)


def test_matrix_round_trip_and_composition():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = quat_from_axis_angle(rng.normal(size=3))
        b = quat_from_axis_angle(rng.normal(size=3))
        back = quat_from_matrix(quat_to_matrix(a))
        assert quat_angle_between(a, back) < 1e-6
        np.testing.assert_allclose(
            quat_to_matrix(quat_multiply(a, b)), quat_to_matrix(a) @ quat_to_matrix(b), atol=1e-9
        )


def test_look_along_points_local_z():
    for axis in ([1, 0, 0], [0, 0, -1], [0.3, -0.5, 0.2]):
        q = quat_look_along(np.array(axis, dtype=float))
        z = quat_rotate(q, np.array([0.0, 0.0, 1.0]))
        np.testing.assert_allclose(z, np.array(axis) / np.linalg.norm(axis), atol=1e-9)
