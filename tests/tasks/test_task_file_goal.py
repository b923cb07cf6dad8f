"""A task file's ``goal:`` may be written in the goal language (the ``--goal`` schema)."""

from __future__ import annotations

import pytest
import yaml

from simjudge.envs.goals import JointGoal, JointRangeGoal
from simjudge.envs.sim_env import SimEnv
from simjudge.tasks.spec import LIBRARY_DIR, TaskGoal, TaskSpec, TaskSpecError


def _drawer_task(goal: dict, joint_init: dict | None = None) -> dict:
    data = yaml.safe_load((LIBRARY_DIR / "OpenDrawer-v0.yaml").read_text())
    data.update(env_id="HalfDrawer-v0", name="Half Drawer", goal=goal)
    data.pop("plan", None)
    data.pop("milestones", None)
    if joint_init is not None:
        data["scene"]["objects"][0]["joint_init"] = joint_init
    return data


HALF = {"targets": [{"kind": "joint", "object": "StorageFurniture", "joint": "joint_0",
                     "part": "link_0", "link": "link_1", "low": 0.4, "high": 0.6,
                     "direction": "open"}]}


def test_a_typed_goal_compiles_to_the_env_goal_and_judges_the_env():
    spec = TaskSpec.parse(_drawer_task(HALF))
    assert isinstance(spec.goal, JointRangeGoal) and (spec.goal.low, spec.goal.high) == (0.4, 0.6)
    assert TaskGoal.from_reference(spec).targets[0].low == pytest.approx(0.4)
    for fraction, want in ((0.5, True), (0.9, False), (0.1, False)):
        start = TaskSpec.parse(_drawer_task(HALF, {"joint_0": fraction}))
        env = SimEnv(**{**start.env_kwargs(), "randomization": None})
        try:
            env.reset(seed=0)
            assert env.get_info()["success"] is want, fraction
        finally:
            env.close()


def test_a_one_sided_typed_goal_is_a_joint_goal():
    goal = {"targets": [{**HALF["targets"][0], "low": 0.7, "high": 1.0}]}
    spec = TaskSpec.parse(_drawer_task(goal))
    assert isinstance(spec.goal, JointGoal) and spec.goal.threshold == 0.7


def test_unchanged_parts_and_unmet_starts_are_refused_with_the_fix():
    goal = {**HALF, "unchanged": [{"object": "StorageFurniture", "joint": "joint_2"}]}
    with pytest.raises(TaskSpecError, match="solution file"):
        TaskSpec.parse(_drawer_task(goal))
    start = {**HALF, "starts": [{"object": "StorageFurniture", "joint": "joint_0",
                                 "low": 0.2, "high": 0.3}]}
    with pytest.raises(TaskSpecError, match="joint_init"):
        TaskSpec.parse(_drawer_task(start))
    assert TaskSpec.parse(_drawer_task(start, {"joint_0": 0.25})).goal is not None
