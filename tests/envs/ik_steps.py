"""The plain damped-least-squares IK step, as the IK tests compare the robot's step with it."""

from __future__ import annotations

import numpy as np

from simjudge.envs.robot import _SOLVE1


def jacobian(robot, state) -> np.ndarray:
    """The arm's (7 columns) Jacobian of the suction point at a :meth:`read_state` reading."""
    return robot.backend.jacobian(robot.body, robot.ee_link, state[0])[:, :7]


def plain_step(robot, state, error: np.ndarray, damping: float = 0.05) -> np.ndarray:
    """The damped-least-squares step with nothing added (no limits, no posture pull)."""
    jac = jacobian(robot, state)
    gram = jac @ jac.T + np.eye(6) * damping**2
    return state[0][:7] + jac.T @ _SOLVE1(gram, error)
