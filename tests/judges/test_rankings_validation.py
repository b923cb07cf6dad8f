"""Agreement with an oracle, sample-efficiency curves and perturbed evaluators."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges.metrics.rankings import LOSS, TIE, WIN, Comparison, fit_davidson, fit_elo
from simjudge.judges.metrics.rankings_validation import (
    adversarial_evaluator,
    agreement,
    flip_labels,
    kendall_tau,
    mmrv,
    pearson,
    position_bias,
    sample_efficiency,
    simulate_comparisons,
    spearman,
    top1_agreement,
)

THETA = {"p0": 1.2, "p1": 0.7, "p2": 0.3, "p3": 0.0, "p4": -0.4, "p5": -0.8, "p6": -1.0}


def test_correlations_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 5, 8).astype(float)  # with ties
        y = x + rng.normal(0, 2, 8)
        assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y)[0])
        assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y)[0])
        assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y)[0])


def test_mmrv_and_top1_by_hand():
    oracle = np.array([0.9, 0.5, 0.6, 0.1])
    assert mmrv(oracle, oracle) == 0.0
    # b and c swapped: violation 0.1 for each of them, none for a and d
    assert mmrv([4, 3, 2, 1], oracle) == pytest.approx(0.2 / 4)
    # best and worst swapped: every policy's largest violation involves them
    assert mmrv([0.1, 0.5, 0.6, 0.9], oracle) == pytest.approx((0.8 + 0.4 + 0.5 + 0.8) / 4)
    assert top1_agreement([1, 2, 0, 0], oracle) == 0.0
    assert top1_agreement([3, 2, 0, 0], oracle) == 1.0


def test_agreement_names_must_match():
    with pytest.raises(ValueError, match="same policies"):
        agreement({"a": 1.0}, {"b": 1.0})
    found = agreement({"a": 2.0, "b": 1.0}, {"a": 0.9, "b": 0.1})
    assert found == {"pearson": 1.0, "spearman": 1.0, "kendall_tau": 1.0, "top1": 1.0,
                     "mmrv": 0.0}


def test_sample_efficiency_improves_with_budget():
    comps = simulate_comparisons(THETA, 400, seed=7)
    rows = sample_efficiency(
        comps, {"davidson": fit_davidson, "elo": lambda c, p: fit_elo(c, p)}, THETA,
        budgets=(25, 200, 1000), n_subsets=15, seed=0)
    assert {(r.model, r.budget) for r in rows} == {(m, b) for m in ("davidson", "elo")
                                                   for b in (25, 200)}
    tau = {(r.model, r.budget): r.mean["kendall_tau"] for r in rows}
    assert tau["davidson", 200] > tau["davidson", 25]
    assert tau["davidson", 200] >= 0.7
    assert all(r.n_subsets == 15 and 0 <= r.std["kendall_tau"] for r in rows)


def test_label_flips_reverse_the_ranking():
    comps = simulate_comparisons(THETA, 600, seed=8)
    flipped = flip_labels(comps, 1.0)
    assert [c.outcome for c in flipped] == [2 - c.outcome for c in comps]
    assert fit_davidson(flipped).order() == fit_davidson(comps).order()[::-1]
    assert flip_labels(comps, 0.0) == comps
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        flip_labels(comps, 1.5)


def test_position_bias_and_adversary():
    comps = [Comparison("a", "b", LOSS)] * 50 + [Comparison("b", "c", TIE)] * 50
    biased = position_bias(comps, 0.5, seed=1)
    share = np.mean([c.outcome == WIN for c in biased])
    assert 0.35 < share < 0.65
    honest = simulate_comparisons(THETA, 400, seed=9)
    attacked = adversarial_evaluator(honest, 0.6, favoured="p6", seed=2)
    assert fit_davidson(attacked).ranks()[fit_davidson(attacked).policies.index("p6")] <= 2
    assert all(c.outcome == (WIN if c.a == "p6" else LOSS)
               for c, h in zip(attacked, honest, strict=True)
               if c != h and "p6" in (c.a, c.b))
