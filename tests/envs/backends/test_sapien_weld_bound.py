"""The SAPIEN suction weld holds at most its bound, in N and N·m, as PyBullet's does.

PyBullet clamps every row of its fixed constraint at ``maxForce``. PhysX reads the SAPIEN
drive's limits as impulses per timestep, so a limit of ``max_force`` held about
``max_force / timestep`` (a 1,000 kg box hung from a "300 N" weld at 100 Hz). The backend
converts the bound; these tests hang boxes just under and just over it from a static anchor,
and twist a held box with torques just under and over it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from simjudge.envs.backends import available_backends, make_backend

pytestmark = pytest.mark.skipif("sapien" not in available_backends(), reason="sapien is not installed")


def _hung(mass: float, bound: float, half: float = 0.05):
    """A static box with a box of ``mass`` welded under it (no contact between them)."""
    backend = make_backend("sapien")
    anchor = backend.add_box((0.05, 0.05, 0.05), (0.0, 0.0, 2.0))
    held = backend.add_box((half, half, half), (0.0, 0.0, 1.5), mass=mass)
    backend.create_fixed_constraint(anchor, -1, held, -1, max_force=bound)
    return backend, held


@pytest.mark.parametrize(("mass", "falls"), [(27.0, False), (29.5, False), (31.5, True), (40.0, True)],
                         ids=["265N", "289N", "309N", "392N"])
def test_the_weld_carries_a_weight_up_to_its_bound(mass, falls):
    backend, held = _hung(mass, bound=300.0)
    start = backend.get_base_pose(held)[0][2]
    backend.step(100)
    drop = start - backend.get_base_pose(held)[0][2]
    if falls:
        assert drop > 0.1, f"a {mass * 9.81:.0f} N weight stayed up on a 300 N weld"
    else:
        assert drop < 0.005, f"a {mass * 9.81:.0f} N weight sank {drop:.3f} m on a 300 N weld"


@pytest.mark.parametrize(("torque", "turns"), [(900.0, False), (1100.0, True), (1500.0, True)],
                         ids=["900Nm", "1100Nm", "1500Nm"])
def test_the_weld_resists_a_torque_up_to_its_bound(torque, turns):
    # a heavy wide box (3 kg·m² about z): the torques turn it slowly, far from PhysX's
    # angular velocity cap; its weight (490 N) is within the 1,000 N bound
    backend, held = _hung(50.0, bound=1000.0, half=0.3)
    component = backend._body(held).links[0]
    for _ in range(10):
        component.add_force_torque(np.zeros(3), np.array([0.0, 0.0, torque]))
        backend.step(1)
    w = float(backend.get_base_pose(held)[1][3])  # quaternions are x, y, z, w
    angle = 2.0 * math.acos(min(1.0, abs(w)))
    if turns:
        assert angle > 0.15, f"{torque:.0f} N·m turned the box only {angle:.3f} rad (bound 1,000 N·m)"
    else:
        assert angle < 0.05, f"{torque:.0f} N·m turned the box {angle:.3f} rad (bound 1,000 N·m)"
