"""Skill acquisition over a stream of tasks (RoboGen's loop, generative end to end).

``simjudge acquire --tasks-from FILE`` (a task file written by ``simjudge propose-tasks``, or
any list of ``{name, description, object}``) or ``--propose-tasks K --object ASSET`` runs
:func:`~simjudge.pipelines.acquire.acquire` once per task, each in its own run directory
``OUT/<nn>-<slug>/``. A task whose goal cannot be derived is not run: it is recorded as
``skipped`` with the parser's ambiguities, since without an independent goal no success
could be verified. ``OUT/stream_summary.json`` and ``.md`` list every task's verdict and the
verified ATSR over the stream; rerunning with ``--resume`` continues where it stopped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from simjudge.executors import resume_identity
from simjudge.tasks.spec import RunDir

from .acquire import AcquireResult, acquire
from .dataset import ExecuteFn
from .proposer import Proposer, TaskRequest

__all__ = ["acquire_stream"]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "task"


def acquire_stream(
    entries: Sequence[dict[str, str]],
    proposer: Proposer,
    execute_for: Callable[[TaskRequest], ExecuteFn],
    out: str | Path,
    *,
    resume: bool = False,
    config: dict[str, Any] | None = None,
    **acquire_kwargs: Any,
) -> list[dict[str, Any]]:
    """Run the acquisition loop on every task of ``entries``; return one row per task.

    Args:
        entries: ``{"name", "description", "object"}`` per task.
        proposer: The solution proposer (shared by all tasks).
        execute_for: The execute function for a task (it verifies against that task's goal).
        out: The stream's run directory.
        resume: Continue a stream (and each task's run) already in ``out``.
        config: The command's config, recorded in ``out/config.json``.
        **acquire_kwargs: Passed to :func:`~simjudge.pipelines.acquire.acquire` (``executor``
            among them: every task's candidates run on it).
    """
    out = Path(out)
    run = RunDir(out)
    recorded = {"command": "acquire-stream", "tasks": [dict(e) for e in entries],
                **(config or {})}
    run.prepare(recorded, resume=resume, identity=resume_identity(recorded))
    rows: list[dict[str, Any]] = []
    for i, entry in enumerate(entries):
        request = TaskRequest.resolve(entry["name"], entry.get("description", ""),
                                      entry.get("object"))
        derivation = request.goal_derivation
        row: dict[str, Any] = {"task": request.name, "object": request.asset,
                               "folder": f"{i:02d}-{_slug(request.name)}"}
        if derivation.goal is None:
            rows.append({**row, "status": "skipped", "verified": None,
                         "why": "; ".join(derivation.ambiguities) or "no goal derived"})
            continue
        result: AcquireResult = acquire(request, proposer, execute_for(request),
                                        out / row["folder"], resume=resume, **acquire_kwargs)
        claimed = any(bool(o.claimed_success) for o in result.executed.values())
        rows.append({**row, "status": "run", "verified": result.task_success,
                     "claimed": claimed, "executed": len(result.executed),
                     "goal": derivation.goal.describe()})
    ran = [r for r in rows if r["status"] == "run"]
    summary = {"tasks": rows, "run": len(ran), "skipped": len(rows) - len(ran),
               "verified": sum(bool(r["verified"]) for r in ran),
               "verified_ATSR": sum(bool(r["verified"]) for r in ran) / len(ran) if ran else None}
    run.write_json("stream_summary.json", summary)
    lines = ["# acquire over a task stream", "",
             f"- tasks run: {len(ran)}; skipped (no goal could be derived): "
             f"{summary['skipped']}",
             f"- verified: {summary['verified']} / {len(ran)}", "",
             "| task | object | status | claimed | verified | folder |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['object']} | {r['status']} | {r.get('claimed', '')} | "
                     f"{'' if r['verified'] is None else r['verified']} | {r['folder']} |")
    skipped = [r for r in rows if r["status"] == "skipped"]
    if skipped:
        lines += ["", "## Skipped", ""] + [f"- {r['task']}: {r['why']}" for r in skipped]
    run.write_text("stream_summary.md", "\n".join(lines) + "\n")
    return rows
