"""``simjudge policies train-sb3``: SB3 PPO or SAC from scratch on a judge's reward, CPU, one thread.

The learner sees one randomized task through ``JudgeReward(env, judge, mode)`` (by default
the privileged judge's ``dense`` reward: the staged Φ plus potential-based shaping, as in
``bench/rl_from_scratch.py``). Training episodes do not end on success (success absorbs:
with a per-step Φ term, an episode that ended at the goal would pay less than hovering near
it); a physics failure still ends them. PPO steps ``--envs`` copies of the env at once.

The checkpoint is SB3's own ``.zip`` (``sb3:PATH.zip`` loads it), with ``PATH.sha256`` beside
it and a card inside the archive (``simjudge_card.json``, which SB3's loader ignores): the
command, the algorithm and its settings, the budget, the seed, the last training episodes'
return and success, the training time and the package versions.

Example (not run here: it trains for a few seconds)::

    from simjudge.policies.train_sb3 import TrainSB3Config, train_sb3
    card = train_sb3(TrainSB3Config(task="CloseDoor-v0", steps=10_000, out="ppo.zip"))
"""

from __future__ import annotations

import json
import platform
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from simjudge.tasks.spec.config import command_line, option

from .base import PolicyError

__all__ = ["CARD_ENTRY", "TRAIN_SEED_BASE", "TrainSB3Config", "read_card", "train_sb3"]

CARD_ENTRY = "simjudge_card.json"
"""The archive entry of a checkpoint's training card."""
TRAIN_SEED_BASE = 1_000_000
"""Training worlds are drawn from reset seed ``TRAIN_SEED_BASE + seed`` on (env ``i`` of PPO's
from ``+ i``), far from the seeds audits measure on (0 and up)."""


@dataclass(frozen=True, kw_only=True)
class TrainSB3Config:
    """Train an SB3 PPO or SAC policy from scratch on a judge's reward of one randomized task.

    Attributes:
        task: The task to train on (a built-in task id, e.g. ``CloseDoor-v0``).
        algo: ``ppo`` (``--envs`` envs, 256 steps each per update) or ``sac``.
        steps: The training budget in env steps (PPO rounds it up to whole rollouts).
        seed: Seed of the networks, the sampling and the training worlds.
        out: The checkpoint to write (``.zip``; ``.sha256`` beside it).
        judge: The judge whose reward is learned (a judge spec).
        reward: The judge reward's mode: ``dense``, ``sparse`` or ``normalized``.
        envs: PPO's parallel envs (stepped in this process).
        hidden: Width of the two hidden layers (PPO default 128, SAC 256).
        horizon: Episode length; default: the task's own.
    """

    task: str = option()
    algo: Literal["ppo", "sac"] = "ppo"
    steps: int = 10_000
    seed: int = 0
    out: str = option()
    judge: str = "privileged"
    reward: Literal["dense", "sparse", "normalized"] = "dense"
    envs: int = 4
    hidden: int = 0
    horizon: int | None = None


def _command(config: TrainSB3Config) -> str:
    """The command line that trains ``config`` (options at their defaults left out)."""
    return command_line(["simjudge", "policies", "train-sb3"], config,
                        always=("task", "algo", "steps", "seed", "out"))


def _make_env(config: TrainSB3Config) -> Any:
    """The training env: the task, success absorbing, the judge's reward, SB3's Monitor."""
    import gymnasium as gym
    from stable_baselines3.common.monitor import Monitor

    from simjudge.judges import JudgeReward, make_judge
    from simjudge.tasks.spec import make_task_env

    class SuccessAbsorbs(gym.Wrapper):
        """Training episodes go on after success (a physics failure still ends them)."""

        def step(self, action: Any) -> Any:
            obs, reward, terminated, truncated, info = self.env.step(action)
            if terminated and info.get("success") and not info.get("fail"):
                terminated = False
            info["is_success"] = bool(info.get("success"))
            return obs, reward, terminated, truncated, info

    kwargs: dict[str, Any] = {"info_mode": "minimal"}
    if config.horizon:
        kwargs["horizon"] = config.horizon
    env = JudgeReward(SuccessAbsorbs(make_task_env(config.task, **kwargs)), make_judge(config.judge),
                      mode=config.reward)
    return Monitor(env, info_keywords=("is_success",))


