"""Observations a policy asked for, and its actions turned into SimEnv actions.

:func:`observe` builds the :data:`~simjudge.policies.base.Observation` dict from the
env (state vector, proprioception from the state layout, RGB from an exterior and a wrist
camera at the policy's resolution); :func:`to_env_action` converts one action of the
policy's action space into SimEnv's 7-D ``delta-translation`` action.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from simjudge.envs.action_modes import check_cartesian_action, pose_of_quat
from simjudge.envs.backends import CameraSpec
from simjudge.envs.transforms import (
    quat_conjugate,
    quat_from_matrix,
    quat_multiply,
    quat_to_matrix,
    rpy_matrix,
)
from simjudge.envs.world import PHYSICS_TIMESTEP

from .base import Observation, PolicyError, PolicyInfo

__all__ = ["env_action_mode", "observe", "quat_to_rpy", "to_env_action", "wrist_camera"]

_WRIST_BACK = 0.12
"""How far behind the suction point (m, along the gripper axis) the wrist camera sits."""


quat_to_rpy = pose_of_quat
"""Roll, pitch, yaw of a quaternion: :func:`simjudge.envs.action_modes.pose_of_quat` (one
implementation for the cartesian action mode and the policies' proprioception)."""


def wrist_camera(env: Any, size: tuple[int, int]) -> CameraSpec:
    """A camera on the wrist looking along the gripper axis (``size`` = (H, W))."""
    pos, orn = env.scene.robot.ee_pose()
    rot = quat_to_matrix(np.asarray(orn, dtype=float))
    axis, up = rot[:, 2], rot[:, 0]
    eye = np.asarray(pos) - axis * _WRIST_BACK
    target = np.asarray(pos) + axis * 0.3
    return CameraSpec(
        "wrist",
        tuple(eye.tolist()),
        tuple(target.tolist()),
        up=tuple(up.tolist()),
        fov=70.0,
        width=int(size[1]),
        height=int(size[0]),
        near=0.01,
    )


def exterior_camera(env: Any, size: tuple[int, int]) -> CameraSpec:
    """The scene's first camera at resolution ``size`` = (H, W)."""
    cam = env.scene_config.cameras[0]
    return CameraSpec(
        "exterior", tuple(cam.eye), tuple(cam.target), fov=cam.fov, width=int(size[1]), height=int(size[0])
    )


def observe(env: Any, state: np.ndarray, info: PolicyInfo, prompt: str) -> dict[str, Any]:
    """The observation dict for a policy (see :mod:`simjudge.policies.base`).

    Args:
        env: The unwrapped SimEnv.
        state: The env's flat state observation.
        info: The policy's info (its needs and image size).
        prompt: The task instruction.
    """
    obs: dict[str, Any] = {"state": np.asarray(state, dtype=np.float32), "prompt": prompt}
    needs = info.observation_needs
    if "proprio" in needs:
        layout = env.observation_layout
        flat = obs["state"]
        obs["joint_position"] = flat[layout["arm_qpos"]].astype(np.float64)
        pos = flat[layout["eef_pos"]].astype(np.float64)
        obs["cartesian_position"] = np.concatenate([pos, quat_to_rpy(flat[layout["eef_quat"]])])
        obs["gripper_position"] = flat[layout["suction"]].astype(np.float64)
    if "exterior_image" in needs:
        obs["exterior_image"] = env.backend.render(exterior_camera(env, info.image_size)).rgb
    if "wrist_image" in needs:
        obs["wrist_image"] = env.backend.render(wrist_camera(env, info.image_size)).rgb
    return obs


def env_action_mode(action_space: str) -> str:
    """The SimEnv ``action_mode`` that executes ``action_space``.

    Joint spaces: ``joint_position``; ``cartesian_position``: the env's own absolute-target
    mode (:mod:`simjudge.envs.action_modes`); ``delta-translation``: ``delta_ee``.
    """
    if action_space in ("joint_position", "joint_velocity"):
        return "joint_position"
    return "cartesian_position" if action_space == "cartesian_position" else "delta_ee"


def to_env_action(action: np.ndarray, action_space: str, env: Any) -> np.ndarray:
    """One action of ``action_space`` as an action of SimEnv's :func:`env_action_mode`.

    ``cartesian_position`` = absolute suction-point ``xyz``, ``rpy``, gripper in [0, 1]
    (> 0.5 = suction on): on an env in its ``cartesian_position`` mode (as
    :func:`~simjudge.policies.run_episode` sets it) the action passes through, checked;
    on a ``delta_ee`` env the delta is the way to the target, clipped to one step.
    ``joint_position`` (7 targets + gripper) passes through; ``joint_velocity`` (7 rad/s +
    gripper) becomes the joint target one control period (``frameskip`` physics steps)
    ahead of the current joint angles.

    Raises:
        PolicyError: Unknown action space.
    """
    action = np.asarray(action, dtype=np.float64)
    if action_space in ("delta-translation", "joint_position"):
        return action
    if action_space == "joint_velocity":
        period = env.frameskip * PHYSICS_TIMESTEP
        target = env.scene.robot.arm_qpos() + action[:7] * period
        return np.append(target, 1.0 if action[7] > 0.5 else 0.0)
    if action_space != "cartesian_position":
        raise PolicyError(
            f"cannot execute action space {action_space!r}; use delta-translation, "
            "cartesian_position, joint_position or joint_velocity"
        )
    if getattr(env, "action_mode", "delta_ee") == "cartesian_position":
        return check_cartesian_action(action)
    pos, orn = env.scene.robot.ee_pose()
    out = np.zeros(7)
    out[:3] = np.clip((action[:3] - pos) / env.max_translation, -1.0, 1.0)
    target = quat_from_matrix(rpy_matrix(action[3:6].tolist()))
    rel = quat_multiply(quat_conjugate(np.asarray(orn, dtype=float)), target)
    rel = rel if rel[3] >= 0 else -rel
    angle = 2.0 * math.acos(max(-1.0, min(1.0, float(rel[3]))))
    if angle > 1e-6:
        axis = rel[:3] / max(float(np.linalg.norm(rel[:3])), 1e-9)
        out[3:6] = np.clip(axis * angle / env.max_rotation, -1.0, 1.0)
    out[6] = 1.0 if action[6] > 0.5 else -1.0
    return out


def check_observation(obs: Observation) -> None:
    """Raise :class:`PolicyError` if ``obs`` lacks the keys every policy may rely on."""
    missing = [key for key in ("state", "prompt") if key not in obs]
    if missing:
        raise PolicyError(f"observation lacks {missing}; build it with observe(env, state, info, prompt)")
