"""Arena matches on the real simulator: the tie rule, identical snapshots, the oracle."""

from __future__ import annotations

import pytest

from simjudge.pipelines.arena.evaluator import SideSignals, TieRule, judge_match
from simjudge.pipelines.arena.match import ArenaEvaluatorError, check_evaluator, play_match
from simjudge.pipelines.arena.oracle import OracleError, oracle_cell, oracle_scores


@pytest.mark.parametrize(
    ("a", "b", "preference", "rule"),
    [
        (SideSignals([0, 1.0], True, 1), SideSignals([0, 0.95], False), "A", "success"),
        (SideSignals([0, 0.3], False), SideSignals([0, 0.7, 0.8], False), "B", "progress"),
        (SideSignals([0, 0.5, 1.0], True, 2), SideSignals([0] * 5 + [1.0], True, 5), "A", "speed"),
        (SideSignals([0, 0.5, 1.0], True, 20), SideSignals([0, 1.0], True, 22), "tie", "tie"),
        (SideSignals([0, 0.6, 0.1], False), SideSignals([0, 0.6, 0.55], False), "B", "kept"),
        (SideSignals([0, 0.6, 0.55], False), SideSignals([0, 0.62, 0.6], False), "tie", "tie"),
    ],
)
def test_tie_rule(a, b, preference, rule):
    verdict = judge_match(a, b)
    assert (verdict.preference, verdict.rule) == (preference, rule)
    assert verdict.reason and verdict.details["rule"] == rule
    swapped = judge_match(b, a)  # the rule is symmetric in the sides
    assert swapped.preference == {"A": "B", "B": "A", "tie": "tie"}[preference]


def test_margin_is_a_setting():
    a, b = SideSignals([0, 0.5], False), SideSignals([0, 0.58], False)
    assert judge_match(a, b).preference == "tie"
    assert judge_match(a, b, TieRule(margin=5.0)).preference == "B"


def test_same_policy_on_both_sides_ties_exactly():
    out = play_match("OpenDrawer-v0", 11, "oracle-noisy:noise=0.5", "oracle-noisy:noise=0.5")
    assert out["preference"] == "tie" and out["progress_a"] == out["progress_b"]
    assert out["details"]["A"]["opd"] == out["details"]["B"]["opd"]


def test_a_match_is_what_the_oracle_predicts(tmp_path):
    specs = {"good": "oracle", "slow": "oracle-delay:delay=4", "wrong": "oracle-wrong-target"}
    cell = oracle_cell("TurnFaucet-v0", 5, specs)
    for a, b in (("good", "slow"), ("wrong", "good"), ("slow", "wrong")):
        played = play_match("TurnFaucet-v0", 5, specs[a], specs[b], handle_a="h1",
                            handle_b="h2", episodes_dir=str(tmp_path / a))
        predicted = judge_match(SideSignals(cell[a]["progress"], cell[a]["success"],
                                            cell[a]["first_success_step"]),
                                SideSignals(cell[b]["progress"], cell[b]["success"],
                                            cell[b]["first_success_step"]))
        assert played["preference"] == predicted.preference
        assert played["progress_a"] == pytest.approx(predicted.progress_a, abs=1e-3)
    assert (tmp_path / "good" / "h1" / "episode_000000.json").exists()
    scores = oracle_scores({("TurnFaucet-v0", 5): cell})
    assert scores.winrate["good"] > scores.winrate["wrong"]
    with pytest.raises(OracleError, match="every policy"):
        oracle_scores({("TurnFaucet-v0", 5): cell, ("TurnFaucet-v0", 6): {"good": cell["good"]}})


def test_a_judge_can_be_the_evaluator():
    out = play_match("OpenDrawer-v0", 2, "oracle", "zero", evaluator="judge:privileged")
    assert out["evaluator"] == "judge:privileged" and out["preference"] == "A"
    assert check_evaluator("judge:noisy:sigma=0.1") == "judge:noisy:sigma=0.1"
    panel = play_match("OpenDrawer-v0", 2, "zero", "oracle",
                       evaluator="panel:privileged+quantized:levels=4")
    assert panel["preference"] == "B" and panel["progress_b"] == 100.0
    with pytest.raises(ArenaEvaluatorError, match="oracle"):
        check_evaluator("gut-feeling")
    with pytest.raises(ArenaEvaluatorError):
        check_evaluator("judge:no-such-judge")
