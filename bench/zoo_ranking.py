"""Ground-truth ranking of the policy zoo, and how well small audits and arenas recover it.

Per task of the zoo, the field is the zoo policies trained for that task plus the scripted
anchors ``oracle`` and ``random``. Every policy runs on the same randomized worlds
(:func:`~simjudge.pipelines.arena.run_oracle`: one executor job per (task, seed) running
every policy from the same snapshot):

* **ground truth**: ``--truth-seeds`` seeds from 5000 (the BC demonstrations were recorded
  at seeds >= 1000 and below 5000, so these are held out): verified success with its Wilson
  95 % interval; the ground-truth ranking is the success rate, ties broken by the mean final
  Φ (score = success + 1e-3 · mean final Φ);
* **small budgets**, from a disjoint pool of ``--pool-seeds`` seeds from 7000: audits with n
  seeds (random subsets of the pool) rank by success only, by the OPD means (MP, PPL, −CRA)
  and by the mean final progress; arenas of 25/50/100 matches (random pair and random pool
  seed per match, judged by the arena's ``oracle`` evaluator and tie rule, exactly what
  ``simjudge arena run`` would play on that seed since both sides start from the same
  snapshot) rank by BT-Davidson, EM, Elo and PROG.

Kendall τ against the ground truth is averaged over tasks per subset, then reported as the
mean and bootstrap 95 % interval over subsets. The tie analysis: for policy pairs whose
ground-truth success intervals overlap, the share of (subset, pair) draws in which each
metric orders the pair as their ground-truth mean final Φ does.

Last lines: ``<model> kendall_tau@<n>: <value>`` and ``success_only kendall_tau@<n>: <value>``.

Usage: ``python bench/zoo_ranking.py [--out runs/zoo_ranking] [--truth-seeds 200]
[--pool-seeds 40] [--subsets 50] [--workers 2]``; the run directory is resumable.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import load, write_result  # noqa: E402

TASKS = ("CloseDrawer-v0", "CloseDoor-v0", "PressDispenser-v0", "PressButton-v0")
AUDIT_METRICS = ("success_only", "MP", "PPL", "CRA", "progress")
ARENA_MODELS = ("davidson", "em", "elo", "prog")
TRUTH_SEED0, POOL_SEED0 = 5000, 7000

Cells = Mapping[int, Mapping[str, Mapping[str, Any]]]
"""``seed -> policy -> episode signals`` of one task."""


def field(task: str) -> dict[str, str]:
    """The policies ranked on ``task``: its zoo policies plus ``oracle`` and ``random``."""
    from simjudge.policies.zoo import zoo_entries

    specs = {n: f"zoo:{n}" for n, e in zoo_entries().items() if e["task"] == task}
    return {**specs, "oracle": "oracle", "random": "random"}


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Kendall τ-b of two score maps over the same names (1: same order, −1: reversed)."""
    names = sorted(a)
    conc = disc = ta = tb = 0
    for x, y in itertools.combinations(names, 2):
        da, db = np.sign(a[x] - a[y]), np.sign(b[x] - b[y])
        if da == 0 and db == 0:
            continue
        if da == 0:
            ta += 1
        elif db == 0:
            tb += 1
        elif da == db:
            conc += 1
        else:
            disc += 1
    denom = np.sqrt((conc + disc + ta) * (conc + disc + tb))
    return float((conc - disc) / denom) if denom else 0.0


def episode_metrics(ep: Mapping[str, Any]) -> dict[str, float]:
    """Success, MP, PPL, −CRA and final Φ (×100) of one episode's progress trace."""
    from simjudge.judges.metrics import opd_metrics

    phi = [min(max(float(p), 0.0), 1.0) for p in ep["progress"]]
    m = opd_metrics(phi, 0.01).as_dict()
    return {"success_only": float(bool(ep["success"])), "MP": 100 * m["MP"],
            "PPL": 100 * m["PPL"], "CRA": -100 * m["CRA"], "progress": 100 * phi[-1]}


