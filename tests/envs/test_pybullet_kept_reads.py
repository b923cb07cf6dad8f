"""PyBullet keeps the joint-limit stop's last reading as the state's joint read, exactly.

After a :meth:`PyBulletBackend.step`, the hard stop has just read every limited joint; a
body whose joints all stayed in bounds keeps that reading, so the observation reads it
without a second engine call. A body whose joint was put back on its limit is read afresh.
Both cases are checked against the engine's own answer in the same state.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.backends import available_backends
from simjudge.envs.sim_env import SimEnv

pytestmark = pytest.mark.skipif("pybullet" not in available_backends(), reason="pybullet is not installed")

SCENE = {"objects": [{"name": "Cabinet", "asset": "StorageFurniture-0", "center": [0.5, 0.5]}]}


class _CountingClient:
    """The pybullet module, with ``getJointStates`` calls per body counted."""

    def __init__(self, client) -> None:
        self._client = client
        self.calls: dict[int, int] = {}

    def getJointStates(self, body, joints, physicsClientId):  # noqa: N802 - pybullet's name
        self.calls[body] = self.calls.get(body, 0) + 1
        return self._client.getJointStates(body, joints, physicsClientId=physicsClientId)

    def __getattr__(self, name: str):
        return getattr(self._client, name)


def _engine_joints(env: SimEnv, body: int, joints: list[int]) -> np.ndarray:
    client = env.backend._p
    client = getattr(client, "_client", client)
    states = client.getJointStates(body, joints, physicsClientId=env.backend._client)
    return np.array([s[0] for s in states])


@pytest.fixture
def cabinet():
    """A reset pybullet env with a cabinet, its body handle and its limited joints."""
    env = SimEnv(SCENE, backend="pybullet", horizon=10**6)
    env.reset(seed=0)
    body = env.scene.objects["Cabinet"].body
    yield env, body, list(env.backend._limits[body])
    env.close()


def test_kept_reading_equals_the_engine_and_saves_the_call(cabinet) -> None:
    env, body, joints = cabinet
    backend = env.backend
    counting = backend._p = _CountingClient(backend._p)
    rng = np.random.default_rng(3)
    for _ in range(20):
        action = rng.uniform(-1.0, 1.0, size=7).astype(np.float32)
        action[6] = -1.0
        counting.calls.clear()
        env.step(action)
        # the stop reads the cabinet once per timestep; the observation asks nothing more
        assert counting.calls.get(body, 0) == env.frameskip
        kept = backend.get_joint_states(body, joints)[0]
        np.testing.assert_array_equal(kept, _engine_joints(env, body, joints))


def test_a_joint_put_back_on_its_limit_is_read_afresh(cabinet) -> None:
    env, body, joints = cabinet
    backend = env.backend
    lower, upper, _ = backend._limits[body][joints[0]]
    backend.reset_joint_states(body, [joints[0]], [upper + 0.5 * (upper - lower)])
    backend.step(1)  # the only timestep puts the joint back: nothing may be kept
    read = backend.get_joint_states(body, joints)[0]
    np.testing.assert_array_equal(read, _engine_joints(env, body, joints))
    assert read[0] == upper
