"""JudgeReward: modes, potential-based shaping (telescoping), combine, info keys."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges import (
    CodeRewardJudge,
    JudgeReward,
    JudgeVerify,
    PrivilegedProgressJudge,
    make_judge,
)
from tests.judges.helpers import REWARD_OK, ConstantJudge, run_actions, run_oracle

INFO_KEYS = {"term", "shaping", "judge", "env"}


def _phis(judge_env: JudgeVerify, rollout) -> list[float]:
    return [rollout.reset_info["judge"]["phi"]] + [i["judge"]["phi"] for i in rollout.infos]


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_shaping_telescopes(drawer_env, gamma):
    judge = PrivilegedProgressJudge()
    env = JudgeVerify(JudgeReward(drawer_env, judge, gamma=gamma, shaping_weight=2.0), judge)
    out = run_oracle(env)
    phi = _phis(env, out)
    shaping = [i["judge_reward"]["shaping"] for i in out.infos]
    T = len(shaping)
    discounted = sum(gamma**t * s for t, s in enumerate(shaping))
    assert discounted == pytest.approx(2.0 * (gamma**T * phi[-1] - phi[0]), abs=1e-9)
    if gamma == 1.0:
        assert sum(shaping) == pytest.approx(2.0 * (phi[-1] - phi[0]), abs=1e-9)
    for t, info in enumerate(out.infos, start=1):
        expected = 2.0 * (gamma * phi[t] - phi[t - 1])
        assert info["judge_reward"]["shaping"] == pytest.approx(expected)
        assert out.rewards[t - 1] == pytest.approx(info["judge_reward"]["term"] + expected)


def test_dense_info_keys_are_the_same_every_step(drawer_env):
    env = JudgeReward(drawer_env, make_judge("privileged"))
    out = run_oracle(env)
    assert out.terminated and out.steps > 5
    assert all(set(i["judge_reward"]) == INFO_KEYS for i in out.infos)
    assert all(np.isfinite(r) for r in out.rewards)
    assert "judge_reward" not in out.reset_info


def test_sparse_rewards_success_and_failure(drawer_env):
    env = JudgeReward(drawer_env, make_judge("privileged"), mode="sparse")
    out = run_oracle(env)
    assert out.rewards[-1] == 1.0 and set(out.rewards[:-1]) == {0.0}
    failing = JudgeReward(drawer_env, CodeRewardJudge("x = 1"), mode="sparse")
    out = run_actions(failing, [np.zeros(7)] * 2)
    assert out.rewards == [-1.0, -1.0]


def test_normalized_divides_by_the_documented_maximum(drawer_env):
    judge = PrivilegedProgressJudge()
    env = JudgeReward(drawer_env, judge, mode="normalized", gamma=1.0)
    assert env.max_reward == 2.0  # judge.max_reward (1) + shaping weight (1)
    out = run_oracle(env)
    for reward, info in zip(out.rewards, out.infos, strict=True):
        dense = info["judge_reward"]["term"] + info["judge_reward"]["shaping"]
        assert reward == pytest.approx(dense / 2.0) and -1.0 <= reward <= 1.0


def test_normalized_needs_a_bound_for_generated_rewards(drawer_env):
    with pytest.raises(ValueError, match="max_reward"):
        JudgeReward(drawer_env, CodeRewardJudge(REWARD_OK), mode="normalized")
    env = JudgeReward(drawer_env, CodeRewardJudge(REWARD_OK), mode="normalized", max_reward=0.0)
    assert env.max_reward == 1.0  # M = max_reward (0) + shaping weight (1)


def test_combine_add_keeps_the_env_reward(drawer_env):
    env = JudgeReward(drawer_env, ConstantJudge(reward=0.25, phi=None), combine="add")
    out = run_actions(env, [np.zeros(7)] * 3)
    for reward, info in zip(out.rewards, out.infos, strict=True):
        assert info["judge_reward"]["shaping"] == 0.0  # no Φ, no shaping
        assert reward == pytest.approx(0.25 + info["judge_reward"]["env"])


def test_invalid_configuration_says_what_is_supported(drawer_env):
    with pytest.raises(ValueError, match=r"mode='rl'.*\['sparse', 'dense', 'normalized'\]"):
        JudgeReward(drawer_env, ConstantJudge(), mode="rl")
    with pytest.raises(ValueError, match="combine"):
        JudgeReward(drawer_env, ConstantJudge(), combine="mix")
    with pytest.raises(ValueError, match="gamma"):
        JudgeReward(drawer_env, ConstantJudge(), gamma=0.0)
    with pytest.raises(TypeError, match="needs a Judge"):
        JudgeReward(drawer_env, "privileged")


def test_info_key_collision_is_reported(drawer_env):
    inner = JudgeReward(drawer_env, ConstantJudge())
    env = JudgeReward(inner, ConstantJudge())
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"already has the key 'judge_reward'.*key="):
        env.step(np.zeros(7, dtype=np.float32))
    ok = JudgeReward(inner, ConstantJudge(), key="judge_reward_2")
    ok.reset(seed=0)
    _, _, _, _, info = ok.step(np.zeros(7, dtype=np.float32))
    assert {"judge_reward", "judge_reward_2"} <= set(info)
