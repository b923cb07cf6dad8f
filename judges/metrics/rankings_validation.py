"""Validating a ranking against an oracle: agreement, sample efficiency, robustness.

From ``docs/methods.md`` (arena). The oracle is a score V per policy (in simulation: every policy on
every task with many seeds, e.g. its success rate or mean progress); a ranking model gives
estimates V̂. Agreement:

* Pearson r of the scores, Spearman ρ and Kendall τ-b of the ranks, top-1 agreement;
* MMRV (mean maximum rank violation, SimplerEnv):
  RV(i, j) = |V_i − V_j| · 1[(V̂_i < V̂_j) ≠ (V_i < V_j)], MMRV = (1/N) Σ_i max_j RV(i, j).

Sample efficiency: refit every model on ``n_subsets`` random subsets of each budget (25, 50,
100, 200, 400 comparisons, ...) and average the agreement. Robustness: the same after
injecting label flips, position bias or an adversarial evaluator into the comparisons.

Example:
    >>> found = agreement({"a": 3.0, "b": 2.0, "c": 1.0}, {"a": 0.9, "b": 0.5, "c": 0.6})
    >>> {k: round(v, 3) for k, v in found.items()}
    {'pearson': 0.721, 'spearman': 0.5, 'kendall_tau': 0.333, 'top1': 1.0, 'mmrv': 0.067}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from tqdm import tqdm

from .rankings import LOSS, TIE, WIN, Comparison, Ranking, RankingError

__all__ = [
    "AGREEMENT_METRICS",
    "BUDGETS",
    "EfficiencyRow",
    "adversarial_evaluator",
    "agreement",
    "flip_labels",
    "kendall_tau",
    "mmrv",
    "pearson",
    "position_bias",
    "sample_efficiency",
    "simulate_comparisons",
    "spearman",
    "top1_agreement",
]

AGREEMENT_METRICS = ("pearson", "spearman", "kendall_tau", "top1", "mmrv")
"""Keys of :func:`agreement` (MMRV: lower is better; the others higher)."""
BUDGETS: tuple[int, ...] = (25, 50, 100, 200, 400)
"""Default comparison budgets of the sample-efficiency curves."""


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson correlation; 0 when either side is constant."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = a - a.mean(), b - b.mean()
    denom = float(np.sqrt((a @ a) * (b @ b)))
    return float(a @ b) / denom if denom > 0 else 0.0


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties sharing their average rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        same = x == value
        ranks[same] = ranks[same].mean()
    return ranks


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman ρ: Pearson correlation of the (average) ranks."""
    return pearson(_average_ranks(np.asarray(x, dtype=float)),
                   _average_ranks(np.asarray(y, dtype=float)))


