"""A stable-baselines3 checkpoint (``sb3:PATH.zip``) as a policy.

The algorithm class is read from the checkpoint itself (the ``policy_class`` module SB3
records in the zip's ``data`` entry; for PPO and A2C, whose actor-critic policy is shared,
the hyperparameters recorded beside it: only PPO has ``clip_range``), so any of SAC, PPO,
TD3, A2C, DDPG loads without being named. The model observes the env's flat state vector and acts deterministically.
"""

from __future__ import annotations

import importlib
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .base import Observation, PolicyError, PolicyInfo, PolicyTask

__all__ = ["SB3Policy", "sb3_algorithm"]

_ALGORITHMS = ("sac", "ppo", "td3", "a2c", "ddpg", "dqn")


def sb3_algorithm(path: str | Path) -> str:
    """The SB3 algorithm name (``sac``, ``ppo``, ...) recorded in a checkpoint.

    Raises:
        PolicyError: The file is missing, not an SB3 zip, or of an unknown algorithm.
    """
    path = Path(path)
    if not path.is_file():
        raise PolicyError(f"sb3 checkpoint {path} does not exist; give the path of a saved .zip")
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as exc:
        raise PolicyError(
            f"{path} is not a stable-baselines3 checkpoint ({exc}); save models with model.save()"
        ) from exc
    module = str(data.get("policy_class", {}).get("__module__", ""))
    for name in _ALGORITHMS:
        if f".{name}." in f".{module}.":
            return name
    if module == "stable_baselines3.common.policies":  # PPO's and A2C's shared actor-critic
        if "clip_range" in data:
            return "ppo"
        if "gae_lambda" in data:
            return "a2c"
    raise PolicyError(
        f"{path}: cannot tell the algorithm from policy module {module!r}; "
        f"supported: {list(_ALGORITHMS)}"
    )


class SB3Policy:
    """A saved SB3 model acting on ``obs["state"]``.

    Args:
        path: The ``.zip`` checkpoint.
        deterministic: Use the mean action (default) rather than sampling.
        name: The policy's name (default ``sb3``; the zoo names its own ``zoo:NAME``).
    """

    def __init__(self, path: str | Path, deterministic: bool = True, name: str = "sb3") -> None:
        import torch

        torch.set_num_threads(1)
        self.path = Path(path)
        algorithm = sb3_algorithm(self.path)
        try:
            sb3 = importlib.import_module("stable_baselines3")
        except ImportError as exc:  # pragma: no cover - rl extra missing
            raise PolicyError("sb3: policies need stable-baselines3: pip install 'simjudge[rl]'") from exc
        self.model: Any = getattr(sb3, algorithm.upper()).load(self.path, device="cpu")
        self.deterministic = bool(deterministic)
        shape = self.model.action_space.shape
        if shape != (7,):
            raise PolicyError(
                f"{self.path}: the model acts in shape {shape}; SimEnv actions are (7,): train it "
                "on a simjudge env"
            )
        self._info = PolicyInfo(
            name, spec=f"sb3:{self.path}", metadata={"path": str(self.path), "algorithm": algorithm}
        )

    @property
    def info(self) -> PolicyInfo:
        """Name, action space and checkpoint."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Seed the model's sampling (used only when not deterministic)."""
        self.model.set_random_seed(int(seed))

    def act(self, obs: Observation) -> np.ndarray:
        """``model.predict(state)``."""
        state = np.asarray(obs["state"], dtype=np.float32)
        expected = self.model.observation_space.shape
        if state.shape != expected:
            raise PolicyError(
                f"{self.path}: the model observes shape {expected} but the task gives "
                f"{state.shape}; audit it on the task it was trained on"
            )
        action, _ = self.model.predict(state, deterministic=self.deterministic)
        return np.asarray(action, dtype=np.float64)

    def close(self) -> None:
        """Nothing to release."""
