"""The executor verifies the task goal over the executed states, in order, with one evaluator.

A memoryless goal (joint/place/all) gives exactly what checking the final state gives; a
``sequence`` goal counts its stages only in order, so stages done in the wrong order do not
verify, and resumed subtasks feed their saved end states.
"""

from __future__ import annotations

import json
import shutil

import pytest

from simjudge.envs.goals import SequenceGoal
from simjudge.envs.sim_env import SimEnv
from simjudge.skills.executor import execute_solution
from simjudge.skills.run_files import load_subtask, subtask_dir
from simjudge.tasks.spec import RunDir, Solution, load_solution, load_task

pytestmark = pytest.mark.timeout(300)


def _final_state_facts(task: str, run: RunDir, last: int) -> dict:
    """The goal's facts on the final state alone, through a fresh env (the old check)."""
    spec = load_task(task)
    env = SimEnv(spec.scene, goal=spec.goal, scene_seed=0,  # the executor's world of seed 0
                 randomization=spec.world_randomization())
    try:
        env.reset(seed=0)
        done = load_subtask(run, last)
        assert done is not None, f"subtask {last} did not finish"
        env.set_state(done[1])
        return env.evaluate()
    finally:
        env.close()


def _checks(run: RunDir) -> list[dict]:
    return json.loads(run.path("summary.json").read_text())["goal_checks"]


def test_a_memoryless_goal_is_judged_on_the_final_state_as_before(tmp_path):
    solution = load_solution("OpenDrawer-v0")
    assert not isinstance(load_task("OpenDrawer-v0").goal, SequenceGoal)
    outcome = execute_solution(solution, tmp_path, reward_solver="oracle", video=False)
    assert outcome.verdict == "verified" and outcome.task_success
    last = len(solution.subtasks) - 1
    assert outcome.goal_facts == _final_state_facts("OpenDrawer-v0", RunDir(tmp_path), last)
    checks = _checks(RunDir(tmp_path))
    assert [c["state"] for c in checks] == ["reset"] + [
        f"end of subtask {i} ({s.name})" for i, s in enumerate(solution.subtasks)
    ]
    assert not checks[0]["success"] and checks[-1]["success"]


def _reordered(task: str, order: list[int]) -> Solution:
    data = load_solution(task).model_dump(mode="json", by_alias=True)
    data["subtasks"] = [data["subtasks"][i] for i in order]
    return Solution.model_validate(data)


def test_stages_done_in_the_wrong_order_do_not_verify(tmp_path):
    """Top drawer first, then bottom: both end open, but the task orders bottom then top."""
    task = "OpenDrawersBottomThenTop-v0"
    solution = _reordered(task, [3, 4, 2, 0, 1])  # grasp/pull top, release, grasp/pull bottom
    assert [s.name for s in solution.subtasks][:2] == [
        "grasp the top drawer handle", "pull the top drawer open"]
    outcome = execute_solution(solution, tmp_path, reward_solver="oracle", video=False)
    assert outcome.claimed_success, outcome.subtask_success
    final = _final_state_facts(task, RunDir(tmp_path), len(solution.subtasks) - 1)
    # the final state alone shows both drawers open (a restored snapshot counts them) ...
    assert final["g0.success"] and final["g1.success"] and final["success"]
    # ... but in order the top drawer opened before its turn: one stage only
    assert outcome.verdict == "claimed_not_verified" and not outcome.task_success
    assert outcome.goal_facts["stages_done"] == 1 and not outcome.goal_facts["success"]
    assert "checked in order" in outcome.reason


def test_the_composed_reference_verifies_and_resumed_subtasks_feed_their_end_states(tmp_path):
    """PutCubeInDrawer ends with the drawer closed again: verified by the stages' order."""
    task = "PutCubeInDrawer-v0"
    solution = load_solution(task)
    outcome = execute_solution(solution, tmp_path, reward_solver="oracle", video=False)
    assert outcome.verdict == "verified" and outcome.task_success
    first = _checks(RunDir(tmp_path))
    done = [c["stages_done"] for c in first]
    assert done == sorted(done) and done[0] == 0 and done[-1] == 3
    # the final state alone does not show the drawer ever opened
    final = _final_state_facts(task, RunDir(tmp_path), len(solution.subtasks) - 1)
    assert not final["success"]
    # resume: subtasks 0-4 come from disk, 5-7 run again from subtask 4's saved end state
    for index in range(5, len(solution.subtasks)):
        shutil.rmtree(subtask_dir(RunDir(tmp_path), index))
    again = execute_solution(solution, tmp_path, reward_solver="oracle", video=False)
    assert again.verdict == "verified" and again.task_success
    assert [c["state"] for c in _checks(RunDir(tmp_path))] == [c["state"] for c in first]
