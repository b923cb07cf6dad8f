"""Rankings from pairwise A/B comparisons: Bradley–Terry, BT-Davidson, Elo, PROG, bootstrap.

The models of RoboArena (``docs/methods.md`` (arena)). A comparison of policies A and B has an
outcome y ∈ {0 = B wins, 1 = tie, 2 = A wins} and, optionally, a progress score 0–100 for
each side. Every model returns a :class:`Ranking` (scores, standard errors, confidence
intervals, ranks); logit-scale scores θ are displayed as 200·θ + 1500, as RoboArena does.

* :func:`fit_davidson` — BT with Davidson ties: p(i ≻ j) = e^{θ_i}/Z, p(j ≻ i) = e^{θ_j}/Z,
  p(tie) = 2ν·e^{(θ_i+θ_j)/2}/Z; Newton with backtracking line search, φ = log ν clipped to
  [−10, 10]; θ centred. **A weak prior** θ ~ N(0, 2²) (:data:`PRIOR_SD`; ridge 1/4 on θ, i.e.
  a policy 400 display points from the mean is one prior standard deviation away): with
  separable data (a policy that won every comparison) the maximum-likelihood θ is infinite
  and its standard error meaningless (±42,332 display points were printed at 40 matches);
  the prior keeps both finite, and with many comparisons the likelihood dominates it.
  Standard errors come from the posterior's curvature (the observed information plus the
  prior's).
* :func:`fit_bradley_terry` — plain BT: a tie counts as half a win for each side.
* :func:`fit_elo` — the online baseline θ_A += K(y − σ(θ_A − θ_B)) (order-dependent).
* :func:`fit_prog` — the PROG baseline: mean progress score per policy.
* :func:`bootstrap` — any model refitted on comparisons resampled with replacement:
  percentile intervals of scores and of ranks.

The latent-task EM model lives in :mod:`~simjudge.judges.metrics.rankings_em`; agreement
with an oracle, sample efficiency and robustness in
:mod:`~simjudge.judges.metrics.rankings_validation`.

Example:
    >>> comps = [Comparison("a", "b", WIN)] * 6 + [Comparison("a", "b", LOSS)] * 2 + [
    ...     Comparison("b", "c", WIN)] * 5 + [Comparison("b", "c", TIE)] * 2
    >>> r = fit_davidson(comps)
    >>> r.order()
    ['a', 'b', 'c']
    >>> int(r.display_scores()[0]) > 1500
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from simjudge.envs.errors import SimjudgeError

__all__ = [
    "LOSS",
    "OUTCOMES",
    "TIE",
    "WIN",
    "Comparison",
    "ComparisonArrays",
    "Ranking",
    "RankingError",
    "bootstrap",
    "fit_bradley_terry",
    "fit_davidson",
    "fit_elo",
    "fit_prog",
    "rank_positions",
]

LOSS, TIE, WIN = 0, 1, 2
"""Outcome codes y of a comparison, from A's side: B wins, tie, A wins."""
OUTCOMES: dict[str, int] = {"B": LOSS, "tie": TIE, "A": WIN}
"""Preference labels (as an evaluator states them) and their outcome codes."""
PHI_BOUNDS = (-10.0, 10.0)
"""Clip range of φ = log ν, the Davidson tie parameter."""
DISPLAY_SCALE, DISPLAY_OFFSET = 200.0, 1500.0
"""Display score = 200·θ + 1500 (RoboArena's leaderboard)."""


class RankingError(SimjudgeError, ValueError):
    """Comparisons a ranking model cannot use; the message names the problem and the fix."""


@dataclass(frozen=True)
class Comparison:
    """One A/B match: which policy sat at A and B, the outcome and the progress scores.

    Attributes:
        a: Policy shown as A.
        b: Policy shown as B.
        outcome: ``WIN`` (A preferred), ``TIE`` or ``LOSS`` (B preferred).
        progress_a: A's progress score 0–100, if the evaluator gave one.
        progress_b: B's progress score 0–100, if the evaluator gave one.
        task: The task the match was played on (for per-task views).
    """

    a: str
    b: str
    outcome: int
    progress_a: float | None = None
    progress_b: float | None = None
    task: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in (LOSS, TIE, WIN):
            raise RankingError(f"comparison outcome must be 0 (B wins), 1 (tie) or 2 (A wins), "
                               f"got {self.outcome!r}")
        if self.a == self.b:
            raise RankingError(f"a comparison needs two different policies, got {self.a!r} twice")