def _versions() -> dict[str, str]:
    import gymnasium
    import numpy
    import stable_baselines3
    import torch

    return {"stable_baselines3": stable_baselines3.__version__, "torch": torch.__version__,
            "gymnasium": gymnasium.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}


def train_sb3(config: TrainSB3Config) -> dict[str, Any]:
    """Train the policy of ``config`` and write it; returns its card (with ``weights``, ``sha256``).

    Raises:
        PolicyError: stable-baselines3 missing, or a budget / env count below 1.
    """
    if config.steps < 1 or config.envs < 1:
        raise PolicyError(f"train-sb3: --steps ({config.steps}) and --envs ({config.envs}) must be >= 1")
    try:
        import torch
        from stable_baselines3 import PPO, SAC
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError as exc:  # pragma: no cover - rl extra missing
        raise PolicyError("train-sb3 needs stable-baselines3: pip install 'simjudge[rl]'") from exc
    from .bc import file_sha256

    torch.set_num_threads(1)
    hidden = config.hidden or (128 if config.algo == "ppo" else 256)
    settings: dict[str, Any] = {"net_arch": [hidden, hidden]}
    started = time.perf_counter()
    if config.algo == "ppo":
        venv = DummyVecEnv([lambda: _make_env(config) for _ in range(config.envs)])
        venv.seed(TRAIN_SEED_BASE + config.seed)
        settings.update(envs=config.envs, n_steps=256, batch_size=256)
        model: Any = PPO("MlpPolicy", venv, n_steps=256, batch_size=256, seed=config.seed, verbose=0,
                         device="cpu", policy_kwargs={"net_arch": settings["net_arch"]})
    else:
        env = _make_env(config)
        env.reset(seed=TRAIN_SEED_BASE + config.seed)
        starts = min(1000, max(1, config.steps // 2))
        settings.update(learning_starts=starts)
        model = SAC("MlpPolicy", env, learning_starts=starts, seed=config.seed, verbose=0, device="cpu",
                    policy_kwargs={"net_arch": settings["net_arch"]})
    model.learn(total_timesteps=config.steps)
    seconds = time.perf_counter() - started
    recent = list(model.ep_info_buffer)  # the last (up to 100) finished training episodes
    card: dict[str, Any] = {
        "command": _command(config), "algo": config.algo, "task": config.task,
        "judge": config.judge, "reward_mode": config.reward, "budget": config.steps,
        "env_steps": int(model.num_timesteps), "seed": config.seed,
        "train_world_seeds_from": TRAIN_SEED_BASE + config.seed, "settings": settings,
        "episodes": int(model._episode_num) if config.algo == "sac" else None,
        "frames": int(model.num_timesteps),
        "train_return_mean": round(sum(e["r"] for e in recent) / len(recent), 3) if recent else None,
        "train_success_rate": round(sum(bool(e.get("is_success")) for e in recent) / len(recent), 3)
        if recent else None,
        "train_episodes_recent": len(recent),
        "seconds": round(seconds, 1), **_versions(),
        "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if card["episodes"] is None:  # PPO: count the episodes its Monitors finished
        monitors: list[Any] = list(venv.envs)
        card["episodes"] = sum(len(m.get_episode_rewards()) for m in monitors)
    out = Path(config.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp.zip")
    model.save(tmp)
    with zipfile.ZipFile(tmp, "a") as archive:
        archive.writestr(CARD_ENTRY, json.dumps(card, indent=1))
    tmp.replace(out)
    sha = file_sha256(out)
    Path(f"{out}.sha256").write_text(f"{sha}  {out.name}\n")
    return {**card, "weights": str(out), "sha256": sha}


def read_card(path: str | Path) -> dict[str, Any]:
    """The training card a ``train-sb3`` checkpoint carries (``{}`` for other SB3 zips).

    Raises:
        PolicyError: Not a zip file.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            if CARD_ENTRY not in archive.namelist():
                return {}
            return dict(json.loads(archive.read(CARD_ENTRY)))
    except (zipfile.BadZipFile, FileNotFoundError) as exc:
        raise PolicyError(f"{path} is not an SB3 checkpoint ({exc}); train one with simjudge policies "
                          "train-sb3") from exc
