"""Composed long-horizon built-in tasks: registry, ordered goals, staged Φ and the oracle."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import simjudge  # noqa: F401 - registers the ids
from simjudge.envs.goals import AllOfGoal, SequenceGoal
from simjudge.pipelines.plans.groundtruth import composed_ids as plan_composed_ids
from simjudge.pipelines.plans.groundtruth import load_plan_task, plan_task_ids, task_plan
from simjudge.skills.scripted import ScriptedPolicy
from simjudge.tasks.spec import (
    builtin_ids,
    composed_ids,
    library_ids,
    load_composed,
    load_task,
    make_task_env,
)

FAST = ("PutCubeInDrawer-v0", "StartMicrowaveWithDoorOpen-v0")


def _oracle_run(env_id: str, seed: int) -> tuple[bool, list[float], list[int]]:
    env = make_task_env(env_id)
    try:
        _, info = env.reset(seed=seed)
        policy = ScriptedPolicy(env, seed=seed)
        phis, stages = [float(info["progress"])], [int(info.get("stages_done", info.get("goals_done", 0)))]
        for _ in range(env.horizon):
            _, _, _, _, info = env.step(policy())
            phis.append(float(info["progress"]))
            stages.append(int(info.get("stages_done", info.get("goals_done", 0))))
            if info["success"]:
                break
        return bool(info["success"]), phis, stages
    finally:
        env.close()


def test_composed_tasks_are_builtin_and_separate_from_the_library():
    ids = composed_ids()
    assert len(ids) >= 6
    assert not set(ids) & set(library_ids())
    assert builtin_ids() == library_ids() + ids
    assert plan_composed_ids() == ids and plan_task_ids() == builtin_ids()
    for spec in load_composed():
        goal = spec.goal
        assert isinstance(goal, (SequenceGoal, AllOfGoal))
        assert 2 <= len(goal.goals) <= 4
        assert "composed" in spec.tags
        plan = task_plan(load_plan_task(spec.env_id))
        assert len(plan.milestones) >= len(goal.goals)
    assert sum(isinstance(s.goal, SequenceGoal) for s in load_composed()) >= 5
    assert max(len(s.goal.goals) for s in load_composed() if s.goal is not None) == 4
    assert load_task("simjudge/PutCubeInDrawer-v0").name == "Put Cube In Drawer"
    assert load_task("Put Cube In Drawer").env_id == "PutCubeInDrawer-v0"


@pytest.mark.parametrize("env_id", composed_ids())
def test_registered_and_passes_check_env(env_id):
    env = gym.make(f"simjudge/{env_id}")
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("env_id", FAST)
def test_oracle_solves_stage_after_stage_with_monotone_staged_phi(env_id):
    for seed in (0, 1):
        success, phis, stages = _oracle_run(env_id, seed)
        assert success, f"{env_id} seed {seed}: final Φ {phis[-1]:.2f}"
        assert phis[-1] == 1.0 and max(phis[:-1]) < 1.0
        assert stages == sorted(stages)  # stages only accumulate
        n = len(load_task(env_id).goal.goals)  # type: ignore[union-attr]
        for k in range(1, n):  # Φ at each stage boundary is at least k/n, and never lower after
            first = stages.index(k)
            assert phis[first] >= k / n - 1e-9
            assert min(phis[first:]) >= k / n - 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("env_id", composed_ids())
def test_oracle_solves_every_composed_task(env_id):
    for seed in (0, 1):
        success, phis, _ = _oracle_run(env_id, seed)
        assert success, f"{env_id} seed {seed}: final Φ {phis[-1]:.2f}"


def test_sequence_order_matters_and_memory_resets():
    """Opening the top drawer first does not count for "bottom, then top"; `all` would."""
    env = make_task_env("OpenDrawersBottomThenTop-v0")
    try:
        goal = env.goal
        assert isinstance(goal, SequenceGoal)
        env.reset(seed=0)
        second_first = goal.goals[1]
        policy = ScriptedPolicy(env)
        policy.env = _GoalView(env, second_first)  # type: ignore[assignment]
        info: dict = {}
        for _ in range(60):
            _, _, _, _, info = env.step(policy())
            if info["g1.success"]:
                break
        assert info["g1.success"] and not info["g0.success"]
        assert info["stages_done"] == 0.0 and info["progress"] < 0.5
        unordered = AllOfGoal(goals=goal.goals)
        assert unordered.progress(unordered.evaluate(env.view)) >= 0.5  # half done, unordered
        # now the right first stage: the second one is already true, so it must be redone
        policy = ScriptedPolicy(env)
        policy.env = _GoalView(env, goal.goals[0])  # type: ignore[assignment]
        for _ in range(120):  # seed 0's world: the oracle re-grasps once (104 steps)
            _, _, _, _, info = env.step(policy())
            if info["g0.success"]:
                break
        # the top drawer, opened before its turn, does not count now (it must be redone)
        assert info["stages_done"] == 1.0 and not info["success"]
        if info["g1.success"]:
            assert not info["armed"] and info["progress"] == pytest.approx(0.5)
        _, info = env.reset(seed=0)  # a new episode forgets the stages
        assert info["stages_done"] == 0.0 and info["progress"] < 0.1
    finally:
        env.close()


class _GoalView:
    """The env seen through one stage's goal (drives the oracle at a chosen stage)."""

    def __init__(self, env, goal) -> None:
        self._env, self.goal = env, goal

    def __getattr__(self, name):
        return getattr(self._env, name)


def test_sequence_goal_progress_formula():
    goal = load_task("PutCubeInDrawer-v0").goal
    assert isinstance(goal, SequenceGoal)
    facts = {"success": False, "stages_done": 1.0, "armed": True,
             "g1.success": False, "g1.is_grasped": True, "g1.is_placed": False,
             "g1.distance_to_object": 0.0, "g1.distance_to_target": 0.0,
             "g1.approach": 1.0, "g1.carry": 1.0}
    phi_stage = goal.goals[1].progress(goal.sub_facts(facts, 1))
    assert goal.progress(facts) == pytest.approx((1 + phi_stage) / 3)
    assert goal.progress({**facts, "armed": False}) == pytest.approx(1 / 3)
    assert goal.progress({**facts, "success": True}) == 1.0
    assert np.isclose(goal.progress({**facts, "stages_done": 0.0, "armed": False}), 0.0)


def test_restored_snapshot_keeps_the_stages_it_shows_done():
    env = make_task_env("OpenDrawersBottomThenTop-v0")
    try:
        env.reset(seed=0)
        policy = ScriptedPolicy(env)
        for _ in range(env.horizon):
            _, _, _, _, info = env.step(policy())
            if info["success"]:
                break
        assert info["success"]
        shown = 0  # the stages the snapshot shows done, in order from the first
        while shown < 2 and info[f"g{shown}.success"]:
            shown += 1
        done = env.get_state()
        _, info = env.reset(seed=0, options={"state": done})
        assert info["stages_done"] == shown and info["success"] == (shown == 2)
        env.reset(seed=0)
        env.set_state(done)
        assert env.evaluate()["stages_done"] == shown
        env.reset(seed=0)  # the initial state shows none done
        assert env.evaluate()["stages_done"] == 0.0
    finally:
        env.close()
