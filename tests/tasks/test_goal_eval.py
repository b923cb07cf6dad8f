"""Evaluating a goal on probe states: springs by max, relative amounts, two steps, stays, starts."""

from __future__ import annotations

from simjudge.tasks.spec import (
    JointTarget,
    StartCondition,
    TaskGoal,
    UnchangedPart,
    evaluate_probe,
)


def _t(**kw) -> JointTarget:
    base = {"object": "O", "joint": "joint_0", "part": "link_0", "link": "link_0",
            "low": 0.9, "high": 1.0}
    return JointTarget(**{**base, **kw})


def test_a_spring_press_is_judged_by_the_largest_fraction():
    goal = TaskGoal(targets=[_t(spring=True, requires_grasp=False)])
    assert evaluate_probe(goal, {"max": {"joint_0": 1.0}}) == {"holds": True, "start_ok": True}
    assert not evaluate_probe(goal, {"max": {"joint_0": 0.1}})["holds"]


def test_a_relative_amount_is_a_change_from_the_start_in_its_direction():
    goal = TaskGoal(targets=[_t(low=0.05, high=0.35, relative=True)])
    assert evaluate_probe(goal, {"initial": {"joint_0": 0.3}, "final": {"joint_0": 0.45}})["holds"]
    assert not evaluate_probe(goal, {"initial": {"joint_0": 0.3}, "final": {"joint_0": 0.2}})[
        "holds"]  # the wrong way
    assert not evaluate_probe(goal, {"final": {"joint_0": 0.7}})["holds"]  # too far
    closing = TaskGoal(targets=[_t(low=0.05, high=0.35, relative=True, direction="close")])
    assert evaluate_probe(closing, {"initial": {"joint_0": 1.0}, "final": {"joint_0": 0.85}})[
        "holds"]
    assert closing.joint_targets[0].absolute(1.0) == (0.65, 0.95)


def test_a_two_step_target_needs_its_first_step_in_the_max():
    goal = TaskGoal(targets=[_t(low=0.4, high=0.6, reached=0.9)])
    assert evaluate_probe(goal, {"final": {"joint_0": 0.5}, "max": {"joint_0": 1.0}})["holds"]
    assert not evaluate_probe(goal, {"final": {"joint_0": 0.5}})["holds"]


def test_unchanged_parts_and_stated_starts():
    goal = TaskGoal(
        targets=[_t()],
        unchanged=[UnchangedPart(object="O", joint="joint_1"),
                   UnchangedPart(object="O", joint="joint_2", spring=True)],
        starts=[StartCondition(object="O", joint="joint_0", low=0.0, high=0.05)])
    ok = {"final": {"joint_0": 1.0}}
    assert evaluate_probe(goal, ok) == {"holds": True, "start_ok": True}
    assert not evaluate_probe(goal, {"final": {"joint_0": 1.0, "joint_1": 0.6}})["holds"]
    assert not evaluate_probe(goal, {"final": {"joint_0": 1.0}, "max": {"joint_2": 0.9}})["holds"]
    contradicting = {"initial": {"joint_0": 0.5}, "final": {"joint_0": 1.0}}
    assert evaluate_probe(goal, contradicting) == {"holds": True, "start_ok": False}
    assert goal.implied_initial_joints()[("O", "joint_0")] == 0.025
    assert TaskGoal.from_json(goal.to_json()) == goal
    assert "must never be pressed" in goal.describe() and "starts between" in goal.describe()


def test_a_verified_run_whose_constrained_part_moved_is_not_verified():
    from simjudge.pipelines.components import whole_goal_check
    from simjudge.tasks.spec import Outcome, derive_goal

    goal = derive_goal("Open Left Door", "Open the left door but leave the right one shut.",
                       "StorageFurniture-4").goal

    def run(right: float) -> Outcome:
        joints = {"StorageFurniture/joint_0": {"fraction": 1.0},
                  "StorageFurniture/joint_2": {"fraction": right}}
        start = {k: {"fraction": 0.0} for k in joints}
        return Outcome(subtask_success=(True,), task_success=True, claimed_success=True,
                       verified_success=True, verdict="verified", initial_joints=start,
                       final_joints=joints, max_joints=joints)

    kept = whole_goal_check(run(0.0), goal)
    assert kept.verified_success and kept.verdict == "verified"
    moved = whole_goal_check(run(0.8), goal)
    assert not moved.verified_success and not moved.task_success
    assert moved.verdict == "claimed_not_verified" and "joint_2 moved" in moved.reason
