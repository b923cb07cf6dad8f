"""The MuJoCo suction weld bounds its torque as PyBullet's fixed constraint does.

PyBullet clamps every row of a fixed constraint, the three angular ones included, at the
constraint's ``maxForce`` (``btMultiBodyFixedConstraint::createConstraintRows``). The MuJoCo
weld is an equality constraint with no bound of its own; the backend lets it slip after a
step whose force (N) or torque (N·m) exceeded the bound. A torque beyond the bound turns the
held part in the cup: its orientation re-anchors, its position anchor stays.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.backends import available_backends, make_backend

pytestmark = pytest.mark.skipif("mujoco" not in available_backends(), reason="mujoco is not installed")

BOUND = 50.0
"""The weld's bound in the test: N for the force, N·m for the torque."""


def _welded_pair():
    """A static box with a 2 kg box welded under it (gravity, 19.6 N, is within the bound)."""
    backend = make_backend("mujoco")
    anchor = backend.add_box((0.1, 0.1, 0.1), (0.0, 0.0, 0.8))
    held = backend.add_box((0.1, 0.1, 0.1), (0.0, 0.0, 0.6), mass=2.0)
    handle = backend.create_fixed_constraint(anchor, -1, held, -1, max_force=BOUND)
    backend.step(20)
    slot = backend._welds[handle][0]
    body = int(backend._index(held).bodies[0])
    return backend, held, slot, body


def _turn_about_z(backend, body: int, torque: float, steps: int) -> None:
    backend._data.xfrc_applied[body, 5] = torque
    backend.step(steps)
    backend._data.xfrc_applied[body, 5] = 0.0


def _yaw(backend, held) -> float:
    x, y, z, w = backend.get_base_pose(held)[1]
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def test_a_torque_within_the_bound_is_held():
    backend, held, slot, body = _welded_pair()
    anchor = backend._model.eq_data[slot].copy()
    _turn_about_z(backend, body, 0.7 * BOUND, steps=20)  # the transient overshoots by ~12 %
    assert np.array_equal(backend._model.eq_data[slot], anchor)
    backend.step(40)  # the soft weld gave a little and springs back: nothing slipped
    assert abs(_yaw(backend, held)) < 0.01
    backend.close()


def test_a_torque_beyond_the_bound_turns_the_part_in_the_cup():
    backend, held, slot, body = _welded_pair()
    anchor = backend._model.eq_data[slot].copy()
    position = backend.get_base_pose(held)[0].copy()
    _turn_about_z(backend, body, 2.0 * BOUND, steps=20)
    data = backend._model.eq_data[slot]
    assert not np.array_equal(data[6:10], anchor[6:10])  # the orientation re-anchored
    np.testing.assert_array_equal(data[3:6], anchor[3:6])  # the position anchor stayed
    backend.step(40)  # the part stays turned in the cup, and hangs where it hung
    assert abs(_yaw(backend, held)) > 0.2
    assert np.linalg.norm(backend.get_base_pose(held)[0] - position) < 0.01
    backend.close()
