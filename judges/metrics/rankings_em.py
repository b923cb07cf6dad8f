"""RoboArena's latent-task model ("TASK"), fitted by EM, with the corrected gradients.

Comparisons come from T latent task buckets. Bucket t has weight ν_t, difficulty τ_t and
per-policy offsets ψ_{p,t}; with z_i = θ_i + ψ_{i,t} − τ_t and q = σ(z):

* P(win | t)  = q_i (1 − q_j)
* P(loss | t) = (1 − q_i) q_j
* P(tie | t)  = 2 ν_tie √(q_i (1 − q_i) q_j (1 − q_j))

and P(y) = Σ_t ν_t P(y | t). As in the paper the three bucket probabilities are not
normalised over outcomes, so ν_tie is a fixed setting (it would otherwise grow without
bound), not a fitted parameter.

EM: the E-step gives responsibilities γ_{n,t} ∝ ν_t P(y_n | t); the M-step sets
ν_t = mean_n γ_{n,t} and takes one clipped Newton step on each of θ, ψ, τ (in that order)
on Q = Σ_{n,t} γ_{n,t} log P(y_n | t) − (λ/2)(‖θ‖² + ‖ψ‖² + ‖τ‖²).

**Erratum applied** (``docs/methods.md`` (arena)): the paper's ∂Q/∂θ_p has the wrong sign on the
term where p is the second player. The per-outcome derivatives of log P(y | t) with respect
to (z_i, z_j) are win (1 − q_i, −q_j), loss (−q_i, 1 − q_j), tie (½ − q_i, ½ − q_j), and
∂z/∂τ = −1; the diagonal Hessian term is −q(1 − q) for every outcome.
:func:`q_gradient` implements these and ``tests/judges/test_rankings_em.py`` checks them
against finite differences of :func:`expected_log_likelihood`.

The model has shift symmetries; after every iteration the parameters are moved, without
changing any z, to the gauge: ψ centred per policy (the mean goes into θ) and per bucket
(the mean goes into τ), θ centred (the mean goes into τ). Several restarts from
θ, τ ~ N(0, 0.1²), ψ = 0, ν = 1/T; the best log-likelihood wins.

Example:
    >>> from simjudge.judges.metrics.rankings import Comparison, WIN, LOSS
    >>> comps = [Comparison("a", "b", WIN)] * 8 + [Comparison("a", "b", LOSS)] * 2
    >>> fit_task_model(comps, TaskModelConfig(n_buckets=4, n_restarts=1)).order()
    ['a', 'b']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .rankings import (
    LOSS,
    TIE,
    WIN,
    Comparison,
    ComparisonArrays,
    Ranking,
    RankingError,
)

__all__ = [
    "TaskModelConfig",
    "TaskModelParams",
    "expected_log_likelihood",
    "fit_task_model",
    "log_likelihood",
    "outcome_log_probs",
    "q_diag_hessian",
    "q_gradient",
    "responsibilities",
]


@dataclass(frozen=True)
class TaskModelConfig:
    """Settings of the latent-task EM fit (defaults from the paper).

    Attributes:
        n_buckets: Latent task buckets T.
        n_iter: EM iterations per restart.
        clip: Bound on each Newton step at the first iteration.
        clip_decay: Factor on the bound after every iteration.
        tol: Stop when the log-likelihood changes by less than ``tol`` per comparison.
        l2: L2 penalty λ on θ, ψ and τ.
        tie_weight: ν_tie of P(tie | t) (fixed, see the module docstring).
        n_restarts: Random restarts; the best log-likelihood is kept.
        init_scale: Standard deviation of the initial θ and τ.
        psi_init_scale: Standard deviation of the initial ψ (the paper: 0). With ψ = 0 the
            buckets start alike and only the small differences of the initial τ tell them
            apart, so they stay nearly alike; a positive value lets them specialise.
        seed: Seed of the initialisations.
    """

    n_buckets: int = 60
    n_iter: int = 60
    clip: float = 1.0
    clip_decay: float = 0.99
    tol: float = 1e-4
    l2: float = 1e-2
    tie_weight: float = 0.5
    n_restarts: int = 3
    init_scale: float = 0.1
    psi_init_scale: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_buckets < 1 or self.n_iter < 1 or self.n_restarts < 1:
            raise RankingError("TaskModelConfig needs n_buckets, n_iter and n_restarts >= 1, "
                               f"got {self.n_buckets}, {self.n_iter}, {self.n_restarts}")
        if self.tie_weight <= 0:
            raise RankingError(f"tie_weight must be > 0, got {self.tie_weight}")


@dataclass
class TaskModelParams:
    """Parameters of the latent-task model.

    Attributes:
        theta: Global skill per policy, shape (P,).
        psi: Offset per policy and bucket, shape (P, T).
        tau: Difficulty per bucket, shape (T,).
        weights: Bucket weights ν_t (sum 1), shape (T,).
    """

    theta: np.ndarray
    psi: np.ndarray
    tau: np.ndarray
    weights: np.ndarray

    def copy(self) -> TaskModelParams:
        """A deep copy."""
        return TaskModelParams(self.theta.copy(), self.psi.copy(), self.tau.copy(),
                               self.weights.copy())

    def centre(self) -> None:
        """Move to the gauge (ψ centred per policy and per bucket, θ centred); z unchanged."""
        per_policy = self.psi.mean(axis=1)
        self.psi -= per_policy[:, None]
        self.theta += per_policy
        per_bucket = self.psi.mean(axis=0)
        self.psi -= per_bucket[None, :]
        self.tau -= per_bucket
        shift = self.theta.mean()
        self.theta -= shift
        self.tau -= shift


def _z(params: TaskModelParams, data: ComparisonArrays) -> tuple[np.ndarray, np.ndarray]:
    """z_i and z_j per comparison and bucket, shape (N, T) each."""
    zi = params.theta[data.i, None] + params.psi[data.i] - params.tau[None, :]
    zj = params.theta[data.j, None] + params.psi[data.j] - params.tau[None, :]
    return zi, zj


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -z)


def outcome_log_probs(params: TaskModelParams, data: ComparisonArrays,
                      tie_weight: float) -> np.ndarray:
    """The log-probabilities log P(y_n | t) for every comparison n and bucket t, shape (N, T)."""
    zi, zj = _z(params, data)
    lqi, l1qi = _log_sigmoid(zi), _log_sigmoid(-zi)
    lqj, l1qj = _log_sigmoid(zj), _log_sigmoid(-zj)
    y = data.y[:, None]
    tie = np.log(2.0 * tie_weight) + 0.5 * (lqi + l1qi + lqj + l1qj)
    return np.where(y == WIN, lqi + l1qj, np.where(y == LOSS, l1qi + lqj, tie))


def _log_mix(params: TaskModelParams, data: ComparisonArrays, tie_weight: float) -> np.ndarray:
    """The sums log ν_t + log P(y_n | t), shape (N, T)."""
    return np.log(np.maximum(params.weights, 1e-300))[None, :] + outcome_log_probs(
        params, data, tie_weight)


def log_likelihood(params: TaskModelParams, data: ComparisonArrays, tie_weight: float) -> float:
    """Σ_n log Σ_t ν_t P(y_n | t)."""
    mix = _log_mix(params, data, tie_weight)
    top = mix.max(axis=1, keepdims=True)
    return float(np.sum(top[:, 0] + np.log(np.exp(mix - top).sum(axis=1))))


def responsibilities(params: TaskModelParams, data: ComparisonArrays,
                     tie_weight: float) -> np.ndarray:
    """E-step: γ_{n,t} = ν_t P(y_n | t) / Σ_s ν_s P(y_n | s), shape (N, T)."""
    mix = _log_mix(params, data, tie_weight)
    mix -= mix.max(axis=1, keepdims=True)
    gamma = np.exp(mix)
    return np.asarray(gamma / gamma.sum(axis=1, keepdims=True))


def expected_log_likelihood(params: TaskModelParams, data: ComparisonArrays, gamma: np.ndarray,
                            config: TaskModelConfig) -> float:
    """Q = Σ γ log P(y | t) − (λ/2)(‖θ‖² + ‖ψ‖² + ‖τ‖²) (the part the Newton steps climb)."""
    q = float(np.sum(gamma * outcome_log_probs(params, data, config.tie_weight)))
    penalty = float(params.theta @ params.theta + np.sum(params.psi ** 2)
                    + params.tau @ params.tau)
    return q - 0.5 * config.l2 * penalty


def _outcome_derivatives(params: TaskModelParams,
                         data: ComparisonArrays) -> tuple[np.ndarray, ...]:
    """∂ log P(y|t)/∂z_i, ∂/∂z_j (the corrected per-outcome forms) and q_i, q_j."""
    zi, zj = _z(params, data)
    qi, qj = 1.0 / (1.0 + np.exp(-zi)), 1.0 / (1.0 + np.exp(-zj))
    y = data.y[:, None]
    gi = np.where(y == WIN, 1.0 - qi, np.where(y == LOSS, -qi, 0.5 - qi))
    gj = np.where(y == WIN, -qj, np.where(y == LOSS, 1.0 - qj, 0.5 - qj))
    return gi, gj, qi, qj


def _scatter(values_i: np.ndarray, values_j: np.ndarray, data: ComparisonArrays,
             n_policies: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-policy totals (over n and t) and per-policy-bucket totals of (N, T) terms."""
    rows = np.arange(data.n)
    onehot_i = np.zeros((data.n, n_policies))
    onehot_i[rows, data.i] = 1.0
    onehot_j = np.zeros((data.n, n_policies))
    onehot_j[rows, data.j] = 1.0
    per_bucket = onehot_i.T @ values_i + onehot_j.T @ values_j
    return per_bucket.sum(axis=1), per_bucket


