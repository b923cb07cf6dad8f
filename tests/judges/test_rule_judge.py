"""The rule judge flags each error type of the VERGSA judge prompt and passes correct code."""

from __future__ import annotations

import pytest

from simjudge.envs.articulation import ArticulationTree, JointSpec, LinkSpec
from simjudge.judges import JudgeContext, RuleJudge, rule_issues

DOOR = ArticulationTree(
    "Door-0",
    "Door",
    (LinkSpec("base", "frame", "heavy"), LinkSpec("link_0", "door", "hinge"),
     LinkSpec("link_1", "handle", "static")),
    (JointSpec("joint_0", "revolute", "base", "link_0", 0.0, 1.57),
     JointSpec("joint_1", "fixed", "link_0", "link_1")),
)  # fmt: skip
OPEN_DOOR = JudgeContext(task="Open the door", articulation={"Door": DOOR.to_text()})

REWARD = """
def _compute_reward(self):
    eef = get_eef_pos(self)[0]
    handle = get_link_state(self, "Door", "link_1")
    dist = np.linalg.norm(eef - handle)
    angle = get_joint_state(self, "Door", "joint_0")
    lower, upper = get_joint_limit(self, "Door", "joint_0")
    reward = -dist - 5 * abs(angle - upper)
    success = angle > lower + 0.6 * (upper - lower)
    return reward, success
"""
PRIMITIVE = """
rgbs, final_state = grasp_object_link(self, "Door", "link_1")
success = check_grasped(self, "Door", "link_1")
"""

REWARD_CASES = {
    "unknown-link": REWARD.replace('"Door", "link_1"', '"Door", "link_7"'),
    "unknown-joint": REWARD.replace('joint_state(self, "Door", "joint_0")', 'joint_state(self, "Door", "link_0")'),
    "unknown-object": REWARD.replace('get_link_state(self, "Door"', 'get_link_state(self, "Cabinet"'),
    "positive-distance": REWARD.replace("reward = -dist", "reward = dist"),
    "joint-out-of-range": REWARD.replace("abs(angle - upper)", "abs(angle - 3.14)"),
    "wrong-direction": REWARD.replace("abs(angle - upper)", "abs(angle - lower)"),
    "missing-success-output": REWARD.replace("return reward, success", "return reward"),
    "constant-reward": REWARD.replace("return reward, success", "return 1.0, success"),
    "constant-success": REWARD.replace("return reward, success", "return reward, False"),
    "disallowed-syntax": "import os\n" + REWARD,
    "disallowed-name": REWARD.replace("np.linalg.norm(eef - handle)", "eval('1')"),
    "primitive-not-allowed": REWARD.replace("    eef =", '    grasp_object(self, "Door")\n    eef ='),
    "syntax": REWARD.replace("return reward, success", "return reward,, success"),
}  # fmt: skip
PRIMITIVE_CASES = {
    "missing-success": PRIMITIVE.split("success =")[0],
    "unassigned-primitive": PRIMITIVE.replace("rgbs, final_state = ", ""),
    "primitive-output": PRIMITIVE.replace("rgbs, final_state =", "state ="),
    "missing-self": PRIMITIVE.replace('grasp_object_link(self, "Door"', 'grasp_object_link("Door"'),
    "unknown-object": 'obj = "Dor"\n' + PRIMITIVE.replace('"Door"', "obj"),
}


def _codes(kind: str, code: str, context: JudgeContext = OPEN_DOOR) -> set[str]:
    return {i.code for i in rule_issues(kind, code, context)}


@pytest.mark.parametrize("code, kind", [(REWARD, "reward"), (PRIMITIVE, "primitive")])
def test_correct_code_passes(code, kind):
    signal = RuleJudge().judge_plan(kind, code, OPEN_DOOR)
    assert (signal.reward, signal.verdict, signal.reason) == (1.0, "success", "no issues found")
    assert signal.phi is None and signal.details["names_checked"] is True


