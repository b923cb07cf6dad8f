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
