"""Panels: weighted reward and Φ, votes, members that support plans or episodes."""

from __future__ import annotations

import pytest

from simjudge.judges import (
    JudgeContext,
    JudgePanel,
    JudgeVerify,
    PrivilegedProgressJudge,
    RuleJudge,
    Transition,
    make_judge,
)
from tests.judges.helpers import REWARD_OK, ConstantJudge, run_oracle


def _signal(panel: JudgePanel):
    panel.reset(JudgeContext())
    return panel.observe(Transition(step=0))


def test_weighted_reward_and_phi():
    panel = JudgePanel(
        {
            "a": ConstantJudge(reward=1.0, phi=0.2),
            "b": ConstantJudge(reward=3.0, phi=0.8),
            "c": ConstantJudge(reward=2.0, phi=None),
        },
        weights=[1, 3, 2],
    )
    s = _signal(panel)
    assert s.reward == pytest.approx(1 + 9 + 4)
    assert s.phi == pytest.approx((0.2 + 3 * 0.8) / 4)  # c gives no Φ
    assert set(s.details) == {"a", "b", "c"} and s.details["c"]["phi"] is None
    assert panel.max_reward == pytest.approx(6.0) and panel.provides_potential


@pytest.mark.parametrize(
    "vote, verdicts, weights, expected",
    [
        ("majority", ["success", "success", "failure"], None, "success"),
        ("majority", ["success", "failure", "undecided"], None, "undecided"),
        ("majority", ["success", "failure", "failure"], [5, 1, 1], "success"),
        ("any", ["undecided", "failure", "success"], None, "success"),
        ("any", ["undecided", "failure", "undecided"], None, "failure"),
        ("all", ["success", "success", "success"], None, "success"),
        ("all", ["success", "success", "undecided"], None, "undecided"),
    ],
)
def test_votes(vote, verdicts, weights, expected):
    panel = JudgePanel([ConstantJudge(verdict=v) for v in verdicts], weights=weights, vote=vote)
    assert list(panel.judges) == ["constant", "constant-2", "constant-3"]
    assert _signal(panel).verdict == expected


def test_plans_use_the_members_that_judge_plans():
    panel = JudgePanel([RuleJudge(), PrivilegedProgressJudge()])
    s = panel.judge_plan("reward", REWARD_OK, JudgeContext())
    assert s.verdict == "success" and set(s.details) == {"rule"}
    with pytest.raises(NotImplementedError, match="judge_episode"):
        panel.judge_episode(None)


def test_panel_in_a_rollout(drawer_env):
    panel = JudgePanel(
        {
            "truth": make_judge("privileged"),
            "code": make_judge("code-success", code=REWARD_OK, kind="reward"),
        },
        vote="all",
    )
    out = run_oracle(JudgeVerify(drawer_env, panel))
    assert out.infos[-1]["is_success"]
    keys = {frozenset(i["judge"]["details"]) for i in out.infos}
    assert keys == {frozenset({"truth", "code"})}
    assert all(j.stats["observe"].calls == out.steps + 1 for j in panel.judges.values())


def test_invalid_panels():
    with pytest.raises(ValueError, match="vote"):
        JudgePanel([ConstantJudge()], vote="median")
    with pytest.raises(ValueError, match="weights"):
        JudgePanel([ConstantJudge()], weights=[1, 2])
    judge = ConstantJudge()
    with pytest.raises(ValueError, match="twice"):
        JudgePanel({"a": judge, "b": judge})
    with pytest.raises(TypeError, match="must be Judges"):
        JudgePanel({"a": "privileged"})
