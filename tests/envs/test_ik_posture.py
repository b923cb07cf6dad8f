"""Near a joint limit the IK step also pulls the arm towards its home posture (null space).

Why: with joints held at their limits (joint clamping, ``test_ik_joint_clamping.py``) the
others carry the motion and the arm can wind up against its limits until the next target
needs a held joint (the scripted oracle then looped on HeatBreadInMicrowave's door stage on
PyBullet). The pull goes through the Jacobian's null space, so it keeps the hand's motion,
and it is only added within ``_POSTURE_MARGIN`` of a limit.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.robot import _POSTURE_MARGIN, HOME_QPOS
from simjudge.skills.scripted import ScriptedPolicy
from simjudge.tasks.spec import make_task_env
from tests.envs.ik_steps import jacobian, plain_step


@pytest.fixture(scope="module")
def arm():
    """The arm away from home (else there is no pull) and away from every limit."""
    env = make_task_env("OpenDrawer-v0")
    env.reset(seed=0)
    env.scene.robot.reset_home(HOME_QPOS + np.array([0.3, 0.2, -0.3, 0.2, 0.3, -0.2, 0.4]))
    yield env.scene.robot
    env.close()


def _near_limit_step(arm, joint: int):
    """The IK step and the plain step, with ``joint``'s upper limit just above where it is."""
    state = arm.read_state()
    q0, pos, orn = state[0][:7], state[1], state[2]
    move = np.array([0.01, -0.01, 0.01])
    jac = jacobian(arm, state)
    plain = plain_step(arm, state, np.concatenate([move, [0.0, 0.0, 0.0]]))
    upper = arm.upper.copy()
    try:  # a limit within the margin, beyond where the plain step goes (nothing is clamped)
        near = upper.copy()
        near[joint] = max(q0[joint], plain[joint]) + 0.5 * _POSTURE_MARGIN
        arm.upper = near
        q = arm._differential_ik(state, np.array(pos) + move, orn)
    finally:
        arm.upper = upper
    return q0, plain, q, jac


@pytest.mark.parametrize("joint", [0, 2, 6])
def test_near_a_limit_the_step_turns_towards_home_and_keeps_the_hand(arm, joint):
    q0, plain, q, jac = _near_limit_step(arm, joint)
    pull = q - plain
    assert np.linalg.norm(pull) > 1e-4  # something was added
    # towards home: the added motion points along (home - q0)
    assert pull @ (HOME_QPOS - q0) > 0
    # through the null space: the hand barely feels it (damped pseudo-inverse: to first order)
    assert np.linalg.norm(jac @ pull) < 0.05 * np.linalg.norm(jac @ (0.05 * (HOME_QPOS - q0)))


def test_away_from_every_limit_nothing_is_added(arm):
    state = arm.read_state()
    q0 = state[0][:7]
    assert np.all((q0 > arm.lower + _POSTURE_MARGIN) & (q0 < arm.upper - _POSTURE_MARGIN))
    _, pos, orn = state
    q = arm._differential_ik(state, np.array(pos) + 0.01, orn)
    error = np.array([(p + 0.01) - p for p in pos] + [0.0, 0.0, 0.0])
    np.testing.assert_allclose(q, plain_step(arm, state, error), rtol=0, atol=1e-12)


def test_the_oracle_heats_bread_in_the_microwave():
    """Four stages in one episode; with clamping alone the arm wound up on the door stage."""
    env = make_task_env("HeatBreadInMicrowave-v0")
    try:
        _, info = env.reset(seed=0)
        policy = ScriptedPolicy(env, seed=0)
        for _ in range(env.horizon):
            _, _, terminated, truncated, info = env.step(policy())
            if terminated or truncated:
                break
        assert info["success"], f"final Φ {info['progress']:.2f}"
    finally:
        env.close()
