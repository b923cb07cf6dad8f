"""The damped-least-squares IK step in numpy, the reference the compiled step is held to.

The robot's step (:meth:`simjudge.envs.robot.PandaSuction.differential_ik`) is compiled
(``envs/_dls.c``); these are the same formulas as plain numpy expressions, so the tests can
compare the two (to rounding: the compiled sums run in their own fixed order).
"""

from __future__ import annotations

import numpy as np

from simjudge.envs.robot import _POSTURE_GAIN, _POSTURE_MARGIN, HOME_QPOS


def jacobian(robot, state) -> np.ndarray:
    """The arm's (7 columns) Jacobian of the suction point at a :meth:`read_state` reading."""
    return robot.backend.jacobian(robot.body, robot.ee_link, state[0])[:, :7]


def plain_step(robot, state, error: np.ndarray, damping: float = 0.05) -> np.ndarray:
    """The damped-least-squares step with nothing added (no limits, no posture pull)."""
    jac = jacobian(robot, state)
    gram = jac @ jac.T + np.eye(6) * damping**2
    return state[0][:7] + jac.T @ np.linalg.solve(gram, error)


def pose_error(position, orientation, target, target_orientation) -> np.ndarray:
    """Position error capped at 5 cm, then the rotation vector capped at 0.3 rad."""
    delta = np.asarray(target, float) - np.asarray(position, float)
    norm = np.linalg.norm(delta)
    if not norm <= 0.05:
        delta = delta * (0.05 / norm)
    x2, y2, z2 = (-float(v) for v in orientation[:3])
    w2 = float(orientation[3])
    x1, y1, z1, w1 = (float(v) for v in target_orientation)
    w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    vector = np.array([
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])
    if w < 0.0:
        vector, w = -vector, -w
    sine = np.linalg.norm(vector)
    rotation = np.zeros(3) if sine < 1e-12 else vector * (min(2.0 * np.arctan2(sine, w), 0.3) / sine)
    return np.concatenate([delta, rotation])


def numpy_step(jac, q0, position, orientation, target, target_orientation, lower, upper,
               damping: float = 0.05) -> np.ndarray:
    """The whole step: damped least squares, posture pull near a limit, joint clamping."""
    jac, q0 = np.asarray(jac, float)[:, :7], np.asarray(q0, float)[:7]
    error = pose_error(position, orientation, target, target_orientation)
    damp = np.eye(6) * damping**2
    gram = jac @ jac.T + damp
    q = q0 + jac.T @ np.linalg.solve(gram, error)
    if np.any((q0 < lower + _POSTURE_MARGIN) | (q0 > upper - _POSTURE_MARGIN)):
        pull = _POSTURE_GAIN * (HOME_QPOS - q0)
        q = q + pull - jac.T @ np.linalg.solve(gram, jac @ pull)
    held = (q < lower) | (q > upper)
    if not held.any():
        return q
    for _ in range(7):  # each pass holds at least one more joint
        q = np.clip(q, lower, upper)
        free = ~held
        if not free.any():
            break
        rest = error - jac[:, held] @ (q[held] - q0[held])
        part = jac[:, free]
        q[free] = q0[free] + part.T @ np.linalg.solve(part @ part.T + damp, rest)
        out = (q < lower) | (q > upper)
        if not out.any():
            return q
        held |= out
    return np.clip(q, lower, upper)