@dataclass(frozen=True)
class ComparisonArrays:
    """Comparisons as index arrays over a fixed policy list (what the fits consume).

    Attributes:
        policies: Policy names; index k of the arrays refers to ``policies[k]``.
        i: Index of A per comparison, shape (N,).
        j: Index of B per comparison, shape (N,).
        y: Outcome per comparison (0, 1, 2), shape (N,).
        progress_i: A's progress (NaN when missing), shape (N,).
        progress_j: B's progress (NaN when missing), shape (N,).
    """

    policies: tuple[str, ...]
    i: np.ndarray
    j: np.ndarray
    y: np.ndarray
    progress_i: np.ndarray
    progress_j: np.ndarray

    @classmethod
    def build(cls, comparisons: Sequence[Comparison],
              policies: Sequence[str] | None = None) -> ComparisonArrays:
        """Index ``comparisons`` over ``policies`` (default: every name seen, sorted).

        Raises:
            RankingError: A comparison names a policy missing from ``policies``.
        """
        names = tuple(policies) if policies is not None else tuple(
            sorted({c.a for c in comparisons} | {c.b for c in comparisons}))
        index = {p: k for k, p in enumerate(names)}
        missing = sorted({p for c in comparisons for p in (c.a, c.b)} - set(index))
        if missing:
            raise RankingError(f"comparisons name policies {missing} that are not in the "
                               f"policy list {list(names)}; add them or leave the list out")

        def progress(v: float | None) -> float:
            return float("nan") if v is None else float(v)

        return cls(
            policies=names,
            i=np.array([index[c.a] for c in comparisons], dtype=np.int64),
            j=np.array([index[c.b] for c in comparisons], dtype=np.int64),
            y=np.array([c.outcome for c in comparisons], dtype=np.int64),
            progress_i=np.array([progress(c.progress_a) for c in comparisons], dtype=float),
            progress_j=np.array([progress(c.progress_b) for c in comparisons], dtype=float),
        )

    @property
    def n(self) -> int:
        """Number of comparisons."""
        return int(self.y.size)


def rank_positions(scores: np.ndarray) -> np.ndarray:
    """Rank of each score, 1 = highest; equal scores share the lower (better) rank."""
    scores = np.asarray(scores, dtype=float)
    return np.array([1 + int(np.sum(scores > s)) for s in scores], dtype=np.int64)


@dataclass
class Ranking:
    """A ranking of policies by one model.

    Attributes:
        model: Model name (``bt``, ``davidson``, ``em``, ``elo``, ``prog``).
        policies: Policy names, aligned with every array.
        scores: The model's scores (θ on the logit scale, or mean progress for PROG).
        scale: ``logit`` (displayed as 200·θ + 1500) or ``progress`` (0–100, as is).
        stderr: Standard errors of the scores, if the model gives them.
        score_ci: Confidence intervals of the scores, shape (P, 2), from :func:`bootstrap`.
        rank_ci: Confidence intervals of the ranks (1 = best), shape (P, 2).
        log_likelihood: Log-likelihood at the fit, for likelihood models.
        n_comparisons: Comparisons the fit used.
        params: Scalar parameters (e.g. ``nu`` of Davidson, iterations).
        details: Anything else the model reports (JSON-serialisable).
    """

    model: str
    policies: tuple[str, ...]
    scores: np.ndarray
    scale: Literal["logit", "progress"] = "logit"
    stderr: np.ndarray | None = None
    score_ci: np.ndarray | None = None
    rank_ci: np.ndarray | None = None
    log_likelihood: float | None = None
    n_comparisons: int = 0
    params: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def ranks(self) -> np.ndarray:
        """Rank of each policy, 1 = best."""
        return rank_positions(self.scores)

    def order(self) -> list[str]:
        """Policy names from best to worst (stable for equal scores)."""
        return [self.policies[k] for k in np.argsort(-self.scores, kind="stable")]

    def display(self, values: np.ndarray) -> np.ndarray:
        """Values on the display scale (200·θ + 1500 for logit scores)."""
        if self.scale == "logit":
            return DISPLAY_SCALE * np.asarray(values, dtype=float) + DISPLAY_OFFSET
        return np.asarray(values, dtype=float)

    def display_scores(self) -> np.ndarray:
        """Scores on the display scale."""
        return self.display(self.scores)

    def score_of(self, policy: str) -> float:
        """One policy's score."""
        return float(self.scores[self.policies.index(policy)])

    def rows(self) -> list[dict[str, Any]]:
        """One dict per policy, best first: rank, display score, errors and intervals."""
        ranks = self.ranks()
        out = []
        for k in np.argsort(-self.scores, kind="stable"):
            row: dict[str, Any] = {"policy": self.policies[k], "rank": int(ranks[k]),
                                   "score": float(self.scores[k]),
                                   "display": float(self.display_scores()[k])}
            if self.stderr is not None:
                scale = DISPLAY_SCALE if self.scale == "logit" else 1.0
                row["stderr"] = float(self.stderr[k])
                row["display_stderr"] = float(scale * self.stderr[k])
            if self.score_ci is not None:
                row["display_ci"] = [float(v) for v in self.display(self.score_ci[k])]
            if self.rank_ci is not None:
                row["rank_ci"] = [int(v) for v in self.rank_ci[k]]
                row["resolved"] = bool(self.rank_ci[k][0] == self.rank_ci[k][1])
            out.append(row)
        return out

    def resolved(self) -> bool | None:
        """Whether every policy's rank interval is a single rank (None: no intervals yet).

        A ranking is *not yet resolved* while some rank interval spans several ranks: more
        comparisons are needed before that order can be read from it.
        """
        if self.rank_ci is None:
            return None
        return bool(np.all(self.rank_ci[:, 0] == self.rank_ci[:, 1]))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the rows plus the fit's scalars)."""
        return {"model": self.model, "scale": self.scale, "n_comparisons": self.n_comparisons,
                "resolved": self.resolved(),
                "log_likelihood": self.log_likelihood, "params": dict(self.params),
                "rows": self.rows(), "details": self.details}


