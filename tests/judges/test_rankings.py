"""Bradley–Terry, BT-Davidson, Elo, PROG and the bootstrap (judges/metrics/rankings.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simjudge.envs.errors import SimjudgeError
from simjudge.judges.metrics.rankings import (
    LOSS,
    TIE,
    WIN,
    Comparison,
    RankingError,
    bootstrap,
    fit_bradley_terry,
    fit_davidson,
    fit_elo,
    fit_prog,
    rank_positions,
)
from simjudge.judges.metrics.rankings_validation import simulate_comparisons

THETA = {"p0": 1.2, "p1": 0.7, "p2": 0.3, "p3": 0.0, "p4": -0.4, "p5": -0.8, "p6": -1.0}


def _centred(theta):
    names = sorted(theta)
    values = np.array([theta[n] for n in names])
    return names, values - values.mean()


def _pair(wins, losses, ties=0):
    return ([Comparison("a", "b", WIN)] * wins + [Comparison("a", "b", LOSS)] * losses
            + [Comparison("a", "b", TIE)] * ties)


def test_two_policies_match_the_closed_form():
    # Davidson with two players: θ_a − θ_b = log(w/l), ν = t / (2 √(w l)).
    # (the maximum-likelihood fit: the default weak prior is switched off with a ~0 ridge)
    fit = fit_davidson(_pair(12, 4, 6), ridge=1e-12)
    assert fit.scores[0] - fit.scores[1] == pytest.approx(math.log(12 / 4), abs=1e-5)
    assert fit.params["nu"] == pytest.approx(6 / (2 * math.sqrt(12 * 4)), rel=1e-5)
    # plain BT counts a tie as half a win each: log((12 + 3) / (4 + 3))
    bt = fit_bradley_terry(_pair(12, 4, 6), ridge=1e-12)
    assert bt.scores[0] - bt.scores[1] == pytest.approx(math.log(15 / 7), abs=1e-5)
    assert fit.scores.sum() == pytest.approx(0.0, abs=1e-9)  # θ centred


def test_davidson_recovers_known_parameters():
    comps = simulate_comparisons(THETA, 3000, nu=0.4, seed=1)
    fit = fit_davidson(comps)
    names, truth = _centred(THETA)
    assert list(fit.policies) == names
    z = (fit.scores - truth) / fit.stderr
    assert np.max(np.abs(z)) < 4.0
    assert fit.params["nu"] == pytest.approx(0.4, abs=0.06)
    assert fit.order() == sorted(THETA, key=THETA.get, reverse=True)


def test_the_fit_is_a_maximum():
    comps = simulate_comparisons(THETA, 300, seed=2)
    fit = fit_davidson(comps)
    rng = np.random.default_rng(0)
    for _ in range(5):  # a perturbed θ (still centred) never has a higher likelihood
        delta = rng.normal(0, 0.05, fit.scores.size)
        delta -= delta.mean()
        assert _davidson_ll(comps, fit, fit.scores + delta) < fit.log_likelihood


def _davidson_ll(comps, fit, theta):
    index = {p: k for k, p in enumerate(fit.policies)}
    nu = fit.params["nu"]
    total = 0.0
    for c in comps:
        ti, tj = theta[index[c.a]], theta[index[c.b]]
        num = {WIN: math.exp(ti), LOSS: math.exp(tj), TIE: 2 * nu * math.exp((ti + tj) / 2)}
        total += math.log(num[c.outcome] / sum(num.values()))
    return total


def test_wald_intervals_cover_the_truth():
    names, truth = _centred(THETA)
    covered = total = 0
    for rep in range(40):
        fit = fit_davidson(simulate_comparisons(THETA, 250, seed=100 + rep))
        covered += int(np.sum(np.abs(fit.scores - truth) <= 1.96 * fit.stderr))
        total += truth.size
    assert 0.88 <= covered / total <= 0.995


def test_bootstrap_intervals_cover_the_true_ranks():
    names, truth = _centred(THETA)
    true_ranks = rank_positions(truth)
    hits = total = 0
    for rep in range(4):
        comps = simulate_comparisons(THETA, 200, seed=300 + rep)
        fit = bootstrap(fit_davidson, comps, n_boot=60, seed=rep)
        assert fit.rank_ci.shape == (7, 2) and np.all(fit.rank_ci[:, 0] <= fit.rank_ci[:, 1])
        assert np.all(fit.score_ci[:, 0] <= fit.scores + 1e-9)
        assert np.all(fit.scores <= fit.score_ci[:, 1] + 1e-9)
        hits += int(np.sum((fit.rank_ci[:, 0] <= true_ranks) & (true_ranks <= fit.rank_ci[:, 1])))
        total += 7
    assert hits / total >= 0.8
    row = fit.rows()[0]
    assert {"policy", "rank", "display", "display_ci", "rank_ci", "stderr"} <= set(row)


def test_display_score_is_roboarena_scale():
    fit = fit_davidson(_pair(10, 5))
    assert fit.display_scores() == pytest.approx(200 * fit.scores + 1500)
    assert fit.to_dict()["rows"][0]["policy"] == "a"


def test_undefeated_policy_stays_finite():
    fit = fit_davidson(_pair(20, 0))
    assert np.all(np.isfinite(fit.scores)) and fit.order() == ["a", "b"]


def test_elo_update_and_order_dependence():
    one = fit_elo([Comparison("a", "b", WIN)], k=0.2)
    assert one.scores.tolist() == pytest.approx([0.1, -0.1])
    tie = fit_elo([Comparison("a", "b", TIE)])
    assert tie.scores.tolist() == [0.0, 0.0]
    comps = [Comparison("a", "b", WIN)] * 3 + [Comparison("a", "b", LOSS)] * 3
    assert fit_elo(comps).scores[0] < 0 < fit_elo(comps[::-1]).scores[0]


def test_prog_ranks_by_mean_progress():
    comps = [Comparison("a", "b", WIN, 80, 20), Comparison("b", "c", TIE, 40, 60),
             Comparison("c", "a", LOSS, 50, 100)]
    fit = fit_prog(comps)
    assert fit.scale == "progress"
    assert dict(zip(fit.policies, fit.scores, strict=True)) == pytest.approx(
        {"a": 90.0, "b": 30.0, "c": 55.0})
    assert fit.order() == ["a", "c", "b"]
    with pytest.raises(RankingError, match="progress"):
        fit_prog(_pair(1, 1))


def test_bad_input_is_refused_with_the_fix():
    with pytest.raises(RankingError, match="arena run"):
        fit_davidson([])
    with pytest.raises(SimjudgeError, match="outcome"):
        Comparison("a", "b", 3)
    with pytest.raises(ValueError, match="two different"):
        Comparison("a", "a", WIN)
    with pytest.raises(RankingError, match="not in the policy list"):
        fit_davidson(_pair(1, 1), policies=["a"])


def test_unplayed_policy_is_ranked_at_zero():
    fit = fit_davidson(_pair(5, 2), policies=["a", "b", "idle"])
    assert fit.score_of("idle") == pytest.approx(0.0, abs=1e-6)


def test_separable_data_give_finite_scores_and_errors_under_the_weak_prior():
    """Why: at 40 matches the arena printed Davidson errors of ±42,332 display points: a
    policy that won every comparison has an infinite maximum-likelihood θ."""
    from simjudge.judges.metrics.rankings import PRIOR_SD, WIN, Comparison, bootstrap

    comps = [Comparison("a", "b", WIN)] * 20 + [Comparison("b", "c", WIN)] * 20
    unregularised = fit_davidson(comps, ridge=1e-9)
    assert 200 * unregularised.stderr.max() > 10_000  # what the report used to show
    fit = fit_davidson(comps)
    assert fit.order() == ["a", "b", "c"]
    assert np.all(np.isfinite(fit.scores)) and 200 * fit.stderr.max() < 400
    assert abs(fit.scores).max() < 3 * PRIOR_SD  # held by the prior, not at infinity
    ranked = bootstrap(fit_davidson, comps, n_boot=30, seed=0)
    assert ranked.resolved() is True  # every comparison agrees: a resolved order
    few = bootstrap(fit_davidson, _pair(3, 2, 1), n_boot=30, seed=0)
    assert few.resolved() is False and not all(r["resolved"] for r in few.rows())
