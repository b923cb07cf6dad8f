"""Observation noise for robustness tests: noisy simulator states and noisy images.

**State noise** (for state-based judges): Gaussian noise N(0, σ²) is added to every
position and joint value of a :class:`~simjudge.envs.sim_state.SimState` — the robot's
arm joint angles (rad; the gripper position follows through forward kinematics), each
object's base position (m) and each object's joint positions (rad or m) — and the noisy
state is restored before the judge observes it. Why perturb the state instead of wrapping
the :class:`~simjudge.envs.state_api.StateView`: judges read the scene through the view,
the state API, goal evaluators bound to the backend and ``info``; corrupting the state
itself reaches every one of these paths alike, and any judge, present or future, sees
the same corrupted world. Suction, the held part and velocities are kept. The
ground-truth labels stay those of the clean states.

**Image noise** (for judges with ``needs_frames``), RoboPulse's corruption
Ĩ = (1 − α)·I + α·N(0, 1) on intensities scaled to [0, 1], clipped and returned in the
input's dtype; α ∈ {0.05, 0.10} in the paper.
"""

from __future__ import annotations

import copy

import numpy as np

from simjudge.envs.sim_state import SimState

__all__ = ["IMAGE_ALPHAS", "corrupt_image", "perturb_state"]

IMAGE_ALPHAS: tuple[float, ...] = (0.05, 0.10)
"""RoboPulse's image-noise levels α."""

_ARM_JOINTS = 7
"""Robot joints that get state noise (the Panda arm; fingers and fixed joints are kept)."""


def perturb_state(state: SimState, sigma: float, rng: np.random.Generator) -> SimState:
    """A copy of ``state`` with N(0, σ²) added to positions and joint values.

    Args:
        state: The clean state.
        sigma: Standard deviation (m for positions, rad or m for joints); 0 returns a copy.
        rng: Source of the noise.

    Raises:
        ValueError: ``sigma`` is negative.
    """
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    noisy = copy.deepcopy(state)
    if sigma == 0:
        return noisy
    arm = min(_ARM_JOINTS, len(noisy.robot_qpos))
    noise = rng.normal(0.0, sigma, arm)
    noisy.robot_qpos = [q + float(n) for q, n in zip(noisy.robot_qpos[:arm], noise,
                                                    strict=True)] + noisy.robot_qpos[arm:]
    for body in noisy.bodies.values():
        body["pos"] = (np.asarray(body["pos"], float) + rng.normal(0.0, sigma, 3)).tolist()
        if body.get("qpos"):
            qpos = np.asarray(body["qpos"], float)
            body["qpos"] = (qpos + rng.normal(0.0, sigma, qpos.shape)).tolist()
    return noisy


def corrupt_image(image: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Ĩ = (1 − α)·I + α·N(0, 1) on [0, 1] intensities, clipped, in the input's dtype.

    ``uint8`` images are scaled by 1/255 and back (rounded); float images are taken to be
    in [0, 1] already.

    Raises:
        ValueError: ``alpha`` is outside [0, 1].
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    image = np.asarray(image)
    is_int = np.issubdtype(image.dtype, np.integer)
    scale = float(np.iinfo(image.dtype).max) if is_int else 1.0
    unit = image.astype(np.float64) / scale
    noisy = np.clip((1.0 - alpha) * unit + alpha * rng.standard_normal(unit.shape), 0.0, 1.0)
    if is_int:
        return np.rint(noisy * scale).astype(image.dtype)
    return noisy.astype(image.dtype)
