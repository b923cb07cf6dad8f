"""JudgeVerify: termination on verdicts, info["judge"] every step, is_success, stacking."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from simjudge.judges import (
    VERDICTS,
    CodeRewardJudge,
    JudgeContext,
    JudgeRecord,
    JudgeReward,
    JudgeVerify,
    NearLink,
    PredicateJudge,
    make_judge,
)
from tests.judges.helpers import ConstantJudge, run_actions, run_oracle

JUDGE_KEYS = {"verdict", "reason", "phi", "reward", "step", "details"}


def test_oracle_rollout_terminates_on_success_and_writes_is_success(drawer_env):
    env = JudgeVerify(drawer_env, make_judge("privileged"))
    out = run_oracle(env)
    assert out.terminated and not out.truncated
    infos = [out.reset_info, *out.infos]
    assert all(set(i["judge"]) == JUDGE_KEYS for i in infos)
    detail_keys = {frozenset(i["judge"]["details"]) for i in infos}
    assert len(detail_keys) == 1
    assert all(i["judge"]["verdict"] in VERDICTS for i in infos)
    assert [i["judge"]["step"] for i in infos] == list(range(out.steps + 1))
    assert out.infos[-1]["judge"]["verdict"] == "success" and out.infos[-1]["is_success"] is True
    assert all("is_success" not in i for i in infos[:-1])


def test_judge_success_ends_the_episode_before_the_env_goal(drawer_env):
    judge = PredicateJudge(NearLink("StorageFurniture", "link_1", 0.1))
    out = run_oracle(JudgeVerify(drawer_env, judge))
    assert out.terminated and out.infos[-1]["is_success"]
    assert not out.infos[-1]["success"]  # the env's own goal is not reached yet


def test_truncation_reports_no_success(short_drawer_env):
    env = JudgeVerify(short_drawer_env, make_judge("privileged"))
    out = run_actions(env, [np.zeros(7)] * 10)
    assert out.truncated and not out.terminated and out.steps == 6
    assert out.infos[-1]["is_success"] is False
    assert out.infos[-1]["judge"]["verdict"] == "undecided"


def test_failure_verdict_terminates_or_runs_on(short_drawer_env):
    code = "def _compute_reward(self):\n    return 1.0 / 0.0, False"
    stop = JudgeVerify(short_drawer_env, CodeRewardJudge(code))
    out = run_actions(stop, [np.zeros(7)] * 10)
    assert out.terminated and out.steps == 1 and out.infos[-1]["is_success"] is False
    go_on = JudgeVerify(short_drawer_env, CodeRewardJudge(code), terminate_on_failure=False)
    out = run_actions(go_on, [np.zeros(7)] * 10)
    assert out.truncated and out.steps == 6
    assert all(i["judge"]["verdict"] == "failure" for i in out.infos)
    assert "ZeroDivisionError" in out.infos[-1]["judge"]["reason"]
    assert math.isnan(out.infos[-1]["judge"]["phi"])  # no potential: NaN keeps the float type


def test_stacked_wrappers_judge_each_step_once(drawer_env):
    judge = make_judge("privileged")
    env = JudgeRecord(JudgeVerify(JudgeReward(drawer_env, judge), judge), judge)
    out = run_oracle(env)
    assert judge.stats["observe"].calls == out.steps + 1
    last = out.infos[-1]
    assert last["judge"]["phi"] == 1.0 and last["judge_record"]["verdict"] == "success"
    with pytest.raises(ValueError, match="innermost"):
        JudgeVerify(JudgeReward(drawer_env, judge), judge, context=JudgeContext())


def test_distinct_keys_are_enforced(drawer_env):
    with pytest.raises(ValueError, match="differ"):
        JudgeVerify(drawer_env, ConstantJudge(), key="x", success_key="x")
    env = JudgeVerify(JudgeVerify(drawer_env, ConstantJudge()), ConstantJudge())
    with pytest.raises(ValueError, match="already has the key 'judge'"):
        env.reset(seed=0)


@pytest.mark.filterwarnings("ignore::UserWarning")  # "wrapped env" and "infinite Box" notes
def test_check_env_passes_on_a_fully_wrapped_task_env(drawer_env, tmp_path):
    judge = make_judge("privileged")
    env = JudgeRecord(JudgeVerify(JudgeReward(drawer_env, judge), judge), judge, folder=tmp_path)
    check_env(env, skip_render_check=True)
