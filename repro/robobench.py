"""RoboBench (claim 6): plan evaluation of the embedded model on every composed task.

``simjudge plan-eval`` (:func:`~simjudge.pipelines.plans.run_plan_eval`) runs the LLM planner
and, as anchors, the oracle and the four planning-fault planners on the composed
(long-horizon) tasks, seed 0, scripted skills: Q1 node correctness and milestone completion
(symbolic tier and physical tier — the latter verified in the simulator), Q2 next steps, Q3
state questions (at most :data:`Q3_PER_TASK` per task) and failure analysis (planning and
execution faults). The LLM's exchanges are recorded in ``repro/replay/robobench/``; each
task's result, trimmed to what the scores read, is stored in
``repro/items/robobench/<planner>/<task>.json``.

Usage::

    python -m repro.robobench [--llm local|openai:MODEL|replay] [--tasks composed]

A killed run resumes (plan-eval keeps one file per finished task in ``runs/repro/robobench``).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from simjudge.pipelines.plans.evaluate import PlanEvalConfig, aggregate, run_plan_eval
from simjudge.pipelines.plans.faults import PLANNING_FAULTS
from simjudge.tasks.spec import composed_ids

from .common import REPLAY, ItemStore, bootstrap_ci, diff_values, env_threads, wilson

__all__ = ["ANCHORS", "CLAIM", "LLM_PLANNER", "main", "replay", "run", "score", "trim"]

CLAIM = "robobench"
LLM_PLANNER = "llamacpp:qwen2.5-coder-1.5b"
"""The planner the committed numbers come from (the embedded default model)."""
ANCHORS: tuple[str, ...] = ("oracle", *(f"fault:{k}" for k in PLANNING_FAULTS))
Q3_PER_TASK = 8
MAX_TOKENS = 384
SEED = 0

PAPER = {
    "q1_planning": 41.8,
    "q3_state_pct": 75.0,
    "failure_planning_pct": 74.3,
    "failure_execution_pct": 16.0,
}
"""RoboBench's reference numbers (best MLLM, real data): Q1 planning 41.8 (humans 54.5), Q3
≈ 75 %, planning-failure diagnosis 74.3 % vs execution-failure 16.0 %."""

_ITEM_KEYS = ("task", "plan", "plan_error", "node_correctness", "completion_symbolic",
              "completion_physical", "held_symbolic", "held_physical", "gap",
              "reference_physical", "error_labels", "error")


def trim(result: dict[str, Any]) -> dict[str, Any]:
    """A plan-eval task result cut to what :func:`aggregate` and the page read."""
    item = {k: result[k] for k in _ITEM_KEYS if k in result}
    item["q2_items"] = [{"executed": i["executed"], "proposed": i["proposed"], "score": i["score"]}
                        for i in result.get("q2_items", [])]
    item["q3_items"] = [{"question": i["question"], "answer": i["answer"],
                         "proposed": i["proposed"], "correct": i["correct"]}
                        for i in result.get("q3_items", [])]
    item["failure_items"] = [{"kind": i["kind"], "label": i["label"], "proposed": i["proposed"],
                              "correct": i["correct"]} for i in result.get("failure_items", [])]
    return item


def _config(planner: str, tasks: tuple[str, ...], out: Path, questions: bool,
            cache: Path | None = None) -> PlanEvalConfig:
    return PlanEvalConfig(planner=planner, tasks=tasks, out=str(out), seed=SEED,
                          llm_cache=str(cache or REPLAY / CLAIM), max_tokens=MAX_TOKENS,
                          q2=questions, q3=questions, failures=questions,
                          q3_per_task=Q3_PER_TASK, resume=True)


def _part(planner: str) -> str:
    return planner.replace(":", "_")


def _evaluate(planner: str, tasks: tuple[str, ...], out: Path, questions: bool,
              store: ItemStore, cache: Path | None = None) -> None:
    todo = tuple(t for t in tasks if not store.has(t))
    if not todo:
        return
    run_plan_eval(_config(planner, tasks, out, questions, cache))
    from simjudge.tasks.spec import RunDir

    rundir = RunDir(out)
    for task in todo:
        store.put(task, trim(rundir.read_json(f"tasks/{task}.json")))


def run(llm: str = "local", tasks: tuple[str, ...] = (), out: Path = Path("runs/repro/robobench"),
        anchors: bool = True) -> None:
    """Measure (resumable): the anchors, then the LLM planner, every task stored as it ends."""
    tasks = tasks or tuple(composed_ids())
    planner = {"local": LLM_PLANNER, "replay": f"replay:{LLM_PLANNER}"}.get(llm, llm)
    for name in ANCHORS if anchors else ():
        _evaluate(name, tasks, out / _part(name), False, ItemStore(CLAIM, _part(name)))
    llm_name = planner.removeprefix("replay:")
    _evaluate(planner, tasks, out / _part(llm_name), True, ItemStore(CLAIM, _part(llm_name)))


def _pct(correct: list[bool]) -> tuple[float | None, list[float]]:
    if not correct:
        return None, [0.0, 100.0]
    lo, hi = wilson(sum(correct), len(correct))
    return round(100.0 * sum(correct) / len(correct), 3), [round(100 * lo, 3), round(100 * hi, 3)]


def score(root: Path | None = None, planner: str = LLM_PLANNER) -> dict[str, Any]:
    """The claim's numbers from the stored items (no simulator, no model)."""
    items = list(ItemStore(CLAIM, _part(planner), root).all().values())
    if not items:
        raise FileNotFoundError(f"no stored RoboBench items for {planner}: run python -m "
                                "repro.robobench first")
    totals = aggregate(items)
    nc = [float(r.get("node_correctness", 0)) for r in items]
    phys = [float(r.get("completion_physical", 0)) for r in items]
    q3 = [bool(i["correct"]) for r in items for i in r.get("q3_items", [])]
    fa = [i for r in items for i in r.get("failure_items", [])]
    plan_fa = [bool(i["correct"]) for i in fa if i["kind"] == "planning"]
    exec_fa = [bool(i["correct"]) for i in fa if i["kind"] == "execution"]
    q2 = [float(i["score"]) for r in items for i in r.get("q2_items", [])]
    q3_pct, q3_ci = _pct(q3)
    pfa, pfa_ci = _pct(plan_fa)
    efa, efa_ci = _pct(exec_fa)
    simjudge = {"q1_planning": round(10 * float(totals["node_correctness"] or 0), 3),
                "completion_physical": totals["completion_physical"],
                "completion_symbolic": totals["completion_symbolic"],
                "q2_next_step": totals["q2"], "q3_state_pct": q3_pct,
                "failure_planning_pct": pfa, "failure_execution_pct": efa}
    ci95 = {"q1_planning": [10 * v for v in bootstrap_ci(nc)],
            "completion_physical": bootstrap_ci(phys),
            "completion_symbolic": bootstrap_ci([float(r.get("completion_symbolic", 0))
                                                 for r in items]),
            "q2_next_step": bootstrap_ci(q2) if q2 else [0.0, 10.0],
            "q3_state_pct": q3_ci, "failure_planning_pct": pfa_ci,
            "failure_execution_pct": efa_ci}
    n = {"q1_planning": len(items), "completion_physical": len(items),
         "completion_symbolic": len(items), "q2_next_step": len(q2), "q3_state_pct": len(q3),
         "failure_planning_pct": len(plan_fa), "failure_execution_pct": len(exec_fa)}
    anchors = {}
    for name in ANCHORS:
        stored = list(ItemStore(CLAIM, _part(name), root).all().values())
        if stored:
            agg = aggregate(stored)
            anchors[name] = {k: agg[k] for k in ("tasks", "node_correctness",
                                                 "completion_symbolic", "completion_physical")}
    ordered = all(anchors.get(f"fault:{k}", {}).get("completion_physical", 10)
                  <= anchors.get("oracle", {}).get("completion_physical", 0)
                  for k in PLANNING_FAULTS)
    return {
        "title": "RoboBench: plan evaluation (embedded model, composed tasks)",
        "paper": PAPER, "simjudge": simjudge, "n": n, "ci95": ci95, "verified": True,
        "reproduced": _verdict(simjudge, ci95),
        "notes": _notes(simjudge, ci95, anchors, ordered, len(items)),
        "details": {"planner": planner, "aggregate": totals, "anchors": anchors,
                    "anchors_ordered": ordered,
                    "per_task": {r["task"]: {"node_correctness": r.get("node_correctness", 0),
                                             "completion_physical": r.get("completion_physical", 0),
                                             "plan_error": r.get("plan_error", "")}
                                 for r in items}},
    }


