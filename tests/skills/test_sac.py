"""SAC adapter: training, exact save/load/replay, early stopping, best-by-success, errors."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
import torch

from simjudge.skills import sac as sac_module
from simjudge.skills.sac import (
    EvalResult,
    SACConfig,
    check_action_space,
    load_policy,
    make_sac,
    rollout_policy,
    train_sac,
)
from simjudge.skills.subtask_env import SubtaskEnv, SubtaskSpec
from simjudge.tasks.spec import load_task

TINY = SACConfig(
    total_steps=300,
    net_arch=(16, 16),
    batch_size=32,
    buffer_size=2_000,
    learning_starts=100,
    eval_freq=10_000,
    n_eval_episodes=2,
    progress_bar=False,
)

REACH = """
def _compute_reward(self):
    eef_pos = get_eef_pos(self)[0]
    handle = get_link_state(self, "StorageFurniture", "link_1")
    distance = np.linalg.norm(eef_pos - handle)
    return -distance, distance < 0.0
"""


def _spec(code: str = REACH, start=None, horizon: int = 30) -> SubtaskSpec:
    scene = load_task("OpenDrawer-v0").scene.model_dump(mode="json", by_alias=True)
    return SubtaskSpec(scene=scene, reward_code=code, start_state=start, horizon=horizon)


@pytest.fixture(scope="module")
def moved_start() -> dict:
    """A start state away from the settled scene (after a few steps)."""
    env = SubtaskEnv(_spec())
    env.reset()
    for _ in range(5):
        env.step(np.array([0.5, -0.3, -0.4, 0.2, 0.0, 0.1], dtype=np.float32))
    state = env.get_state().to_dict()
    env.close()
    return state


class InfiniteBox(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)


def test_non_finite_action_space_is_rejected_with_the_fix():
    with pytest.raises(ValueError, match="finite bounds.*RescaleAction"):
        make_sac(InfiniteBox(), TINY)
    with pytest.raises(ValueError, match="only Box action spaces"):
        check_action_space(gym.spaces.Discrete(3))


def test_train_save_load_replays_exactly(tmp_path, moved_start):
    spec = _spec(start=moved_start)
    result = train_sac(spec, TINY, out_dir=tmp_path)
    assert not result.success and "success rate" in result.reason
    assert result.env_steps == 300 and result.net_arch == (16, 16)
    assert result.eval_history and result.eval_history[-1].step == 300
    assert (tmp_path / "policy.zip").exists() and (tmp_path / "policy.json").exists()

    model, loaded_spec = load_policy(result.model_path)
    assert loaded_spec == spec
    runs = []
    for policy in (result.policy, model):
        env = SubtaskEnv(loaded_spec)
        runs.append(rollout_policy(policy, env))
        env.close()
    np.testing.assert_array_equal(runs[0].actions, runs[1].actions)
    assert runs[0].steps == spec.horizon
    assert runs[0].end_state.to_dict() == runs[1].end_state.to_dict()
    # the replay starts from the saved start state
    env = SubtaskEnv(loaded_spec)
    env.reset()
    np.testing.assert_allclose(env.get_state().robot_qpos, moved_start["robot_qpos"])
    env.close()


def test_early_stop_when_success_already_holds(tmp_path):
    spec = _spec(code="def _compute_reward(self):\n    return 0.0, True\n")
    config = replace(TINY, total_steps=5_000, eval_freq=50)
    result = train_sac(spec, config)
    assert result.success and result.reason == ""
    assert result.steps_to_success is not None and result.env_steps <= 2
    assert result.best_success_rate == 1.0
    assert result.eval_history[-1].lengths == [1, 1]


def test_best_model_is_kept_by_success_rate(monkeypatch):
    scripted = [(0.5, -1.0), (1.0, -90.0), (0.5, -0.5), (0.0, 0.0), (1.0, -95.0)]
    snapshots: list[dict] = []

    def fake_evaluate(policy, env, n_episodes, *, step=0, seed=0, noise=0.1):
        rate, ret = scripted[len(snapshots)]
        snapshots.append({k: v.clone() for k, v in policy.policy.state_dict().items()})
        return EvalResult(step, rate, ret, deterministic_success=False, lengths=[1])

    monkeypatch.setattr(sac_module, "evaluate_policy", fake_evaluate)
    config = replace(TINY, total_steps=400, eval_freq=100, learning_starts=50)
    result = train_sac(_spec(), config)
    assert len(snapshots) == 5  # at env steps 1, 101, 201, 301 and at the end (400)
    assert result.best_success_rate == 1.0 and result.best_mean_return == -90.0
    kept = result.policy.policy.state_dict()
    for name, value in snapshots[1].items():
        torch.testing.assert_close(kept[name], value)
    assert not result.success  # the noise-free episode never succeeded


def test_ties_are_broken_by_noise_free_success_then_return():
    a = EvalResult(0, 0.8, -50.0, True)
    b = EvalResult(0, 0.8, -10.0, False)
    c = EvalResult(0, 0.6, 0.0, True)
    assert max([c, b, a], key=EvalResult.key) is a
    assert max([c, b], key=EvalResult.key) is b


@pytest.mark.parametrize(
    ("code", "error_type", "message"),
    [
        (
            'def _compute_reward(self):\n    return get_joint_state(self, "StorageFurniture", '
            '"joint_9"), False\n',
            "CodeRuntimeError",
            "valid joints are",
        ),
        ("def _compute_reward(self):\n    return np.nan, False\n", "NonFiniteRewardError", "nan"),
        ("def _compute_reward(self)\n    return 0.0, False\n", "CodeSyntaxError", "line 1"),
    ],
)
def test_reward_errors_are_failure_results(code, error_type, message):
    result = train_sac(_spec(code=code), TINY)
    assert not result.success and result.error_type == error_type
    assert message in result.reason and result.env_steps == 0


def test_nan_reward_mid_training_stops_with_a_failure():
    env = SubtaskEnv(_spec())
    env.reset()
    y0 = float(env.sim.view.eef_pose()[0][1])
    env.close()
    code = (
        "def _compute_reward(self):\n"
        "    eef_pos = get_eef_pos(self)[0]\n"
        "    reward = -np.linalg.norm(eef_pos)\n"
        f"    if abs(eef_pos[1] - {y0!r}) > 0.01:\n"
        "        reward = np.nan\n"
        "    return reward, False\n"
    )
    result = train_sac(_spec(code=code), replace(TINY, total_steps=2_000))
    assert not result.success and result.error_type == "NonFiniteRewardError"
    assert "not a finite number" in result.reason
    assert 0 < result.env_steps < 2_000


@pytest.mark.parametrize("vec_env", ["dummy", "subproc"])
def test_vectorised_envs_train_and_stop_on_success(vec_env):
    spec = _spec(code="def _compute_reward(self):\n    return 0.0, True\n")
    config = replace(TINY, n_envs=2, vec_env=vec_env, eval_freq=50)
    result = train_sac(spec, config)
    assert result.success and result.env_steps == 2  # one step of each env


def test_missing_tensorboard_is_a_clear_warning(monkeypatch):
    monkeypatch.setattr(sac_module.importlib.util, "find_spec", lambda name: None)
    with pytest.warns(UserWarning, match="pip install tensorboard"):
        assert sac_module._tensorboard_dir("runs/tb") is None
    assert sac_module._tensorboard_dir(None) is None


def test_stopping_keeps_the_model_that_met_the_criterion(monkeypatch):
    scripted = [(1.0, False), (0.8, True)]
    snapshots: list[dict] = []

    def fake_evaluate(policy, env, n_episodes, *, step=0, seed=0, noise=0.1):
        rate, deterministic = scripted[len(snapshots)]
        snapshots.append({k: v.clone() for k, v in policy.policy.state_dict().items()})
        return EvalResult(step, rate, -1.0, deterministic_success=deterministic)

    monkeypatch.setattr(sac_module, "evaluate_policy", fake_evaluate)
    config = replace(TINY, total_steps=400, eval_freq=100, learning_starts=50)
    result = train_sac(_spec(), config)
    assert result.success and result.steps_to_success == 101 and result.best_success_rate == 0.8
    kept = result.policy.policy.state_dict()
    for name, value in snapshots[1].items():
        torch.testing.assert_close(kept[name], value)


def test_subtask_env_passes_the_gymnasium_checker(moved_start):
    from gymnasium.utils.env_checker import check_env

    env = SubtaskEnv(_spec(start=moved_start))
    check_env(env, skip_render_check=True)
    obs, info = env.reset()
    assert env.action_space.shape == (6,) and info["elapsed_steps"] == 0
    *_, truncated, info = env.step(env.action_space.sample())
    assert set(info) == {"is_success", "subtask_reward", "physics_error", "elapsed_steps"}
    env.close()
