"""The per-step IK holds joints at their limits and lets the others carry the motion.

Why: the damped-least-squares step used to be clipped to the joint range afterwards, which
drops the share of the motion a clipped joint carried, so the hand stalled whenever one
joint sat at a limit (the oracle failed OpenMicrowaveDoor on MuJoCo and SAPIEN with the
wrist at its limit and the shoulder and elbow saturated). Joint clamping re-solves for the
rest of the error over the joints still free; a step that stays inside the range is the
plain step (to rounding).
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.tasks.spec import make_task_env
from tests.envs.ik_steps import jacobian, plain_step


@pytest.fixture(scope="module")
def arm():
    env = make_task_env("OpenDrawer-v0")
    env.reset(seed=0)
    yield env.scene.robot
    env.close()


def test_a_step_inside_the_range_is_theplain_step(arm):
    state = arm.read_state()
    _, pos, orn = state
    target = [p + d for p, d in zip(pos, (0.02, -0.01, -0.02), strict=True)]
    q = arm._differential_ik(state, target, orn)
    # the IK's own error: the same float differences, no rotation (target = current)
    error = np.array([t - p for t, p in zip(target, pos, strict=True)] + [0.0, 0.0, 0.0])
    plain = plain_step(arm, state, error)
    assert np.all((plain >= arm.lower) & (plain <= arm.upper))
    np.testing.assert_allclose(q, plain, rtol=0, atol=1e-12)


@pytest.mark.parametrize("joint", [0, 3, 5])
def test_a_joint_at_its_limit_is_held_and_the_others_take_over(arm, joint):
    state = arm.read_state()
    q0, pos, orn = state[0][:7], state[1], state[2]
    move = np.array([0.03, 0.02, -0.03])
    error = np.concatenate([move, [0.0, 0.0, 0.0]])
    free = plain_step(arm, state, error)
    assert free[joint] != q0[joint], "the free step must move the joint this test holds"
    lower, upper = arm.lower.copy(), arm.upper.copy()
    try:  # the joint sits at its limit in the direction the free step moves it
        held = (upper if free[joint] > q0[joint] else lower).copy()
        held[joint] = q0[joint]
        if free[joint] > q0[joint]:
            arm.upper = held
        else:
            arm.lower = held
        q = arm._differential_ik(state, np.array(pos) + move, orn)
        clipped = np.minimum(np.maximum(free, arm.lower), arm.upper)
        assert np.all((q >= arm.lower) & (q <= arm.upper))
        assert q[joint] == q0[joint]  # held at the limit
    finally:
        arm.lower, arm.upper = lower, upper
    jac = jacobian(arm, state)
    residual = np.linalg.norm(error - jac @ (q - q0))
    residual_clipped = np.linalg.norm(error - jac @ (clipped - q0))
    # the other joints make up for the held one: the hand gets (almost) where it was sent
    assert residual < 0.5 * residual_clipped


def test_limits_are_changed_by_assignment_only(arm):
    # the IK step reads a table made from the limits; in-place edits would leave it stale
    with pytest.raises(ValueError, match="read-only"):
        arm.upper[0] = 0.0
    upper = arm.upper.copy()
    try:
        arm.upper = np.full(7, -10.0)  # every joint above its upper limit: the step must clamp all
        state = arm.read_state()
        q = arm._differential_ik(state, np.array(state[1]) + [0.01, 0.0, 0.0], state[2])
        assert np.all(q <= -10.0)
    finally:
        arm.upper = upper
