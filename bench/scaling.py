"""The same dataset build on every executor, side by side: jobs/s and the speed-up vs serial.

Builds one real verifier dataset (template proposer, every solution executed on the
PyBullet simulator with the chosen reward solver) with ``serial``, ``local`` (1 and 2
workers) and ``ray`` (1 and 2 workers), each in a fresh folder, and prints per run::

    <executor> workers=<n> jobs_per_s=<x> speedup=<s>

where jobs/s is executed solutions over the wall time of the whole build (proposals,
worker start-up and labelling included) and the speed-up is against ``serial``. Ray's own
start-up (``ray.init`` of a local instance) is measured apart (``ray_init_s``) and not
counted, since a cluster is started once for many builds; its actors' start-up is counted.
The default workload is a user-sized build: 4 tasks x 8 base solutions x 3 completions per
substep, 95 executions of about 1 s each (``--base 2 --completions 1``: 14, for a quick
look). Every run must write the same outcomes (checked). Runs go in the order given,
``--rounds`` times (best of rounds), so machine noise hits all alike.

Each run also prints where its wall time went (from the per-job logs)::

    detail <executor> workers=<n> wall_s=<w> job_s=<sum of job times> \
        per_job_s=<mean> overhead_s=<w - job_s / n> cpu_s=<c> load=<1-min load average>

``overhead_s`` is what parallelism does not cover: worker start-up and first imports,
the driver's own work (proposals, labelling, writing results) and waiting for the last
job. ``cpu_s`` is the CPU time of the driver, its workers and their sandbox processes
(not known for Ray's workers): equal ``cpu_s`` for serial and local means the work did
not grow with the workers, so on an idle machine their wall times differ by the cores.
Speed-ups are only meaningful on an otherwise idle machine (compare ``load``).

Usage: ``python bench/scaling.py [--tasks "Open Drawer,Open Door"] [--base 8]
[--completions 3] [--reward-solver oracle] [--runs serial:1,local:1,local:2,ray:1,ray:2]
[--rounds 1]`` (about 7 minutes on an idle 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from simjudge.executors import make_executor
from simjudge.pipelines.components import make_execute_fn, make_proposer
from simjudge.pipelines.dataset import build_dataset
from simjudge.pipelines.proposer import TaskRequest


def build_once(folder: Path, tasks: list[TaskRequest], args: argparse.Namespace,
               name: str, workers: int) -> tuple[float, int, float]:
    """Build the dataset with one executor: (seconds, jobs, ray start-up seconds)."""
    proposer = make_proposer("template", folder)
    execute = make_execute_fn(args.reward_solver, args.budget_steps, seed=0, video=False,
                              goals={t.name: t.goal for t in tasks})
    cpu = cpu_seconds()
    with make_executor(name, workers=workers) as executor:
        start = time.perf_counter()  # the build starts the workers (overlapping proposals)
        build_dataset(tasks, proposer, proposer, execute, folder, base=args.base,
                      completions=args.completions, seed=0, progress=False, executor=executor)
        init_s = float(getattr(executor, "init_seconds", 0.0))  # ray.init (not counted)
        seconds = time.perf_counter() - start - init_s
    args.cpu_s = cpu_seconds() - cpu  # workers are reaped on close (Ray's are not ours)
    return seconds, len(list((folder / "outcomes").glob("*.json"))), init_s


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (workers, sandboxes)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def job_seconds(folder: Path) -> float:
    """Sum of the jobs' own wall times, from their logs (every attempt)."""
    found = re.findall(r"^== attempt \d+ · \S+ · .*? · ([\d.]+) s · ",
                       "".join(p.read_text() for p in folder.glob("job_logs/outcomes/*.log")),
                       flags=re.M)
    return sum(float(x) for x in found)


def outcomes_of(folder: Path) -> dict[str, object]:
    """Outcome files without timings and paths (to check every run computed the same)."""
    drop = {"wall_time_s", "planning_time_s", "out_dir"}

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in drop}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return {p.name: strip(json.loads(p.read_text())) for p in sorted(folder.glob("outcomes/*"))}


def main() -> None:
    """Run the benchmark and print one line per executor run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="Open Drawer,Open Door,Close Door,Press Button")
    parser.add_argument("--base", type=int, default=8)
    parser.add_argument("--completions", type=int, default=3)
    parser.add_argument("--reward-solver", default="oracle", choices=["oracle", "mpc", "sac"])
    parser.add_argument("--budget-steps", type=int, default=None)
    parser.add_argument("--runs", default="serial:1,local:1,local:2,ray:1,ray:2")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    tasks = [TaskRequest.resolve(t) for t in args.tasks.split(",")]
    runs = [(r.split(":")[0], int(r.split(":")[1])) for r in args.runs.split(",")]
    best: dict[tuple[str, int], float] = {}
    jobs = 0
    root = Path(tempfile.mkdtemp(prefix="simjudge-scaling-"))
    reference = None
    print(f"load before: {os.getloadavg()[0]:.2f}; cores: {len(os.sched_getaffinity(0))}")
    try:
        for _ in range(args.rounds):
            for name, workers in runs:
                folder = root / f"{name}{workers}"
                shutil.rmtree(folder, ignore_errors=True)
                seconds, jobs, init_s = build_once(folder, tasks, args, name, workers)
                best[(name, workers)] = min(seconds, best.get((name, workers), seconds))
                busy = job_seconds(folder)
                print(f"detail {name} workers={workers} wall_s={seconds:.1f} job_s={busy:.1f} "
                      f"per_job_s={busy / max(jobs, 1):.2f} "
                      f"overhead_s={seconds - busy / workers:.1f} "
                      f"cpu_s={'n/a' if name == 'ray' else f'{args.cpu_s:.1f}'} "
                      f"load={os.getloadavg()[0]:.2f}", flush=True)
                found = outcomes_of(folder)
                reference = reference or found
                assert found == reference, f"{name} workers={workers} computed other outcomes"
                if name == "ray":
                    print(f"ray workers={workers} ray_init_s={init_s:.2f} (not counted)",
                          flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    serial = best.get(("serial", 1))
    for (name, workers), seconds in best.items():
        speedup = f"{serial / seconds:.2f}" if serial else "n/a (no serial run)"
        print(f"{name} workers={workers} jobs_per_s={jobs / seconds:.3f} speedup={speedup}")
    print(f"jobs={jobs} reward_solver={args.reward_solver} load after: "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
