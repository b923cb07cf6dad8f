"""A wrapper re-arms its judge between episodes of the same setup, and fully resets it otherwise.

Re-arming (``Judge.rearm``) keeps what a judge derived from the setup (goals, bindings, compiled
code); it must give the same signals as a full reset, and must not be used when the setup or the
judge changed in between: another base context, another view, a judge reset by someone else, a
changed goal spec.
"""

from __future__ import annotations

import copy

import numpy as np

from simjudge.judges import (
    CodeSuccessJudge,
    JudgeContext,
    JudgePanel,
    JudgeRecord,
    PrivilegedProgressJudge,
)
from simjudge.judges.privileged import progress_goal
from simjudge.tasks.spec import make_task_env

SUCCESS = (
    'angle = get_joint_state(self, "StorageFurniture", "joint_0")\n'
    'low, high = get_joint_limit(self, "StorageFurniture", "joint_0")\n'
    "success = angle >= low + 0.6 * (high - low)\n"
)


class _Counting(PrivilegedProgressJudge):
    """The privileged judge, counting full resets and re-arms."""

    def __init__(self, goal=None):
        super().__init__(goal)
        self.full = self.rearms = 0

    def _reset(self, context):
        self.full += 1
        super()._reset(context)

    def _rearm(self, context):
        self.rearms += 1
        super()._rearm(context)


def _episodes(env, count: int, steps: int = 8) -> list[list[tuple]]:
    """Each episode's fast results (reset, then ``steps`` random steps, seeded)."""
    rng = np.random.default_rng(0)
    episodes = []
    for episode in range(count):
        env.reset(seed=episode)
        results = [env.last_fast[:3]]
        for _ in range(steps):
            action = rng.uniform(-1, 1, size=7).astype(np.float32)
            env.step(action)
            results.append(env.last_fast[:3])
        episodes.append(results)
    return episodes


def test_rearmed_episodes_judge_as_fully_reset_ones() -> None:
    counting = _Counting()
    rearmed = JudgeRecord(make_task_env("OpenDrawer-v0"),
                          JudgePanel([CodeSuccessJudge(SUCCESS), counting]))
    got = _episodes(rearmed, 3)
    assert (counting.full, counting.rearms) == (1, 2)
    assert rearmed.context.episode == 2 and rearmed.context.seed == 2
    assert counting.context is rearmed.context  # the member has this episode's context
    fresh = []
    for episode in range(3):  # every episode on a new recorder: a full reset each time
        env = JudgeRecord(make_task_env("OpenDrawer-v0"),
                          JudgePanel([CodeSuccessJudge(SUCCESS), PrivilegedProgressJudge()]))
        fresh.append(_episodes(env, episode + 1)[-1])
    assert got == fresh


def test_a_changed_setup_or_judge_gets_a_full_reset() -> None:
    counting = _Counting()
    env = JudgeRecord(make_task_env("OpenDrawer-v0"), counting)
    env.reset(seed=0)
    env.reset(seed=1)
    assert (counting.full, counting.rearms) == (1, 1)
    counting.reset(JudgeContext.from_env(env))  # someone else reset the judge in between
    env.reset(seed=2)
    assert (counting.full, counting.rearms) == (3, 1)
    counting.goal_spec = progress_goal(env.unwrapped.goal)  # a new goal object to judge with
    env.reset(seed=3)
    assert (counting.full, counting.rearms) == (4, 2)  # re-armed, and _rearm re-derived it
    assert counting.goal is counting.goal_spec
    counting.goal_spec = None
    env.reset(seed=4)  # the spec changed back: derived again from the context
    assert (counting.full, counting.rearms) == (5, 3) and counting._info_keys is not None
    env.unwrapped.goal = copy.copy(env.unwrapped.goal)  # the env now has another goal object
    env.reset(seed=5)
    assert (counting.full, counting.rearms) == (6, 4) and counting._info_keys is None
    given = JudgeRecord(make_task_env("OpenDrawer-v0"), counting2 := _Counting(),
                        context=lambda e: JudgeContext.from_env(e))  # a new base each episode
    given.reset(seed=0)
    given.reset(seed=1)
    assert (counting2.full, counting2.rearms) == (2, 0)
