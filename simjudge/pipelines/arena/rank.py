"""Rankings of an arena's comparisons by every model, with bootstrap confidence intervals.

Models (:data:`MODELS`): ``davidson`` (BT-Davidson, the headline), ``bt`` (plain
Bradley–Terry), ``em`` (the latent-task model), ``elo`` and ``prog`` (baselines); see
:mod:`simjudge.judges.metrics.rankings`. Every model gets percentile intervals of its
scores and ranks from a bootstrap over comparisons (the EM model with a quarter of the
resamples and one restart per resample: it is the slow one).

Example:
    >>> from simjudge.judges.metrics.rankings_validation import simulate_comparisons
    >>> comps = simulate_comparisons({"a": 1.0, "b": 0.0, "c": -1.0}, 120, seed=0)
    >>> found = compute_rankings(comps, ["a", "b", "c"], n_boot=20, models=("davidson", "prog"))
    >>> found["davidson"].order(), found["prog"].rank_ci.shape
    (['a', 'b', 'c'], (3, 2))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from simjudge.judges.metrics.rankings import (
    Comparison,
    Ranking,
    RankingError,
    bootstrap,
    fit_bradley_terry,
    fit_davidson,
    fit_elo,
    fit_prog,
)
from simjudge.judges.metrics.rankings_em import TaskModelConfig, fit_task_model

__all__ = ["MODELS", "compute_rankings", "format_rankings", "model_fits", "rankings_payload"]

MODELS: tuple[str, ...] = ("davidson", "bt", "em", "elo", "prog")
"""Ranking models, headline first."""

FitFn = Callable[[Sequence[Comparison], Sequence[str]], Ranking]


def model_fits(em_config: TaskModelConfig | None = None) -> dict[str, FitFn]:
    """``name -> fit(comparisons, policies)`` for every model of :data:`MODELS`."""
    config = em_config or TaskModelConfig()
    return {
        "davidson": lambda c, p: fit_davidson(c, p),
        "bt": lambda c, p: fit_bradley_terry(c, p),
        "em": lambda c, p: fit_task_model(c, config, p),
        "elo": lambda c, p: fit_elo(c, p),
        "prog": lambda c, p: fit_prog(c, p),
    }


def compute_rankings(comparisons: Sequence[Comparison], policies: Sequence[str], *,
                     models: Sequence[str] = MODELS, n_boot: int = 200, seed: int = 0,
                     em_config: TaskModelConfig | None = None) -> dict[str, Ranking]:
    """Fit every model in ``models`` with bootstrap intervals.

    Raises:
        RankingError: An unknown model name, or no comparisons.
    """
    unknown = sorted(set(models) - set(MODELS))
    if unknown:
        raise RankingError(f"unknown ranking models {unknown}; choose from {list(MODELS)}")
    em = em_config or TaskModelConfig(seed=seed)
    fits = model_fits(em)
    boot_fits = {**fits, "em": model_fits(replace(em, n_restarts=1))["em"]}
    found: dict[str, Ranking] = {}
    for name in models:
        n = max(n_boot // 4, 10) if name == "em" else n_boot
        ranking = bootstrap(boot_fits[name], comparisons, policies, n_boot=n, seed=seed)
        if name == "em":  # the point estimate from the full fit (with restarts)
            full = fits["em"](comparisons, policies)
            ranking = replace(full, score_ci=ranking.score_ci, rank_ci=ranking.rank_ci,
                              details={**full.details, "n_boot": n})
        found[name] = ranking
    return found


def rankings_payload(rankings: Mapping[str, Ranking]) -> dict[str, Any]:
    """JSON-ready form of :func:`compute_rankings`' result."""
    return {name: r.to_dict() for name, r in rankings.items()}


def format_rankings(rankings: Mapping[str, Ranking]) -> str:
    """A plain-text table per model: rank, policy, display score ± error, intervals."""
    lines = []
    for name, ranking in rankings.items():
        unit = "200θ+1500" if ranking.scale == "logit" else "progress 0-100"
        resolved = ranking.resolved()
        status = "" if resolved is None else (
            "; resolved" if resolved else "; NOT YET RESOLVED: rank intervals overlap, more "
            "comparisons needed")
        lines.append(f"{name} ({unit}, {ranking.n_comparisons} comparisons{status})")
        for row in ranking.rows():
            err = f" ± {row['display_stderr']:.1f}" if "display_stderr" in row else ""
            ci = row.get("display_ci")
            ci_text = f"  CI [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else ""
            rank_ci = row.get("rank_ci")
            rank_text = (f"  rank CI [{rank_ci[0]}, {rank_ci[1]}]"
                         + ("" if row.get("resolved", True) else "  unresolved")) if rank_ci else ""
            lines.append(f"  {row['rank']:>2d}. {row['policy']:<24s} {row['display']:8.1f}"
                         f"{err}{ci_text}{rank_text}")
    return "\n".join(lines)
