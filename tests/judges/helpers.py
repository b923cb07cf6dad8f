"""Helpers for judge tests: scripted-oracle rollouts, a constant judge, reference code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simjudge.judges import Judge, JudgeSignal
from simjudge.skills.scripted import ScriptedPolicy

REWARD_OK = """
def _compute_reward(self):
    eef = get_eef_pos(self)[0]
    handle = get_link_state(self, "StorageFurniture", "link_1")
    angle = get_joint_state(self, "StorageFurniture", "joint_0")
    lower, upper = get_joint_limit(self, "StorageFurniture", "joint_0")
    reward = -np.linalg.norm(eef - handle) - 5 * abs(angle - upper)
    success = angle > lower + 0.5 * (upper - lower)
    return reward, success
"""
"""A correct reward subtask for ``OpenDrawer-v0`` (StorageFurniture, handle link_1)."""


@dataclass
class Rollout:
    """What a wrapped rollout returned: reset info, then one entry per step."""

    reset_info: dict[str, Any]
    rewards: list[float] = field(default_factory=list)
    infos: list[dict[str, Any]] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False

    @property
    def steps(self) -> int:
        return len(self.infos)


def run_oracle(env, seed: int = 0, noise: float = 0.0, max_steps: int | None = None) -> Rollout:
    """Roll the scripted oracle out in a (wrapped) task env until the episode ends."""
    policy = ScriptedPolicy(env.unwrapped, noise=noise, seed=seed)
    obs, info = env.reset(seed=seed)
    out = Rollout(reset_info=info)
    limit = max_steps or env.unwrapped.horizon
    for _ in range(limit):
        obs, reward, terminated, truncated, info = env.step(policy(obs))
        out.rewards.append(float(reward))
        out.infos.append(info)
        if terminated or truncated:
            out.terminated, out.truncated = bool(terminated), bool(truncated)
            break
    return out


def run_actions(env, actions, seed: int = 0) -> Rollout:
    """Roll fixed actions out (stops at the episode end)."""
    obs, info = env.reset(seed=seed)
    out = Rollout(reset_info=info)
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(np.asarray(action, dtype=np.float32))
        out.rewards.append(float(reward))
        out.infos.append(info)
        if terminated or truncated:
            out.terminated, out.truncated = bool(terminated), bool(truncated)
            break
    return out


class ConstantJudge(Judge):
    """A judge that always answers the same signal (for panel and wrapper tests)."""

    name = "constant"
    provides_potential = True

    def __init__(self, reward: float = 0.0, phi: float | None = 0.5, verdict: str = "undecided"):
        super().__init__()
        self.signal = JudgeSignal(reward=reward, phi=phi, verdict=verdict, reason="constant")

    def _observe(self, transition):
        return self.signal
