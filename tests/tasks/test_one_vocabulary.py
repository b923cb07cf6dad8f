"""One vocabulary of success: env goal, task goal and plan predicate agree (issue 37, item 1).

Over many random states of real PyBullet scenes (joints teleported anywhere in and a bit past
their range; objects teleported around, on and into their targets, held or not), the env
goal's ``success`` fact, :meth:`TaskGoal.check` and the plan milestone predicate give the same
verdict for the same target, and all three are the shared types of
:mod:`simjudge.envs.success`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simjudge.envs.goals import AllOfGoal, PlaceGoal
from simjudge.envs.success import AllOf, Holding, JointIn, Not, Placed
from simjudge.judges.predicates import And, Inside, JointClosed, JointOpen, On, Predicate
from simjudge.tasks.spec import load_task, make_task_env
from simjudge.tasks.spec.goal import JointTarget, PlaceTarget, TaskGoal

CAB = "StorageFurniture"
N_STATES = 120


def _joint_target(low: float, high: float, direction: str) -> JointTarget:
    return JointTarget(object=CAB, joint="joint_0", part="link_0", link="link_1", low=low,
                       high=high, direction=direction)


def _judge_joint(target: JointTarget) -> Predicate:
    """The plan-vocabulary predicate of a joint target."""
    if target.high >= 1.0:
        return JointOpen(target.object, target.joint, target.low)
    if target.low <= 0.0:
        return JointClosed(target.object, target.joint, target.high)
    return And(JointOpen(target.object, target.joint, target.low),
               JointClosed(target.object, target.joint, target.high))


def _verdicts(env, goal: TaskGoal, judge: Predicate) -> tuple[bool, bool, bool]:
    view = env.view
    facts = goal.env_goal().bind(view)()
    holds, _ = goal.check(view)
    return bool(facts["success"]), holds, judge(view)


@pytest.mark.parametrize("target", [
    _joint_target(0.7, 1.0, "open"),
    _joint_target(0.0, 0.15, "close"),
    _joint_target(0.35, 0.65, "close"),
], ids=["open", "close", "range"])
def test_joint_verdicts_agree_on_random_states(target):
    env = make_task_env("OpenDrawer-v0")
    rng = np.random.default_rng(0)
    goal = TaskGoal(targets=(target,))
    judge = _judge_joint(target)
    try:
        env.reset(seed=0)
        obj = env.scene.objects[CAB]
        index = obj.joint_index["joint_0"]
        lo, hi = env.view.joint_limit(CAB, "joint_0")
        backend = env.scene.robot.backend
        seen = set()
        # uniform over the range and a bit past it, and close around the interval's ends
        fractions = [*rng.uniform(-0.03, 1.03, N_STATES),
                     *(end + d for end in (target.low, target.high) for d in (-2e-3, 2e-3))]
        for fraction in fractions:
            backend.reset_joint_states(obj.body, [index], [lo + fraction * (hi - lo)])
            env_ok, task_ok, judge_ok = _verdicts(env, goal, judge)
            assert env_ok == task_ok == judge_ok, (fraction, env_ok, task_ok, judge_ok)
            seen.add(env_ok)
    finally:
        env.close()
    assert seen == {True, False}  # both verdicts were exercised


@pytest.mark.parametrize("task, judge_cls", [("PutBreadInBowl-v0", Inside),
                                             ("StackCubeOnCylinder-v0", On)])
def test_placement_verdicts_agree_on_random_states(task, judge_cls):
    goal = TaskGoal.from_reference(load_task(task))
    (target,) = goal.targets
    assert isinstance(target, PlaceTarget)
    judge = judge_cls(target.object, target.target) & ~Holding(target.object)
    env = make_task_env(task)
    rng = np.random.default_rng(1)
    try:
        env.reset(seed=0)
        view, robot = env.view, env.scene.robot
        backend = robot.backend
        body = env.scene.objects[target.object].body
        (olo, ohi), (tlo, thi) = view.aabb(target.object), view.aabb(target.target)
        pos, orn = view.base_pose(target.object)
        below = olo[2] - pos[2]  # base height above the box's bottom
        half = (ohi - olo)[:2] / 2.0
        counts = {True: 0, False: 0}
        for _ in range(N_STATES):
            x, y = rng.uniform(tlo[:2] - half, thi[:2] + half)
            bottom = rng.uniform(tlo[2] - 0.03, thi[2] + 0.06)
            backend.set_base_pose(body, [x, y, bottom - below], orn)
            held = rng.random() < 0.25
            if held:
                robot.attach(body, -1)
            env_ok, task_ok, judge_ok = _verdicts(env, goal, judge)
            if held:
                robot.release()
            assert env_ok == task_ok == judge_ok, (x, y, bottom, held, env_ok, task_ok, judge_ok)
            counts[env_ok] += 1
    finally:
        env.close()
    assert counts[True] >= 5 and counts[False] >= 5, counts


def test_one_definition_serves_the_three_layers():
    """Env goal, task target and plan predicate are the same shared predicate types."""
    target = _joint_target(0.35, 0.65, "close")
    env_pred = target.env_goal().success_predicate()
    task_pred = target.success_predicate()
    judge = _judge_joint(target)
    assert isinstance(env_pred, JointIn) and isinstance(task_pred, JointIn)
    assert dataclasses.replace(task_pred, tolerance=0.0) == env_pred
    assert all(isinstance(p, JointIn) for p in judge.items)
    opened = _joint_target(0.7, 1.0, "open")
    assert opened.env_goal().success_predicate() == JointIn(CAB, "joint_0", low=0.7)
    assert (JointOpen(CAB, "joint_0", 0.7).low, JointOpen(CAB, "joint_0", 0.7).high) == (0.7, None)

    place = PlaceTarget(object="Bread", target="Bowl", relation="in")
    expected = AllOf(Placed("Bread", "Bowl", "in"), Not(Holding("Bread")))
    assert place.success_predicate() == place.env_goal().success_predicate() == expected
    inside = Inside("Bread", "Bowl")
    assert isinstance(inside, Placed) and (inside.relation, inside.margin) == ("in", 0.01)
    assert isinstance(On("Cube", "Can"), Placed) and On("Cube", "Can").margin == 0.03

    both = TaskGoal(targets=(target, place))
    assert isinstance(both.env_goal(), AllOfGoal)
    assert isinstance(both.success_predicate(), AllOf)
    assert isinstance(both.env_goal().success_predicate(), AllOf)
    link = PlaceGoal(object="Cube", target=CAB, target_link="link_0").success_predicate()
    assert link.items[0] == Placed("Cube", CAB, "in", target_link="link_0")


def test_unchanged_parts_are_a_joint_change():
    """``unchanged``'s test is the shared JointChange (``|final - initial| <= tolerance``)."""
    from simjudge.envs.success import JointChange
    from simjudge.tasks.spec.goal_parts import UnchangedPart

    part = UnchangedPart(object=CAB, joint="joint_0", tolerance=0.1)
    assert isinstance(part.success_predicate(), JointChange)
    rng = np.random.default_rng(2)
    for initial, final in rng.uniform(0.0, 1.0, (500, 2)):
        assert part.holds(initial, final, max(initial, final)) == (
            abs(final - initial) <= 0.1 + 1e-9)