# ----------------------------------------------------------------------------------
# Bradley–Terry and BT-Davidson: a softmax over (A wins, B wins, tie) logits
# ----------------------------------------------------------------------------------
def _design(data: ComparisonArrays, n_params: int, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per comparison, the parameter indices and the (outcome × parameter) coefficients.

    Logits: s_win = θ_i, s_loss = θ_j, s_tie = log 2 + φ + (θ_i + θ_j)/2; φ is the last
    parameter when ``ties``.
    """
    n = data.n
    cols = np.stack([data.i, data.j] + ([np.full(n, n_params - 1)] if ties else []), axis=1)
    coef = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 1.0]])
    if not ties:
        coef = coef[:2, :2]
    return cols, coef


def _targets(y: np.ndarray, ties: bool) -> np.ndarray:
    """Outcome weights per comparison over (win, loss[, tie]); without ties a tie is ½/½."""
    if ties:
        return np.eye(3)[np.where(y == WIN, 0, np.where(y == LOSS, 1, 2))]
    t = np.zeros((y.size, 2))
    t[y == WIN, 0] = 1.0
    t[y == LOSS, 1] = 1.0
    t[y == TIE] = 0.5
    return t


def _softmax_terms(x: np.ndarray, cols: np.ndarray, coef: np.ndarray,
                   ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """Logits and log-normaliser of every comparison."""
    logits = x[cols] @ coef.T
    if ties:
        logits[:, 2] += np.log(2.0)
    top = logits.max(axis=1, keepdims=True)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    return logits, log_z


def _objective(x: np.ndarray, cols: np.ndarray, coef: np.ndarray, targets: np.ndarray,
               ties: bool, ridge: float, n_theta: int) -> float:
    logits, log_z = _softmax_terms(x, cols, coef, ties)
    ll = float(np.sum(targets * logits) - np.sum(log_z))
    return ll - 0.5 * ridge * float(x[:n_theta] @ x[:n_theta])


def _grad_hess(x: np.ndarray, cols: np.ndarray, coef: np.ndarray, targets: np.ndarray,
               ties: bool, ridge: float, n_theta: int) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of the penalised log-likelihood: Aᵀ(t − p), −Aᵀ(diag p − ppᵀ)A."""
    logits, log_z = _softmax_terms(x, cols, coef, ties)
    p = np.exp(logits - log_z[:, None])
    g_local = (targets - p) @ coef                       # (N, k)
    cov = p[:, :, None] * np.eye(p.shape[1])[None] - p[:, :, None] * p[:, None, :]
    h_local = -np.einsum("ak,nab,bl->nkl", coef, cov, coef)
    grad = np.zeros_like(x)
    np.add.at(grad, cols, g_local)
    hess = np.zeros((x.size, x.size))
    k = cols.shape[1]
    rows = np.repeat(cols, k, axis=1)
    columns = np.tile(cols, (1, k))
    np.add.at(hess, (rows.ravel(), columns.ravel()), h_local.reshape(len(cols), -1).ravel())
    grad[:n_theta] -= ridge * x[:n_theta]
    hess[np.arange(n_theta), np.arange(n_theta)] -= ridge
    return grad, hess


def _newton(x: np.ndarray, args: tuple[Any, ...], ties: bool, max_iter: int = 100,
            tol: float = 1e-9) -> tuple[np.ndarray, int]:
    """Maximise the penalised log-likelihood by Newton steps with backtracking line search."""
    f = _objective(x, *args)
    for it in range(1, max_iter + 1):
        grad, hess = _grad_hess(x, *args)
        if np.max(np.abs(grad)) < tol:
            return x, it
        step = -np.linalg.lstsq(hess, grad, rcond=None)[0]
        if grad @ step <= 0:  # not an ascent direction (numerically singular): gradient step
            step = grad
        size = 1.0
        while size > 1e-10:
            trial = x + size * step
            if ties:
                trial[-1] = np.clip(trial[-1], *PHI_BOUNDS)
            f_trial = _objective(trial, *args)
            if f_trial >= f + 1e-4 * float(grad @ (trial - x)):
                break
            size *= 0.5
        else:
            return x, it
        if abs(f_trial - f) < 1e-12 * max(1.0, abs(f)):
            return trial, it
        x, f = trial, f_trial
    return x, max_iter


def _check_nonempty(comparisons: Sequence[Comparison], model: str) -> None:
    if not comparisons:
        raise RankingError(f"{model} needs at least one comparison; run some arena matches "
                           "first (simjudge arena run)")


PRIOR_SD = 2.0
"""Standard deviation of the weak Gaussian prior on θ of BT and BT-Davidson (logit units)."""
PRIOR_RIDGE = 1.0 / PRIOR_SD**2


def _fit_bt(comparisons: Sequence[Comparison], policies: Sequence[str] | None, ties: bool,
            ridge: float) -> Ranking:
    model = "davidson" if ties else "bt"
    _check_nonempty(comparisons, model)
    data = ComparisonArrays.build(comparisons, policies)
    n_theta = len(data.policies)
    x = np.zeros(n_theta + (1 if ties else 0))
    cols, coef = _design(data, x.size, ties)
    args = (cols, coef, _targets(data.y, ties), ties, ridge, n_theta)
    x, iterations = _newton(x, args, ties)
    x[:n_theta] -= x[:n_theta].mean()
    ll = _objective(x, *args[:-2], 0.0, n_theta)
    _, hess = _grad_hess(x, *args[:-2], ridge, n_theta)  # the posterior's curvature
    cov = np.linalg.pinv(-hess, rcond=1e-10, hermitian=True)
    # the scores are centred: the errors of centred θ (the prior's variance along the common
    # shift, which the likelihood does not see, is projected out)
    centre = np.eye(n_theta) - 1.0 / n_theta
    cov_theta = centre @ cov[:n_theta, :n_theta] @ centre
    stderr = np.sqrt(np.clip(np.diag(cov_theta), 0.0, None))
    params: dict[str, float] = {"iterations": float(iterations), "ridge": ridge}
    if ties:
        params["nu"] = float(np.exp(x[-1]))
    return Ranking(model=model, policies=data.policies, scores=x[:n_theta].copy(),
                   stderr=stderr, log_likelihood=ll, n_comparisons=data.n, params=params)


def fit_davidson(comparisons: Sequence[Comparison], policies: Sequence[str] | None = None,
                 *, ridge: float = PRIOR_RIDGE) -> Ranking:
    """Bradley–Terry with Davidson ties, by Newton's method with line search.

    Args:
        comparisons: The matches.
        policies: Policies to rank (default: all seen); unseen ones score 0 (the ridge).
        ridge: L2 penalty on θ, the precision of the weak prior (default
            :data:`PRIOR_RIDGE` = 1/PRIOR_SD²; keeps undefeated policies finite).

    Returns:
        A logit-scale ranking, θ centred, with standard errors and ``params["nu"]``.
    """
    return _fit_bt(comparisons, policies, True, ridge)


def fit_bradley_terry(comparisons: Sequence[Comparison], policies: Sequence[str] | None = None,
                      *, ridge: float = PRIOR_RIDGE) -> Ranking:
    """Plain Bradley–Terry (a tie counts as half a win for each side); see :func:`fit_davidson`."""
    return _fit_bt(comparisons, policies, False, ridge)


# ----------------------------------------------------------------------------------
# Baselines
# ----------------------------------------------------------------------------------
ELO_K = 0.184
"""Elo step on the logit scale: chess's K = 32 on the 400·log10 scale (32·ln10/400)."""


def fit_elo(comparisons: Sequence[Comparison], policies: Sequence[str] | None = None,
            *, k: float = ELO_K) -> Ranking:
    """Online Elo in the given order: θ_A += K(y − σ(θ_A − θ_B)), θ_B −= the same.

    y is 1 when A wins, ½ for a tie, 0 when B wins; ratings start at 0 (display 1500).
    """
    _check_nonempty(comparisons, "elo")
    data = ComparisonArrays.build(comparisons, policies)
    theta = np.zeros(len(data.policies))
    for i, j, y in zip(data.i, data.j, data.y, strict=True):
        expected = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
        delta = k * (y / 2.0 - expected)
        theta[i] += delta
        theta[j] -= delta
    return Ranking(model="elo", policies=data.policies, scores=theta, n_comparisons=data.n,
                   params={"k": k})


def fit_prog(comparisons: Sequence[Comparison], policies: Sequence[str] | None = None) -> Ranking:
    """PROG: rank by mean progress score (0–100) per policy over its comparisons.

    Raises:
        RankingError: No comparison carries progress scores.
    """
    _check_nonempty(comparisons, "prog")
    data = ComparisonArrays.build(comparisons, policies)
    values = np.concatenate([data.progress_i, data.progress_j])
    owners = np.concatenate([data.i, data.j])
    keep = ~np.isnan(values)
    if not keep.any():
        raise RankingError("PROG ranks by progress scores, and no comparison has any; use an "
                           "evaluator that reports progress (every arena evaluator does)")
    p = len(data.policies)
    counts = np.bincount(owners[keep], minlength=p).astype(float)
    sums = np.bincount(owners[keep], weights=values[keep], minlength=p)
    squares = np.bincount(owners[keep], weights=values[keep] ** 2, minlength=p)
    mean = np.divide(sums, counts, out=np.zeros(p), where=counts > 0)
    var = np.divide(squares, counts, out=np.zeros(p), where=counts > 0) - mean ** 2
    stderr = np.sqrt(np.clip(var, 0.0, None) / np.maximum(counts - 1, 1))
    return Ranking(model="prog", policies=data.policies, scores=mean, scale="progress",
                   stderr=stderr, n_comparisons=data.n,
                   details={"counts": counts.astype(int).tolist()})


# ----------------------------------------------------------------------------------
# Bootstrap confidence intervals for any model
# ----------------------------------------------------------------------------------
FitFn = Callable[[Sequence[Comparison], Sequence[str]], Ranking]
"""``fit(comparisons, policies) -> Ranking``: any of the fits above (or a wrapper)."""


def bootstrap(fit: FitFn, comparisons: Sequence[Comparison], policies: Sequence[str] | None = None,
              *, n_boot: int = 200, level: float = 0.95, seed: int = 0) -> Ranking:
    """Fit, then refit on ``n_boot`` resamples of the comparisons; percentile intervals.

    Args:
        fit: The model, ``fit(comparisons, policies)``.
        comparisons: The matches.
        policies: Policies to rank (default: all seen).
        n_boot: Bootstrap resamples.
        level: Coverage of the intervals.
        seed: Seed of the resampling.

    Returns:
        The full-data ranking with ``score_ci`` and ``rank_ci`` filled in (and
        ``details["n_boot"]``).
    """
    _check_nonempty(comparisons, "bootstrap")
    names = tuple(policies) if policies is not None else ComparisonArrays.build(
        comparisons).policies
    base = fit(comparisons, names)
    rng = np.random.default_rng(seed)
    scores = np.empty((n_boot, len(names)))
    n = len(comparisons)
    for b in range(n_boot):
        sample = [comparisons[k] for k in rng.integers(0, n, size=n)]
        scores[b] = fit(sample, names).scores
    ranks = np.stack([rank_positions(s) for s in scores])
    lo, hi = 50.0 * (1.0 - level), 50.0 * (1.0 + level)
    details = {**base.details, "n_boot": n_boot, "level": level}
    return replace(base, score_ci=np.percentile(scores, [lo, hi], axis=0).T,
                   rank_ci=np.round(np.percentile(ranks, [lo, hi], axis=0).T).astype(int),
                   details=details)
