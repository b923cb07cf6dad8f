"""Shared by the executor tests: run-directory comparison, a crashing execute, a driver script.

Kept in an importable module (not a test file) so worker processes can unpickle
:class:`CrashOnCandidate` by reference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simjudge.executors import EXECUTOR_KEYS
from simjudge.executors.probe import crash
from simjudge.pipelines.components import SolutionExecute
from simjudge.tasks.spec import Outcome, Solution

TIMING_KEYS = frozenset({"wall_time_s", "planning_time_s", "seconds", "time", "provenance"})
"""Keys whose values are measured times or the recording environment, not results."""


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def normalised(path: Path, root: Path) -> Any:
    """A file's content with timings removed (JSON, JSONL) or its bytes (anything else)."""
    if path.suffix == ".json":
        data = _strip(json.loads(path.read_text()))
        if path.parent == root and path.name == "config.json":
            data = {k: v for k, v in data.items() if k not in EXECUTOR_KEYS}
        return data
    if path.suffix == ".jsonl":
        return [_strip(json.loads(line)) for line in path.read_text().splitlines()]
    return path.read_bytes()


SKIPPED_FOLDERS = frozenset({"job_logs", ".checksums"})
"""Per-job logs (they carry timings) and the checksums of files that carry timings."""


def run_contents(root: Path) -> dict[str, Any]:
    """Every file of a run directory but the per-job logs and checksums, normalised."""
    return {str(p.relative_to(root)): normalised(p, root) for p in sorted(root.rglob("*"))
            if p.is_file() and not SKIPPED_FOLDERS & set(p.relative_to(root).parts)}


def attempts_logged(root: Path, results: str) -> dict[str, int]:
    """Attempts recorded per job in ``root/job_logs/<results>/``."""
    return {p.stem: p.read_text().count("== attempt ")
            for p in sorted((root / "job_logs" / results).glob("*.log"))}


@dataclass(frozen=True)
class CrashOnCandidate:
    """Execute solutions for real, but segfault the worker on one run folder's name."""

    inner: SolutionExecute
    crash_on: str

    def __call__(self, solution: Solution, run_dir: Path) -> Outcome:
        """Crash on ``crash_on``, else execute."""
        if Path(run_dir).name == self.crash_on:
            crash("segfault")
        return self.inner(solution, run_dir)


DRIVER = """
import sys
from pathlib import Path
from simjudge.executors import Job, JobStore, make_executor
from simjudge.executors.probe import slow_sum

root, name, seconds = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
jobs = [Job(f"job_{s:02d}", slow_sum, kwargs={"n": 50, "seed": s, "seconds": seconds})
        for s in range(int(sys.argv[4]))]
with make_executor(name, workers=2) as executor:
    executor.map(jobs, JobStore(root, results="sums"), progress=False)
print("finished")
"""
"""A driver process the kill tests SIGKILL mid-run: ``python -c DRIVER root executor
seconds n_jobs``."""