def _verdict(s: dict[str, Any], ci: dict[str, Any] | None = None) -> str:
    """``yes`` when planning-fault diagnosis beats execution faults beyond both intervals."""
    plan, exe = s["failure_planning_pct"], s["failure_execution_pct"]
    if plan is None or exe is None:
        return "partial"
    if ci is not None:
        return "yes" if ci["failure_planning_pct"][0] > ci["failure_execution_pct"][1] else "no"
    return "yes" if plan > exe else "no"


def _notes(s: dict[str, Any], ci: dict[str, Any], anchors: dict[str, Any], ordered: bool,
           tasks: int) -> str:
    gap = ("planning faults are diagnosed better than execution faults beyond both intervals, "
           "as in the paper" if _verdict(s, ci) == "yes" else
           f"the paper's gap (planning faults diagnosed far better than execution faults, "
           f"74.3 % vs 16.0 %) is NOT reproduced: {s['failure_planning_pct']} % vs "
           f"{s['failure_execution_pct']} %, intervals overlapping (most likely: a 1.5B "
           "text-only model picking labels near chance among 4-5 options, and few items)")
    return (f"{LLM_PLANNER} (1.5B, embedded, greedy) on {tasks} composed tasks, seed 0; "
            "Q1 planning is node correctness × 10 (RoboBench's Q1 is a composite score of "
            "MLLMs on real images; here a text-only 1.5B model on symbolic scene text, so the "
            f"levels are not comparable); {gap}. Anchors: oracle completion "
            f"{anchors.get('oracle', {}).get('completion_physical')}, every fault planner "
            f"{'at or below' if ordered else 'NOT at or below'} it (physical tier). This "
            "project's earlier single measurement (Q1 node correctness 3.73/10, Q3 78.2 %, "
            "diagnosis 45.2 %) was on the whole library, not the composed tasks.")