def ground_truth(cells: Cells) -> dict[str, dict[str, float]]:
    """Per policy: k, n, success, Wilson interval, mean final Φ, the ranking score."""
    from simjudge.judges.metrics import wilson_interval

    out = {}
    for p in sorted(next(iter(cells.values()))):
        eps = [cells[s][p] for s in sorted(cells)]
        k = sum(bool(e["success"]) for e in eps)
        lo, hi = wilson_interval(k, len(eps))
        final = float(np.mean([100 * float(e["progress"][-1]) for e in eps]))
        out[p] = {"k": k, "n": len(eps), "success": k / len(eps), "lo": float(lo),
                  "hi": float(hi), "final_progress": final, "score": k / len(eps) + 1e-3 * final}
    return out


def audit_scores(cells: Cells, seeds: Sequence[int]) -> dict[str, dict[str, float]]:
    """``metric -> policy -> mean`` over the audit's ``seeds``."""
    rows = {p: [episode_metrics(cells[s][p]) for s in seeds] for p in cells[seeds[0]]}
    return {m: {p: float(np.mean([r[m] for r in rs])) for p, rs in rows.items()}
            for m in AUDIT_METRICS}


def arena_scores(cells: Cells, budget: int, rng: np.random.Generator,
                 task: str) -> dict[str, dict[str, float]]:
    """``model -> policy -> score`` fitted on ``budget`` matches drawn from the pool."""
    from simjudge.judges.metrics.rankings import Comparison
    from simjudge.pipelines.arena import SideSignals, TieRule, judge_match
    from simjudge.pipelines.arena.rank import model_fits

    seeds = sorted(cells)
    policies = sorted(cells[seeds[0]])
    rule = TieRule()
    comps = []
    for _ in range(budget):
        a, b = rng.choice(len(policies), 2, replace=False)
        seed_cell = cells[seeds[int(rng.integers(len(seeds)))]]
        ea, eb = seed_cell[policies[a]], seed_cell[policies[b]]
        verdict = judge_match(*(SideSignals(list(e["progress"]), bool(e["success"]),
                                            e.get("first_success_step")) for e in (ea, eb)),
                              rule)
        outcome = {"A": 2, "tie": 1, "B": 0}[verdict.preference]
        comps.append(Comparison(policies[a], policies[b], outcome, 100 * max(ea["progress"]),
                                100 * max(eb["progress"]), task))
    fits = model_fits()
    out = {}
    for model in ARENA_MODELS:
        r = fits[model](comps, policies)
        out[model] = {p: float(v) for p, v in zip(r.policies, r.scores, strict=True)}
    return out


def evaluate(truth: Mapping[str, Cells], pool: Mapping[str, Cells], *, audit_ns: Sequence[int],
             budgets: Sequence[int], subsets: int, seed: int = 0) -> dict[str, Any]:
    """τ per (method, budget) over subsets (mean over tasks per subset) and the tie analysis."""
    rng = np.random.default_rng(seed)
    gt = {t: ground_truth(c) for t, c in truth.items()}
    tied = {t: [(x, y) for x, y in itertools.combinations(sorted(g), 2)
                if g[x]["lo"] <= g[y]["hi"] and g[y]["lo"] <= g[x]["hi"]
                and g[x]["final_progress"] != g[y]["final_progress"]] for t, g in gt.items()}
    taus: dict[str, dict[int, list[float]]] = {}
    agree: dict[str, dict[int, list[float]]] = {}

    def record(name: str, n: int, per_task: Mapping[str, Mapping[str, float]]) -> None:
        taus.setdefault(name, {}).setdefault(n, []).append(float(np.mean([
            kendall_tau(per_task[t], {p: v["score"] for p, v in gt[t].items()}) for t in gt])))
        for t, pairs in tied.items():
            for x, y in pairs:
                want = np.sign(gt[t][x]["final_progress"] - gt[t][y]["final_progress"])
                agree.setdefault(name, {}).setdefault(n, []).append(
                    float(np.sign(per_task[t][x] - per_task[t][y]) == want))

    for n in audit_ns:
        for _ in range(subsets):
            found = {t: audit_scores(c, sorted(rng.choice(sorted(c), n, replace=False).tolist()))
                     for t, c in pool.items()}
            for m in AUDIT_METRICS:
                record(m, n, {t: found[t][m] for t in found})
    for budget in budgets:
        for _ in range(subsets):
            found = {t: arena_scores(c, budget, rng, t) for t, c in pool.items()}
            for m in ARENA_MODELS:
                record(m, budget, {t: found[t][m] for t in found})
    boot = np.random.default_rng(seed + 1)

    def summary(values: list[float]) -> dict[str, float]:
        arr = np.asarray(values)
        means = arr[boot.integers(0, arr.size, (1000, arr.size))].mean(axis=1)
        return {"mean": float(arr.mean()), "lo": float(np.percentile(means, 2.5)),
                "hi": float(np.percentile(means, 97.5)), "n": int(arr.size)}

    return {"ground_truth": gt, "tied_pairs": {t: [list(p) for p in v] for t, v in tied.items()},
            "kendall_tau": {m: {str(n): summary(v) for n, v in d.items()} for m, d in taus.items()},
            "tie_agreement": {m: {str(n): summary(v) for n, v in d.items()}
                              for m, d in agree.items()}}


