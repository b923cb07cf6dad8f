"""Labelled error injection: each type applies, the rule judge finds them (P/R ≥ 0.95)."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges import JudgeContext, RuleJudge, rule_issues
from simjudge.judges.bench import (
    ERROR_TYPES,
    build_plan_cases,
    inject_error,
    normalize_code,
    rename_locals,
    score_plan_cases,
    summarize_plan_results,
)
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.template_proposer import TemplateProposer
from simjudge.pipelines.verifiers import judge_context
from simjudge.tasks.spec import load_task

TASKS = ("OpenDrawer-v0", "CloseDoor-v0", "PressButton-v0", "TurnFaucet-v0", "OpenBoxLid-v0")


@pytest.fixture(scope="module")
def clean():
    out = []
    for task in TASKS:
        request = TaskRequest.from_spec(load_task(task))
        for solution in TemplateProposer().propose(request, n=3, seed=0):
            context = judge_context(request, solution)
            out += [(task, s.name, s.kind, s.code, context) for s in solution.subtasks]
    return out


def test_rule_judge_precision_and_recall(clean):
    cases = build_plan_cases(clean, seed=0)
    assert {c.label for c in cases} == {"clean", *ERROR_TYPES}
    summary = summarize_plan_results(score_plan_cases(RuleJudge(), cases))
    assert summary["flag"]["precision"] >= 0.95 and summary["flag"]["recall"] >= 0.95, summary
    assert all(v["flagged"] >= 0.95 for k, v in summary["per_type"].items() if k != "clean")
    assert summary["per_type"]["clean"]["flagged"] == 0.0


def test_each_injection_changes_the_code_as_labelled(clean):
    rng = np.random.default_rng(0)
    _, name, kind, code, context = next(c for c in clean if c[2] == "reward")
    context = context.with_subtask(kind, code, name)
    for error in ERROR_TYPES:
        bad, variant = inject_error(error, kind, code, context, rng)
        assert bad != normalize_code(code) and variant, error
        assert RuleJudge().judge_plan(kind, bad, context).reward < 1.0, (error, bad)
    primitive = next(c for c in clean if c[2] == "primitive")
    pctx = primitive[4].with_subtask("primitive", primitive[3], primitive[1])
    assert inject_error("wrong-direction", "primitive", primitive[3], pctx, rng) is None
    assert inject_error("hard-coded-target", "primitive", primitive[3], pctx, rng) is None
    with pytest.raises(ValueError, match="unknown error type"):
        inject_error("typo", kind, code, context, rng)


def test_clean_rewrites_stay_clean(clean):
    for _task, name, kind, code, context in clean:
        renamed = rename_locals(code)
        if renamed is not None:
            ctx = context.with_subtask(kind, renamed, name)
            assert RuleJudge().judge_plan(kind, renamed, ctx).reward == 1.0, renamed


DRAWERS = JudgeContext(
    task="Open the top drawer",
    trees={"Cab": {
        "asset_id": "Cab-0", "category": "Cab",
        "links": [{"name": n, "semantic": s, "kind": k} for n, s, k in
                  (("base", "frame", "heavy"), ("link_0", "drawer", "slider"),
                   ("link_1", "handle", "static"), ("link_2", "drawer", "slider"))],
        "joints": [
            {"name": "joint_0", "type": "prismatic", "parent": "base", "child": "link_0",
             "lower": 0.0, "upper": 0.3},
            {"name": "joint_1", "type": "fixed", "parent": "link_0", "child": "link_1",
             "lower": 0.0, "upper": 0.0},
            {"name": "joint_2", "type": "prismatic", "parent": "base", "child": "link_2",
             "lower": 0.0, "upper": 0.3},
        ]}},
)  # fmt: skip
REWARD = """
def _compute_reward(self):
    handle = get_link_state(self, "Cab", "{link}")
    distance = np.linalg.norm(get_eef_pos(self)[0] - handle)
    pos = get_joint_state(self, "Cab", "joint_0")
    low, high = get_joint_limit(self, "Cab", "joint_0")
    return -distance - abs(pos - high), pos > low + 0.5 * (high - low)
"""


@pytest.mark.parametrize("link, flagged", [("link_1", False), ("link_0", False),
                                           ("base", True), ("link_2", True)])
def test_link_not_moved_by_the_driven_joint(link, flagged):
    codes = {i.code for i in rule_issues("reward", REWARD.format(link=link), DRAWERS)}
    assert ("link-not-moved" in codes) == flagged, codes


def test_alias_of_a_limit_is_checked_for_direction():
    code = REWARD.format(link="link_1").replace("abs(pos - high)", "abs(pos - target)")
    code = code.replace("    return", "    target = low\n    return")
    codes = {i.code for i in rule_issues("reward", code, DRAWERS)}
    assert "wrong-direction" in codes


FRACTION = """
def _compute_reward(self):
    lower, upper = get_joint_limit(self, "Cab", "joint_0")
    joint = get_joint_state(self, "Cab", "joint_0")
    fraction = (joint - lower) / (upper - lower)
    joint_term = abs({target} - fraction)
    distance = np.linalg.norm(get_eef_pos(self)[0] - get_link_state(self, "Cab", "link_1"))
    return -distance - 2.0 * joint_term, fraction {op} 0.6
"""


@pytest.mark.parametrize("target, op, wrong", [("1.0", ">=", False), ("0.0", ">=", True),
                                               ("1.0", "<=", True), ("0.5", ">=", False)])
def test_direction_of_joint_fractions(target, op, wrong):
    codes = {i.code for i in rule_issues("reward", FRACTION.format(target=target, op=op),
                                         DRAWERS)}
    assert ("wrong-direction" in codes) == wrong, codes
    assert "hard-coded-target" not in codes  # fractions of the range are not joint targets
