"""Start-up cost: ``simjudge --help`` and ``import simjudge`` against ``import gymnasium``.

Each measurement is a fresh interpreter; the CPU time (user + system) of the child is read
from ``resource.getrusage(RUSAGE_CHILDREN)``, so other work on the machine does not count. The
three are run interleaved, ``--rounds`` times each, and the medians are printed side by side
in one run (targets: help <= 0.3 s, import <= 0.4 s on the 2-core reference machine):

    help_cpu_s: X import_cpu_s: Y gymnasium_import_cpu_s: Z

Writes ``results/startup.json``.

    python bench/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import load, write_result  # noqa: E402

CASES = {
    "help": [sys.executable, "-m", "simjudge", "--help"],
    "import": [sys.executable, "-c", "import simjudge"],
    "gymnasium_import": [sys.executable, "-c", "import gymnasium"],
}


def cpu_of(command: list[str]) -> float:
    """CPU seconds (user + system) one run of ``command`` took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    load_before = load()
    for command in CASES.values():  # warm the file cache and the bytecode
        cpu_of(command)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.rounds):
        for name, command in CASES.items():
            times[name].append(cpu_of(command))
    medians = {f"{name}_cpu_s": round(statistics.median(t), 3) for name, t in times.items()}
    path = write_result("startup", {**medians, "samples": times}, {"rounds": args.rounds},
                        load_before)
    print(f"load average: {load_before} before, {load()} after; {args.rounds} rounds; wrote {path}")
    print(" ".join(f"{k}: {v}" for k, v in medians.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
