"""Arena rankings against the exhaustive simulator oracle: Kendall τ vs number of comparisons.

A zoo of 7 policies of graded quality (the scripted oracle, the oracle with growing action
noise, the wrong-target oracle, random) plays a pool of double-blind arena matches on 6
tasks (``simjudge arena run``: same seed and snapshot per match, the ``oracle`` evaluator
and its tie rule). The exhaustive oracle runs every policy on every task for
``--oracle-seeds`` seeds and scores each policy by its win rate over all pairs (the arena's
own tie rule). Every ranking model (BT-Davidson, plain BT, the latent-task EM model, Elo,
PROG) is then refitted on ``--subsets`` random subsets of the pool per budget, on the same
subsets, and compared with the oracle.

Target (issue 9): Kendall τ ≥ 0.9 at 100 comparisons for the best model, and better than Elo
at equal budget.

The last lines are one per ranking model and budget:
``<model> kendall_tau@<n>: <value>`` (mean over subsets), then the same for MMRV.

``--evaluator judge:noisy:sigma=0.2`` (any evaluator spec) lets a judge play the evaluator;
the oracle always uses the simulator's truth, so this measures what the judge costs.

Usage: ``python bench/arena_validation.py [--out runs/bench_arena] [--matches 600]
[--oracle-seeds 10] [--subsets 100] [--workers 2] [--evaluator oracle]``; the run
directory is resumable.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from simjudge.executors import make_executor
from simjudge.pipelines.arena import load_comparisons, play_arena, rank_arena, run_oracle
from simjudge.pipelines.arena.oracle import oracle_scores
from simjudge.pipelines.arena.validate import validate_comparisons
from simjudge.pipelines.report.arena_section import write_arena_report
from simjudge.tasks.spec.rundir import RunDir

ZOO = {
    "oracle": "oracle",
    "noisy-0.3": "oracle-noisy:noise=0.3",
    "noisy-0.6": "oracle-noisy:noise=0.6",
    "noisy-1.0": "oracle-noisy:noise=1.0",
    "noisy-1.5": "oracle-noisy:noise=1.5",
    "wrong-target": "oracle-wrong-target",
    "random": "random",
}
TASKS = ["OpenDrawer-v0", "CloseDrawer-v0", "OpenMicrowaveDoor-v0", "TurnFaucet-v0",
         "OpenDoor-v0", "PressButton-v0"]
MODELS = ("davidson", "bt", "em", "elo", "prog")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="runs/bench_arena")
    parser.add_argument("--matches", type=int, default=600)
    parser.add_argument("--oracle-seeds", type=int, default=10)
    parser.add_argument("--subsets", type=int, default=100)
    parser.add_argument("--budgets", default="25,50,100,200,400")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--evaluator", default="oracle",
                        help="arena evaluator (the oracle always uses the simulator's truth)")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    out = Path(args.out)
    started = time.perf_counter()
    with make_executor("local", args.workers) as executor:
        play_arena(out, ZOO, TASKS, matches=args.matches, seed=args.seed, executor=executor,
                  evaluator=args.evaluator,
                  resume=True, config={"command": "bench/arena_validation.py"})
        arena_s = time.perf_counter() - started
        episodes = run_oracle(out, ZOO, TASKS, range(args.oracle_seeds), executor=executor)
    oracle_s = time.perf_counter() - started - arena_s
    scores = oracle_scores(episodes)
    comparisons, _ = load_comparisons(out)
    fit_started = time.perf_counter()
    found = validate_comparisons(comparisons, scores.winrate, models=MODELS, budgets=budgets,
                                 subsets=args.subsets, seed=args.seed, progress=True)
    fit_s = time.perf_counter() - fit_started
    ties = sum(c.outcome == 1 for c in comparisons)
    print(f"evaluator: {args.evaluator}; policies: {len(ZOO)}, tasks: {len(TASKS)}, "
          f"comparisons in the pool: "
          f"{len(comparisons)} ({ties} ties), oracle cells: {scores.n_episodes}")
    print("oracle win rate: " + ", ".join(
        f"{p} {v:.3f}" for p, v in sorted(scores.winrate.items(), key=lambda kv: -kv[1])))
    print("oracle success:  " + ", ".join(
        f"{p} {v:.2f}" for p, v in sorted(scores.success.items(), key=lambda kv: -kv[1])))
    print(f"time: arena {arena_s:.0f} s, oracle {oracle_s:.0f} s, ranking fits {fit_s:.0f} s; "
          f"load {os.getloadavg()[0]:.1f}")
    for model, a in found["agreement"].items():
        print(f"{model} all {len(comparisons)}: " + " ".join(f"{k}={v:.3f}" for k, v in a.items()))
    for name, models in found["robustness"].items():
        print(f"robustness {name}: " + ", ".join(
            f"{m} tau={a['kendall_tau']:.3f}" for m, a in models.items()))
    RunDir(out).write_json("validation.json", {
        "oracle_metric": "winrate", "oracle_seeds": args.oracle_seeds,
        "oracle": scores.to_dict(), **found})
    rank_arena(out, n_boot=200, seed=args.seed)
    print(f"wrote {out / 'validation.json'}, {out / 'rankings.json'} and "
          f"{write_arena_report(out)}")
    rows = found["efficiency"]
    for row in rows:
        print(f"{row['model']} kendall_tau@{row['budget']}: {row['mean']['kendall_tau']:.3f}")
    for row in rows:
        print(f"{row['model']} mmrv@{row['budget']}: {row['mean']['mmrv']:.4f}")


if __name__ == "__main__":
    main()
