"""One episode of a policy on an env.

Observations are built to the policy's needs, action chunks executed in order, time split
between the policy and the env, and the latency of every query recorded.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from .base import Policy, PolicyTask, action_width, as_chunk
from .observe import env_action_mode, exterior_camera, observe, to_env_action

__all__ = ["EpisodeResult", "policy_task", "run_episode"]


@dataclass
class EpisodeResult:
    """What :func:`run_episode` measured.

    Attributes:
        steps: Env steps taken.
        success: ``info["success"]`` at the end.
        progress: The env's privileged Φ per step (reset state first).
        queries: Policy queries (``act`` calls); fewer than steps with action chunks.
        latencies: Seconds per query.
        policy_seconds: Total time in the policy (reset + act).
        env_seconds: Total time in ``env.step`` (physics and any judge wrappers).
        frames: RGB frames (when a video was requested).
        info: The last ``info``.
    """

    steps: int = 0
    success: bool = False
    progress: list[float] = field(default_factory=list)
    queries: int = 0
    latencies: list[float] = field(default_factory=list)
    policy_seconds: float = 0.0
    env_seconds: float = 0.0
    frames: list[np.ndarray] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def timing(self) -> dict[str, float]:
        """Seconds in the policy and the env, and latency mean / max (ms)."""
        lat = self.latencies or [0.0]
        return {
            "policy_seconds": self.policy_seconds,
            "env_seconds": self.env_seconds,
            "latency_ms_mean": 1000.0 * float(np.mean(lat)),
            "latency_ms_max": 1000.0 * float(np.max(lat)),
            "queries": float(self.queries),
        }


def policy_task(env: gym.Env, policy: Policy, prompt: str | None = None) -> PolicyTask:
    """The :class:`PolicyTask` of ``env`` for ``policy`` (the env only if it is privileged)."""
    base: Any = env.unwrapped
    name = str(getattr(base, "task_name", "") or "")
    privileged = "privileged" in policy.info.observation_needs
    return PolicyTask(
        name=name,
        prompt=prompt if prompt is not None else name,
        env=base if privileged else None,
        horizon=int(getattr(base, "horizon", 100)),
    )


def run_episode(
    env: gym.Env,
    policy: Policy,
    seed: int,
    *,
    prompt: str | None = None,
    options: dict[str, Any] | None = None,
    video_size: tuple[int, int] | None = None,
) -> EpisodeResult:
    """Run ``policy`` on ``env`` from ``reset(seed=seed, options=options)`` to the end.

    Args:
        env: A SimEnv, possibly wrapped (judge wrappers see every step).
        policy: The policy; reset with ``(task, seed)``.
        seed: Env and policy seed.
        prompt: The instruction; default: the env's task name.
        options: Reset options (e.g. ``{"state": snapshot}``: identical initial states).
        video_size: ``(H, W)`` to record exterior-camera frames at, or None.
    """
    base: Any = env.unwrapped
    result = EpisodeResult()
    obs, info = env.reset(seed=seed, options=options)
    task = policy_task(env, policy, prompt)
    start = time.perf_counter()
    policy.reset(task, seed)
    result.policy_seconds += time.perf_counter() - start
    result.progress.append(float(info.get("progress", 0.0)))
    _frame(base, video_size, result)
    pending: deque[np.ndarray] = deque()
    space, name = policy.info.action_space, policy.info.name
    done = False
    with base.using_action_mode(env_action_mode(space)):  # joint spaces: joint position control
        while not done:
            if not pending:
                observation = observe(base, obs, policy.info, task.prompt)
                start = time.perf_counter()
                chunk = as_chunk(policy.act(observation), name, action_width(space))
                elapsed = time.perf_counter() - start
                result.latencies.append(elapsed)
                result.policy_seconds += elapsed
                result.queries += 1
                pending.extend(chunk)
            action = to_env_action(pending.popleft(), space, base)
            start = time.perf_counter()
            # joint targets stay float64, so a recorded joint trajectory replays exactly
            obs, _, terminated, truncated, info = env.step(
                action if action.shape == (8,) else action.astype(np.float32))
            result.env_seconds += time.perf_counter() - start
            result.steps += 1
            result.progress.append(float(info.get("progress", 0.0)))
            _frame(base, video_size, result)
            done = bool(terminated or truncated)
    result.success = bool(info.get("success", False))
    result.info = info
    return result


def _frame(base: Any, size: tuple[int, int] | None, result: EpisodeResult) -> None:
    if size is not None:
        result.frames.append(base.backend.render(exterior_camera(base, size)).rgb)