@pytest.mark.parametrize("expected", sorted(REWARD_CASES))
def test_reward_errors_are_flagged(expected):
    code = REWARD_CASES[expected]
    assert expected in _codes("reward", code)
    signal = RuleJudge().judge_plan("reward", code, OPEN_DOOR)
    assert signal.reward == 0.0 and signal.verdict == "failure" and signal.details["errors"]


@pytest.mark.parametrize("expected", sorted(PRIMITIVE_CASES))
def test_primitive_errors_are_flagged(expected):
    signal = RuleJudge().judge_plan("primitive", PRIMITIVE_CASES[expected], OPEN_DOOR)
    assert expected in {i["code"] for i in signal.details["issues"]}
    assert signal.reward == 0.0


def test_messages_name_the_fix():
    joint = rule_issues("reward", REWARD_CASES["unknown-joint"], OPEN_DOOR)[0].message
    assert "'link_0' is a link; the joint above it is 'joint_0'" in joint
    obj = rule_issues("primitive", PRIMITIVE_CASES["unknown-object"], OPEN_DOOR)[0].message
    assert "did you mean 'Door'" in obj
    rng = next(i for i in rule_issues("reward", REWARD_CASES["joint-out-of-range"], OPEN_DOOR))
    assert "outside its limits [0, 1.57]" in rng.message and rng.line == 8


def test_warnings_only_score_one_half():
    code = REWARD.replace("abs(angle - upper)", "abs(angle - 1.5)")
    signal = RuleJudge().judge_plan("reward", code, OPEN_DOOR)
    assert (signal.reward, signal.verdict) == (0.5, "undecided")
    assert [i["code"] for i in signal.details["issues"]] == ["hard-coded-target"]


def test_direction_follows_the_verb():
    close = JudgeContext(task="Close the door", articulation={"Door": DOOR.to_text()})
    assert "wrong-direction" in _codes("reward", REWARD, close)
    closing = REWARD.replace("abs(angle - upper)", "abs(angle - lower)").replace(
        "angle > lower + 0.6", "angle < lower + 0.1"
    )
    assert _codes("reward", closing, close) == set()
    unknown = JudgeContext(task="Turn the door", articulation={"Door": DOOR.to_text()})
    assert _codes("reward", REWARD_CASES["wrong-direction"], unknown) == set()
    success = 'success = get_joint_state(self, "Door", "joint_0") < 0.2'
    assert {"wrong-direction", "hard-coded-target"} <= _codes("success", success)


def test_vergsa_chair_example():
    chair = ArticulationTree(
        "FoldingChair-0",
        "FoldingChair",
        (LinkSpec("base", "leg", "heavy"), LinkSpec("link_0", "seat", "hinge")),
        (JointSpec("joint_0", "revolute", "base", "link_0", 0.0, 1.4),),
    )
    ctx = JudgeContext(task="Fold the chair", articulation={"FoldingChair": chair.to_text()})
    code = """
def _compute_reward(self):
    eef_pos = get_eef_pos(self)[0]
    seat_pos = get_link_state(self, "FoldingChair", "link_0")
    reward_near = -np.linalg.norm(eef_pos - seat_pos)
    joint_angle = get_joint_state(self, "FoldingChair", "joint_0")
    joint_limit_low, joint_limit_high = get_joint_limit(self, "FoldingChair", "joint_0")
    diff = np.abs(joint_angle - joint_limit_low)
    reward = reward_near - 5 * diff
    success = diff < 0.1 * (joint_limit_high - joint_limit_low)
    return reward, success
"""
    assert _codes("reward", code, ctx) == set()
    assert "joint-out-of-range" in _codes(
        "reward", code.replace("- joint_limit_low)", "- np.pi)"), ctx
    )


def test_without_scene_names_are_not_checked():
    signal = RuleJudge().judge_plan("reward", REWARD_CASES["unknown-link"], JudgeContext())
    assert signal.reward == 1.0 and signal.details["names_checked"] is False


def test_invalid_kind_is_rejected():
    with pytest.raises(ValueError, match="kind must be one of"):
        RuleJudge().judge_plan("rl", REWARD, OPEN_DOOR)
