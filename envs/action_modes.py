"""SimEnv action modes beyond ``delta_ee`` and ``joint_position``: absolute Cartesian targets.

``cartesian_position`` (RoboArena's/DROID's ``(N, 7)`` cartesian chunks): an action is 7
numbers, the absolute suction-point target ``x, y, z`` (m) and ``roll, pitch, yaw`` (rad, URDF
fixed-axis: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``) in the world frame exactly as the observation
reports the end effector (``eef_pos`` and ``eef_quat`` as :func:`pose_of_quat` turns them into
angles), then suction in [0, 1] (> 0.5 = on).

Each step moves a bounded way toward the target, as the delta mode does: the translation
is scaled (direction kept) so no axis moves more than ``max_translation`` m, the rotation
is capped at ``max_rotation`` rad, and the env's differential IK turns that pose into arm
joint targets for the backend's joint position control. So sending the pose the
observation reports holds the arm still, and a reachable target is reached within
``distance / max_translation`` steps plus a few for settling.

:class:`SimEnv <simjudge.envs.sim_env.SimEnv>` reads this mode through :data:`EXTRA_ACTION_MODES`,
:func:`extra_action_space` and :func:`step_extra_mode` (the env is passed in, never imported).

Example:
    >>> from simjudge.envs.sim_env import SimEnv
    >>> env = SimEnv({"objects": [{"name": "Cube", "asset": "Cube-0", "center": [0.2, 0.3]}]},
    ...              action_mode="cartesian_position")
    >>> obs, _ = env.reset(seed=0)
    >>> target = current_pose(env) + [0.0, 0.0, 0.05, 0.0, 0.0, 0.0]
    >>> for _ in range(8):
    ...     obs, *_ = env.step(np.append(target, 0.0))
    >>> bool(abs(obs[2] - target[2]) < 0.01), env.action_space.shape
    (True, (7,))
    >>> env.close()
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from .errors import SimjudgeError
from .transforms import quat_from_matrix, quat_to_matrix, rpy_matrix
from .world import ROBOT_BASE_POSITION

__all__ = [
    "CARTESIAN_POSITION",
    "EXTRA_ACTION_MODES",
    "REACH",
    "ActionModeError",
    "cartesian_step_pose",
    "check_cartesian_action",
    "current_pose",
    "extra_action_space",
    "pose_of_quat",
    "quat_of_rpy",
    "step_cartesian_position",
    "step_extra_mode",
]

CARTESIAN_POSITION = "cartesian_position"
EXTRA_ACTION_MODES: tuple[str, ...] = (CARTESIAN_POSITION,)
"""Action modes this module executes for SimEnv."""
REACH = 1.1
"""Half-width (m) of the box around the robot base that bounds the action space's
positions (the Panda reaches about 0.86 m); targets outside it are still moved toward."""


class ActionModeError(SimjudgeError, ValueError):
    """An action of an action mode is malformed; the message says the expected form."""


def pose_of_quat(quat: Any) -> np.ndarray:
    """Roll, pitch, yaw of a quaternion ``(x, y, z, w)`` (the inverse of :func:`quat_of_rpy`)."""
    m = quat_to_matrix(np.asarray(quat, dtype=float))
    pitch = math.asin(max(-1.0, min(1.0, -m[2, 0])))
    return np.array([math.atan2(m[2, 1], m[2, 2]), pitch, math.atan2(m[1, 0], m[0, 0])])


def quat_of_rpy(rpy: Any) -> np.ndarray:
    """Quaternion ``(x, y, z, w)`` of URDF fixed-axis roll, pitch, yaw."""
    return quat_from_matrix(rpy_matrix([float(v) for v in rpy]))


def current_pose(env: Any) -> np.ndarray:
    """The suction point's ``x, y, z, roll, pitch, yaw`` now (what a target of "stay" is)."""
    _, pos, orn = env.scene.robot.read_state()
    return np.concatenate([np.asarray(pos, dtype=float), pose_of_quat(orn)])


def extra_action_space(env: Any, action_mode: str) -> gym.spaces.Box:
    """The action space of ``action_mode`` (one of :data:`EXTRA_ACTION_MODES`).

    ``cartesian_position``: positions within :data:`REACH` of the robot base (z from the
    base up), angles within [-pi, pi] (pitch [-pi/2, pi/2]), suction in [0, 1].
    """
    base = np.asarray(ROBOT_BASE_POSITION, dtype=float)
    low = np.concatenate([base - [REACH, REACH, 0.1], [-math.pi, -math.pi / 2, -math.pi], [0.0]])
    high = np.concatenate([base + [REACH, REACH, REACH], [math.pi, math.pi / 2, math.pi], [1.0]])
    return gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)


