"""Exemplar task pool (E.T.P.) ablation: the VERGSA Table 3 analogue on our tasks.

For each task and proposer, runs the acquisition loop twice — with the top-k exemplars
from the shipped verified pool in the prompt, and without — proposing N candidates and
executing all of them (no verifier, so the proposals themselves are measured). Prints
ATSR, ASSR, the average number of subtasks and the parse-valid rate (valid proposals /
requested) per condition. Runs are kept under ``--out`` and resume, so an interrupted
ablation continues where it stopped. The exemplar pool excludes each task's own solution.

Usage: ``python bench/etp_ablation.py --proposer local --candidates 3 --tasks "Open Door,..."``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from simjudge.pipelines.acquire import acquire
from simjudge.pipelines.components import make_execute_fn, make_proposer, open_pool
from simjudge.pipelines.proposer import TaskRequest

DEFAULT_TASKS = "Open Door,Open Microwave Door,Close Drawer,Turn Faucet"


def _run(task: str, proposer_name: str, use_pool: bool, args) -> dict:
    out = Path(args.out) / proposer_name / ("etp" if use_pool else "no_etp") / task.replace(" ", "_")
    pool = open_pool(Path(args.out) / "pool.sqlite") if use_pool else None
    result = acquire(
        TaskRequest.resolve(task), make_proposer(proposer_name, out, args.model),
        make_execute_fn("mpc", video=False, seed=args.seed), out,
        candidates=args.candidates, execute_all=True, pool=pool, top_k=2 if use_pool else 0,
        seed=args.seed, resume=True, progress=False,
    )
    summary = json.loads((out / "summary.json").read_text())
    executed = [c for c in summary["candidates"] if c["executed"]]
    return {
        "task": task,
        "tasks_solved": float(result.task_success),
        "solutions": len(executed),
        "successes": sum(bool(c["task_success"]) for c in executed),
        "subtasks_ok": sum(sum(c["subtask_success"]) for c in executed),
        "subtasks": sum(len(c["subtask_success"]) for c in executed),
        "valid": summary["valid_proposals"],
        "requested": summary["requested_candidates"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proposer", default="local", help="local, openai, template")
    parser.add_argument("--model", default=None)
    parser.add_argument("--tasks", default=DEFAULT_TASKS)
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/etp_ablation")
    args = parser.parse_args()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    print(f"proposer {args.proposer}, {args.candidates} candidates per task, tasks: {tasks}")
    print("| condition | ATSR | ASSR | avg subtasks | parse-valid | tasks solved |")
    print("|---|---:|---:|---:|---:|---:|")
    for use_pool in (False, True):
        rows = [_run(task, args.proposer, use_pool, args) for task in tasks]
        n = sum(r["solutions"] for r in rows)
        atsr = sum(r["successes"] for r in rows) / max(n, 1)
        assr = sum(r["subtasks_ok"] for r in rows) / max(sum(r["subtasks"] for r in rows), 1)
        avg = sum(r["subtasks"] for r in rows) / max(n, 1)
        valid = sum(r["valid"] for r in rows) / max(sum(r["requested"] for r in rows), 1)
        solved = float(np.mean([r["tasks_solved"] for r in rows]))
        name = "with E.T.P." if use_pool else "without E.T.P."
        print(f"| {name} | {atsr:.3f} | {assr:.3f} | {avg:.2f} | {valid:.2f} | {solved:.2f} |")


if __name__ == "__main__":
    main()
