"""Code judges: generated reward/success code run live; failures are verdicts, not crashes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from simjudge.envs.codegen import ExecutionLimits
from simjudge.judges import (
    CodeRewardJudge,
    CodeSuccessJudge,
    JudgeContext,
    JudgeVerify,
    Transition,
    success_part,
)
from tests.judges.helpers import REWARD_OK, run_actions, run_oracle

NAN_REWARD = """
def _compute_reward(self):
    angle = get_joint_state(self, "StorageFurniture", "joint_0")
    return np.nan * angle, False
"""
BAD_NAME = """
def _compute_reward(self):
    return -get_joint_state(self, "StorageFurniture", "joint_9"), False
"""
LOOP = """
def _compute_reward(self):
    while True:
        pass
    return 0.0, False
"""
SUCCESS_BLOCK = """
rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")
success = check_grasped(self, "StorageFurniture", "link_1")
"""


def test_reward_code_runs_and_reports_success(drawer_env):
    judge = CodeRewardJudge(REWARD_OK)
    out = run_oracle(JudgeVerify(drawer_env, judge))
    rewards = [i["judge"]["reward"] for i in out.infos]
    assert all(np.isfinite(rewards)) and rewards[-1] > rewards[0]
    assert out.infos[-1]["judge"]["verdict"] == "success" and out.infos[-1]["is_success"]
    assert all(set(i["judge"]["details"]) == {"success", "error"} for i in out.infos)


@pytest.mark.parametrize(
    "code, fragment",
    [
        (NAN_REWARD, "NonFiniteRewardError"),
        (BAD_NAME, "unknown joint 'joint_9'"),
        ("import os\ndef _compute_reward(self):\n    return 0.0, False", "compile error"),
        (LOOP, "CodeTimeoutError"),
    ],
)
def test_errors_become_failure_verdicts_and_the_run_continues(short_drawer_env, code, fragment):
    limits = ExecutionLimits(time_limit_s=0.05, max_steps=20_000)
    judge = CodeRewardJudge(code, limits=limits, error_reward=-1.0)
    env = JudgeVerify(short_drawer_env, judge, terminate_on_failure=False)
    out = run_actions(env, [np.zeros(7)] * 10)
    assert out.truncated and out.steps == 6
    for info in [out.reset_info, *out.infos]:
        assert info["judge"]["verdict"] == "failure"
        assert fragment in info["judge"]["reason"] and fragment in info["judge"]["details"]["error"]
        assert info["judge"]["reward"] == -1.0


def test_success_judge_kinds(drawer_env):
    for kind, code in [
        ("success", 'success = check_grasped(self, "StorageFurniture", "link_1")'),
        ("primitive", SUCCESS_BLOCK),
        ("reward", REWARD_OK),
    ]:
        judge = CodeSuccessJudge(code, kind=kind)
        out = run_oracle(JudgeVerify(drawer_env, judge))
        assert out.infos[-1]["judge"]["verdict"] == "success", kind
        assert out.infos[-1]["judge"]["phi"] == 1.0 and out.reset_info["judge"]["phi"] == 0.0


def test_success_part_drops_primitive_calls():
    assert success_part(SUCCESS_BLOCK).strip() == (
        "success = check_grasped(self, 'StorageFurniture', 'link_1')"
    )
    assert success_part("this is (not python") == "this is (not python"


def test_code_comes_from_the_context_subtask(drawer_env):
    ctx = JudgeContext.from_env(drawer_env).with_subtask("reward", REWARD_OK, "open the drawer")
    judge = CodeSuccessJudge()  # kind and code from the context
    out = run_oracle(JudgeVerify(drawer_env, judge, context=ctx))
    assert out.infos[-1]["is_success"]
    with pytest.raises(ValueError, match="has no code"):
        CodeRewardJudge().reset(JudgeContext())
    with pytest.raises(ValueError, match="kind must be one of"):
        CodeSuccessJudge("x = 1", kind="rl")


def test_compiled_judges_pickle_and_recompile(drawer_env):
    judge = CodeRewardJudge(REWARD_OK)
    judge.reset(JudgeContext())
    _, info = drawer_env.reset(seed=0)
    before = judge.observe(Transition(step=0, view=drawer_env.view, info=info))
    again = pickle.loads(pickle.dumps(judge))
    assert again._compiled is None
    after = again.observe(Transition(step=0, view=drawer_env.view, info=info))
    assert after == before
