"""Judge wrappers under vector envs: gymnasium SyncVectorEnv and stable-baselines3."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from simjudge.judges import JudgeReward, JudgeVerify, make_judge
from simjudge.tasks.spec import make_task_env


def make_wrapped(horizon: int = 30):
    """An env factory: a fresh judge per env (judges keep per-episode state)."""

    def factory():
        judge = make_judge("privileged")
        env = make_task_env("OpenDrawer-v0", horizon=horizon)
        return JudgeVerify(JudgeReward(env, judge), judge)

    return factory


def test_sync_vector_env_stacks_judge_info():
    envs = gym.vector.SyncVectorEnv([make_wrapped(horizon=4) for _ in range(2)])
    try:
        obs, infos = envs.reset(seed=0)
        assert infos["judge"]["verdict"].tolist() == ["undecided", "undecided"]
        for _ in range(4):
            obs, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
            assert rewards.dtype == np.float64 and np.all(np.isfinite(rewards))
            assert infos["judge"]["phi"].dtype == np.float64
            assert set(infos["judge_reward"]) >= {"term", "shaping", "judge", "env"}
        assert truncated.all() and infos["_is_success"].all() and not infos["is_success"].any()
    finally:
        envs.close()


def test_sb3_sac_trains_with_judge_wrappers_and_logs_success():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import SAC
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([make_wrapped(horizon=30) for _ in range(2)])
    model = SAC(
        "MlpPolicy",
        vec,
        policy_kwargs={"net_arch": [32, 32]},
        learning_starts=50,
        batch_size=32,
        train_freq=4,
        gradient_steps=1,
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=300)
    assert len(model.ep_success_buffer) >= 2
    assert all(isinstance(x, bool | np.bool_) for x in model.ep_success_buffer)
    vec.close()


@pytest.mark.slow
def test_sb3_subproc_vec_env_runs_the_wrappers():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([make_wrapped(horizon=5) for _ in range(2)], start_method="spawn")
    try:
        vec.seed(0)
        vec.reset()
        for _ in range(5):
            _, rewards, dones, infos = vec.step(np.zeros((2, 7), dtype=np.float32))
            assert all(set(i["judge"]) >= {"verdict", "phi"} for i in infos)
        assert dones.all() and all("is_success" in i for i in infos)
    finally:
        vec.close()
