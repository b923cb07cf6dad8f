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
  ``exec/cand_<i>/`` holding the executor's own resumable run and
  ``job_logs/outcomes/cand_<i>.log`` its output (candidates are jobs of an executor:
  :mod:`simjudge.executors`);
- ``summary.json`` and ``summary.md``; ``llm_log.jsonl`` for LLM proposers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simjudge.executors import Executor, resume_identity
from simjudge.tasks.spec import Outcome, RunDir, RunDirError, Solution, atomic_write, success_rates

from .acquire_files import (
    check_outcomes,
    load_proposals,
    load_verification,
    save_proposals,
    save_verification,
    set_aside_stale,
)
from .dataset import ExecuteFn, execute_outcomes
from .proposer import Exemplar, Proposer, TaskRequest

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
        rounds: Per round (repair rounds): proposed, executed, verified, verified ATSR.
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
    rounds: list[dict[str, Any]] = field(default_factory=list)


def _round_paths(out: Path, round_index: int) -> tuple[str, Path, Path]:
    """Candidate id prefix, proposal index and verification file of a round (0 = first)."""
    if round_index == 0:
        return "", out / "proposals" / "index.json", out / "verification.json"
    return (f"r{round_index}_", out / "proposals" / f"round_{round_index}.json",
            out / f"verification_round_{round_index}.json")


def _propose(out: Path, request, proposer, exemplars, n, seed, round_index: int = 0,
             feedback: str = "") -> tuple[dict[str, Solution], list]:
    prefix, index, verification = _round_paths(out, round_index)
    run, index_name = RunDir(out), str(index.relative_to(out))
    recorded = load_proposals(run, index_name)  # validated; a bad file: proposed again
    if recorded is not None:
        return recorded
    if feedback:
        produced = proposer.propose(request, exemplars, n=n, seed=seed, feedback=feedback)
    else:
        produced = proposer.propose(request, exemplars, n=n, seed=seed)
    failures = list(getattr(proposer, "last_failures", []))
    solutions = {f"{prefix}cand_{i:03d}": s for i, s in enumerate(produced)}
    stale = save_proposals(run, index_name, solutions, {
        "failures": failures, "requested": n, "round": round_index, "feedback": feedback})
    if stale:  # a redone round came out different: what was made from it is set aside
        set_aside_stale(run, [str(verification.relative_to(out))] + [
            f"{d}/{cid}{x}" for cid in stale for d, x in (("outcomes", ".json"), ("exec", ""))])
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


def _verify(out: Path, request, solutions, score, verifier_name,
            round_index: int = 0) -> tuple[list[str], dict]:
    run = RunDir(out)
    name = str(_round_paths(out, round_index)[2].relative_to(out))
    recorded = load_verification(run, name, list(solutions))  # validated; bad: scored again
    if recorded is not None:
        return recorded
    ranking, details = rank_candidates(request, solutions, score)
    save_verification(run, name, {"verifier": verifier_name, "ranking": ranking,
                                  "details": details})
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
    repair_rounds: int = 0,
    executor: Executor | None = None,
    goal_card: dict[str, Any] | None = None,
) -> AcquireResult:
    """Propose, verify, execute, record, pool; see the module docstring for the files.

    With ``repair_rounds`` R > 0, a round whose executed candidates are all unverified is
    followed by another (up to R more): the proposer gets the verdicts back (which subtask
    failed and why, the final joint values against the goal, the verifier's findings) and
    proposes again. Each round is recorded (``proposals/round_<r>.json``,
    ``verification_round_<r>.json``, candidates ``r<r>_cand_<i>``) and resumable.

    The chosen candidates of a round run as jobs of ``executor`` (default: serial, in this
    process; see :mod:`simjudge.executors`); outcomes and the pool are the same
    whichever executor ran them, and a crashed execution is recorded as a failed outcome.
    ``summary.json`` records ``goal_card`` under ``goal`` (default: the card of the
    request's derived goal, :mod:`simjudge.pipelines.goal_card`).
    """
    out = Path(out)
    started = time.time()
    recorded = {"task": request.name, "asset": request.asset, "candidates": candidates,
                "proposer": getattr(proposer, "name", "?"), "verifier": verifier_name,
                "execute_all": execute_all, "top_k": top_k, "seed": seed,
                "repair_rounds": repair_rounds, **(config or {})}
    RunDir(out).prepare(recorded, resume=resume,
                        identity=resume_identity(recorded))
    exemplars: Sequence[Exemplar] = ()
    if pool is not None and top_k > 0:
        exemplars = pool.top_k(request.name, request.description, k=top_k)
    result = AcquireResult(request.name, [], [], out=out)
    all_details: dict[str, dict[str, Any]] = {}
    feedback = ""
    for round_index in range(repair_rounds + 1):
        round_seed = seed + 1000 * round_index
        solutions, failures = _propose(out, request, proposer, exemplars, candidates, round_seed,
                                       round_index, feedback)
        ranking, details = _verify(out, request, solutions, score, verifier_name, round_index)
        result.candidates += list(solutions)
        result.ranking += ranking
        result.proposal_failures += [{**f, "round": round_index} for f in failures]
        all_details.update(details)
        chosen = ranking if execute_all else ranking[:1]
        executed = _execute_round(out, request, proposer, solutions, chosen, execute, pool,
                                  progress, round_index, executor)
        result.executed.update(executed)
        result.rounds.append(_round_record(round_index, solutions, executed, feedback))
        if any(o.task_success for o in executed.values()) or not executed:
            break
        feedback = repair_feedback(executed, details)
    result.task_success = any(o.task_success for o in result.executed.values())
    if goal_card is None:
        from .goal_card import goal_card as card_of

        goal_card = card_of(request.goal_derivation, proposer=getattr(proposer, "name", None))
    _write_summary(out, result, all_details, exemplars, requested=candidates,
                   wall_time_s=time.time() - started, goal_card=goal_card)
    return result