def q_gradient(params: TaskModelParams, data: ComparisonArrays, gamma: np.ndarray,
               config: TaskModelConfig) -> TaskModelParams:
    """∂Q/∂θ, ∂Q/∂ψ, ∂Q/∂τ (``weights`` of the result is unused: zeros).

    ∂Q/∂θ_p = Σ_{n,t} γ_{n,t} (g_i 1[i_n = p] + g_j 1[j_n = p]) − λθ_p, with g the
    per-outcome derivatives of the module docstring (the second-player term keeps the
    sign of g_j: the erratum); ∂Q/∂ψ_{p,t} the same without the sum over t;
    ∂Q/∂τ_t = −Σ_n γ_{n,t} (g_i + g_j) − λτ_t.
    """
    gi, gj, _, _ = _outcome_derivatives(params, data)
    theta, psi = _scatter(gamma * gi, gamma * gj, data, params.theta.size)
    tau = -np.sum(gamma * (gi + gj), axis=0)
    return TaskModelParams(theta=theta - config.l2 * params.theta,
                           psi=psi - config.l2 * params.psi,
                           tau=tau - config.l2 * params.tau,
                           weights=np.zeros_like(params.weights))


def q_diag_hessian(params: TaskModelParams, data: ComparisonArrays, gamma: np.ndarray,
                   config: TaskModelConfig) -> TaskModelParams:
    """Diagonal of ∂²Q: −Σ γ q(1 − q) over each parameter's appearances, − λ."""
    _, _, qi, qj = _outcome_derivatives(params, data)
    hi, hj = -gamma * qi * (1.0 - qi), -gamma * qj * (1.0 - qj)
    theta, psi = _scatter(hi, hj, data, params.theta.size)
    tau = np.sum(hi + hj, axis=0)
    return TaskModelParams(theta=theta - config.l2, psi=psi - config.l2, tau=tau - config.l2,
                           weights=np.zeros_like(params.weights))


