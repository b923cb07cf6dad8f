"""One compiled object per source (issue 40): the converter, the judges, the executor and
the SAC environments share it instead of compiling the same proposal again."""

from __future__ import annotations

import pytest

from simjudge.envs.codegen import (
    CodeSyntaxError,
    ExecutionLimits,
    GeneratedCodeError,
    compile_once,
)
from simjudge.envs.codegen.cache import cache_info
from simjudge.envs.state_api import STATE_API
from simjudge.judges import JudgeContext
from simjudge.judges.code import CodeRewardJudge, CodeSuccessJudge

REWARD = ('def _compute_reward(self):\n'
          '    angle = get_joint_state(self, "StorageFurniture", "joint_0")\n'
          '    return -abs(angle - 0.3), angle > 0.29\n')


def test_the_same_source_is_compiled_once_and_other_settings_apart():
    first = compile_once("reward", REWARD, STATE_API)
    misses = cache_info()["misses"]
    assert compile_once("reward", REWARD, STATE_API) is first
    assert compile_once("reward", REWARD, STATE_API, mode="inprocess") is first
    assert cache_info()["misses"] == misses
    assert compile_once("reward", REWARD, STATE_API, mode="subprocess") is not first
    assert compile_once("reward", REWARD, STATE_API,
                        limits=ExecutionLimits(time_limit_s=0.2)) is not first
    assert compile_once("reward", REWARD + "\n# changed\n", STATE_API) is not first
    other_api = {**STATE_API, "get_joint_state": lambda view, o, j: 0.0}
    assert compile_once("reward", REWARD, other_api) is not first
    with pytest.raises(ValueError, match="kind"):
        compile_once("poem", REWARD, STATE_API)  # type: ignore[arg-type]


def test_a_source_that_fails_the_check_fails_every_time():
    for _ in range(2):
        with pytest.raises(CodeSyntaxError):
            compile_once("reward", "def _compute_reward(self):\n    return (\n", STATE_API)
    with pytest.raises(GeneratedCodeError):
        compile_once("reward", "import os\n", STATE_API)


def test_judges_of_one_source_share_its_compiled_code():
    a, b = CodeRewardJudge(REWARD), CodeRewardJudge(REWARD)
    a.reset(JudgeContext())
    b.reset(JudgeContext())
    assert a._compiled is b._compiled is compile_once("reward", REWARD, STATE_API)
    s = CodeSuccessJudge("success = 2 > 1")
    s.reset(JudgeContext())
    assert s._compiled is compile_once("success", "success = 2 > 1", STATE_API)