def kendall_tau(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall τ-b (tie-corrected); 0 when either side is constant."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    iu = np.triu_indices(len(a), k=1)
    da = np.sign(a[:, None] - a[None, :])[iu]
    db = np.sign(b[:, None] - b[None, :])[iu]
    denom = float(np.sqrt(np.sum(da != 0) * np.sum(db != 0)))
    return float(np.sum(da * db)) / denom if denom > 0 else 0.0


def top1_agreement(estimate: Sequence[float] | np.ndarray,
                   oracle: Sequence[float] | np.ndarray) -> float:
    """1.0 if the estimate's best policy is one of the oracle's best, else 0.0."""
    est, ref = np.asarray(estimate, dtype=float), np.asarray(oracle, dtype=float)
    return float(ref[int(np.argmax(est))] == ref.max())


def mmrv(estimate: Sequence[float] | np.ndarray, oracle: Sequence[float] | np.ndarray) -> float:
    """Mean maximum rank violation (lower is better), in the oracle's units."""
    est, ref = np.asarray(estimate, dtype=float), np.asarray(oracle, dtype=float)
    violated = (est[:, None] < est[None, :]) != (ref[:, None] < ref[None, :])
    rv = np.abs(ref[:, None] - ref[None, :]) * violated
    return float(rv.max(axis=1).mean())


def agreement(estimate: Mapping[str, float], oracle: Mapping[str, float]) -> dict[str, float]:
    """Every agreement metric of estimated scores against oracle scores, by policy name.

    Raises:
        RankingError: The two sides rank different policies.
    """
    if set(estimate) != set(oracle):
        raise RankingError(f"the estimate ranks {sorted(estimate)} but the oracle "
                           f"{sorted(oracle)}; validate on the same policies")
    names = sorted(oracle)
    est = np.array([estimate[n] for n in names], dtype=float)
    ref = np.array([oracle[n] for n in names], dtype=float)
    return {"pearson": pearson(est, ref), "spearman": spearman(est, ref),
            "kendall_tau": kendall_tau(est, ref), "top1": top1_agreement(est, ref),
            "mmrv": mmrv(est, ref)}


def _scores(ranking: Ranking) -> dict[str, float]:
    return {p: float(s) for p, s in zip(ranking.policies, ranking.scores, strict=True)}


# ----------------------------------------------------------------------------------
# Sample efficiency
# ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class EfficiencyRow:
    """Agreement of one model at one budget, over random subsets.

    Attributes:
        model: Ranking model name.
        budget: Comparisons per subset.
        n_subsets: Subsets drawn.
        mean: Mean of every agreement metric.
        std: Standard deviation of every agreement metric.
    """

    model: str
    budget: int
    n_subsets: int
    mean: dict[str, float]
    std: dict[str, float]


FitFn = Callable[[Sequence[Comparison], Sequence[str]], Ranking]


def sample_efficiency(
    comparisons: Sequence[Comparison],
    models: Mapping[str, FitFn],
    oracle: Mapping[str, float],
    *,
    budgets: Sequence[int] = BUDGETS,
    n_subsets: int = 100,
    seed: int = 0,
    progress: bool = False,
) -> list[EfficiencyRow]:
    """Agreement with the oracle of every model refitted on random subsets of each budget.

    Subsets are drawn without replacement (budgets larger than the pool are skipped); the
    same subsets are used for every model, so the models are compared side by side.

    Args:
        comparisons: The pool of matches.
        models: ``name -> fit(comparisons, policies)``.
        oracle: Oracle score per policy.
        budgets: Subset sizes.
        n_subsets: Subsets per budget (≥ 100 for the published curves).
        seed: Seed of the subsets.
        progress: Show a progress bar.

    Returns:
        One row per model and usable budget.
    """
    policies = sorted(oracle)
    rng = np.random.default_rng(seed)
    usable = [b for b in budgets if b <= len(comparisons)]
    rows: list[EfficiencyRow] = []
    total = len(usable) * n_subsets
    with tqdm(total=total, desc="subsets", disable=not progress, leave=False) as bar:
        for budget in usable:
            found: dict[str, list[dict[str, float]]] = {m: [] for m in models}
            for _ in range(n_subsets):
                pick = rng.choice(len(comparisons), size=budget, replace=False)
                subset = [comparisons[k] for k in pick]
                for name, fit in models.items():
                    found[name].append(agreement(_scores(fit(subset, policies)), oracle))
                bar.update(1)
            for name, values in found.items():
                rows.append(EfficiencyRow(
                    model=name, budget=budget, n_subsets=n_subsets,
                    mean={k: float(np.mean([v[k] for v in values])) for k in AGREEMENT_METRICS},
                    std={k: float(np.std([v[k] for v in values])) for k in AGREEMENT_METRICS}))
    return rows


# ----------------------------------------------------------------------------------
# Perturbed evaluators
# ----------------------------------------------------------------------------------
def _check_rate(rate: float) -> None:
    if not 0.0 <= rate <= 1.0:
        raise RankingError(f"a perturbation rate must lie in [0, 1], got {rate}")


def flip_labels(comparisons: Sequence[Comparison], rate: float, seed: int = 0) -> list[Comparison]:
    """With probability ``rate`` per comparison, swap A-wins and B-wins (ties stay)."""
    _check_rate(rate)
    rng = np.random.default_rng(seed)
    return [replace(c, outcome=2 - c.outcome) if rng.random() < rate else c for c in comparisons]


def position_bias(comparisons: Sequence[Comparison], rate: float,
                  seed: int = 0) -> list[Comparison]:
    """With probability ``rate`` per comparison the evaluator prefers whoever sat at A."""
    _check_rate(rate)
    rng = np.random.default_rng(seed)
    return [replace(c, outcome=WIN) if rng.random() < rate else c for c in comparisons]


def adversarial_evaluator(comparisons: Sequence[Comparison], rate: float, favoured: str,
                          seed: int = 0) -> list[Comparison]:
    """Hand a share ``rate`` of the comparisons to an adversarial evaluator.

    The adversary always prefers ``favoured`` when it plays, and otherwise reverses the
    honest preference.
    """
    _check_rate(rate)
    rng = np.random.default_rng(seed)
    out = []
    for c in comparisons:
        if rng.random() >= rate:
            out.append(c)
        elif c.a == favoured or c.b == favoured:
            out.append(replace(c, outcome=WIN if c.a == favoured else LOSS))
        else:
            out.append(replace(c, outcome=2 - c.outcome))
    return out


def simulate_comparisons(theta: Mapping[str, float], n: int, *, nu: float = 0.3,
                         seed: int = 0, tasks: Sequence[str] = ("",)) -> list[Comparison]:
    """Draw ``n`` comparisons of uniformly paired policies from a BT-Davidson model.

    Progress scores are drawn around 50 + 15·θ (clipped to 0–100), so PROG has a signal.
    For tests and for checking that a model recovers known parameters.
    """
    names = list(theta)
    if len(names) < 2:
        raise RankingError("simulating comparisons needs at least two policies")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        i, j = rng.choice(len(names), size=2, replace=False)
        ti, tj = theta[names[i]], theta[names[j]]
        logits = np.array([ti, tj, np.log(2.0 * nu) + 0.5 * (ti + tj)])
        p = np.exp(logits - logits.max())
        outcome = (WIN, LOSS, TIE)[int(rng.choice(3, p=p / p.sum()))]
        pa, pb = (float(np.clip(50.0 + 15.0 * t + rng.normal(0.0, 15.0), 0.0, 100.0))
                  for t in (ti, tj))
        out.append(Comparison(names[i], names[j], outcome, pa, pb,
                              task=str(tasks[int(rng.integers(len(tasks)))])))
    return out
