"""The goal check: candidates whose own success is weaker than the task goal."""

from __future__ import annotations

import pytest

from simjudge.envs.goals import JointGoal, JointRangeGoal, PlaceGoal
from simjudge.judges.bench.weaken import WEAKENINGS, weaken
from simjudge.judges.context import JudgeContext
from simjudge.judges.goal_check import goal_issues, goal_score

TREE = {"links": [{"name": "base"}, {"name": "link_0"}, {"name": "link_1"}],
        "joints": [{"name": "joint_0", "type": "prismatic", "lower": 0.0, "upper": 0.4},
                   {"name": "joint_1", "type": "revolute", "lower": 0.0, "upper": 1.6}]}
CONTEXT = JudgeContext(trees={"Cabinet": TREE})
GRASP = ('rgbs, final_state = grasp_object_link(self, "Cabinet", "link_0")\n'
         'success = check_grasped(self, "Cabinet", "link_0")\n')


def reward(success: str) -> str:
    return ("def _compute_reward(self):\n"
            "    lower, upper = get_joint_limit(self, 'Cabinet', 'joint_0')\n"
            "    joint = get_joint_state(self, 'Cabinet', 'joint_0')\n"
            "    fraction = (joint - lower) / (upper - lower)\n"
            f"    success = {success}\n"
            "    return -abs(1.0 - fraction), success\n")


OPEN = JointGoal(object="Cabinet", joint="joint_0", link="link_0", threshold=0.6)
CLOSE = JointGoal(object="Cabinet", joint="joint_0", link="link_0", direction="close",
                  threshold=0.1)
HALF = JointRangeGoal(object="Cabinet", joint="joint_0", link="link_0", low=0.35, high=0.65)


def codes(success: str, goal=OPEN) -> list[str]:
    return [i.code for i in goal_issues([("primitive", GRASP), ("reward", reward(success))],
                                        goal, CONTEXT)]


@pytest.mark.parametrize(("success", "goal", "expected"), [
    ("fraction >= 0.6", OPEN, []),
    ("fraction > 0.7", OPEN, []),  # stronger is fine
    ("fraction >= 0.3", OPEN, ["weaker-threshold"]),
    ("fraction <= 0.6", OPEN, ["wrong-direction"]),
    ("joint > lower + 0.6 * (upper - lower)", OPEN, []),  # raw position against the limits
    ("joint > 0.1", OPEN, ["weaker-threshold"]),  # 0.1 m of a 0.4 m drawer = 0.25
    ("fraction <= 0.1", CLOSE, []),
    ("fraction < 0.5", CLOSE, ["weaker-threshold"]),
    ("fraction >= 0.35 and fraction <= 0.65", HALF, []),
    ("abs(fraction - 0.5) < 0.1", HALF, []),
    ("fraction >= 0.35", HALF, ["no-upper-bound"]),
    ("fraction >= 0.1 and fraction <= 0.65", HALF, ["weaker-threshold"]),
])
def test_conditions_against_goals(success, goal, expected):
    assert codes(success, goal) == expected


def test_no_amount_and_wrong_joint():
    assert [i.code for i in goal_issues([("primitive", GRASP)], OPEN, CONTEXT)] == [
        "goal-unchecked"]
    other = reward("fraction >= 0.6").replace("joint_0", "joint_1")
    issues = goal_issues([("reward", other)], OPEN, CONTEXT)
    assert [i.code for i in issues] == ["wrong-joint"] and "joint_1" in issues[0].message


def test_place_goals_need_both_objects_read():
    goal = PlaceGoal(object="Cube", target="Box", relation="in")
    lax = "success = check_grasped(self, 'Cube')\n"
    good = "success = in_bbox(self, get_position(self, 'Cube'), *get_bounding_box(self, 'Box'))\n"
    assert [i.code for i in goal_issues([("primitive", lax)], goal)] == ["place-unchecked"]
    assert goal_issues([("primitive", good)], goal) == []


def test_scores_and_no_goal():
    assert goal_score([]) == 1.0
    assert goal_score(goal_issues([("primitive", GRASP)], OPEN, CONTEXT)) == 0.0
    assert goal_issues([("primitive", GRASP)], None) == []


@pytest.mark.parametrize("how", WEAKENINGS)
def test_every_weakening_of_a_good_solution_is_caught(how):
    good = [("primitive", GRASP), ("reward", reward("fraction >= 0.6"))]
    assert goal_issues(good, OPEN, CONTEXT) == []
    weak = weaken(good, how, "Cabinet", "joint_0", ("joint_0", "joint_1"))
    assert weak is not None and weak != good
    assert goal_score(goal_issues(weak, OPEN, CONTEXT)) == 0.0
