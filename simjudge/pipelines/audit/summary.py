"""From audited episodes to the audit's numbers (``audit.json``).

Per judge, task and policy: the OPD table ×100 (MC, MP, PPL, CRA, STR, MC@25/50/75/100)
over all episodes and over successful episodes only, a percentile bootstrap CI of every
mean, the success rate with its Wilson interval, failure fingerprints across policies, and
reachability curves (share of episodes whose Φ reached q by step t). Success is the task
goal verified by the env (``info["success"]``), not a judge's claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simjudge.judges.metrics import (
    MC_THRESHOLDS,
    OPDMetrics,
    failure_fingerprints,
    opd_metrics,
    summarize_episodes,
    wilson_interval,
)

__all__ = ["METRICS", "bootstrap_ci", "reachability", "summarize_audit"]

METRICS = ("MC", "MP", "PPL", "CRA", "STR")
"""The OPD metrics by their short names, in table order."""
REACH_LEVELS = (0.25, 0.5, 0.75, 1.0)


def bootstrap_ci(
    values: Sequence[float], resamples: int, rng: np.random.Generator, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (NaNs for no values)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0 or resamples < 1:
        return (math.nan, math.nan)
    means = arr[rng.integers(0, arr.size, size=(resamples, arr.size))].mean(axis=1)
    tail = 100.0 * (1.0 - level) / 2.0
    return float(np.percentile(means, tail)), float(np.percentile(means, 100.0 - tail))


def reachability(phis: Sequence[Sequence[float]], horizon: int, levels: Sequence[float] = REACH_LEVELS) -> dict[str, list[float]]:
    """Share of episodes with max Φ ≥ q by step t, t = 0..horizon (an ended episode keeps its max)."""
    curves: dict[str, list[float]] = {}
    if not phis:
        return {f"{q:g}": [0.0] * (horizon + 1) for q in levels}
    running = np.zeros((len(phis), horizon + 1))
    for i, phi in enumerate(phis):
        best = np.maximum.accumulate(np.asarray(phi, dtype=np.float64))[: horizon + 1]
        running[i, : best.size] = best
        running[i, best.size :] = best[-1] if best.size else 0.0
    for q in levels:
        curves[f"{q:g}"] = (running >= q - 1e-12).mean(axis=0).tolist()
    return curves


def _clean(phi: Sequence[float | None]) -> list[float] | None:
    if any(p is None for p in phi):
        return None
    return [min(max(float(p), 0.0), 1.0) for p in phi if p is not None]


def _table(metrics: list[OPDMetrics], resamples: int, rng: np.random.Generator) -> dict[str, Any] | None:
    if not metrics:
        return None
    row: dict[str, Any] = dict(summarize_episodes(metrics))
    ci: dict[str, list[float]] = {}
    for key in METRICS:
        values = [100.0 * m.as_dict()[key] for m in metrics]
        ci[key] = list(bootstrap_ci(values, resamples, rng))
    for q in MC_THRESHOLDS:
        values = [100.0 * (m.mc >= q) for m in metrics]
        ci[f"MC@{round(100 * q)}"] = list(bootstrap_ci(values, resamples, rng))
    row["ci"] = ci
    return row


def _cell(episodes: list[dict[str, Any]], judge: str, epsilon: float, resamples: int, rng: np.random.Generator) -> tuple[dict[str, Any], list[tuple[OPDMetrics, bool]]]:
    scored: list[tuple[OPDMetrics, bool]] = []
    unscored = 0
    for ep in episodes:
        phi = _clean(ep["judges"].get(judge, {}).get("phi", [None]))
        if phi is None:
            unscored += 1
            continue
        scored.append((opd_metrics(phi, epsilon), bool(ep["success"])))
    n = len(episodes)
    wins = sum(bool(ep["success"]) for ep in episodes)
    lo, hi = wilson_interval(wins, n) if n else (math.nan, math.nan)
    cell = {
        "n": n,
        "unscored": unscored,
        "success": {"k": wins, "n": n, "rate": 100.0 * wins / n if n else math.nan,
                    "lo": 100.0 * lo, "hi": 100.0 * hi},
        "all": _table([m for m, _ in scored], resamples, rng),
        "success_only": _table([m for m, ok in scored if ok], resamples, rng),
        "steps_mean": float(np.mean([ep["steps"] for ep in episodes])) if episodes else math.nan,
    }
    return cell, scored


def _fingerprints(scored: Mapping[str, list[tuple[OPDMetrics, bool]]]) -> dict[str, Any]:
    usable = {p: s for p, s in scored.items() if s}
    if not usable:
        return {}
    return {
        policy: {
            "failure_type": fp.failure_type,
            "n_failed": fp.n_failed,
            "n_episodes": fp.n_episodes,
            "means": dict(fp.means),
            "z": dict(fp.z),
            "scores": dict(fp.scores),
        }
        for policy, fp in failure_fingerprints(usable).items()
    }


def summarize_audit(
    episodes: Sequence[dict[str, Any]],
    judges: Sequence[str],
    epsilon: Mapping[str, float],
    policies: Sequence[str],
    tasks: Sequence[str],
    horizons: Mapping[str, int],
    resamples: int = 1000,
    seed: int = 0,
    worlds: Mapping[tuple[str, int], str] | None = None,
) -> dict[str, Any]:
    """The audit's numbers from its episode results (see the module docstring).

    ``worlds`` maps (task, seed) to a digest of the initial state. Intervals are computed
    over distinct trials: a policy's episodes that start from the same world and go the same
    way (the same success, steps and Φ trace of every judge: a deterministic policy replaying
    one rollout) count once; ``worlds`` in the result gives per task the seeds, the distinct
    worlds and the episodes counted once, with a warning where seeds repeat a world.
    """
    rng = np.random.default_rng(seed)
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    seen: set[tuple[Any, ...]] = set()
    repeats: dict[str, int] = {}
    for ep in sorted(episodes, key=lambda e: (e["policy"], e["task"], e["seed"])):
        world = (worlds or {}).get((ep["task"], int(ep["seed"])))
        if world is not None:
            trace = tuple((j, tuple(d.get("phi") or ())) for j, d in sorted(ep["judges"].items()))
            key = (ep["policy"], ep["task"], world, bool(ep["success"]), ep["steps"], trace)
            if key in seen:
                repeats[ep["task"]] = repeats.get(ep["task"], 0) + 1
                continue
            seen.add(key)
        by_cell.setdefault((ep["policy"], ep["task"]), []).append(ep)
    tables: dict[str, Any] = {}
    prints: dict[str, Any] = {}
    for judge in judges:
        tables[judge], prints[judge] = {}, {}
        for task in tasks:
            tables[judge][task] = {}
            scored: dict[str, list[tuple[OPDMetrics, bool]]] = {}
            for policy in policies:
                cell, scored[policy] = _cell(by_cell.get((policy, task), []), judge, epsilon[judge], resamples, rng)
                tables[judge][task][policy] = cell
            prints[judge][task] = _fingerprints(scored)
    primary = judges[0]
    reach = {
        task: {
            policy: reachability(
                [p for p in (_clean(ep["judges"].get(primary, {}).get("phi", [None]))
                             for ep in by_cell.get((policy, task), [])) if p is not None],
                horizons[task],
            )
            for policy in policies
        }
        for task in tasks
    }
    return {"tables": tables, "fingerprints": prints, "reachability": reach,
            "primary_judge": primary, "worlds": _world_counts(worlds or {}, tasks, repeats)}


def _world_counts(worlds: Mapping[tuple[str, int], str], tasks: Sequence[str],
                  repeats: Mapping[str, int]) -> dict[str, Any]:
    """Per task: seeds, distinct initial worlds, replayed episodes and a warning."""
    out: dict[str, Any] = {}
    for task in tasks:
        digests = [d for (t, _), d in worlds.items() if t == task]
        if not digests:
            continue
        distinct = len(set(digests))
        entry: dict[str, Any] = {"seeds": len(digests), "distinct": distinct,
                                 "replayed_episodes": repeats.get(task, 0)}
        if distinct < len(digests):
            entry["warning"] = (f"{len(digests)} seeds start from {distinct} distinct world(s); "
                                f"{repeats.get(task, 0)} episode(s) replayed an earlier one "
                                "exactly and count once in the intervals")
        out[task] = entry
    return out
