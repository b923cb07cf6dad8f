"""OPD metrics of graded policies on the randomized tasks, with the staged progress Φ.

Why (issue 38): with seeds that vary the world and a Φ that rises during the approach, the
dense metrics should separate policies that binary success ties, and a policy that only
reaches the part (``reach-only``) should score clearly above ``random``.

Runs one ``simjudge audit`` (privileged judge, default randomization) of six policies on six
single-stage tasks and prints one line per policy: success and the OPD means (MP, PPL, CRA,
STR; ×100) over all tasks, with the 95 % bootstrap interval of MP pooled over episodes.
Writes ``results/opd_randomized.json`` (per policy and task: success k/n, MP, PPL, CRA, STR,
MC@50; the load before and after). The run directory is resumable::

    python bench/opd_randomized.py --seeds 10 --out runs/bench_opd
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import load, write_result  # noqa: E402

POLICIES = {
    "oracle": "oracle",
    "noisy-0.3": "oracle-noisy:noise=0.3",
    "noisy-0.6": "oracle-noisy:noise=0.6",
    "early-release": "oracle-early-release:at=0.5",
    "reach-only": "reach-only",
    "random": "random",
}
TASKS = ("OpenDrawer-v0", "CloseDrawer-v0", "PressButton-v0", "OpenDoor-v0", "TurnFaucet-v0",
         "OpenMicrowaveDoor-v0")
METRICS = ("MP", "PPL", "CRA", "STR")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="runs/bench_opd")
    args = parser.parse_args()

    from simjudge.pipelines.audit import AuditConfig, run_audit

    tasks = tuple(t for t in args.tasks.split(",") if t)
    before = load()
    start = time.perf_counter()
    config = AuditConfig(policy=tuple(f"{k}={v}" for k, v in POLICIES.items()), tasks=tasks,
                         seeds=args.seeds, out=args.out, resume=Path(args.out).exists(),
                         videos=0, report=True, workers=args.workers)
    audit = run_audit(config, progress=True)
    wall = time.perf_counter() - start
    table = audit["tables"]["privileged"]
    rng = np.random.default_rng(0)
    numbers: dict = {"policies": {}, "wall_seconds": round(wall, 1)}
    for name in POLICIES:
        cells = [table[t][name] for t in tasks]
        k = sum(c["success"]["k"] for c in cells)
        n = sum(c["success"]["n"] for c in cells)
        per_task = {}
        for t, c in zip(tasks, cells, strict=True):
            row = c["all"] or {}
            per_task[t] = {"success": f"{c['success']['k']}/{c['success']['n']}",
                           **{m: round(float(row.get(m, float("nan"))), 1) for m in METRICS},
                           "MC@50": round(float(row.get("MC@50", float("nan"))), 1)}
        means = {m: round(float(np.mean([per_task[t][m] for t in tasks])), 1) for m in METRICS}
        mp = np.array([per_task[t]["MP"] for t in tasks])
        boot = [float(np.mean(rng.choice(mp, mp.size))) for _ in range(2000)]
        numbers["policies"][name] = {
            "spec": POLICIES[name], "success": f"{k}/{n}", "success_rate": round(k / max(n, 1), 3),
            "means": means, "MP_ci95_over_tasks": [round(float(np.percentile(boot, q)), 1)
                                                   for q in (2.5, 97.5)],
            "tasks": per_task}
        print(f"{name:14s} success {k}/{n}  " + "  ".join(f"{m} {means[m]:5.1f}" for m in METRICS)
              + f"  MP 95% over tasks {numbers['policies'][name]['MP_ci95_over_tasks']}")
    settings = {"seeds": args.seeds, "tasks": list(tasks), "policies": POLICIES,
                "judge": "privileged", "randomize": True, "workers": args.workers}
    path = write_result("opd_randomized", numbers, settings, before)
    print(f"wall {wall:.0f} s, load {before} -> {load()}; wrote {path}")


if __name__ == "__main__":
    main()