def _execute_round(out, request, proposer, solutions, chosen, execute, pool, progress,
                   round_index, executor: Executor | None = None) -> dict[str, Outcome]:
    label = f"execute {request.name}" + (f" (repair round {round_index})" if round_index else "")
    check_outcomes(RunDir(out), chosen)  # a bad recorded outcome is set aside: executed again
    outcomes = execute_outcomes([(cid, solutions[cid], out / "exec" / cid) for cid in chosen],
                                execute, out, executor, desc=label, progress=progress)
    executed = dict(zip(chosen, outcomes, strict=True))
    for cid, outcome in executed.items():  # in ranking order, whichever finished first
        if outcome.task_success and pool is not None:
            pool.append_success(_pool_fields(request), solutions[cid], outcome,
                                source=f"acquire:{getattr(proposer, 'name', '?')}")
    return executed


def _round_record(round_index: int, solutions, executed: dict[str, Outcome],
                  feedback: str) -> dict[str, Any]:
    verified = [o.task_success for o in executed.values()]
    return {"round": round_index, "proposed": len(solutions), "executed": len(executed),
            "verified": sum(verified),
            "verified_ATSR": sum(verified) / len(verified) if verified else None,
            "feedback": feedback}


def repair_feedback(executed: dict[str, Outcome], details: dict[str, dict[str, Any]]) -> str:
    """What the proposer is told about a round's unverified candidates (plain text).

    Per candidate: the verdict and its reason, each failed subtask with its reason, the
    task goal's facts on the final state, every joint that moved (initial → final fraction
    of its range) and the verifier's findings.
    """
    lines = []
    for cid, outcome in executed.items():
        lines.append(f"- {cid}: {outcome.verdict or 'failed'}: {outcome.reason}")
        for verdict in outcome.verdicts:
            if not verdict.success:
                lines.append(f"  - subtask {verdict.index} '{verdict.name}' ({verdict.kind}) "
                             f"failed: {verdict.reason}")
        if outcome.goal_facts:
            facts = {k: (round(v, 3) if isinstance(v, float) else v)
                     for k, v in outcome.goal_facts.items()}
            lines.append(f"  - task goal facts on the final state: {facts}")
        for key, final in outcome.final_joints.items():
            first = outcome.initial_joints.get(key, final)
            if abs(final["fraction"] - first["fraction"]) > 0.01:
                lines.append(f"  - {key} moved from {first['fraction']:.2f} to "
                             f"{final['fraction']:.2f} of its range")
        for issue in _verifier_findings(details.get(cid, {}))[:5]:
            lines.append(f"  - verifier: {issue}")
    return "\n".join(lines)


def _verifier_findings(details: dict[str, Any]) -> list[str]:
    """The verifier's errors and warnings for one candidate, as text."""
    found = [str(issue) for issue in details.get("goal_issues", [])]
    for sub in details.get("subtasks", []):
        if isinstance(sub, dict):
            found += [f"{sub.get('subtask', '')}: {m}" for m in
                      [*sub.get("errors", []), *sub.get("warnings", [])]]
    return found


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
                   wall_time_s: float, goal_card: dict[str, Any] | None = None) -> None:
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
        "rounds": result.rounds,
        "wall_time_s": round(wall_time_s, 2),
        "goal": goal_card,
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
