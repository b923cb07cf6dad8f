"""The generative skill acquisition loop (VERGSA on RoboGen-style generation).

``acquire`` proposes N candidate solutions for a task (with the top-k exemplars
from the pool in the prompt), verifies and ranks them before spending compute
(rule judge, PRM or LLM judge), executes the best (or all) with the subtask
executor, records per-subtask and task verdicts, appends successes to the
exemplar pool and writes a summary.

Everything lands in one run directory, written so that a crash or kill at any
point followed by the same call with ``resume=True`` loses no finished work and
repeats none:

- ``config.json``: the call's parameters and library versions (a resumed run
  must match them);
- ``proposals/cand_<i>.yaml`` and ``proposals/index.json`` (written last,
  atomically: a run killed while proposing proposes again, and with an LLM the
  replay cache in ``llm_cache/`` answers the repeated requests);
- ``verification.json``: per-candidate verifier scores and the ranking;
- ``outcomes/cand_<i>.json``: each executed candidate's verdicts (atomic), with
  ``exec/cand_<i>/`` holding the executor's own resumable run;
- ``summary.json`` and ``summary.md``; ``llm_log.jsonl`` for LLM proposers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .dataset import ExecuteFn, execute_checkpointed
from .proposer import Exemplar, Proposer, TaskRequest
from .spec import Outcome, RunDir, RunDirError, Solution, atomic_write, success_rates

__all__ = ["AcquireResult", "RunDirError", "acquire", "rank_candidates"]

VERIFIERS: tuple[str, ...] = ("none", "rule", "prm", "llm")
ScoreFn = Callable[[TaskRequest, Solution], tuple[float, dict[str, Any]]]


@dataclass
class AcquireResult:
    """What a run achieved.

    Attributes:
        task: Task name.
        candidates: Candidate ids in proposal order.
        ranking: Candidate ids, best first.
        executed: Candidate id -> outcome.
        proposal_failures: Candidates the proposer could not produce (LLM parse failures).
        task_success: Whether any executed candidate solved the task.
        out: The run directory.
    """

    task: str
    candidates: list[str]
    ranking: list[str]
    executed: dict[str, Outcome] = field(default_factory=dict)
    proposal_failures: list[dict[str, Any]] = field(default_factory=list)
    task_success: bool = False
    out: Path = Path(".")


def _propose(out: Path, request, proposer, exemplars, n, seed) -> tuple[dict[str, Solution], list]:
    index = out / "proposals" / "index.json"
    if index.exists():
        data = json.loads(index.read_text())
        solutions = {cid: Solution.from_yaml(out / "proposals" / f"{cid}.yaml")
                     for cid in data["candidates"]}
        return solutions, data["failures"]
    produced = proposer.propose(request, exemplars, n=n, seed=seed)
    failures = list(getattr(proposer, "last_failures", []))
    solutions = {f"cand_{i:03d}": s for i, s in enumerate(produced)}
    for cid, solution in solutions.items():
        atomic_write(out / "proposals" / f"{cid}.yaml", solution.to_yaml())
    atomic_write(index, json.dumps({"candidates": list(solutions), "failures": failures,
                                     "requested": n}, indent=2) + "\n")
    return solutions, failures


def rank_candidates(
    request: TaskRequest, solutions: dict[str, Solution], score: ScoreFn | None
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Candidate ids best first (stable: ties keep proposal order) and per-candidate details."""
    if score is None:
        return list(solutions), {cid: {"score": None} for cid in solutions}
    details = {}
    for cid, solution in solutions.items():
        value, info = score(request, solution)
        details[cid] = {"score": float(value), **info}
    order = sorted(solutions, key=lambda cid: -details[cid]["score"])
    return order, details


def _verify(out: Path, request, solutions, score, verifier_name) -> tuple[list[str], dict]:
    path = out / "verification.json"
    if path.exists():
        data = json.loads(path.read_text())
        return data["ranking"], data["details"]
    ranking, details = rank_candidates(request, solutions, score)
    atomic_write(path, json.dumps({"verifier": verifier_name, "ranking": ranking,
                                    "details": details}, indent=2, default=str) + "\n")
    return ranking, details


def acquire(
    request: TaskRequest,
    proposer: Proposer,
    execute: ExecuteFn,
    out: str | Path,
    *,
    candidates: int = 4,
    score: ScoreFn | None = None,
    verifier_name: str = "none",
    execute_all: bool = False,
    pool: Any = None,
    top_k: int = 2,
    seed: int = 0,
    resume: bool = False,
    config: dict[str, Any] | None = None,
    progress: bool = True,
) -> AcquireResult:
    """Propose, verify, execute, record, pool; see the module docstring for the files."""
    from tqdm import tqdm

    out = Path(out)
    started = time.time()
    RunDir(out).prepare({"task": request.name, "asset": request.asset, "candidates": candidates,
                         "proposer": getattr(proposer, "name", "?"), "verifier": verifier_name,
                         "execute_all": execute_all, "top_k": top_k, "seed": seed,
                         **(config or {})}, resume=resume)
    exemplars: Sequence[Exemplar] = ()
    if pool is not None and top_k > 0:
        exemplars = pool.top_k(request.name, request.description, k=top_k)
    solutions, failures = _propose(out, request, proposer, exemplars, candidates, seed)
    ranking, details = _verify(out, request, solutions, score, verifier_name)
    chosen = ranking if execute_all else ranking[:1]
    result = AcquireResult(request.name, list(solutions), ranking, proposal_failures=failures,
                           out=out)
    for cid in tqdm(chosen, desc=f"execute {request.name}", disable=not progress):
        outcome = execute_checkpointed(out / "outcomes" / f"{cid}.json", solutions[cid],
                                       out / "exec" / cid, execute)
        result.executed[cid] = outcome
        if outcome.task_success and pool is not None:
            pool.append_success(_pool_fields(request), solutions[cid], outcome,
                                source=f"acquire:{getattr(proposer, 'name', '?')}")
    result.task_success = any(o.task_success for o in result.executed.values())
    _write_summary(out, result, details, exemplars, requested=candidates,
                   wall_time_s=time.time() - started)
    return result


