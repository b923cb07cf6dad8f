"""Small real jobs for checking an executor: seeded arithmetic, crashes, slow work.

They need only the standard library, so they also measure what a bare worker costs
(start time, memory) next to one that imports torch (:func:`imports`).
"""

from __future__ import annotations

import ctypes
import os
import random
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["WarmProbe", "crash", "crash_once", "imports", "seeded_sum", "slow_sum",
           "wait_for_file"]

_WARMED: list[int] = []
"""Pids of :meth:`WarmProbe.warm_up` calls in this process."""


def seeded_sum(n: int, seed: int) -> dict[str, Any]:
    """Sum of ``n`` seeded random numbers (a pure function of ``n`` and ``seed``)."""
    rng = random.Random(seed)
    print(f"summing {n} numbers with seed {seed}")
    return {"seed": seed, "n": n, "sum": sum(rng.random() for _ in range(n))}


def slow_sum(n: int, seed: int, seconds: float) -> dict[str, Any]:
    """:func:`seeded_sum` after busy work of about ``seconds`` (CPU, not sleep)."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return seeded_sum(n, seed)


def crash(how: str = "segfault") -> None:
    """Crash the process: ``segfault`` (read address 0), ``abort`` or ``kill`` (SIGKILL)."""
    sys.stdout.flush()
    if how == "segfault":
        ctypes.string_at(0)
    elif how == "abort":
        os.abort()
    os.kill(os.getpid(), signal.SIGKILL)


def crash_once(marker: str, seed: int) -> dict[str, Any]:
    """Segfault the first time (leaving ``marker``), then return :func:`seeded_sum`."""
    path = Path(marker)
    if not path.exists():
        path.write_text(str(os.getpid()))
        crash("segfault")
    return seeded_sum(10, seed)


def wait_for_file(pid_file: str, release: str, seed: int, timeout_s: float = 60.0
                  ) -> dict[str, Any]:
    """Write this process's pid to ``pid_file``, wait until ``release`` exists, then sum.

    A test kills the process while it waits (a worker killed mid-job).
    """
    scratch = Path(f"{pid_file}.{os.getpid()}")
    scratch.write_text(str(os.getpid()))
    scratch.replace(pid_file)  # atomic: a watcher never reads a half-written pid
    end = time.monotonic() + timeout_s
    while not Path(release).exists():
        if time.monotonic() > end:
            raise TimeoutError(f"{release} did not appear within {timeout_s} s")
        time.sleep(0.05)
    return seeded_sum(10, seed)


def imports(modules: list[str]) -> dict[str, Any]:
    """Import ``modules``; report whether torch is loaded, the RSS (MiB) and the time taken."""
    import importlib

    start = time.perf_counter()
    for name in modules:
        importlib.import_module(name)
    rss_kib = 0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                rss_kib = int(line.split()[1])
    return {"torch": "torch" in sys.modules, "rss_mib": rss_kib / 1024,
            "import_s": time.perf_counter() - start, "pid": os.getpid()}


@dataclass(frozen=True)
class WarmProbe:
    """A job function with a ``warm_up`` hook, reporting what its worker had loaded."""

    def warm_up(self) -> None:
        """Called once per worker by :meth:`~simjudge.executors.Executor.prepare`."""
        print("warming up")
        _WARMED.append(os.getpid())

    def __call__(self, module: str, seed: int) -> dict[str, Any]:
        """Whether this process was warmed up and had ``module`` loaded before this job."""
        return {"seed": seed, "warmed": os.getpid() in _WARMED,
                "loaded": module in sys.modules, "pid": os.getpid()}
