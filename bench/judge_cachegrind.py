"""What the judged step adds to a bare step in instructions and cache misses, under cachegrind.

Timing on a shared 2-vCPU machine moves by a few percent from run to run; cachegrind simulates
the CPU instead (instructions, L1 and last-level misses), so a judge's cost can be compared in
counts that do not depend on load. Each env below is stepped in its own process under
``valgrind --tool=cachegrind`` twice, for ``--steps`` and for ``--steps`` + 1000 steps after a
warm-up; the difference over 1000 is the cost of one step, import and set-up cancelling out.
Runs are made repeatable (no ASLR through ``setarch -R``, ``PYTHONHASHSEED=0``, one BLAS
thread): instructions then agree to ~0.02 % between identical runs, miss counts to a few
percent (they depend on the memory layout). The simulated last level is 512 KiB, 8-way (a
core's L2 here), so its misses are what goes out to L3.

Envs: ``bare`` (the task env), ``bare-again`` (a second identical run: the noise floor),
``record[privileged]``, ``record[code-success]`` and ``record[panel]`` (the recorder with the
privileged judge, the generated success condition, and the panel of both that
``bench/judge_overhead.py`` measures). Prints one line per env: per-step instructions (Ir),
L1 misses (instruction + data), last-level misses and each as a ratio to ``bare``.

Needs valgrind (``apt-get install valgrind``); takes ~1 min of CPU per env and step count.

Usage: ``python bench/judge_cachegrind.py [--task OpenDrawer-v0] [--steps 200] [--jobs 2]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ENVS = ("bare", "bare-again", "record[privileged]", "record[code-success]", "record[panel]")
EXTRA = 1000
"""Steps added in the second run of each env: the per-step cost is the difference / EXTRA."""


def build(name: str, task: str):
    """The env called ``name`` (see the module doc), built as bench/judge_overhead.py does."""
    sys.path.insert(0, str(Path(__file__).parent))
    from judge_overhead import judged_env

    from simjudge.tasks.spec import make_task_env

    if name in ("bare", "bare-again"):
        return make_task_env(task)
    return judged_env(task, name.removeprefix("record[").removesuffix("]"))


def step(name: str, task: str, steps: int) -> None:
    """The measured process: build, warm up over 3 episodes, then step ``steps`` times."""
    import numpy as np

    env = build(name, task)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(100, 7)).astype(np.float32)
    actions[:, 6] = -1.0
    env.reset(seed=0)
    for k in range(300 + steps):
        _, _, terminated, truncated, _ = env.step(actions[k % len(actions)])
        if terminated or truncated:
            env.reset(seed=0)


def _counts(path: Path) -> dict[str, int]:
    events: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            return dict(zip(events, map(int, line.split()[1:]), strict=True))
    raise RuntimeError(f"{path}: no summary line; did cachegrind finish?")


def _run(name: str, task: str, steps: int, folder: Path) -> dict[str, int]:
    out = folder / f"{name}.{steps}.out"
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    command = [
        "setarch", "-R", "valgrind", "--tool=cachegrind", "--cache-sim=yes",
        "--LL=524288,8,64", f"--cachegrind-out-file={out}",
        sys.executable, __file__, "--child", name, "--task", task, "--steps", str(steps),
    ]  # fmt: skip
    subprocess.run(command, env=env, check=True, capture_output=True)
    return _counts(out)


def per_step(name: str, task: str, steps: int, folder: Path) -> dict[str, float]:
    """Ir, L1 misses and last-level misses of one step of env ``name``."""
    short, long = (_run(name, task, n, folder) for n in (steps, steps + EXTRA))
    delta = {key: (long[key] - short[key]) / EXTRA for key in short}
    return {
        "Ir": delta["Ir"],
        "L1 misses": delta["I1mr"] + delta["D1mr"] + delta["D1mw"],
        "LL misses": delta["ILmr"] + delta["DLmr"] + delta["DLmw"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="OpenDrawer-v0")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2, help="cachegrind processes at once")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        step(args.child, args.task, args.steps)
        return
    missing = [tool for tool in ("valgrind", "setarch") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"needs {' and '.join(missing)}: apt-get install valgrind util-linux")
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(ENVS, pool.map(
            lambda name: per_step(name, args.task, args.steps, Path(tmp)), ENVS
        ), strict=True))
    base = results["bare"]
    print(f"task: {args.task}  per step, from {args.steps} vs {args.steps + EXTRA} steps")
    for name, counts in results.items():
        print(f"{name:22s} " + "  ".join(
            f"{key} {value:,.0f} (x{value / base[key]:.4f})" for key, value in counts.items()
        ))


if __name__ == "__main__":
    main()
