"""The privileged progress judge: equals the env's Φ on built-in tasks; light goal specs."""

from __future__ import annotations

import pytest

from simjudge.envs.goals import JointGoal, PlaceGoal
from simjudge.judges import (
    JudgeContext,
    JudgeVerify,
    LinkGoal,
    PrivilegedProgressJudge,
    Transition,
    progress_goal,
)
from simjudge.tasks.spec import make_task_env
from tests.judges.helpers import run_oracle


@pytest.mark.parametrize("task", ["OpenDrawer-v0", "PressButton-v0", "PutBreadInBowl-v0"])
def test_phi_equals_the_env_progress_on_built_in_tasks(task):
    env = make_task_env(task)
    try:
        out = run_oracle(JudgeVerify(env, PrivilegedProgressJudge()))
    finally:
        env.close()
    for info in [out.reset_info, *out.infos]:
        assert info["judge"]["phi"] == pytest.approx(info["progress"], abs=1e-12)
        assert info["judge"]["details"]["success"] == info["success"]
    assert out.infos[-1]["judge"]["verdict"] == "success" and out.infos[-1]["judge"]["phi"] == 1.0


def test_light_specs_build_the_staged_goals(drawer_env):
    ctx = JudgeContext.from_env(drawer_env)
    through_fixed = progress_goal(
        {"object": "StorageFurniture", "link": "link_1", "direction": "open"}, ctx
    )
    assert isinstance(through_fixed, JointGoal) and through_fixed.joint == "joint_0"
    child = progress_goal(
        {"object": "StorageFurniture", "joint": "joint_2", "direction": "open"}, ctx
    )
    assert child.link == "link_2"
    assert isinstance(progress_goal({"object": "Cube", "target": "Box"}), PlaceGoal)
    assert isinstance(progress_goal({"object": "StorageFurniture", "link": "link_1"}), LinkGoal)
    with pytest.raises(ValueError, match="joint that moves"):
        progress_goal({"object": "StorageFurniture", "link": "link_1", "direction": "open"})
    with pytest.raises(ValueError, match="at least 'object'"):
        progress_goal({"link": "link_1"})


def test_spec_goal_matches_the_task_goal(drawer_env):
    spec = {"object": "StorageFurniture", "link": "link_1", "direction": "open", "threshold": 0.6}
    out = run_oracle(JudgeVerify(drawer_env, PrivilegedProgressJudge(goal=spec)))
    assert all(i["judge"]["phi"] == pytest.approx(i["progress"]) for i in out.infos)


def test_link_goal_reaches_one_when_the_handle_is_held(drawer_env):
    judge = PrivilegedProgressJudge(goal={"object": "StorageFurniture", "link": "link_1"})
    out = run_oracle(JudgeVerify(drawer_env, judge))
    phis = [out.reset_info["judge"]["phi"]] + [i["judge"]["phi"] for i in out.infos]
    assert phis[0] < 0.01 and phis[-1] == 1.0 and out.infos[-1]["is_success"]
    assert not out.infos[-1]["success"]  # grasping the handle does not open the drawer
    assert max(phis[:-1]) < 1.0


def test_missing_goal_and_missing_view_are_configuration_errors(drawer_env):
    with pytest.raises(ValueError, match="has no goal"):
        PrivilegedProgressJudge().reset(JudgeContext())
    judge = PrivilegedProgressJudge()
    judge.reset(JudgeContext.from_env(drawer_env))
    with pytest.raises(ValueError, match="no StateView"):
        judge.observe(Transition(step=0))


def test_physics_error_is_a_failure_with_the_same_keys(drawer_env):
    judge = PrivilegedProgressJudge()
    judge.reset(JudgeContext.from_env(drawer_env))
    _, info = drawer_env.reset(seed=0)
    ok = judge.observe(Transition(step=0, view=drawer_env.view, info=info))
    bad = judge.observe(Transition(step=1, view=drawer_env.view, info={"physics_error": True}))
    assert bad.verdict == "failure" and bad.phi == 0.0 and set(bad.details) == set(ok.details)
