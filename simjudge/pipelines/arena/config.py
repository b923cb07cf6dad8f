"""Configs of ``simjudge arena run``, ``arena rank`` and ``arena validate``.

Example:
    >>> config = ArenaRunConfig(policy=("good=oracle", "idle=zero"), tasks=("OpenDrawer-v0",),
    ...                         out="runs/arena")
    >>> config.matches, config.evaluator, config.margin
    (100, 'oracle', 10.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from simjudge.executors import ExecutorOptions
from simjudge.tasks.spec.config import option

__all__ = ["ArenaRankConfig", "ArenaRunConfig", "ArenaValidateConfig"]

MODEL_NAMES = ("davidson", "bt", "em", "elo", "prog")


@dataclass(frozen=True, kw_only=True)
class ArenaRunConfig(ExecutorOptions):
    """Play double-blind A/B matches between policies; append them to ``arena.sqlite``.

    Pairs are drawn toward under-evaluated policies, sides in random order behind opaque
    handles, both from the same scene seed and state snapshot; the evaluator gives progress
    0–100 per side, a preference (A, B or tie, by the documented tie rule) and a reason.
    Rerun with ``--resume`` (and a larger ``--matches`` to extend): nothing lost or
    repeated. At the end, rankings (``rankings.json``) and ``report.html`` are written.

    Attributes:
        policy: ``NAME=SPEC`` per policy, repeatable (``--policy good=oracle --policy
            shaky=oracle-noisy:noise=0.6``); SPEC is any policy spec.
        tasks: Built-in task ids, comma separated.
        matches: Matches the run should hold in total.
        seed: Seed of the pair sampling (scene seeds, sides, handles).
        evaluator: ``oracle`` (verified success and privileged progress), ``judge:SPEC``
            (any registered judge's Φ and verdict, e.g. ``judge:noisy:sigma=0.1``) or
            ``panel:SPEC+SPEC`` (a judge panel: mean Φ, majority verdict).
        margin: Tie rule: progress points (0-100) that count as a difference.
        speed_margin: Tie rule: relative step saving that makes one success better.
        epsilon: Stagnation threshold ε of the OPD metrics reported for each side (STR).
        prefer: A preference judge that decides each match from the two sides' Φ traces
            instead of the tie rule (``preference``, ``preference:statistic=area,margin=0.1``);
            the match records rule ``preference`` and the judge's reason. None: the tie rule.
        horizon: Steps per episode (none: the task's own).
        randomize: Vary the world per seed (each task's ``randomization:``);
            ``--no-randomize``: the fixed start.
        episodes: Also write each side's episode record (``episodes/<match>/<handle>/``).
        bootstrap: Bootstrap resamples for the rankings' confidence intervals.
        reason: Each match's reason: ``template`` (a sentence from the deciding signals) or
            ``llm`` (an LLM's short critique of both sides' judge signals; the preference
            stays the evaluator's).
        reason_llm: LLM for ``--reason llm``: ``llamacpp:MODEL`` (embedded:
            ``smollm2-135m`` fast, ``qwen2.5-coder-1.5b`` better) or ``openai:MODEL``
            (OpenAI-compatible server at ``$SIMJUDGE_LLM_BASE_URL``); none:
            ``$SIMJUDGE_LLM`` or ``llamacpp:qwen2.5-coder-1.5b``.
        llm_cache: Replay cache of the critiques (none: ``OUT/llm_cache``).
        llm_mode: ``auto`` (cached critiques, else ask the model), ``record`` or
            ``replay`` (recorded critiques only; no model needed).
        executor: ``serial``, ``local`` (process pool) or ``ray``.
        workers: Parallel workers (none: one per CPU core).
        ray_address: Ray cluster for ``--executor ray``.
        out: Run directory.
        resume: Continue (or extend) a run already in ``out`` with the same settings.
        report: Rank and write ``report.html`` at the end.
    """

    OUT_IS_RUN: ClassVar[bool] = True  # --out must be new, empty or a simjudge run
    policy: tuple[str, ...] = option(repeat=True)
    tasks: tuple[str, ...]
    matches: int = 100
    seed: int = 0
    evaluator: str = "oracle"
    margin: float = 10.0
    speed_margin: float = 0.2
    epsilon: float = 0.01
    prefer: str | None = None
    horizon: int | None = None
    randomize: bool = True
    episodes: bool = False
    bootstrap: int = 200
    reason: Literal["template", "llm"] = "template"
    reason_llm: str | None = None
    llm_cache: str | None = None
    llm_mode: Literal["auto", "record", "replay"] = "auto"
    out: str
    resume: bool = False
    report: bool = True


@dataclass(frozen=True, kw_only=True)
class ArenaRankConfig:
    """Rank the policies of an arena run by every model, with bootstrap intervals.

    Writes ``rankings.json`` and prints one table per model (display score 200·θ + 1500).

    Attributes:
        run: The arena's run directory.
        models: Ranking models, comma separated (davidson, bt, em, elo, prog).
        bootstrap: Bootstrap resamples for the confidence intervals.
        seed: Seed of the bootstrap and of the EM restarts.
        report: Rewrite ``report.html``.
    """

    run: str = option(positional=True)
    models: tuple[str, ...] = MODEL_NAMES
    bootstrap: int = 200
    seed: int = 0
    report: bool = True


@dataclass(frozen=True, kw_only=True)
class ArenaValidateConfig(ExecutorOptions):
    """Validate the arena's rankings against the exhaustive simulator oracle.

    Runs every policy on every task for ``oracle_seeds`` seeds (resumable, under
    ``oracle/``) with the simulator's own signals (verified success, privileged Φ; whatever
    evaluator the arena used, so a judge evaluator is validated against the truth), scores
    the oracle, then reports per model: Pearson, Spearman, Kendall τ,
    top-1 agreement and MMRV on all comparisons; sample-efficiency curves over random
    subsets; robustness to label flips, position bias and an adversarial evaluator.
    Writes ``validation.json`` and updates ``report.html``.

    Attributes:
        run: The arena's run directory.
        oracle_seeds: Seeds per task of the exhaustive oracle.
        oracle_metric: Oracle score: ``winrate`` (every pair on every seed, the arena's own
            tie rule), ``success`` or ``progress``.
        budgets: Comparison budgets of the sample-efficiency curves.
        subsets: Random subsets per budget.
        flip_rates: Label-flip rates for the robustness table.
        position_bias: Share of comparisons where the evaluator prefers side A.
        adversary: Share of comparisons from an adversarial evaluator (favouring the
            oracle's worst policy).
        models: Ranking models, comma separated.
        seed: Seed of the subsets and perturbations.
        executor: ``serial``, ``local`` (process pool) or ``ray``.
        workers: Parallel workers (none: one per CPU core).
        ray_address: Ray cluster for ``--executor ray``.
        report: Rewrite ``report.html``.
    """

    run: str = option(positional=True)
    oracle_seeds: int = 10
    oracle_metric: Literal["winrate", "success", "progress"] = "winrate"
    budgets: tuple[int, ...] = (25, 50, 100, 200, 400)
    subsets: int = 100
    flip_rates: tuple[float, ...] = (0.1, 0.2)
    position_bias: float = 0.2
    adversary: float = 0.2
    models: tuple[str, ...] = MODEL_NAMES
    seed: int = 0
    report: bool = True