def replay(limit: int | None = None) -> list[str]:
    """Re-run stored LLM items from the replay cache (no live model); differences found.

    ``limit``: the first ``limit`` tasks only (CI's slice); None = all.
    """
    store = ItemStore(CLAIM, _part(LLM_PLANNER))
    tasks = tuple(store.keys()[:limit] if limit else store.keys())
    diffs: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh = ItemStore(CLAIM, "replayed", Path(tmp))
        _evaluate(f"replay:{LLM_PLANNER}", tasks, Path(tmp) / "run", True, fresh)
        for task in tasks:
            diffs += diff_values(store.get(task), fresh.get(task), f"{CLAIM}/{task}")
    return diffs


def main() -> None:
    """Command line: measure, then write ``results/robobench.json``."""
    from bench.results import load

    from .common import rescore_claim, write_claim

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llm", default="local", help="local, openai:MODEL or replay")
    parser.add_argument("--tasks", default="composed", help="composed, or a comma list of ids")
    parser.add_argument("--out", default="runs/repro/robobench")
    parser.add_argument("--no-anchors", action="store_true")
    parser.add_argument("--score-only", action="store_true",
                        help="re-score the stored items (keeps the run's provenance)")
    args = parser.parse_args()
    env_threads()
    if args.score_only:
        print(rescore_claim(CLAIM, score()))
        return
    tasks = () if args.tasks == "composed" else tuple(args.tasks.split(","))
    started, before = time.perf_counter(), load()
    run(args.llm, tasks, Path(args.out), not args.no_anchors)
    settings = {"planner": LLM_PLANNER, "tasks": list(tasks or composed_ids()), "seed": SEED,
                "skill_backend": "scripted", "q3_per_task": Q3_PER_TASK,
                "max_tokens": MAX_TOKENS, "anchors": list(ANCHORS),
                "command": "python -m repro.robobench --llm " + args.llm,
                "threads": os.environ.get("SIMJUDGE_LLM_THREADS", "auto")}
    print(write_claim(CLAIM, score(), settings=settings, started=started, load_before=before))


if __name__ == "__main__":
    main()