def _pool_fields(request: TaskRequest) -> dict[str, Any]:
    return {"name": request.name, "description": request.description, "asset": request.asset}


def _candidate_row(cid: str, rank: int, score: Any, outcome: Outcome | None) -> dict[str, Any]:
    row: dict[str, Any] = {"candidate": cid, "rank": rank, "verifier_score": score,
                           "executed": outcome is not None}
    if outcome is None:
        return {**row, "subtask_success": None, "task_success": None, "claimed_success": None,
                "verified_success": None, "verdict": "", "reason": ""}
    return {
        **row,
        "subtask_success": list(outcome.subtask_success),
        "task_success": outcome.task_success,
        "claimed_success": outcome.claimed_success,
        "verified_success": outcome.verified_success,
        "verdict": outcome.verdict,
        "reason": outcome.reason,
        "initial_joints": outcome.initial_joints,
        "final_joints": outcome.final_joints,
        "max_joints": outcome.max_joints,
        "final_poses": outcome.final_poses,
    }


def _write_summary(out: Path, result: AcquireResult, details, exemplars, requested: int,
                   wall_time_s: float) -> None:
    executed = result.executed
    rows = [_candidate_row(cid, i + 1, details.get(cid, {}).get("score"), executed.get(cid))
            for i, cid in enumerate(result.ranking)]
    rates = success_rates(list(executed.values())) if executed else None
    summary = {
        "task": result.task,
        "task_success": result.task_success,
        "verified": result.task_success,
        "requested_candidates": requested,
        "valid_proposals": len(result.candidates),
        "parse_valid_rate": len(result.candidates) / max(requested, 1),
        "proposal_failures": result.proposal_failures,
        "exemplars": [e.task for e in exemplars],
        "ATSR": rates.atsr if rates else None,
        "ASSR": rates.assr if rates and rates.n_subtasks else None,
        "claimed_ATSR": (sum(bool(o.claimed_success) for o in executed.values()) / len(executed)
                         if executed else None),
        "candidates": rows,
        "wall_time_s": round(wall_time_s, 2),
    }
    atomic_write(out / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    atomic_write(out / "summary.md", _summary_markdown(result, summary, requested))


def _mark(value: bool | None) -> str:
    return "" if value is None else ("✓" if value else "✗")


def _summary_markdown(result: AcquireResult, summary: dict[str, Any], requested: int) -> str:
    rows = summary["candidates"]
    verdict = ("VERIFIED: the task goal holds on the final state of an executed candidate"
               if result.task_success else
               "NOT VERIFIED: no executed candidate reached the task goal")
    lines = [f"# acquire: {result.task}", "",
             f"**{verdict}**", "",
             f"- task success (verified): **{result.task_success}**",
             f"- valid proposals: {len(result.candidates)} / {requested}",
             f"- exemplars in the prompt: {', '.join(summary['exemplars']) or 'none'}", "",
             "| rank | candidate | verifier score | executed | subtasks | claimed | verified "
             "| verdict |",
             "|---:|---|---:|---|---|---|---|---|"]
    for r in rows:
        score = "-" if r["verifier_score"] is None else f"{r['verifier_score']:.3f}"
        subs = "" if r["subtask_success"] is None else "".join(map(_mark, r["subtask_success"]))
        lines.append(f"| {r['rank']} | {r['candidate']} | {score} | {r['executed']} | {subs} "
                     f"| {_mark(r['claimed_success'])} | {_mark(r['verified_success'])} "
                     f"| {r['verdict']} |")
    disagreements = [r for r in rows if r["executed"] and r["claimed_success"] is not None
                     and r["verified_success"] is not None
                     and r["claimed_success"] != r["verified_success"]]
    if disagreements:
        lines += ["", "## Claimed and verified disagree", ""]
        lines += [f"- {r['candidate']}: claimed {r['claimed_success']}, verified "
                  f"{r['verified_success']}" for r in disagreements]
    reasons = [r for r in rows if r["executed"]]
    if reasons:
        lines += ["", "## Why", ""]
        lines += [f"- {r['candidate']} ({r['verdict']}): {r['reason']}" for r in reasons]
    return "\n".join(lines) + "\n"
