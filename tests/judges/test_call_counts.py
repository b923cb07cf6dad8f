"""Every judge counts each step it is asked about, whichever path the wrappers take.

The lean step calls a judge's ``_fast`` directly where ``observe_fast`` would only count and
check (a panel does the same for its members); a judge that checks success only every k
steps goes through ``observe_fast``. Either way the counts are the steps observed.
"""

from __future__ import annotations

import pytest

from simjudge.judges import (
    CodeSuccessJudge,
    JudgePanel,
    JudgeRecord,
    JudgeReward,
    PrivilegedProgressJudge,
)
from simjudge.tasks.spec import make_task_env

_SUCCESS = 'success = get_joint_state(self, "StorageFurniture", "joint_0") > 0.2\n'


def _panel() -> JudgePanel:
    return JudgePanel([CodeSuccessJudge(_SUCCESS), PrivilegedProgressJudge()])


@pytest.mark.parametrize("wrapper", [JudgeRecord, JudgeReward])
@pytest.mark.parametrize("every", [1, 3])
def test_the_panel_and_each_member_count_every_observed_step(wrapper, every):
    panel = _panel()
    env = wrapper(make_task_env("OpenDrawer-v0", horizon=50), panel, success_every=every)
    env.reset(seed=0)
    steps = 7
    for _ in range(steps):
        env.step(env.action_space.sample())
    expected = steps + 1  # the reset state is observed too
    assert panel.stats["observe"].calls == expected
    for member in panel.judges.values():
        assert member.stats["observe"].calls == expected
    env.close()


def test_success_every_set_after_construction_takes_effect_at_the_next_reset():
    panel = _panel()
    env = JudgeRecord(make_task_env("OpenDrawer-v0", horizon=50), panel)
    env.reset(seed=0)
    panel.set_success_every(4)
    code = panel.judges["code-success"]
    env.reset(seed=0)
    seen = []
    original = code._fast

    def spy(*args):
        seen.append(args[0])
        return original(*args)

    code._fast = spy  # observe_fast reads the instance attribute
    env.reset(seed=0)
    for _ in range(9):
        env.step(env.action_space.sample())
    assert seen == [0, 4, 8]  # checked on steps 0, k, 2k; repeated in between
    env.close()