def check_cartesian_action(action: Any) -> np.ndarray:
    """``action`` as 7 finite float64 numbers.

    Raises:
        ActionModeError: Not 7 numbers, or a NaN / infinite entry.
    """
    try:
        a = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ActionModeError(f"a cartesian_position action must be numeric; got {action!r}") from exc
    if a.shape != (7,) or not np.all(np.isfinite(a)):
        raise ActionModeError(
            "a cartesian_position action is 7 finite numbers (x, y, z in m and roll, pitch, "
            "yaw in rad of the suction point in the world frame, as the observation reports "
            f"it, then suction in [0, 1]); got shape {a.shape}: {a}"
        )
    return a


def _hamilton(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float, float]:
    """``quat_multiply(a, b)`` on plain floats (numpy's per-call cost dominates on 4-vectors)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


@functools.lru_cache(maxsize=256)
def _goal_quat(roll: float, pitch: float, yaw: float) -> tuple[float, ...]:
    """:func:`quat_of_rpy` memoised: a chunk repeats its target for several steps."""
    return tuple(quat_of_rpy((roll, pitch, yaw)).tolist())


def cartesian_step_pose(
    pos: Sequence[float], orn: Sequence[float], target: np.ndarray, max_translation: float,
    max_rotation: float,
) -> tuple[list[float], tuple[float, ...]]:
    """The pose one bounded step from ``(pos, orn)`` toward ``target`` (xyz + rpy).

    The translation keeps its direction, scaled so no axis exceeds ``max_translation``;
    the rotation (world frame, shortest way) is capped at ``max_rotation`` rad.

    Returns:
        The position (3) and quaternion ``(x, y, z, w)`` to hand to the IK.
    """
    tx, ty, tz, roll, pitch, yaw = target[:6].tolist()
    px, py, pz = (float(v) for v in pos)
    delta = [tx - px, ty - py, tz - pz]
    largest = max(abs(v) for v in delta)
    if largest > max_translation:
        delta = [v * (max_translation / largest) for v in delta]
    position = [px + delta[0], py + delta[1], pz + delta[2]]
    hx, hy, hz, hw = (float(v) for v in orn)
    # world-frame rotation taking here to goal: goal * conj(here), the short way round
    x, y, z, w = _hamilton(_goal_quat(roll, pitch, yaw), (-hx, -hy, -hz, hw))
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    sin = math.sqrt(x * x + y * y + z * z)
    if sin < 1e-12:
        return position, (hx, hy, hz, hw)
    half = min(2.0 * math.atan2(sin, w), max_rotation) / 2.0
    scale = math.sin(half) / sin
    return position, _hamilton((x * scale, y * scale, z * scale, math.cos(half)), (hx, hy, hz, hw))


def step_cartesian_position(env: Any, action: Any) -> Any:
    """One SimEnv step toward an absolute Cartesian target (module docstring).

    Args:
        env: The SimEnv (its robot, step bounds and ``_advance_and_observe``).
        action: ``x, y, z, roll, pitch, yaw, suction``.

    Returns:
        ``obs, reward, terminated, truncated, info`` as :meth:`SimEnv.step` returns them.

    Raises:
        ActionModeError: See :func:`check_cartesian_action`.
    """
    a = check_cartesian_action(action)
    robot = env.scene.robot
    state = robot.read_state()
    _, pos, orn = state
    position, orientation = cartesian_step_pose(pos, orn, a, env.max_translation, env.max_rotation)
    robot.command(robot._differential_ik(state, position, orientation))
    if a[6] > 0.5 and not robot.suction_on:
        robot.activate_suction(env.scene.static_bodies)
    elif a[6] <= 0.5 and robot.suction_on:
        robot.release()
    return env._advance_and_observe()


def step_extra_mode(env: Any, action: Any) -> Any:
    """Execute ``action`` in ``env.action_mode`` (one of :data:`EXTRA_ACTION_MODES`).

    Raises:
        ActionModeError: The env's mode is not one of :data:`EXTRA_ACTION_MODES`, or the
            action is malformed for it.
    """
    if env.action_mode == CARTESIAN_POSITION:
        return step_cartesian_position(env, action)
    raise ActionModeError(
        f"action_mode {env.action_mode!r} is not executed here; modes: {list(EXTRA_ACTION_MODES)}"
    )
