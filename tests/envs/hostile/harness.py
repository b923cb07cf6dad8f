"""Outer-process harness: each hostile case in a fresh child, watched from outside.

For every (case, mode) a fresh Python process runs ``run_case`` (compile, call, print a
JSON line). From outside, the harness enforces what the sandbox claims:

- an outer wall-clock timeout (the child and its process group are killed past it);
- a memory watchdog polling the resident memory of the child and its children every
  20 ms (killed past ``memory_mb`` above the child's size when it started the case);
- a sentinel directory that must still be empty afterwards (no file side effects);
- the child must report, i.e. not crash (segfault, abort) or print an untyped error.

Anything else is an *escape*. Run it as a script for the full table::

    python -m tests.envs.hostile.harness [--modes inprocess,subprocess] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import CASES

ROOT = Path(__file__).resolve().parents[3]
__all__ = ["Outcome", "run_case", "run_cases", "summarize"]


@dataclass
class Outcome:
    """What happened to one case in one mode."""

    case: str
    mode: str
    stage: str = ""  # check (rejected at check time), run (stopped while running), done
    error: str | None = None
    seconds: float = 0.0
    peak_mb: float = 0.0
    escapes: list[str] = field(default_factory=list)
    message: str = ""

    @property
    def escaped(self) -> bool:
        """Whether any bound was crossed."""
        return bool(self.escapes)


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its direct children (MB); 0 if gone."""
    total = 0.0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            pids += [int(p) for p in handle.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except (OSError, ValueError, IndexError):
            pass
    return total


def _watch(proc: subprocess.Popen[str], started: threading.Event, outcome: Outcome,
           timeout_s: float, run_timeout_s: float, memory_mb: float) -> str:
    """Poll the child until it exits; kill its group past a bound and say which."""
    begin = time.monotonic()
    base = None
    while proc.poll() is None:
        now = time.monotonic()
        if started.is_set() and base is None:
            base, begin = _rss_mb(proc.pid), now
        rss = _rss_mb(proc.pid)
        killed = ""
        if base is not None:
            outcome.peak_mb = max(outcome.peak_mb, rss - base)
            if rss - base > memory_mb:
                killed = f"memory: grew {rss - base:.0f} MB (> {memory_mb:g} MB)"
            elif now - begin > run_timeout_s:
                killed = f"time: still running after {run_timeout_s:g} s"
        elif now - begin > timeout_s:
            killed = f"time: did not start within {timeout_s:g} s"
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)
            return killed
        time.sleep(0.02)
    return ""


def run_case(case_id: str, mode: str, *, timeout_s: float = 30.0,
             run_timeout_s: float | None = None, memory_mb: float = 768.0) -> Outcome:
    """Run one case in a fresh child under the outer bounds (see the module docstring).

    Args:
        case_id: A case of the corpus.
        mode: ``inprocess`` or ``subprocess``.
        timeout_s: Outer wall-clock bound on the whole child (imports included).
        run_timeout_s: Bound on the case itself, from the child's start signal (default
            6 s in-process; 20 s in subprocess mode, which also starts a worker that
            checks the code again, both slow on a loaded machine).
        memory_mb: Growth of resident memory (child and children) over its size at the
            start of the case.
    """
    outcome = Outcome(case_id, mode)
    if run_timeout_s is None:
        run_timeout_s = 6.0 if mode == "inprocess" else 20.0
    with tempfile.TemporaryDirectory(prefix="sj-hostile-") as sentinel:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.envs.hostile.run_case", mode, case_id, sentinel],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
        )
        lines: list[str] = []
        started = threading.Event()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                if line.startswith("STARTED"):
                    started.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        killed = _watch(proc, started, outcome, timeout_s, run_timeout_s, memory_mb)
        proc.wait()
        reader.join(timeout=5)
        stderr = proc.stderr.read() if proc.stderr is not None else ""
        if killed:
            outcome.escapes.append(killed)
        if os.listdir(sentinel):
            outcome.escapes.append(f"side effect: {os.listdir(sentinel)}")
    result = next((ln for ln in lines if ln.startswith("RESULT ")), None)
    if result is None:
        if not killed:
            outcome.escapes.append(f"crash: exit code {proc.returncode}: {stderr[-300:]}")
        return outcome
    data = json.loads(result[len("RESULT "):])
    outcome.stage, outcome.error = data["stage"], data["error"]
    outcome.seconds, outcome.message = data["seconds"], data["message"]
    if outcome.error and outcome.error.startswith("UNTYPED"):
        outcome.escapes.append(f"untyped error: {outcome.error}: {outcome.message}")
    return outcome


def run_cases(case_ids: Iterable[str], modes: Iterable[str], *, jobs: int = 2,
              **bounds: float) -> list[Outcome]:
    """Run every (case, mode) pair, ``jobs`` children at a time."""
    pairs = [(c, m) for c in case_ids for m in modes]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda pair: run_case(*pair, **bounds), pairs))


def summarize(outcomes: list[Outcome]) -> str:
    """A table of stages and escapes per mode."""
    lines = []
    for mode in sorted({o.mode for o in outcomes}):
        mine = [o for o in outcomes if o.mode == mode]
        stages = {s: sum(o.stage == s for o in mine) for s in ("check", "run", "done")}
        escaped = [o for o in mine if o.escaped]
        lines.append(
            f"{mode}: {len(mine)} cases, rejected at check {stages['check']}, stopped while "
            f"running {stages['run']}, finished {stages['done']}, escapes {len(escaped)}"
        )
        lines += [f"  ESCAPE {o.case}: {'; '.join(o.escapes)}" for o in escaped]
    return "\n".join(lines)


def main() -> None:
    """Run the corpus and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--modes", default="inprocess,subprocess")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cases", default="", help="comma-separated ids (default: all)")
    args = parser.parse_args()
    ids = args.cases.split(",") if args.cases else [c.id for c in CASES]
    outcomes = run_cases(ids, args.modes.split(","), jobs=args.jobs)
    for o in outcomes:
        flag = "ESCAPE" if o.escaped else "ok"
        print(f"{flag:6} {o.mode:10} {o.case:34} {o.stage:5} {o.error or '-':22} "
              f"{o.seconds:6.2f}s {o.peak_mb:7.1f}MB")
    print(summarize(outcomes))


if __name__ == "__main__":
    main()
