"""Validate an arena's rankings against the exhaustive simulator oracle.

:func:`validate_arena` runs (or resumes) the oracle (:mod:`.oracle`) on the arena's own
policies and tasks, then measures every ranking model against it:

* ``agreement``: Pearson, Spearman, Kendall τ, top-1 agreement and MMRV of each model fitted
  on all comparisons;
* ``efficiency``: the same averaged over random subsets of each budget (sample-efficiency
  curves, :func:`~simjudge.judges.metrics.rankings_validation.sample_efficiency`);
* ``robustness``: Kendall τ, top-1 and MMRV after label flips, position bias and an
  adversarial evaluator (favouring the oracle's worst policy), averaged over 5 draws.

Everything is written to ``validation.json``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from simjudge.judges.metrics.rankings import Comparison, RankingError
from simjudge.judges.metrics.rankings_em import TaskModelConfig
from simjudge.judges.metrics.rankings_validation import (
    AGREEMENT_METRICS,
    adversarial_evaluator,
    agreement,
    flip_labels,
    position_bias,
    sample_efficiency,
)
from simjudge.tasks.spec.rundir import RunDir

from .config import ArenaValidateConfig
from .evaluator import TieRule
from .oracle import OracleScores, oracle_scores, run_oracle
from .rank import MODELS, model_fits
from .run import load_comparisons

__all__ = ["ROBUSTNESS_DRAWS", "perturbations", "validate_arena", "validate_comparisons"]

ROBUSTNESS_DRAWS = 5
"""Random draws averaged per perturbation."""

Perturb = Callable[[Sequence[Comparison], int], list[Comparison]]


def _flip(comparisons: Sequence[Comparison], seed: int, *, rate: float) -> list[Comparison]:
    return flip_labels(comparisons, rate, seed)


def perturbations(flip_rates: Sequence[float], bias: float, adversary: float,
                  favoured: str) -> dict[str, Perturb]:
    """Named perturbations of the comparisons: ``name -> f(comparisons, seed)``."""
    found: dict[str, Perturb] = {}
    for rate in flip_rates:
        found[f"flip {rate:.0%}"] = functools.partial(_flip, rate=rate)
    if bias > 0:
        found[f"position bias {bias:.0%}"] = lambda c, s: position_bias(c, bias, s)
    if adversary > 0:
        found[f"adversary {adversary:.0%} (favours {favoured})"] = (
            lambda c, s: adversarial_evaluator(c, adversary, favoured, s))
    return found


def validate_comparisons(comparisons: Sequence[Comparison], oracle: dict[str, float], *,
                         models: Sequence[str] = MODELS, budgets: Sequence[int] = (25, 50, 100),
                         subsets: int = 100, flip_rates: Sequence[float] = (0.1, 0.2),
                         bias: float = 0.2, adversary: float = 0.2, seed: int = 0,
                         progress: bool = False) -> dict[str, Any]:
    """Agreement, efficiency and robustness of every model against ``oracle`` scores.

    Raises:
        RankingError: No comparisons, or the comparisons and oracle name other policies.
    """
    if not comparisons:
        raise RankingError("no played matches to validate; run `simjudge arena run` first")
    policies = sorted(oracle)
    fits_all = model_fits(TaskModelConfig(seed=seed))
    fits = {m: fits_all[m] for m in models}

    def scores(fit: Any, comps: Sequence[Comparison]) -> dict[str, float]:
        r = fit(comps, policies)
        return {p: float(v) for p, v in zip(r.policies, r.scores, strict=True)}

    overall = {m: agreement(scores(f, comparisons), oracle) for m, f in fits.items()}
    efficiency = sample_efficiency(comparisons, fits, oracle, budgets=budgets, n_subsets=subsets,
                                   seed=seed, progress=progress)
    worst = min(oracle, key=lambda p: oracle[p])
    robustness: dict[str, dict[str, dict[str, float]]] = {}
    for name, perturb in perturbations(flip_rates, bias, adversary, worst).items():
        robustness[name] = {}
        for model, fit in fits.items():
            draws = [agreement(scores(fit, perturb(comparisons, seed + k)), oracle)
                     for k in range(ROBUSTNESS_DRAWS)]
            robustness[name][model] = {k: float(np.mean([d[k] for d in draws]))
                                       for k in AGREEMENT_METRICS}
    return {"n_comparisons": len(comparisons), "agreement": overall,
            "efficiency": [asdict(row) for row in efficiency], "robustness": robustness}


def validate_arena(settings: ArenaValidateConfig, *, executor: Any = None,
                   progress: bool = True) -> dict[str, Any]:
    """Run the oracle for an arena run and validate every model; write ``validation.json``.

    The pipeline of ``simjudge arena validate``: the command's config in (the executor it
    names is made here unless ``executor`` is given), the validation payload out.

    Raises:
        RankingError: The run has no config or database.
    """
    if executor is None:
        from simjudge.executors import executor_from

        with executor_from(settings) as own:
            return validate_arena(settings, executor=own, progress=progress)
    out, oracle_seeds, oracle_metric = settings.run, settings.oracle_seeds, settings.oracle_metric
    models, budgets, subsets, seed = (settings.models, settings.budgets, settings.subsets,
                                      settings.seed)
    flip_rates, bias, adversary = (settings.flip_rates, settings.position_bias,
                                   settings.adversary)
    run = RunDir(out)
    config = run.config
    if config is None or "policies" not in config:
        raise RankingError(f"{out} holds no arena run; run `simjudge arena run --out {out}` first")
    comparisons, _ = load_comparisons(out)
    rule = TieRule(float(config["margin"]), float(config["speed_margin"]),
                   float(config.get("epsilon", 0.01)))
    # the oracle is the simulator's truth, whatever evaluator the arena used: a judge
    # evaluator is exactly what is being validated
    episodes = run_oracle(out, config["policies"], config["tasks"], range(oracle_seeds),
                          evaluator="oracle", horizon=config.get("horizon"),
                          executor=executor, progress=progress,
                          randomize=bool(config.get("randomize", True)))
    scores: OracleScores = oracle_scores(episodes, rule)
    oracle = scores.metric(oracle_metric)
    found = validate_comparisons(comparisons, oracle, models=models, budgets=budgets,
                                 subsets=subsets, flip_rates=flip_rates, bias=bias,
                                 adversary=adversary, seed=seed, progress=progress)
    payload = {"oracle_metric": oracle_metric, "oracle_seeds": oracle_seeds,
               "oracle": scores.to_dict(), **found}
    run.write_json("validation.json", payload)
    return payload