def _newton_block(params: TaskModelParams, data: ComparisonArrays, gamma: np.ndarray,
                  config: TaskModelConfig, name: str, clip: float) -> None:
    """One clipped diagonal Newton step on the block ``name`` (theta, psi or tau).

    The same gradient and diagonal Hessian as :func:`q_gradient` and
    :func:`q_diag_hessian`, from one pass over the per-outcome derivatives.
    """
    gi, gj, qi, qj = _outcome_derivatives(params, data)
    value = getattr(params, name)
    if name == "tau":
        grad = -np.sum(gamma * (gi + gj), axis=0)
        hess = -np.sum(gamma * (qi * (1.0 - qi) + qj * (1.0 - qj)), axis=0)
    else:
        g_theta, g_psi = _scatter(gamma * gi, gamma * gj, data, params.theta.size)
        h_theta, h_psi = _scatter(-gamma * qi * (1.0 - qi), -gamma * qj * (1.0 - qj), data,
                                  params.theta.size)
        grad, hess = (g_theta, h_theta) if name == "theta" else (g_psi, h_psi)
    grad = grad - config.l2 * value
    hess = hess - config.l2
    setattr(params, name, value + np.clip(-grad / hess, -clip, clip))


def _init(n_policies: int, config: TaskModelConfig, rng: np.random.Generator) -> TaskModelParams:
    t = config.n_buckets
    return TaskModelParams(theta=rng.normal(0.0, config.init_scale, n_policies),
                           psi=rng.normal(0.0, config.psi_init_scale, (n_policies, t))
                           if config.psi_init_scale > 0 else np.zeros((n_policies, t)),
                           tau=rng.normal(0.0, config.init_scale, t),
                           weights=np.full(t, 1.0 / t))


