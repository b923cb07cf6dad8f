"""The exhaustive simulator oracle: every policy on every task and seed, every pair judged.

Cheap in simulation, impossible on real robots: each policy runs once per (task, seed)
from the same snapshot an arena match would use (:func:`oracle_cell`: one executor job per
(task, seed) running every policy, stored under ``<run>/oracle/``). Because both sides of a match start from the same
snapshot and policies are seeded, the outcome of *every* possible match on those seeds
follows from these episodes by the evaluator's tie rule, with no further simulation. The
oracle's scores per policy (:class:`OracleScores`):

* ``winrate`` (the default oracle for validation): mean preference score over all pairs,
  tasks and seeds (win 1, tie ½) — what an infinite arena would converge to;
* ``success``: verified success rate;
* ``progress``: mean progress score 0–100.

Example:
    >>> eps = {("OpenDrawer-v0", 0): oracle_cell("OpenDrawer-v0", 0, {"a": "oracle", "b": "zero"})}
    >>> s = oracle_scores(eps)
    >>> s.winrate, s.success
    ({'a': 1.0, 'b': 0.0}, {'a': 1.0, 'b': 0.0})
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.envs.errors import SimjudgeError

from .evaluator import SideSignals, TieRule, judge_match
from .match import check_evaluator, judged_by_judge, play_side, task_env

__all__ = ["ORACLE_METRICS", "OracleError", "OracleScores", "oracle_cell", "oracle_scores",
           "run_oracle"]

ORACLE_METRICS: tuple[str, ...] = ("winrate", "success", "progress")

Episodes = Mapping[tuple[str, int], Mapping[str, Mapping[str, Any]]]
"""``(task, seed) -> policy -> episode signals`` (what :func:`oracle_cell` returns per cell)."""


class OracleError(SimjudgeError, RuntimeError):
    """The oracle could not be computed; the message says which episodes are missing."""


def oracle_cell(task: str, seed: int, specs: Mapping[str, str], *, evaluator: str = "oracle",
                horizon: int | None = None, randomize: bool = True) -> dict[str, Any]:
    """Every policy's episode on (task, seed) from the match snapshot; their signals.

    ``randomize``: the task's world for ``seed``, as the arena's matches (False: the fixed
    start, for a run made with ``--no-randomize``).

    Returns:
        ``policy -> {progress (Φ per step), success, first_success_step, steps, timing}``.
    """
    check_evaluator(evaluator)
    judged = judged_by_judge(evaluator)
    env = task_env(task, horizon, evaluator, randomize)
    env.reset(seed=seed)
    snapshot = env.unwrapped.get_state()
    out = {}
    for name, spec in sorted(specs.items()):
        side, timing = play_side(env, spec, seed, snapshot, judged, None, "")
        out[name] = {"progress": [round(float(p), 6) for p in side.progress],
                     "success": side.success, "first_success_step": side.first_success_step,
                     "steps": len(side.progress) - 1, "timing": timing}
    return out


def _signals(episode: Mapping[str, Any]) -> SideSignals:
    return SideSignals(list(episode["progress"]), bool(episode["success"]),
                       episode.get("first_success_step"))


@dataclass(frozen=True)
class OracleScores:
    """The oracle's view of every policy.

    Attributes:
        winrate: Mean preference score over all pairs, tasks and seeds.
        success: Success rate.
        progress: Mean progress score 0–100.
        n_episodes: Episodes per policy.
        per_task: ``task -> metric -> policy -> value``.
    """

    winrate: dict[str, float]
    success: dict[str, float]
    progress: dict[str, float]
    n_episodes: int
    per_task: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def metric(self, name: str) -> dict[str, float]:
        """One of :data:`ORACLE_METRICS` by name."""
        if name not in ORACLE_METRICS:
            raise OracleError(f"unknown oracle metric {name!r}; use one of {list(ORACLE_METRICS)}")
        return dict(getattr(self, name))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"winrate": self.winrate, "success": self.success, "progress": self.progress,
                "n_episodes": self.n_episodes, "per_task": self.per_task}


def _pair_points(cell: Mapping[str, Mapping[str, Any]], rule: TieRule) -> dict[str, list[float]]:
    points: dict[str, list[float]] = {p: [] for p in cell}
    for a, b in itertools.combinations(sorted(cell), 2):
        pref = judge_match(_signals(cell[a]), _signals(cell[b]), rule).preference
        score = {"A": 1.0, "tie": 0.5, "B": 0.0}[pref]
        points[a].append(score)
        points[b].append(1.0 - score)
    return points


def _summarise(cells: Sequence[Mapping[str, Mapping[str, Any]]], rule: TieRule,
               policies: Sequence[str]) -> dict[str, dict[str, float]]:
    win: dict[str, list[float]] = {p: [] for p in policies}
    success: dict[str, list[float]] = {p: [] for p in policies}
    progress: dict[str, list[float]] = {p: [] for p in policies}
    for cell in cells:
        for p, pts in _pair_points(cell, rule).items():
            win[p].extend(pts)
        for p, ep in cell.items():
            success[p].append(float(ep["success"]))
            progress[p].append(100.0 * max(ep["progress"]))
    return {name: {p: float(np.mean(v)) if v else 0.0 for p, v in table.items()}
            for name, table in (("winrate", win), ("success", success), ("progress", progress))}


def oracle_scores(episodes: Episodes, rule: TieRule | None = None) -> OracleScores:
    """Scores of every policy from the exhaustive episodes (every pair on every cell).

    Raises:
        OracleError: A (task, seed) cell lacks some policy's episode.
    """
    rule = rule or TieRule()
    policies = sorted({p for cell in episodes.values() for p in cell})
    for key, cell in episodes.items():
        if set(cell) != set(policies):
            raise OracleError(f"oracle cell {key} has episodes of {sorted(cell)}, not of every "
                              f"policy {policies}; rerun the oracle with --resume")
    overall = _summarise(list(episodes.values()), rule, policies)
    per_task = {}
    for task in sorted({t for t, _ in episodes}):
        per_task[task] = _summarise([c for (t, _), c in episodes.items() if t == task], rule,
                                    policies)
    n = len(episodes)
    return OracleScores(overall["winrate"], overall["success"], overall["progress"], n, per_task)


def run_oracle(out: str | Path, policies: Mapping[str, str], tasks: Sequence[str],
               seeds: Sequence[int], *, evaluator: str = "oracle", horizon: int | None = None,
               executor: Any = None, progress: bool = True,
               randomize: bool = True) -> dict[tuple[str, int], dict[str, Any]]:
    """Run (or resume) every policy on every (task, seed); results under ``<out>/oracle/``.

    Args:
        out: The arena run directory.
        policies: ``name -> spec``.
        tasks: Task ids.
        seeds: Scene seeds.
        evaluator: Evaluator spec (the signals the oracle judges with).
        horizon: Episode length (default: each task's).
        executor: A :class:`~simjudge.executors.Executor` (default: serial).
        randomize: The worlds of the arena's matches (False: its fixed start).
        progress: Show a progress bar.

    Returns:
        ``(task, seed) -> policy -> episode signals``.

    Raises:
        OracleError: Some episodes failed (the message names them and why).
    """
    from simjudge.executors import Job, JobStore, make_executor

    jobs = [Job(f"{task}__{int(seed):06d}".replace("/", "_"), oracle_cell,
                args=(task, int(seed), dict(policies)),
                kwargs={"evaluator": evaluator, "horizon": horizon, "randomize": randomize})
            for task in tasks for seed in seeds]
    own = executor is None
    executor = executor or make_executor("serial")
    try:
        results = executor.map(jobs, JobStore(Path(out), results="oracle"), desc="oracle",
                               progress=progress)
    finally:
        if own:
            executor.close()
    failed = [(r.key, r.reason.strip().splitlines()[-1] if r.reason else "")
              for r in results if not r.ok]
    if failed:
        raise OracleError(f"{len(failed)} oracle episodes failed, e.g. {failed[:3]}; fix the "
                          "policy or task and rerun with --resume")
    episodes: dict[tuple[str, int], dict[str, Any]] = {}
    cells = [(task, int(seed)) for task in tasks for seed in seeds]
    for cell, result in zip(cells, results, strict=True):
        episodes[cell] = dict(result.value)
    return episodes
