"""Module-level job functions and drivers for the shared-run tests (spawned processes
import them by reference)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from simjudge.executors import Job, JobStore, make_executor


def logged(key: str, ledger: str, pause: float) -> dict:
    """A job that leaves one line per run in ``ledger`` (O_APPEND: lines never interleave)."""
    fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{key} {os.getpid()}\n".encode())
    finally:
        os.close(fd)
    time.sleep(pause)
    return {"key": key, "square": int(key[1:]) ** 2}


def jobs(ledger: Path, n: int, pause: float) -> list[Job]:
    return [Job(f"j{i:02d}", logged, kwargs={"key": f"j{i:02d}", "ledger": str(ledger),
                                             "pause": pause}) for i in range(n)]


def writer(root: str, ledger: str, n: int, pause: float, out: str) -> None:
    """One process resuming the run: map every job with a shared store, save the values."""
    results = make_executor("serial").map(jobs(Path(ledger), n, pause),
                                          JobStore(Path(root), results="r", shared=True),
                                          progress=False)
    Path(out).write_text("\n".join(f"{r.key} {r.ok} {r.value['square']}" for r in results))


def backend_seen() -> dict:
    """The physics backend a job sees where it runs, and that process's pid."""
    return {"backend": os.environ.get("SIMJUDGE_BACKEND", ""), "pid": os.getpid()}