def _em(data: ComparisonArrays, config: TaskModelConfig,
        rng: np.random.Generator) -> tuple[TaskModelParams, float, int]:
    params = _init(len(data.policies), config, rng)
    clip = config.clip
    previous = log_likelihood(params, data, config.tie_weight)
    iterations = 0
    for iterations in range(1, config.n_iter + 1):  # noqa: B007 (reported after the loop)
        gamma = responsibilities(params, data, config.tie_weight)
        params.weights = gamma.mean(axis=0)
        for block in ("theta", "psi", "tau"):
            _newton_block(params, data, gamma, config, block, clip)
        params.centre()
        clip *= config.clip_decay
        current = log_likelihood(params, data, config.tie_weight)
        if abs(current - previous) < config.tol * data.n:
            previous = current
            break
        previous = current
    return params, previous, iterations


def fit_task_model(comparisons: Sequence[Comparison], config: TaskModelConfig | None = None,
                   policies: Sequence[str] | None = None) -> Ranking:
    """Fit the latent-task model by EM with restarts; rank by θ.

    Args:
        comparisons: The matches.
        config: Settings (default :class:`TaskModelConfig`).
        policies: Policies to rank (default: all seen).

    Returns:
        A logit-scale ranking (model ``em``) with the best restart's log-likelihood;
        ``details`` holds τ, ν and every restart's log-likelihood.
    """
    config = config or TaskModelConfig()
    if not comparisons:
        raise RankingError("the task model needs at least one comparison; run some arena "
                           "matches first (simjudge arena run)")
    data = ComparisonArrays.build(comparisons, policies)
    rng = np.random.default_rng(config.seed)
    best: tuple[TaskModelParams, float, int] | None = None
    restarts = []
    for _ in range(config.n_restarts):
        result = _em(data, config, rng)
        restarts.append(result[1])
        if best is None or result[1] > best[1]:
            best = result
    assert best is not None
    params, ll, iterations = best
    ties = int(np.sum(data.y == TIE))
    return Ranking(
        model="em", policies=data.policies, scores=params.theta.copy(), log_likelihood=ll,
        n_comparisons=data.n,
        params={"n_buckets": float(config.n_buckets), "iterations": float(iterations),
                "tie_weight": config.tie_weight, "l2": config.l2},
        details={"restart_log_likelihoods": restarts, "ties": ties,
                 "tau": params.tau.tolist(), "weights": params.weights.tolist()},
    )
