"""Reference solutions of the composed tasks: valid, and verified by executing them.

The executor checks a task's goal on the final state only; a ``sequence`` goal needs the
order, so the test replays the executed subtasks' end states, in order, through one bound
evaluator of the task's goal (each stage must be reached at a subtask boundary).
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.codegen import check_source, compile_reward
from simjudge.envs.goals import SequenceGoal
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import restore_state
from simjudge.envs.state_api import STATE_API
from simjudge.skills.executor import execute_solution
from simjudge.skills.run_files import load_subtask
from simjudge.tasks.spec import (
    COMPOSED_SOLUTIONS_DIR,
    RunDir,
    Solution,
    composed_ids,
    load_solution,
    load_task,
)

pytestmark = pytest.mark.timeout(300)


def test_every_composed_task_has_a_valid_reference_solution():
    assert sorted(p.stem for p in COMPOSED_SOLUTIONS_DIR.glob("*.yaml")) == composed_ids()
    for env_id in composed_ids():
        solution = load_solution(env_id)
        assert isinstance(solution, Solution) and solution.task == env_id
        assert solution.scene == load_task(env_id).scene
        env = SimEnv(solution.scene)
        for subtask in solution.subtasks:
            assert not check_source(subtask.code, subtask.kind), (env_id, subtask.name)
            if subtask.kind == "reward":
                reward, success = compile_reward(subtask.code, STATE_API)(env.view)
                assert np.isfinite(reward) and success in (True, False)  # closing: true at reset
        env.close()


def _stages_through_end_states(env_id: str, run: RunDir, count: int) -> list[dict]:
    spec = load_task(env_id)
    env = SimEnv(spec.scene, goal=spec.goal)
    try:
        env.reset(seed=0)
        evaluate = spec.goal.bind(env.view)  # type: ignore[union-attr]
        facts = [evaluate()]
        for index in range(count):
            done = load_subtask(run, index)
            assert done is not None, f"subtask {index} of {env_id} did not finish"
            restore_state(env.scene, done[1])
            facts.append(evaluate())
        return facts
    finally:
        env.close()


SOLVER = {"CloseMicrowaveAndStart-v0": "mpc", "HeatBreadInMicrowave-v0": "mpc"}
"""Reward subtasks are solved by the privileged oracle, except where it does not finish from
the planner's grasp within a subtask's 100 steps (the microwave door): sampling MPC on the
solution's own reward."""


def _verify(env_id: str, out) -> None:
    solution = load_solution(env_id)
    solver = SOLVER.get(env_id, "oracle")
    outcome = execute_solution(solution, out, reward_solver=solver, video=False)  # type: ignore[arg-type]
    assert all(outcome.subtask_success), outcome.subtask_success
    facts = _stages_through_end_states(env_id, RunDir(out), len(solution.subtasks))
    assert not facts[0]["success"] and facts[-1]["success"], facts[-1]
    if isinstance(load_task(env_id).goal, SequenceGoal):
        done = [f["stages_done"] for f in facts]
        assert done == sorted(done) and done[-1] == len(load_task(env_id).goal.goals)  # type: ignore[union-attr]


def test_put_cube_in_drawer_solution_verifies_by_execution(tmp_path):
    _verify("PutCubeInDrawer-v0", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", [t for t in composed_ids() if t != "PutCubeInDrawer-v0"])
def test_reference_solution_verifies_by_execution(env_id, tmp_path):
    _verify(env_id, tmp_path)
