"""What a ``local`` executor worker costs: start time and memory, with and without torch.

For each case a fresh one-worker pool runs one job that imports a set of modules and
reports the worker's resident memory; the line gives the wall time from creating the pool
to the job's answer (interpreter start-up, the job's imports, the round trip) and the RSS:

- ``bare``: the job imports nothing more (the floor: interpreter plus simjudge's package);
- ``execute``: the modules an execution job loads (components, executor, live judges);
- ``torch``: torch and stable-baselines3, what an SB3 ``SubprocVecEnv`` worker pays.

Lines: ``worker <case> start_s=<s> rss_mib=<m> torch=<bool>``, best of ``--rounds``, cases
alternating so machine noise hits all alike.

Then the per-job overhead of each executor (``--overhead``, default on): ``--jobs`` trivial
jobs on warm workers (a first round starts them and is not counted), as
``overhead <executor> workers=<n> ms_per_job=<x>``: the dispatch, pickling, result file
and log of one job, which bounds how short a job can be for parallelism to pay.

Usage: ``python bench/executors.py [--rounds 3] [--jobs 200] [--no-overhead]``
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from simjudge.executors import Job, JobStore, make_executor
from simjudge.executors.probe import imports, seeded_sum

CASES: dict[str, list[str]] = {
    "bare": [],
    "execute": ["simjudge.pipelines.components", "simjudge.skills.executor",
                "simjudge.judges.live"],
    "torch": ["torch", "stable_baselines3"],
}


def measure(modules: list[str]) -> tuple[float, dict[str, object]]:
    """(seconds from pool creation to the answer, the job's report) for one fresh worker."""
    start = time.perf_counter()
    with make_executor("local", workers=1) as executor:
        (result,) = executor.map([Job("probe", imports, (modules,))], progress=False)
        seconds = time.perf_counter() - start
    assert result.ok, result.reason
    return seconds, result.value


def overhead(name: str, workers: int, jobs: int) -> float:
    """Milliseconds per trivial job on warm workers, results and logs written."""
    with make_executor(name, workers=workers) as executor, \
            tempfile.TemporaryDirectory() as tmp:
        executor.start()
        warm = [Job(f"warm_{i}", seeded_sum, kwargs={"n": 10, "seed": i}) for i in range(4)]
        executor.map(warm, progress=False)
        batch = [Job(f"job_{i:04d}", seeded_sum, kwargs={"n": 10, "seed": i})
                 for i in range(jobs)]
        start = time.perf_counter()
        executor.map(batch, JobStore(Path(tmp)), progress=False)
        return 1000 * (time.perf_counter() - start) / jobs


def main() -> None:
    """Print one line per case."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--overhead", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    best: dict[str, tuple[float, dict[str, object]]] = {}
    for _ in range(args.rounds):
        for case, modules in CASES.items():
            seconds, report = measure(modules)
            if case not in best or seconds < best[case][0]:
                best[case] = (seconds, report)
    for case, (seconds, report) in best.items():
        print(f"worker {case} start_s={seconds:.2f} rss_mib={report['rss_mib']:.0f} "
              f"torch={report['torch']}")
    if args.overhead:
        for name, workers in (("serial", 1), ("local", 2), ("ray", 2)):
            print(f"overhead {name} workers={workers} "
                  f"ms_per_job={overhead(name, workers, args.jobs):.2f}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
