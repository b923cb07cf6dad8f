"""Audit throughput: episodes per minute of a 3 policies × 3 tasks × 10 seeds audit.

Runs ``simjudge audit`` (the library call) into a fresh temporary run directory with the
``local`` executor (``--workers``, default 2 = the machine's cores) and the ``serial``
executor side by side, without videos or the report, and prints for each:

* ``episodes/min`` (wall time of the episode phase, snapshots and ε calibration excluded;
  those are timed separately),
* the share of in-episode time spent in the policy, the physics (the env's own step) and
  the judges (the privileged judge through ``JudgeRecord``), summed over episodes,
* ``speed-up local/serial``, measured in the same run.

Usage: ``python bench/audit_throughput.py [--seeds 10] [--workers 2] [--judge privileged]``
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from simjudge.pipelines.audit import AuditConfig, run_audit

POLICIES = ("oracle=oracle", "noisy=oracle-noisy", "rnd=random")
TASKS = ("OpenDrawer-v0", "OpenMicrowaveDoor-v0", "PutCubeInBox-v0")


def measure(executor: str, workers: int, seeds: int, judge: str, root: Path) -> dict[str, float]:
    """Run one audit and time its phases."""
    out = root / executor
    config = AuditConfig(policy=POLICIES, tasks=TASKS, seeds=seeds, judge=(judge,), videos=0,
                         report=False, bootstrap=200, executor=executor, workers=workers,
                         out=str(out))
    start = time.perf_counter()
    audit = run_audit(config, progress=False)
    total = time.perf_counter() - start
    # the episode phase: from the last calibration file to the last result file
    calib = max(p.stat().st_mtime for p in (out / "calibration").glob("*.json"))
    last = max(p.stat().st_mtime for p in (out / "results").glob("*.json"))
    episodes = audit["episodes"]
    timing = audit["timing"]
    return {"episodes": episodes, "total_s": total, "episode_s": last - calib,
            "per_min": 60.0 * episodes / max(last - calib, 1e-9), **timing}


def main() -> None:
    """Parse arguments, run both executors, print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--judge", default="privileged")
    args = parser.parse_args()
    print(f"audit {len(POLICIES)} policies × {len(TASKS)} tasks × {args.seeds} seeds, judge "
          f"{args.judge}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: measure(name, args.workers, args.seeds, args.judge, Path(tmp))
                   for name in ("local", "serial")}
    for name, r in results.items():
        print(f"{name:>6} ({args.workers if name == 'local' else 1} worker(s)): {r['episodes']:.0f} "
              f"episodes in {r['episode_s']:.1f} s = {r['per_min']:.1f} episodes/min "
              f"(whole audit {r['total_s']:.1f} s)")
        print(f"        time in policy {100 * r['policy_share']:.1f}% · physics "
              f"{100 * r['physics_share']:.1f}% · judging {100 * r['judge_share']:.1f}% "
              f"({r['steps']:.0f} steps)")
    ratio = results["local"]["per_min"] / results["serial"]["per_min"]
    print(f"speed-up local/serial: {ratio:.2f}")
    print(f"episodes_per_minute: {results['local']['per_min']:.1f}")


if __name__ == "__main__":
    main()
