"""The MuJoCo backend's per-step shortcuts give exactly what the full computation gives.

The batched reading keeps the boxes of bodies whose frames did not change and computes
each moving geom's box once; the Jacobian at the current joints skips the scratch copy of
the world. Both are checked here, bit for bit, against the paths without shortcuts, over
states where the arm pushes a cabinet's doors and drawers (so boxes are kept and redone).
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.backends import available_backends
from simjudge.envs.sim_env import SimEnv

pytestmark = pytest.mark.skipif("mujoco" not in available_backends(), reason="mujoco is not installed")

SCENE = {"objects": [{"name": "Cabinet", "asset": "StorageFurniture-0", "center": [0.45, 0.1]}]}


def _states(steps: int = 80):
    """An env whose arm sweeps through the cabinet, yielded after every step."""
    env = SimEnv(SCENE, backend="mujoco", horizon=10**6)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(5)
        for k in range(steps):
            action = rng.uniform(-1.0, 1.0, size=7)
            action[0] = 1.0 if k % 20 < 12 else -0.5  # towards the cabinet, then back
            action[6] = -1.0
            env.step(action.astype(np.float32))
            yield env
    finally:
        env.close()


def test_kept_and_deduplicated_boxes_equal_a_fresh_reading() -> None:
    """Every reading equals the plan's reading with nothing kept (``static_version=-1``)."""
    kept = redone = 0
    last = None
    for env in _states():
        backend = env.backend
        queries = env._obs._queries
        reading = backend.read_bodies(queries)
        plan = backend._plans[id(queries)][2]
        fresh = plan.read(backend.model, backend.data, -1)
        assert np.array_equal(reading, fresh)
        assert np.array_equal(np.signbit(reading), np.signbit(fresh))
        kept, redone = (kept + 1, redone) if plan._kept is last else (kept, redone + 1)
        last = plan._kept
    assert kept > 0 and redone > 1, (kept, redone)  # both paths ran


def test_jacobian_at_the_current_joints_equals_the_scratch_path() -> None:
    """The shortcut's Jacobian equals the one computed on a scratch copy of the world."""
    for env in _states(30):
        robot, backend = env.scene.robot, env.backend
        q = robot.read_state()[0]
        fast = backend.jacobian(robot.body, robot.ee_link, q)
        slow = backend.jacobian(robot.body, robot.ee_link, list(q))  # a list: the general path
        assert np.array_equal(fast, slow)
