"""RoboGen's example tasks run as written: conversion rate, verdicts, claimed vs verified.

RoboGen's public repository (not part of simjudge; bring your own checkout) has 46
manipulation tasks under ``example_tasks/`` (and one locomotion task simjudge refuses). For
every task folder this bench

1. runs ``simjudge import-robogen TASK_DIR --out SOLUTION.yaml`` and records whether it
   converted (and, if not, the reason the command printed);
2. runs ``simjudge execute SOLUTION.yaml --reward-solver mpc --out RUN`` on every converted
   one in a child process with a time limit, and reads ``RUN/summary.json``: the verdict,
   the solution's own ``claimed_success`` and the independent ``verified_success`` (the
   task goal derived from RoboGen's name and description, or none: ``unverifiable``);
3. flags any traceback on stderr (the target is none) and writes ``report.json`` and
   ``report.md`` under ``--out``.

Re-running with the same ``--out`` skips the tasks that already have a summary (resume).

    python bench/robogen_examples.py PATH/TO/RoboGen/example_tasks --out runs/robogen_examples
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

SIMJUDGE = [sys.executable, "-m", "simjudge"]


def _run(args: list[str], timeout: float) -> tuple[int, str, str, float]:
    """Run ``args``; returns (exit code, stdout, stderr, seconds). Exit 124 on timeout."""
    start = time.monotonic()
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return 124, out, f"timed out after {timeout:.0f} s", time.monotonic() - start
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_task(task_dir: Path, out: Path, solver: str, timeout: float) -> dict[str, Any]:
    """Import and execute one RoboGen task folder; returns its row of the report."""
    name = task_dir.name
    row: dict[str, Any] = {"task": name}
    solution = out / "solutions" / f"{name}.yaml"
    code, stdout, stderr, _ = _run(
        [*SIMJUDGE, "import-robogen", str(task_dir), "--out", str(solution)], timeout=120
    )
    row["converted"] = code == 0
    row["import_traceback"] = "Traceback (most recent call last)" in stderr
    if code != 0:
        row["import_error"] = _last_line(stderr)
        return row
    row["import_notes"] = [line.strip() for line in stdout.splitlines() if "remap" in line]
    run = out / "runs" / name
    code, stdout, stderr, seconds = _run(
        [*SIMJUDGE, "execute", str(solution), "--reward-solver", solver, "--out", str(run)],
        timeout=timeout,
    )
    row.update(exit_code=code, seconds=round(seconds, 1))
    row["traceback"] = "Traceback (most recent call last)" in stderr
    (out / "logs").mkdir(parents=True, exist_ok=True)
    (out / "logs" / f"{name}.log").write_text(stdout + "\n--- stderr ---\n" + stderr)
    summary_path = run / "summary.json"
    if not summary_path.is_file():
        row.update(verdict="no summary", reason=_last_line(stderr) or _last_line(stdout))
        return row
    summary = json.loads(summary_path.read_text())
    for key in ("verdict", "reason", "claimed_success", "verified_success", "env_steps"):
        row[key] = summary.get(key)
    return row


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| task | verdict | claimed | verified | s | reason |", "|---|---|---|---|---|---|"]
    for row in rows:
        if not row.get("converted"):
            lines.append(f"| {row['task']} | not converted | | | | {row.get('import_error')} |")
            continue
        reason = str(row.get("reason") or "").replace("|", "/").replace("\n", " ")
        lines.append(
            f"| {row['task']} | {row.get('verdict')} | {row.get('claimed_success')} | "
            f"{row.get('verified_success')} | {row.get('seconds')} | {reason} |"
        )
    return lines


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over the rows: conversion, verdicts, claimed vs verified, tracebacks."""
    converted = [row for row in rows if row.get("converted")]
    executed = [row for row in converted if "verdict" in row]
    claimed = sum(bool(row.get("claimed_success")) for row in executed)
    verified = sum(row.get("verified_success") is True for row in executed)
    return {
        "folders": len(rows),
        "converted": len(converted),
        "not_converted": {row["task"]: row.get("import_error") for row in rows
                          if not row.get("converted")},  # fmt: skip
        "executed_to_a_verdict": sum(row.get("verdict") not in (None, "no summary")
                                     for row in executed),  # fmt: skip
        "tracebacks": sum(bool(row.get("traceback") or row.get("import_traceback"))
                          for row in rows),  # fmt: skip
        "verdicts": dict(Counter(str(row.get("verdict")) for row in executed)),
        "claimed_success": claimed,
        "verified_success": verified,
        "claimed_not_verified": sorted(row["task"] for row in executed
                                       if row.get("claimed_success")
                                       and row.get("verified_success") is False),  # fmt: skip
        "verified_not_claimed": sorted(row["task"] for row in executed
                                       if not row.get("claimed_success")
                                       and row.get("verified_success") is True),  # fmt: skip
    }


def main() -> int:
    """Run the bench (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example_tasks", type=Path, help="RoboGen's example_tasks folder")
    parser.add_argument("--out", type=Path, default=Path("runs/robogen_examples"))
    parser.add_argument("--reward-solver", default="mpc", choices=("mpc", "sac"))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per execution")
    parser.add_argument("--tasks", nargs="*", help="only these task folder names")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    folders = sorted(path for path in args.example_tasks.iterdir() if path.is_dir())
    if args.tasks:
        folders = [path for path in folders if path.name in set(args.tasks)]
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "rows.jsonl"
    done = {}
    if rows_path.is_file():
        done = {row["task"]: row for row in map(json.loads, rows_path.read_text().splitlines())}
    rows = []
    for index, folder in enumerate(folders, 1):
        row = done.get(folder.name)
        if row is None:
            row = run_task(folder, args.out, args.reward_solver, args.timeout)
            with rows_path.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
        rows.append(row)
        print(f"[{index}/{len(folders)}] {folder.name}: "
              f"{row.get('verdict', 'not converted')} ({row.get('seconds', '-')} s)",
              flush=True)  # fmt: skip
    totals = summarize(rows)
    (args.out / "report.json").write_text(json.dumps({"totals": totals, "rows": rows}, indent=2))
    (args.out / "report.md").write_text("\n".join(_table(rows)) + "\n")
    print(json.dumps(totals, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