def tau_lines(found: Mapping[str, Any]) -> list[str]:
    """The ``<model> kendall_tau@<n>: <value>`` lines (audits by seeds, arenas by matches)."""
    return [f"{m} kendall_tau@{n}: {s['mean']:.3f}"
            for m, d in found["kendall_tau"].items() for n, s in d.items()]


def run_cells(out: Path, task: str, seeds: Sequence[int], phase: str, executor: Any) -> dict:
    """Every field policy on ``task`` at ``seeds`` (resumable, under ``out/task/phase``)."""
    from simjudge.pipelines.arena import run_oracle

    eps = run_oracle(out / task / phase, field(task), [task], list(seeds), executor=executor,
                     progress=False)
    return {s: c for (_, s), c in eps.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="runs/zoo_ranking")
    parser.add_argument("--truth-seeds", type=int, default=200)
    parser.add_argument("--pool-seeds", type=int, default=40)
    parser.add_argument("--audit-seeds", default="5,10,20")
    parser.add_argument("--budgets", default="25,50,100")
    parser.add_argument("--subsets", type=int, default=50)
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--result", default="", help="result file (default results/zoo_ranking.json)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from simjudge.executors import make_executor

    before, started = load(), time.perf_counter()
    tasks = [t for t in args.tasks.split(",") if t]
    out = Path(args.out)
    with make_executor("local", args.workers) as ex:
        pool = {t: run_cells(out, t, range(POOL_SEED0, POOL_SEED0 + args.pool_seeds), "pool", ex)
                for t in tasks}
        truth = {t: run_cells(out, t, range(TRUTH_SEED0, TRUTH_SEED0 + args.truth_seeds),
                              "truth", ex) for t in tasks}
    sim_s = time.perf_counter() - started
    ns = [n for n in (int(x) for x in args.audit_seeds.split(",")) if n <= args.pool_seeds]
    found = evaluate(truth, pool, audit_ns=ns, budgets=[int(b) for b in args.budgets.split(",")],
                     subsets=args.subsets, seed=args.seed)
    for t, g in found["ground_truth"].items():
        print(f"{t}: " + ", ".join(f"{p} {v['k']}/{v['n']} [{v['lo']:.2f},{v['hi']:.2f}]"
                                   for p, v in sorted(g.items(), key=lambda kv: -kv[1]["score"])))
    for m, d in found["tie_agreement"].items():
        print(f"tie agreement {m}: " + ", ".join(f"@{n} {s['mean']:.2f}" for n, s in d.items()))
    wall = time.perf_counter() - started
    settings = {"tasks": tasks, "truth_seeds": args.truth_seeds, "truth_seed0": TRUTH_SEED0,
                "pool_seeds": args.pool_seeds, "pool_seed0": POOL_SEED0, "audit_seeds": ns,
                "budgets": args.budgets, "subsets": args.subsets, "workers": args.workers,
                "fields": {t: field(t) for t in tasks},
                "note": "ground truth over truth_seeds episodes per task (the brief asks >= 200; "
                        "fewer when time did not allow, see truth_seeds)"}
    path = write_result("zoo_ranking", {**found, "wall_seconds": round(wall, 1),
                                        "simulation_seconds": round(sim_s, 1)}, settings, before,
                        out=Path(args.result) if args.result else None)
    print(f"wall {wall:.0f} s (simulation {sim_s:.0f} s), load {before} -> {load()}; wrote {path}")
    for line in tau_lines(found):
        print(line)


if __name__ == "__main__":
    main()
