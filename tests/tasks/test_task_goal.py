"""TaskGoal: reference goals wrapped exactly, JSON, env goals, checks, starts, prompts."""

from __future__ import annotations

import pytest

from simjudge.envs.goals import AllOfGoal, JointGoal, JointRangeGoal, PlaceGoal
from simjudge.envs.sim_env import SimEnv
from simjudge.judges import JudgeContext, PrivilegedProgressJudge, Transition
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.template_proposer import TemplateProposer, choose_joint
from simjudge.tasks.spec import (
    AMOUNTS,
    JointTarget,
    PlaceTarget,
    TaskGoal,
    amount_interval,
    derive_goal,
    load_library,
    load_task,
)


def _target(**kw) -> JointTarget:
    base = {"object": "Cabinet", "joint": "joint_0", "part": "link_0", "link": "link_1",
            "semantic": "slider drawer", "low": 0.6, "high": 1.0}
    return JointTarget(**{**base, **kw})


def test_reference_goals_are_wrapped_exactly_and_round_trip():
    for spec in load_library():
        goal = TaskGoal.from_reference(spec)
        assert goal.source == "reference" and goal.env_goal() == spec.goal
        assert TaskGoal.from_json(goal.to_json(indent=2)) == goal
    close_lid = TaskGoal.from_reference(load_task("CloseBoxLid-v0"))
    assert close_lid.implied_initial_joints() == {("Box", "joint_0"): 0.6}  # the scene's start


def test_env_goal_kinds():
    one_sided = TaskGoal(targets=[_target()])
    assert isinstance(one_sided.env_goal(), JointGoal) and one_sided.env_goal().threshold == 0.6
    closing = TaskGoal(targets=[_target(low=0.0, high=0.15, direction="close")])
    assert closing.env_goal() == JointGoal(object="Cabinet", joint="joint_0", link="link_1",
                                           direction="close", threshold=0.15)
    halfway = TaskGoal(targets=[_target(low=0.35, high=0.65, direction="close")])
    assert isinstance(halfway.env_goal(), JointRangeGoal)
    both = TaskGoal(targets=[_target(), PlaceTarget(object="Cube", target="Cabinet")])
    env_goal = both.env_goal()
    assert isinstance(env_goal, AllOfGoal) and isinstance(env_goal.goals[1], PlaceGoal)
    assert "1. Cabinet joint_0" in both.describe() and "2. Cube must end in Cabinet" in both.describe()


def test_amount_vocabulary():
    assert amount_interval("halfway", "open") == amount_interval("halfway", "close") == (0.35, 0.65)
    assert amount_interval("slightly", "open") == (0.08, 0.4)
    assert amount_interval("slightly", "close") == (0.6, 0.92)  # mirrored: a small move down
    assert amount_interval("open", "open", "drawer") == (0.6, 1.0)
    assert amount_interval("open", "open", "door") == (0.35, 1.0)
    assert amount_interval("open", "close", "door") == (0.0, 0.15)
    assert amount_interval("fully", "close") == (0.0, 0.1)
    assert set(AMOUNTS) >= {"open", "close", "fully", "halfway", "a quarter", "slightly"}
    with pytest.raises(KeyError, match="amounts are"):
        amount_interval("a smidge", "open")


def test_implied_starts_and_hold_steps():
    goal = TaskGoal(targets=[_target(low=0.35, high=0.65, direction="close"),
                             _target(joint="joint_2", low=0.6, high=0.92, direction="close"),
                             _target(joint="joint_4")], hold_steps=3)
    assert goal.implied_initial_joints() == {("Cabinet", "joint_0"): 0.9,
                                             ("Cabinet", "joint_2"): 1.0,
                                             ("Cabinet", "joint_4"): 0.0}
    assert goal.holds_over([False, True, True, True]) and not goal.holds_over([True, False, True])
    assert "Hold it for the last 3 steps" in goal.describe()


def test_check_reads_the_final_state():
    spec = load_task("CloseDrawer-v0")
    goal = derive_goal("Nudge Drawer Halfway Shut", "Nudge the bottom drawer halfway shut.",
                       "StorageFurniture-0").goal
    env = SimEnv(spec.scene, goal=goal.env_goal())
    try:
        _, info = env.reset(seed=0)
        holds, facts = goal.check(env.view, reached={"StorageFurniture/joint_0": {"fraction": 0.9}})
        judge = PrivilegedProgressJudge(goal.env_goal())
        judge.reset(JudgeContext.from_env(env))
        signal = judge.observe(Transition(step=0, view=env.view, info=info))
    finally:
        env.close()
    assert not holds and facts[0]["fraction"] == pytest.approx(0.9, abs=0.02)
    assert facts[0]["max_fraction"] == 0.9 and facts[0]["low"] == 0.4  # halfway: 0.5 +- 0.1
    assert signal.phi == pytest.approx(info["progress"]) and signal.verdict == "undecided"


def test_requests_carry_the_goal_and_the_prompt_shows_it():
    builtin = TaskRequest.resolve("Open Drawer")
    assert builtin.goal.source == "reference"
    assert "must end at ≥ 0.60 of its range" in builtin.prompt_text()
    new = TaskRequest.resolve("Turn Dial", "Turn the dial a quarter turn.", asset="Safe-0")
    assert new.goal.source == "parser" and new.goal.targets[0].joint == "joint_1"
    assert "between 0.15 and 0.35" in new.prompt_text()
    unclear = TaskRequest.resolve("Open Drawer Please", asset="StorageFurniture-0")
    assert unclear.goal is None and unclear.goal_derivation.ambiguities
    assert "Success is checked" not in unclear.prompt_text()


def test_template_solutions_aim_at_the_goal():
    request = TaskRequest.resolve("Nudge Drawer Halfway Shut", "Nudge the top drawer halfway shut.",
                                  asset="StorageFurniture-0")
    solution = TemplateProposer().propose(request, n=3, seed=1)[2]
    assert solution.scene.objects[0].joint_init == {"joint_2": 0.9}  # a close task starts open
    reward = solution.subtasks[-1].code
    # halfway is 0.5 +- 0.1 (as every explicit amount); the template aims 0.05 inside it
    assert '"joint_2"' in reward and "0.45 * (joint_high - joint_low)" in reward
    assert "<= joint_low + 0.55 * (joint_high - joint_low)" in reward
    drawer = TemplateProposer().propose(TaskRequest.resolve("Open Drawer"))[0]
    assert "joint_angle >= joint_low + 0.65 * (joint_high - joint_low)" in drawer.subtasks[-1].code


def test_template_picks_the_joint_whose_own_link_is_the_named_part():
    # no goal (name and description disagree): "knobs" names a knob joint, not the door
    request = TaskRequest.resolve("Open Knobs", "Close the knobs.", asset="Oven-0")
    assert request.goal is None and choose_joint(request).name == "joint_2"
    dial = TaskRequest.resolve("Spin Dial", "Spin the safe's dial.", asset="Safe-0")
    assert choose_joint(dial).name == "joint_1"  # the door's subtree holds the dial too
    both = TemplateProposer().propose(TaskRequest.resolve(
        "Open Both Doors", "Open both doors of the refrigerator.", asset="Refrigerator-0"))[0]
    assert [s.code.count("grasp_object_link") for s in both.subtasks].count(1) == 2
