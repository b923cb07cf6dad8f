"""MPC reward solver: optimises the generated reward; a wrong reward fails."""

from __future__ import annotations

import pytest

from simjudge.envs.codegen import compile_reward
from simjudge.envs.state_api import STATE_API
from simjudge.skills.mpc import MPCConfig, solve_with_mpc
from simjudge.skills.scripted import ScriptedPolicy
from simjudge.tasks.spec import make_task_env

PULL = '''
def _compute_reward(self):
    q = get_joint_state(self, "StorageFurniture", "joint_0")
    low, high = get_joint_limit(self, "StorageFurniture", "joint_0")
    return -abs(q - high) / (high - low), q >= low + 0.6 * (high - low)
'''
WRONG_DIRECTION = PULL.replace("-abs(q - high)", "-abs(q - low)").replace(
    "q >= low + 0.6", "q >= low + 0.6"
)


@pytest.fixture(scope="module")
def grasped_drawer():
    env = make_task_env("OpenDrawer-v0")
    env.reset(seed=0)
    policy = ScriptedPolicy(env)
    while env.scene.robot.attachment is None:
        env.step(policy())
    yield env, env.get_state()
    env.close()


def test_mpc_opens_drawer_with_correct_reward(grasped_drawer):
    env, start = grasped_drawer
    result = solve_with_mpc(env, compile_reward(PULL, STATE_API), start, budget_steps=60, seed=0)
    assert result.success, result.reason
    assert env.evaluate()["success"]  # the task's own goal agrees
    assert result.sim_steps > result.steps  # it planned


def test_wrong_direction_reward_fails(grasped_drawer):
    env, start = grasped_drawer
    result = solve_with_mpc(
        env, compile_reward(WRONG_DIRECTION, STATE_API), start, budget_steps=30, seed=0
    )
    assert not result.success
    assert not env.evaluate()["success"]


def test_deterministic_per_seed(grasped_drawer):
    env, start = grasped_drawer
    fn = compile_reward(PULL, STATE_API)
    config = MPCConfig(samples=6)
    a = solve_with_mpc(env, fn, start, budget_steps=8, config=config, seed=3)
    b = solve_with_mpc(env, fn, start, budget_steps=8, config=config, seed=3)
    assert a.rewards == b.rewards


def test_runtime_error_in_reward_is_a_reason_not_a_crash(grasped_drawer):
    env, start = grasped_drawer
    broken = PULL.replace('"joint_0")\n    low', '"joint_9")\n    low')
    result = solve_with_mpc(env, compile_reward(broken, STATE_API), start, budget_steps=5)
    assert not result.success
    assert "joint_9" in result.reason
