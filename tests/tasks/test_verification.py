"""Independent verification of executed solutions: claimed vs verified, start check, live judges."""

from __future__ import annotations

import json

import pytest

from simjudge.judges.live import LiveSubtaskJudges
from simjudge.skills.executor import execute_solution
from simjudge.tasks.spec import Solution, load_solution, load_task

LAX = "success = fraction >= 0.6"


def _open_drawer(success_line: str = LAX, joint_init: float | None = None) -> Solution:
    data = load_solution("OpenDrawer-v0").model_dump(mode="json", by_alias=True)
    reward = data["subtasks"][1]
    assert LAX in reward["code"]
    reward["code"] = reward["code"].replace(LAX, success_line)
    if joint_init is not None:
        data["scene"]["objects"][0]["joint_init"] = {"joint_0": joint_init}
    return Solution.model_validate(data)


@pytest.fixture(scope="module")
def lax_run(tmp_path_factory):
    """A solution whose own success condition is weaker than the task (5% open, not 60%)."""
    out = tmp_path_factory.mktemp("lax")
    goal = load_task("OpenDrawer-v0").goal
    outcome = execute_solution(
        _open_drawer("success = fraction >= 0.05"), out, reward_solver="oracle", video=False,
        observer=LiveSubtaskJudges(goal),
    )
    return outcome, out


def test_a_lax_success_condition_is_claimed_but_not_verified(lax_run):
    outcome, out = lax_run
    assert outcome.subtask_success == (True, True) and outcome.claimed_success
    assert outcome.verified_success is False and not outcome.task_success
    assert outcome.verdict == "claimed_not_verified"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["claimed_success"] is True and summary["verified_success"] is False
    drawer = summary["final_joints"]["StorageFurniture/joint_0"]
    assert 0.05 <= drawer["fraction"] < 0.6  # moved as far as its own condition asked


def test_summary_lists_every_joint_initial_final_and_max(lax_run):
    outcome, out = lax_run
    summary = json.loads((out / "summary.json").read_text())
    keys = set(summary["initial_joints"])
    assert "StorageFurniture/joint_0" in keys and keys == set(summary["final_joints"])
    assert keys == set(summary["max_joints"])
    for key in keys:
        first, last, top = (summary[f][key] for f in ("initial_joints", "final_joints",
                                                       "max_joints"))
        assert set(first) == {"value", "fraction"}
        assert top["fraction"] >= max(first["fraction"], last["fraction"]) - 1e-9
    assert summary["initial_joints"]["StorageFurniture/joint_0"]["fraction"] < 0.05
    assert set(summary["final_poses"]["StorageFurniture"]) == {"position", "orientation"}


def test_every_subtask_folder_has_its_phi_trace_and_opd(lax_run):
    outcome, out = lax_run
    for verdict in outcome.verdicts:
        folder = out / "subtasks" / f"{verdict.index:02d}"
        trace = json.loads((folder / "phi_trace.json").read_text())
        opd = json.loads((folder / "opd.json").read_text())["task_goal"]
        phi = trace["task_phi"]
        assert len(phi) == len(trace["steps"]) == verdict.details["judges"]["steps"] + 1
        assert all(0.0 <= p <= 1.0 for p in phi)
        assert set(opd) >= {"MC", "MP", "PPL", "CRA", "STR"} and opd["phi_T"] == phi[-1]
        # the subtask's own code judge agrees with the subtask's verdict at its end
        assert trace["subtask_success"][-1] == verdict.success
    # the task Φ rose while the drawer opened, but never reached the goal
    last = json.loads((out / "subtasks" / "01" / "phi_trace.json").read_text())
    assert last["task_phi"][-1] > last["task_phi"][0] and not any(last["task_success"])


def test_the_reference_condition_is_verified(tmp_path):
    outcome = execute_solution(_open_drawer(), tmp_path, reward_solver="oracle", video=False)
    assert outcome.claimed_success and outcome.verified_success and outcome.task_success
    assert outcome.verdict == "verified"


def test_a_start_where_the_goal_already_holds_runs_nothing(tmp_path):
    outcome = execute_solution(_open_drawer(joint_init=0.9), tmp_path, reward_solver="oracle",
                               video=False)
    assert outcome.verdict == "trivial_start" and not outcome.task_success
    assert outcome.verdicts == [] and not outcome.claimed_success
    assert "already holds at reset" in outcome.reason
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verdict"] == "trivial_start" and summary["task_success"] is False
