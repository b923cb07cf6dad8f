"""The latent-task EM model: corrected gradients against finite differences, fit, restarts."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges.metrics.rankings import LOSS, TIE, WIN, Comparison, ComparisonArrays
from simjudge.judges.metrics.rankings_em import (
    TaskModelConfig,
    TaskModelParams,
    expected_log_likelihood,
    fit_task_model,
    log_likelihood,
    outcome_log_probs,
    q_diag_hessian,
    q_gradient,
    responsibilities,
)
from simjudge.judges.metrics.rankings_validation import kendall_tau, simulate_comparisons


def _random_setup(seed=0, n=60, buckets=4):
    rng = np.random.default_rng(seed)
    theta = {f"p{k}": float(v) for k, v in enumerate(rng.normal(0, 1, 5))}
    data = ComparisonArrays.build(simulate_comparisons(theta, n, seed=seed))
    p = len(data.policies)
    params = TaskModelParams(rng.normal(0, 1, p), rng.normal(0, 0.5, (p, buckets)),
                             rng.normal(0, 1, buckets), rng.dirichlet(np.ones(buckets)))
    config = TaskModelConfig(n_buckets=buckets, l2=0.05, tie_weight=0.4)
    return data, params, config


@pytest.mark.parametrize("block", ["theta", "psi", "tau"])
def test_gradient_matches_finite_differences(block):
    data, params, config = _random_setup()
    gamma = responsibilities(params, data, config.tie_weight)
    analytic = getattr(q_gradient(params, data, gamma, config), block)
    diag = getattr(q_diag_hessian(params, data, gamma, config), block)
    values = getattr(params, block)
    eps = 1e-5
    for idx in np.ndindex(values.shape):
        old = values[idx]
        values[idx] = old + eps
        up = expected_log_likelihood(params, data, gamma, config)
        values[idx] = old - eps
        down = expected_log_likelihood(params, data, gamma, config)
        values[idx] = old
        mid = expected_log_likelihood(params, data, gamma, config)
        assert analytic[idx] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-6)
        h = 1e-3
        values[idx] = old + h
        up2 = expected_log_likelihood(params, data, gamma, config)
        values[idx] = old - h
        down2 = expected_log_likelihood(params, data, gamma, config)
        values[idx] = old
        assert diag[idx] == pytest.approx((up2 - 2 * mid + down2) / h**2, rel=1e-3, abs=1e-4)


def test_second_player_term_has_the_corrected_sign():
    # p plays second and wins (outcome LOSS for A): raising θ_p must raise Q. The paper's
    # sign error would give a negative derivative here.
    data = ComparisonArrays.build([Comparison("a", "p", LOSS)])
    params = TaskModelParams(np.zeros(2), np.zeros((2, 1)), np.zeros(1), np.ones(1))
    config = TaskModelConfig(n_buckets=1, l2=0.0)
    gamma = responsibilities(params, data, config.tie_weight)
    grad = q_gradient(params, data, gamma, config)
    assert grad.theta.tolist() == pytest.approx([-0.5, 0.5])  # (−q_i, 1 − q_j), q = ½
    tie = ComparisonArrays.build([Comparison("a", "p", TIE)])
    assert q_gradient(params, tie, gamma, config).theta.tolist() == pytest.approx([0.0, 0.0])


def test_outcome_probabilities_follow_the_model():
    data = ComparisonArrays.build([Comparison("a", "b", WIN), Comparison("a", "b", LOSS),
                                   Comparison("a", "b", TIE)])
    params = TaskModelParams(np.array([0.3, -0.3]), np.zeros((2, 1)), np.array([0.1]),
                             np.ones(1))
    qa, qb = 1 / (1 + np.exp(-0.2)), 1 / (1 + np.exp(0.4))
    got = np.exp(outcome_log_probs(params, data, 0.5))[:, 0]
    assert got == pytest.approx([qa * (1 - qb), (1 - qa) * qb,
                                 np.sqrt(qa * (1 - qa) * qb * (1 - qb))])


def test_centring_keeps_every_z_and_the_likelihood():
    data, params, config = _random_setup(seed=3)
    before = log_likelihood(params, data, config.tie_weight)
    params.centre()
    assert log_likelihood(params, data, config.tie_weight) == pytest.approx(before)
    assert params.theta.mean() == pytest.approx(0.0, abs=1e-12)
    assert np.abs(params.psi.mean(axis=1)).max() < 1e-12
    assert np.abs(params.psi.mean(axis=0)).max() < 1e-12


def test_fit_recovers_the_order_and_keeps_the_best_restart():
    theta = {"p0": 1.5, "p1": 1.0, "p2": 0.5, "p3": 0.0, "p4": -0.5, "p5": -1.0, "p6": -1.5}
    comps = simulate_comparisons(theta, 500, nu=0.2, seed=4)
    fit = fit_task_model(comps, TaskModelConfig(n_buckets=8, n_restarts=3, seed=1))
    assert fit.log_likelihood == pytest.approx(max(fit.details["restart_log_likelihoods"]))
    truth = [theta[p] for p in fit.policies]
    assert kendall_tau(fit.scores, truth) >= 0.8
    assert fit.scores.sum() == pytest.approx(0.0, abs=1e-9)
    assert sum(fit.details["weights"]) == pytest.approx(1.0)


def test_task_structure_is_captured():
    # Two tasks on which the specialists swap places: the bucket model fits better than
    # a single bucket.
    rng = np.random.default_rng(5)
    comps = []
    for _ in range(400):
        task = int(rng.integers(2))
        skill = {"s0": 2.0 if task == 0 else -2.0, "s1": -2.0 if task == 0 else 2.0, "g": 0.0}
        a, b = rng.choice(list(skill), size=2, replace=False)
        p = 1 / (1 + np.exp(skill[b] - skill[a]))
        comps.append(Comparison(str(a), str(b), WIN if rng.random() < p else LOSS))
    one = fit_task_model(comps, TaskModelConfig(n_buckets=1, n_restarts=1))
    many = fit_task_model(comps, TaskModelConfig(n_buckets=6, n_restarts=2))
    assert many.log_likelihood > one.log_likelihood
